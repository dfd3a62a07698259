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

/// The handler of each route. Handlers throw `APIFailure`, `Refusal` or database errors;
/// `LoyaltyService` turns them into answers.
struct Endpoints: Sendable {
    typealias Handler = @Sendable (HTTPRequest) throws -> HTTPResponse

    let database: Database
    let operatorTokenDigest: [UInt8]
    let openAPIDocument: [UInt8]
    let metrics: Metrics
    let rateLimiter: RateLimiter

    var routes: [(method: String, pattern: String, handler: Handler)] {
        let core: [(method: String, pattern: String, handler: Handler)] = [
            ("GET", "/healthz", { _ in .json(200, ["status": "ok"]) }),
            ("GET", "/readyz", readiness),
            ("GET", "/metrics", metricsText),
            (
                "GET", "/openapi.yaml",
                { _ in
                    HTTPResponse(
                        status: 200, headers: ["Content-Type": "application/yaml"], body: openAPIDocument)
                }
            ),
            ("POST", "/v1/retailers", registerRetailer),
            ("GET", "/v1/retailer", showRetailer),
            ("POST", "/v1/retailer/key", rotateKey),
            ("GET", "/v1/retailer/offers", listOffers),
            ("PUT", "/v1/retailer/offers/{major}/{minor}", putOffer),
            ("DELETE", "/v1/retailer/offers/{major}/{minor}", deleteOffer),
            ("GET", "/v1/retailer/stats", statistics),
            ("GET", "/v1/retailer/stores", listStores),
            ("PUT", "/v1/retailer/stores/{store_id}", putStore),
            ("DELETE", "/v1/retailer/stores/{store_id}", deleteStore),
            ("POST", "/v1/accounts", createAccount),
            ("POST", "/v1/link-codes", createLinkCode),
            ("POST", "/v1/devices", linkDevice),
            ("GET", "/v1/devices", listDevices),
            ("DELETE", "/v1/devices/{id}", revokeDevice),
            ("GET", "/v1/catalog", catalog),
            ("POST", "/v1/seen", addSeen),
            ("GET", "/v1/seen", listSeen),
            ("POST", "/v1/redemptions", redeem),
            ("GET", "/v1/redemptions", listRedemptions),
        ]
        return core + tillRoutes + bulkOfferRoutes + figureRoutes + consoleRoutes
    }

    /// The routes anyone may call, "METHOD pattern": every other route needs a credential.
    static let openRoutes: Set<String> = [
        "GET /healthz", "GET /readyz", "GET /metrics", "GET /openapi.yaml", "POST /v1/accounts", "POST /v1/devices",
        "GET /console/", "GET /console/{file}", "POST /v1/console/session",
    ]

    // MARK: Operations

    func readiness(_ request: HTTPRequest) throws -> HTTPResponse {
        if database.isReady() { return .json(200, ["status": "ready"]) }
        // Every instance on this database is in the same state: taking them all out of the balancer would
        // refuse the reads they can still answer.
        guard database.standbyIsFit() else { throw APIFailure.databaseUnavailable }
        return .json(200, ["status": "reads_only"])
    }

    func metricsText(_ request: HTTPRequest) throws -> HTTPResponse {
        HTTPResponse(
            status: 200, headers: ["Content-Type": "text/plain; version=0.0.4"],
            body: Array(
                metrics.exposition(
                    pool: database.connectionPoolUsage, poolSize: database.connectionPoolSize,
                    standbys: database.standbyReads?.usage,
                    // A database that does not answer leaves these out; the rest still helps to see why.
                    catalog: try? database.catalogSize()
                ).utf8) + Array(rateLimiter.exposition().utf8))
    }

    // MARK: Retailers

    func registerRetailer(_ request: HTTPRequest) throws -> HTTPResponse {
        try requireOperator(request)
        let registration = try request.decodeBody(RetailerRegistration.self)
        return .json(201, try database.registerRetailer(registration))
    }

    func showRetailer(_ request: HTTPRequest) throws -> HTTPResponse {
        .json(200, try requireRetailer(request))
    }

    /// The same from the CLI and the console: the key that asked (the console's: the one its session came from)
    /// goes into its grace period, and with it the session rotating it; every other session ends now.
    func rotateKey(_ request: HTTPRequest) throws -> HTTPResponse {
        let access = try requireRetailerManagingCredentials(request)
        let key = try database.rotateKey(retailerID: access.retailer.id, replacing: access.keyDigest)
        try database.endConsoleSessions(
            retailerID: access.retailer.id, keeping: request.bearerToken == nil ? request.consoleSessionToken : nil)
        return .json(200, key)
    }

