import Foundation
import HTTPServer
import LoyaltyAPI

/// Who a bearer token belongs to. Token prefixes tell the kinds apart before any lookup.
enum Principal {
    case `operator`
    case retailer(RetailerAccess)
    case device(DeviceSession)
    case till(TillSession)
    /// A retailer signed in to the console: the session cookie, checked for its CSRF token on writes.
    case console(RetailerAccess, sessionToken: String)
}

/// How each kind of caller is found from its credential: bearer tokens told apart by their prefixes, the
/// console's cookie, and the limits on failed attempts.
extension Endpoints {
    // MARK: Credentials, one for each kind of caller a route names

    var operatorToken: Credential<Void> {
        Credential(kind: .operator) { request in
            guard case .operator = try principal(request) else { throw forbidden("the operator token") }
        }
    }

    /// A retailer's API key or console session, a rotated-out key's too: for reading and syncing.
    var retailerKey: Credential<RetailerAccess> {
        Credential(kind: .retailer) { request in
            switch try principal(request) {
            case .retailer(let access), .console(let access, _): return access
            default: throw forbidden("a retailer API key")
            }
        }
    }

    /// For what makes or ends credentials (a new API key, till keys): not with a rotated-out key, nor a console
    /// session made with one, which may have leaked.
    var currentRetailerKey: Credential<RetailerAccess> {
        let retailerKey = retailerKey
        return Credential(kind: .retailer) { request in
            let access = try retailerKey.check(request)
            guard !access.isRotatedOut else { throw rotatedOut }
            return access
        }
    }

    /// A till key, or a retailer signed in to the console. The retailer's API key itself is refused here, as a
    /// till key is on the retailer's routes.
    var tillKey: Credential<TillCaller> {
        Credential(kind: .till) { request in
            switch try principal(request) {
            case .till(let till): return TillCaller(retailerID: till.retailerID, keyID: till.keyID, name: till.name)
            case .console(let access, _): return TillCaller(retailerID: access.retailer.id, keyID: nil, name: "console")
            default: throw forbidden("a till key")
            }
        }
    }

    var deviceToken: Credential<DeviceSession> { deviceToken(reading: false) }

    /// For a read that a standby may answer: the token may be looked up there too.
    var deviceTokenOnStandby: Credential<DeviceSession> { deviceToken(reading: true) }

    private func deviceToken(reading: Bool) -> Credential<DeviceSession> {
        Credential(kind: .device) { request in
            guard case .device(let session) = try principal(request, reading: reading) else {
                throw forbidden("a device token")
            }
            return session
        }
    }

    /// A device token and the catalog feed's head (at least the `since` cursor's version) in one database round
    /// trip, or none (`CatalogCheck`); with that cursor, so a catalog check reads it once.
    var deviceTokenWithCatalogHead: Credential<CatalogPosition> {
        let deviceToken = deviceToken
        return Credential(kind: .device) { request in
            let since = try cursor(request)
            guard let token = request.bearerToken, token.hasPrefix(deviceTokenPrefix) else {
                // Not a device token: the same 401 or 403 as every shopper route.
                _ = try deviceToken.check(request)
                throw forbidden("a device token")
            }
            let head = try authenticating(token, from: request) {
                try database.catalogHead(deviceToken: token, atLeast: since?.version)
            }
            return CatalogPosition(head: head, since: since)
        }
    }

    /// The console's session cookie, whose token the handler gets.
    var consoleSession: Credential<String> {
        Credential(kind: .console) { request in
            guard case .console(_, let token) = try principal(request) else { throw forbidden("a console session") }
            return token
        }
    }

    /// `reading`: for a read that a standby may answer, a device token may be looked up there too.
    func principal(_ request: HTTPRequest, reading: Bool = false) throws -> Principal {
        guard let token = request.bearerToken else {
            guard request.header("authorization") == nil, let console = try consolePrincipal(request) else {
                throw APIFailure.unauthorized
            }
            return console
        }
        return try authenticating(token, from: request) { () throws -> Principal? in
            if token.hasPrefix(retailerKeyPrefix) { return try database.retailer(apiKey: token).map(Principal.retailer) }
            if token.hasPrefix(deviceTokenPrefix) {
                return try database.device(token: token, onStandby: reading).map(Principal.device)
            }
            if token.hasPrefix(tillKeyPrefix) { return try database.till(key: token).map(Principal.till) }
            return Secrets.constantTimeEqual(Secrets.digest(of: token), operatorTokenDigest) ? .operator : nil
        }
    }

    /// Runs a token's lookup unless its address (or the account a device token names) has failed too often with
    /// that kind of token; a lookup that finds nothing counts as a failure.
    private func authenticating<Found>(
        _ token: String, from request: HTTPRequest, lookUp: () throws -> Found?
    ) throws -> Found {
        let account = DeviceToken.accountID(in: token)?.postgresText
        if let account { try limit(.failedAuthenticationByAccount, account, taking: false) }
        return try authenticating(CredentialKind(bearerToken: token), from: request) {
            guard let found = try lookUp() else {
                if let account { rateLimiter.take(.failedAuthenticationByAccount, account) }
                return nil
            }
            return found
        }
    }

    /// Runs a lookup of a `kind` credential unless the address has failed too often with that kind; one that
    /// finds nothing takes from the address's bucket for the kind and answers 401 (the bearer token, if the
    /// credential was one, is invalid).
    func authenticating<Found>(
        _ kind: CredentialKind, from request: HTTPRequest, lookUp: () throws -> Found?
    ) throws -> Found {
        try limit(.failedAuthenticationByAddress, request.remoteAddress, kind: kind, taking: false)
        guard let found = try lookUp() else {
            rateLimiter.take(.failedAuthenticationByAddress, request.remoteAddress, kind: kind)
            throw request.bearerToken == nil ? APIFailure.unauthorized : APIFailure.invalidToken
        }
        return found
    }

    /// 429 when `client`'s bucket for `limit` (and `kind`) is empty; takes a token from it when `taking`.
    func limit(_ limit: RateLimit, _ client: String, kind: CredentialKind? = nil, taking: Bool)
        throws(APIFailure)
    {
        let wait = taking ? rateLimiter.take(limit, client, kind: kind) : rateLimiter.check(limit, client, kind: kind)
        if let wait { throw APIFailure.rateLimited(retryAfter: wait) }
    }

    var rotatedOut: APIFailure {
        APIFailure(
            403, .forbidden,
            "this API key was rotated out: until the new key's first use (24 h at most) it reads and syncs, but it "
                + "cannot rotate, sign in to the console or manage till keys; use the new key")
    }

    func forbidden(_ credential: String) -> APIFailure {
        APIFailure(403, .forbidden, "this operation needs \(credential)")
    }
}
