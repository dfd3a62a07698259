import Foundation

/// Credentials and the server that issued them, kept side by side in the state files (`issued_by` beside the
/// credentials' own members), so they are sent back there and nowhere else.
public struct Issued<Credentials: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    public var credentials: Credentials
    /// nil in a file written before issuers were kept: those credentials came from the config's server
    /// (`ClientConfig.issuer(of:)`), and are pinned to it before the config's server can change.
    public var issuer: ServerOrigin?

    public init(_ credentials: Credentials, issuer: ServerOrigin?) {
        self.credentials = credentials
        self.issuer = issuer
    }

    private enum CodingKeys: String, CodingKey {
        case issuer = "issued_by"
    }

    public init(from decoder: any Decoder) throws {
        credentials = try Credentials(from: decoder)
        issuer = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(ServerOrigin.self, forKey: .issuer)
    }

    public func encode(to encoder: any Encoder) throws {
        try credentials.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(issuer, forKey: .issuer)
    }
}