    func listOffers(_ request: HTTPRequest) throws -> HTTPResponse {
        let retailer = try requireRetailer(request)
        if let page = try offerPage(request, retailerID: retailer.id) { return .json(200, page) }
        return .json(200, OfferList(offers: try database.offers(retailerID: retailer.id)))
    }

    func putOffer(_ request: HTTPRequest) throws -> HTTPResponse {
        let retailer = try requireRetailer(request)
        let (major, minor) = try beacon(request)
        let draft = try request.decodeBody(OfferDraft.self)
        let (offer, created) = try database.putOffer(
            retailerID: retailer.id, major: major, minor: minor, draft: draft)
        return .json(created ? 201 : 200, offer)
    }

    func deleteOffer(_ request: HTTPRequest) throws -> HTTPResponse {
        let retailer = try requireRetailer(request)
        let (major, minor) = try beacon(request)
        guard try database.deleteOffer(retailerID: retailer.id, major: major, minor: minor) else {
            throw APIFailure(404, .notFound, "no offer at major \(major) minor \(minor)")
        }
        return HTTPResponse(status: 204)
    }

    func statistics(_ request: HTTPRequest) throws -> HTTPResponse {
        .json(200, try database.statistics(retailerID: try requireRetailer(request).id))
    }

    // MARK: Stores

    func listStores(_ request: HTTPRequest) throws -> HTTPResponse {
        .json(200, StoreList(stores: try database.stores(retailerID: try requireRetailer(request).id)))
    }

    func putStore(_ request: HTTPRequest) throws -> HTTPResponse {
        let retailer = try requireRetailer(request)
        let storeID = try Validation.storeID(request.pathParameters["store_id"] ?? "")
        let draft = try request.decodeBody(StoreDraft.self)
        let (stored, created) = try database.putStore(
            retailerID: retailer.id, storeID: storeID, draft: draft)
        return .json(created ? 201 : 200, stored)
    }

    func deleteStore(_ request: HTTPRequest) throws -> HTTPResponse {
        let retailer = try requireRetailer(request)
        let storeID = try Validation.storeID(request.pathParameters["store_id"] ?? "")
        guard try database.deleteStore(retailerID: retailer.id, storeID: storeID) else {
            throw APIFailure(404, .notFound, "no store \(storeID)")
        }
        return HTTPResponse(status: 204)
    }

    // MARK: Accounts and devices

    func createAccount(_ request: HTTPRequest) throws -> HTTPResponse {
        try limit(.accountCreation, request.remoteAddress, taking: true)
        let registration = try request.decodeBody(AccountRegistration.self, emptyIsObject: true)
        return .json(201, try database.createAccount(deviceName: registration.name))
    }

    func createLinkCode(_ request: HTTPRequest) throws -> HTTPResponse {
        let session = try requireDevice(request)
        try limit(.linkCodeCreation, session.accountID.uuidString, taking: true)
        return .json(201, try database.createLinkCode(for: session))
    }

    func linkDevice(_ request: HTTPRequest) throws -> HTTPResponse {
        let registration = try request.decodeBody(DeviceRegistration.self)
        guard let code = registration.code else {
            throw APIFailure.invalid(
                ValidationError(field: "code", message: "is required: create one with POST /v1/link-codes"))
        }
        try limit(.linkCodeAttempts, request.remoteAddress, taking: false)
        do {
            return .json(201, try database.linkDevice(code: code, name: registration.name))
        } catch Refusal.linkCodeInvalid {
            rateLimiter.take(.linkCodeAttempts, request.remoteAddress)
            throw Refusal.linkCodeInvalid
        }
    }

    func listDevices(_ request: HTTPRequest) throws -> HTTPResponse {
        .json(200, try database.devices(of: try requireDevice(request)))
    }

    func revokeDevice(_ request: HTTPRequest) throws -> HTTPResponse {
        let session = try requireDevice(request)
        guard let deviceID = request.pathParameters["id"].flatMap(UUID.init(uuidString:)),
            try database.revokeDevice(deviceID, of: session.accountID)
        else { throw APIFailure(404, .notFound, "this account has no such device") }
        return HTTPResponse(status: 204)
    }

    // MARK: Catalog, seen, redemptions

