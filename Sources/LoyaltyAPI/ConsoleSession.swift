import Foundation

/// `POST /v1/console/session`: the retailer's API key, exchanged for a console session cookie. In the body,
/// never in a URL.
public struct ConsoleSignIn: RequestBody, Equatable {
    public var apiKey: String

    public init(apiKey: String) { self.apiKey = apiKey }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case apiKey = "api_key"
    }

    public func validate() throws(ValidationError) {
        try Validation.text(apiKey, field: "api_key", length: 1...200)
    }
}

/// A console session as its page sees it. The session itself is an HttpOnly cookie; `csrf_token` goes back in
/// the `X-CSRF-Token` header of every request that changes something.
public struct ConsoleSession: Codable, Sendable, Equatable {
    public var retailer: Retailer
    public var csrfToken: String
    public var expiresAt: Date

    public init(retailer: Retailer, csrfToken: String, expiresAt: Date) {
        self.retailer = retailer
        self.csrfToken = csrfToken
        self.expiresAt = expiresAt
    }

    public enum CodingKeys: String, CodingKey {
        case retailer
        case csrfToken = "csrf_token"
        case expiresAt = "expires_at"
    }
}
