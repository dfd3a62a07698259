import Foundation
import HTTPServer
import LoyaltyAPI

/// The retailer's web console: its page, script and style sheet (compiled into the binary), and the session
/// its page signs in to. The page calls the same `/v1/retailer/...` routes as the CLI, authenticated by the
/// session cookie; a request that changes something also carries the session's CSRF token.
extension Endpoints {
    var consoleRoutes: [Route] {
        [
            Route("GET", "/console/") { request in ConsoleFiles.answer("index.html", to: request)! },
            Route("GET", "/console/{file}", consoleFile),
            Route("POST", "/v1/console/session", signIn),
            Route("GET", "/v1/console/session", showConsoleSession),
            Route("DELETE", "/v1/console/session", consoleSession, signOut),
        ]
    }

    func consoleFile(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let response = ConsoleFiles.answer(request.pathParameters["file"] ?? "", to: request) else {
            throw APIFailure(404, .notFound, "the console has no such file")
        }
        return response
    }

    /// Exchanges the API key for a session. JSON only: a cross-site form cannot send that content type, so
    /// another site cannot sign a visitor in to an account of its choosing.
    func signIn(_ request: HTTPRequest) throws -> HTTPResponse {
        guard request.header("content-type")?.lowercased().hasPrefix("application/json") == true else {
            throw APIFailure(415, .badRequest, "send the API key as application/json", field: "Content-Type")
        }
        let signIn = try request.decodeBody(ConsoleSignIn.self)
        // Guessing keys here is guessing them anywhere: the same limit as a retailer key in a header.
        let access: RetailerAccess
        do {
            access = try authenticating(.retailer, from: request) {
                signIn.apiKey.hasPrefix(retailerKeyPrefix) ? try database.retailer(apiKey: signIn.apiKey) : nil
            }
        } catch var failure as APIFailure where failure.status == 401 {
            failure.body = APIErrorBody(
                code: .unauthorized, message: "this API key is not a retailer's current key", field: "api_key")
            throw failure
        }
        // A session lasts hours: one from a rotated-out key would outlive the key.
        guard !access.isRotatedOut else { throw rotatedOut }
        let session = try database.createConsoleSession(retailerID: access.retailer.id, keyDigest: access.keyDigest)
        return .json(
            201,
            ConsoleSession(
                retailer: access.retailer, csrfToken: Self.csrfToken(session.token), expiresAt: session.expiresAt),
            headers: [
                "Set-Cookie": Self.sessionCookie(request, value: session.token, maxAge: Int(consoleSessionLifetime)),
                "Cache-Control": "no-store",
            ])
    }

    /// The page asks this on every load: signed out is an ordinary answer (204), not an error status that the
    /// browser would log on every visit.
    func showConsoleSession(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let token = request.consoleSessionToken else {
            return HTTPResponse(status: 204, headers: ["Cache-Control": "no-store"])
        }
        let session: (access: RetailerAccess, expiresAt: Date)
        do {
            session = try consoleSession(token, from: request)
        } catch let failure as APIFailure where failure.status == 401 {
            // A cookie that names no live session, counted as a failure: signed out all the same.
            return HTTPResponse(status: 204, headers: ["Cache-Control": "no-store"])
        }
        return .json(
            200,
            ConsoleSession(
                retailer: session.access.retailer, csrfToken: Self.csrfToken(token), expiresAt: session.expiresAt),
            headers: ["Cache-Control": "no-store"])
    }

    func signOut(_ request: HTTPRequest, _ token: String) throws -> HTTPResponse {
        try database.endConsoleSession(token: token)
        return HTTPResponse(status: 204, headers: ["Set-Cookie": Self.sessionCookie(request, value: "", maxAge: 0)])
    }

    /// The retailer of the request's session cookie, or nil without one. A request that may change something
    /// (anything but GET and HEAD) must carry the session's CSRF token in `X-CSRF-Token`.
    func consolePrincipal(_ request: HTTPRequest) throws -> Principal? {
        guard let token = request.consoleSessionToken else { return nil }
        let session = try consoleSession(token, from: request)
        if request.method != "GET" && request.method != "HEAD" {
            guard let sent = request.header("x-csrf-token"),
                Secrets.constantTimeEqual(Array(sent.utf8), Array(Self.csrfToken(token).utf8))
            else {
                throw APIFailure(
                    403, .forbidden, "the console's CSRF token is missing or wrong; reload the console",
                    field: "X-CSRF-Token")
            }
        }
        return .console(session.access, sessionToken: token)
    }

    /// The live session of a cookie, through the failed-authentication limit as any credential.
    private func consoleSession(_ token: String, from request: HTTPRequest) throws
        -> (access: RetailerAccess, expiresAt: Date)
    {
        try authenticating(.console, from: request) { try database.consoleSession(token: token) }
    }

    /// Derived from the session token, so nothing more is stored; it cannot be turned back into the cookie.
    static func csrfToken(_ sessionToken: String) -> String {
        Secrets.base64URL(Secrets.digest(of: "csrf:" + sessionToken))
    }

    /// HttpOnly (no script reads it), SameSite=Strict (no other site's request carries it), Path=/ (the
    /// page and the API); Secure when a TLS proxy in front says the request came over HTTPS.
    static func sessionCookie(_ request: HTTPRequest, value: String, maxAge: Int) -> String {
        let secure = request.header("x-forwarded-proto")?.lowercased() == "https" ? "; Secure" : ""
        return "\(consoleCookieName)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict\(secure)"
    }
}

let consoleCookieName = "loyalty_console"

extension HTTPRequest {
    /// The console session cookie's value, if the request has one.
    var consoleSessionToken: String? {
        guard let cookies = header("cookie") else { return nil }
        for pair in cookies.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingOptionalWhitespace == consoleCookieName {
                let value = parts[1].trimmingOptionalWhitespace
                return value.hasPrefix(consoleSessionPrefix) ? String(value) : nil
            }
        }
        return nil
    }
}