    func catalog(_ request: HTTPRequest) throws -> HTTPResponse {
        let since = try cursor(request)
        let head = try requireDeviceWithCatalogHead(request, atLeast: since?.version)
        let limit = try pageLimit(request)
        let area = try request.query["near"].map { near throws(ValidationError) in
            try CatalogArea(near: near, radiusKilometres: request.query["radius_km"])
        }
        if area == nil, request.query["radius_km"] != nil {
            throw ValidationError(field: "radius_km", message: "needs near=LAT,LON")
        }
        // A near page is whole and ignores `since` (see Database.nearPage); a whole-feed delta on top of
        // an area's copy would be wrong.
        if area == nil, since?.near == true {
            throw APIFailure(
                400, .badRequest, "since is the cursor of a near page: send the same near, or no since",
                field: "since")
        }
        let headTag = Self.entityTag(head, area)
        // The 304 says what the 200 said: a cache updates its stored copy's headers from it (RFC 9111 section
        // 4.3.4), and a no-store there would make the copy one it may not keep.
        if let tags = request.header("if-none-match"), Self.matches(tags, headTag) {
            return HTTPResponse(status: 304, headers: ["ETag": headTag, "Cache-Control": "no-cache"])
        }
        let (page, through) = try database.catalog(since: area == nil ? since : nil, limit: limit, area: area)
        var headers = ["ETag": Self.entityTag(through, area), "Cache-Control": "no-cache"]
        if page.more {
            // RFC 8288: the client can ask for the next page while it still reads this one.
            let limitParameter = request.query["limit"] == nil ? "" : "&limit=\(limit)"
            headers["Link"] = "</v1/catalog?since=\(page.cursor)\(limitParameter)>; rel=\"next\""
        }
        // The page's own coder writes what JSONEncoder would, several times faster.
        guard let body = try? page.json() else { return .json(200, page, headers: headers) }
        headers["Content-Type"] = "application/json"
        return HTTPResponse(status: 200, headers: headers, body: body)
    }

    func addSeen(_ request: HTTPRequest) throws -> HTTPResponse {
        let session = try requireDevice(request)
        let push = try request.decodeBody(SeenPush.self)
        return .json(
            200, SeenPushResult(added: try database.addSeen(push.items, accountID: session.accountID)))
    }

    func listSeen(_ request: HTTPRequest) throws -> HTTPResponse {
        let session = try requireDevice(request, reading: true)
        return .json(200, try database.seen(accountID: session.accountID, since: try cursor(request)))
    }

    func redeem(_ request: HTTPRequest) throws -> HTTPResponse {
        let session = try requireDevice(request)
        let key = try idempotencyKey(request)
        let body = try request.decodeBody(RedemptionRequest.self)
        let (redemption, created) = try database.redeem(
            offerID: body.offerID, accountID: session.accountID, idempotencyKey: key)
        return .json(201, redemption, headers: created ? [:] : ["Idempotent-Replayed": "true"])
    }

    func listRedemptions(_ request: HTTPRequest) throws -> HTTPResponse {
        .json(200, try database.redemptions(accountID: try requireDevice(request, reading: true).accountID))
    }

    // MARK: Parameters

    /// The request's Idempotency-Key (a redemption's, a till's accept), if it sent one.
    func idempotencyKey(_ request: HTTPRequest) throws(APIFailure) -> String? {
        guard let key = request.header("idempotency-key") else { return nil }
        guard !key.isEmpty, key.count <= 200, key.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) })
        else {
            throw APIFailure(
                400, .badRequest, "Idempotency-Key must be 1 to 200 printable ASCII characters",
                field: "Idempotency-Key")
        }
        return key
    }

    func beacon(_ request: HTTPRequest) throws(APIFailure) -> (major: UInt16, minor: UInt16) {
        do {
            return (
                try Validation.beaconNumber(request.pathParameters["major"] ?? "", field: "major"),
                try Validation.beaconNumber(request.pathParameters["minor"] ?? "", field: "minor")
            )
        } catch {
            throw APIFailure.invalid(error)
        }
    }

    private func pageLimit(_ request: HTTPRequest) throws(ValidationError) -> Int {
        guard let text = request.query["limit"] else { return catalogPageLimit }
        guard let limit = Int(text), (1...catalogPageLimit).contains(limit) else {
            throw ValidationError(field: "limit", message: "must be an integer from 1 to \(catalogPageLimit)")
        }
        return limit
    }

    private func cursor(_ request: HTTPRequest) throws(APIFailure) -> FeedCursor? {
        guard let text = request.query["since"], !text.isEmpty else { return nil }
        guard let cursor = FeedCursor(text) else {
            throw APIFailure(
                400, .badRequest, "since must be a cursor this server returned", field: "since")
        }
        return cursor
    }

    /// The feed's state, and for a near page the area it covers (no commas: If-None-Match lists tags
    /// separated by commas).
    private static func entityTag(_ head: FeedCursor, _ area: CatalogArea?) -> String {
        guard let area else { return head.entityTag }
        return
            "\"\(head.generation.uuidString.lowercased())-\(head.version)-near-\(area.latitude)_\(area.longitude)_\(area.radiusKilometres)\""
    }

    /// RFC 9110 If-None-Match: a list of entity tags, or `*`. Compared as bytes, as the RFC compares opaque tags,
    /// in place: every 304 asks, and splitting the list cost more than the rest of the comparison.
    private static func matches(_ header: String, _ tag: String) -> Bool {
        let isOptionalWhitespace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var (header, tag) = (header, tag)
        return header.withUTF8 { header in
            tag.withUTF8 { tag in
                var start = 0
                while start < header.count {
                    let end = header[start...].firstIndex(of: UInt8(ascii: ",")) ?? header.count
                    var (lower, upper) = (start, end)
                    while lower < upper, isOptionalWhitespace(header[lower]) { lower += 1 }
                    while upper > lower, isOptionalWhitespace(header[upper - 1]) { upper -= 1 }
                    if upper - lower == 1 && header[lower] == UInt8(ascii: "*") { return true }
                    if upper - lower >= 2 && header[lower] == UInt8(ascii: "W") && header[lower + 1] == UInt8(ascii: "/") {
                        lower += 2
                    }
                    if upper - lower == tag.count && header[lower..<upper].elementsEqual(tag) { return true }
                    start = end + 1
                }
                return false
            }
        }
    }

    // MARK: Authentication

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
    /// finds nothing takes from the address's bucket for the kind and answers 401.
    func authenticating<Found>(
        _ kind: CredentialKind, from request: HTTPRequest, lookUp: () throws -> Found?
    ) throws -> Found {
        try limit(.failedAuthenticationByAddress, request.remoteAddress, kind: kind, taking: false)
        guard let found = try lookUp() else {
            rateLimiter.take(.failedAuthenticationByAddress, request.remoteAddress, kind: kind)
            throw APIFailure.unauthorized
        }
        return found
    }

    /// 429 when `client`'s bucket for `limit` (and `kind`) is empty; takes a token from it when `taking`.
    private func limit(_ limit: RateLimit, _ client: String, kind: CredentialKind? = nil, taking: Bool)
        throws(APIFailure)
    {
        let wait = taking ? rateLimiter.take(limit, client, kind: kind) : rateLimiter.check(limit, client, kind: kind)
        if let wait { throw APIFailure.rateLimited(retryAfter: wait) }
    }

    private func requireOperator(_ request: HTTPRequest) throws {
        guard case .operator = try principal(request) else { throw forbidden("the operator token") }
    }

    /// The retailer of an API key or console session, a rotated-out key's too: for reading and syncing.
    func requireRetailer(_ request: HTTPRequest) throws -> Retailer {
        try requireRetailerAccess(request).retailer
    }

    /// For what makes or ends credentials (a new API key, till keys): not with a rotated-out key, nor a console
    /// session made with one, which may have leaked.
    func requireRetailerManagingCredentials(_ request: HTTPRequest) throws -> RetailerAccess {
        let access = try requireRetailerAccess(request)
        guard !access.isRotatedOut else { throw rotatedOut }
        return access
    }

    private func requireRetailerAccess(_ request: HTTPRequest) throws -> RetailerAccess {
        switch try principal(request) {
        case .retailer(let access), .console(let access, _): return access
        default: throw forbidden("a retailer API key")
        }
    }

    var rotatedOut: APIFailure {
        APIFailure(
            403, .forbidden,
            "this API key was rotated out: until the new key's first use (24 h at most) it reads and syncs, but it "
                + "cannot rotate, sign in to the console or manage till keys; use the new key")
    }

    /// `requireDevice` and the catalog feed's head in one database round trip.
    private func requireDeviceWithCatalogHead(_ request: HTTPRequest, atLeast version: Int64?) throws -> FeedCursor {
        guard let token = request.bearerToken, token.hasPrefix(deviceTokenPrefix) else {
            // Not a device token: the same 401 or 403 as every shopper route.
            _ = try requireDevice(request)
            throw forbidden("a device token")
        }
        return try authenticating(token, from: request) { try database.catalogHead(deviceToken: token, atLeast: version) }
    }

    private func requireDevice(_ request: HTTPRequest, reading: Bool = false) throws -> DeviceSession {
        guard case .device(let session) = try principal(request, reading: reading) else {
            throw forbidden("a device token")
        }
        return session
    }

    func forbidden(_ credential: String) -> APIFailure {
        APIFailure(403, .forbidden, "this operation needs \(credential)")
    }
}
