import Digest
import Foundation
import HTTPServer
import JSONCoding
import LoyaltyAPI

/// The shopper's routes: an account and its devices, the catalog, the seen set, sightings of secure beacons and
/// redemptions.
extension Endpoints {
    var shopperRoutes: [Route] {
        [
            Route("POST", "/v1/accounts", createAccount),
            Route("POST", "/v1/link-codes", deviceToken, createLinkCode),
            Route("POST", "/v1/devices", linkDevice),
            Route("GET", "/v1/devices", deviceToken, listDevices),
            Route("DELETE", "/v1/devices/{id}", deviceToken, revokeDevice),
            Route("GET", "/v1/account/export", deviceToken, exportAccount),
            Route("GET", "/v1/account/export/seen", deviceToken, exportSeen),
            Route("GET", "/v1/account/export/sightings", deviceToken, exportSightings),
            Route("DELETE", "/v1/account", deviceToken, deleteAccount),
            Route("GET", "/v1/catalog", deviceTokenWithCatalogHead, catalog),
            Route("GET", "/v1/directory", deviceTokenWithCatalogHead, directory),
            Route("POST", "/v1/seen", deviceToken, addSeen),
            Route("GET", "/v1/seen", deviceTokenOnStandby, listSeen),
            Route("POST", "/v1/sightings", deviceToken, resolveSightings),
            Route("POST", "/v1/redemptions", deviceToken, redeem),
            Route("GET", "/v1/redemptions", deviceTokenOnStandby, listRedemptions),
            Route("GET", "/v1/preferences", deviceTokenOnStandby, showPreferences),
            Route("PUT", "/v1/preferences", deviceToken, putPreferences),
            Route("PUT", "/v1/preferences/muted-retailers/{retailer_id}", deviceToken, muteRetailer),
            Route("DELETE", "/v1/preferences/muted-retailers/{retailer_id}", deviceToken, unmuteRetailer),
        ]
    }

    // MARK: Accounts and devices

    func createAccount(_ request: HTTPRequest) throws -> HTTPResponse {
        try limit(.accountCreation, request.remoteAddress, taking: true)
        let registration = try request.decodeBody(AccountRegistration.self, emptyIsObject: true)
        return .json(201, try database.createAccount(deviceName: registration.name))
    }

    func createLinkCode(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
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

    func listDevices(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        .json(200, try database.devices(of: session))
    }

    func revokeDevice(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        guard let deviceID = request.pathParameters["id"].flatMap(UUID.init(uuidString:)),
            try database.revokeDevice(deviceID, of: session.accountID)
        else { throw APIFailure(404, .notFound, "this account has no such device") }
        return HTTPResponse(status: 204)
    }

    // MARK: The shopper's own data (docs/PRIVACY.md)

    func exportAccount(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        .json(200, try database.accountExport(of: session), headers: ["Cache-Control": "no-store"])
    }

    func exportSeen(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        let after = try request.query["after"].map { text throws(ValidationError) in
            guard let id = UUID(uuidString: text) else {
                throw ValidationError(field: "after", message: "must be the next of the previous page (an offer id)")
            }
            return id
        }
        let page = try database.exportedSeen(accountID: session.accountID, after: after, limit: try exportLimit(request))
        return .json(200, page, headers: ["Cache-Control": "no-store"])
    }

    func exportSightings(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        let after = try request.query["after"].map { text throws(ValidationError) in
            guard let key = SightingKey(text: text) else {
                throw ValidationError(field: "after", message: "must be the next of the previous page")
            }
            return key
        }
        let page = try database.exportedSightings(
            accountID: session.accountID, after: after, limit: try exportLimit(request))
        return .json(200, page, headers: ["Cache-Control": "no-store"])
    }

    /// Deleted at once, in one transaction; the token that asked stops working with the rest.
    func deleteAccount(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        guard let deletion = try database.deleteAccount(session.accountID) else { throw Refusal.accountDeleted }
        return .json(200, deletion)
    }

    private func exportLimit(_ request: HTTPRequest) throws(ValidationError) -> Int {
        let maximum = AccountExportPage<ExportedSeen>.maximumLimit
        guard let text = request.query["limit"] else { return maximum }
        guard let limit = Int(text), (1...maximum).contains(limit) else {
            throw ValidationError(field: "limit", message: "must be an integer from 1 to \(maximum)")
        }
        return limit
    }

    // MARK: Catalog, seen, redemptions

    func catalog(_ request: HTTPRequest, _ position: CatalogPosition) throws -> HTTPResponse {
        let (head, since) = (position.head, position.since)
        let limit = try pageLimit(request)
        let area = try request.query["near"].map { near throws(ValidationError) in
            try CatalogArea(near: near, radiusKilometres: request.query["radius_km"])
        }
        if area == nil, request.query["radius_km"] != nil {
            throw ValidationError(field: "radius_km", message: "needs near=LAT,LON")
        }
        if let part = try catalogPart(request) {
            guard area == nil else {
                throw APIFailure(400, .badRequest, "near cannot go with retailers or bucket: ask for one", field: "near")
            }
            return try catalogPart(request, part, since: since, limit: limit, feedHead: head)
        }
        if since?.part == true {
            throw APIFailure(
                400, .badRequest, "since is the cursor of some retailers' page: send the same retailers or bucket",
                field: "since")
        }
        // A near page is never a delta (see Database.nearPage): `since` only resumes an area's pages, and a
        // whole-feed delta on top of an area's copy would be wrong.
        if area == nil, since?.near == true {
            throw APIFailure(
                400, .badRequest, "since is the cursor of a near page: send the same near, or no since",
                field: "since")
        }
        let headTag = Self.entityTag(head, area)
        guard request.ifNoneMatchNames(headTag) else {
            return try catalogPage(request, since: since, limit: limit, area: area)
        }
        // The 304 says what the 200 said: a cache updates its stored copy's headers from it (RFC 9111 section
        // 4.3.4), and a no-store there would make the copy one it may not keep. Its body is empty: libmicrohttpd
        // 0.9.75 writes the body's length into every 304, and clients built on http_parser (wrk's) then wait for a
        // body that never comes: it says 0, which RFC 9110 section 8.6 does not allow (only the 200's length).
        return HTTPResponse(status: 304, headers: ["ETag": "W/" + headTag, "Cache-Control": "no-cache"])
    }

    /// The catalog's page from `since` (the area's whole page with `area`), as a 200.
    private func catalogPage(_ request: HTTPRequest, since: FeedCursor?, limit: Int, area: CatalogArea?) throws
        -> HTTPResponse
    {
        catalogPageBuilds.wait()
        defer { catalogPageBuilds.signal() }
        let (page, through) = try database.catalog(since: since, limit: limit, area: area)
        // Read after a device showed a tag the catalog check did not hold (another server's write, whose
        // notification is still on its way): no older tag may be answered 304 from now on. A standby's read is at
        // most the primary's head too.
        database.catalogCheck?.advance(to: through, sameGenerationOnly: true)
        // Weak: two answers with the same tag differ in `server_time`, so they are not the same bytes.
        var headers = ["ETag": "W/" + Self.entityTag(through, area), "Cache-Control": "no-cache"]
        if page.more {
            // RFC 8288: the client can ask for the next page while it still reads this one.
            let limitParameter = request.query["limit"] == nil ? "" : "&limit=\(limit)"
            // The comma escaped: a Link header's values are separated by commas.
            let areaParameters = area.map {
                "&near=\($0.latitude)%2C\($0.longitude)&radius_km=\($0.radiusKilometres)"
            } ?? ""
            headers["Link"] = "</v1/catalog?since=\(page.cursor)\(limitParameter)\(areaParameters)>; rel=\"next\""
        }
        // The page's own coder writes what JSONEncoder would, several times faster.
        guard let body = try? page.json() else { return .json(200, page, headers: headers) }
        headers["Content-Type"] = "application/json"
        return HTTPResponse(status: 200, headers: headers, body: body)
    }

    /// Some retailers' rows (`retailers=ID,ID` or `bucket=B&buckets=N`): the same pages as the whole feed's, with a
    /// tag of their own naming the part's head, so a device is told 304 while none of its retailers changed.
    private func catalogPart(
        _ request: HTTPRequest, _ part: [UUID], since: FeedCursor?, limit: Int, feedHead: FeedCursor
    ) throws -> HTTPResponse {
        let name = Self.partName(part)
        var head = feedHead
        head.version = try database.partHead(part)
        let headTag = "\"\(head.generation.uuidString.lowercased())-\(head.version)-part-\(name)\""
        if request.ifNoneMatchNames(headTag) {
            return HTTPResponse(status: 304, headers: ["ETag": "W/" + headTag, "Cache-Control": "no-cache"])
        }
        catalogPageBuilds.wait()
        defer { catalogPageBuilds.signal() }
        let (page, through) = try database.catalog(since: since, limit: limit, part: part)
        // A page with more after it names where it stops, so it never matches the head's tag.
        let tag =
            page.more ? "\"\(through.generation.uuidString.lowercased())-\(through.version)-part-\(name)-more\"" : headTag
        var headers = ["ETag": "W/" + tag, "Cache-Control": "no-cache", "Content-Type": "application/json"]
        if page.more {
            let query = request.query.filter { $0.key != "since" }.sorted { $0.key < $1.key }
                .map { "\($0.key)=\($0.value.replacingOccurrences(of: ",", with: "%2C"))" }.joined(separator: "&")
            headers["Link"] = "</v1/catalog?since=\(page.cursor)&\(query)>; rel=\"next\""
        }
        guard let body = try? page.json() else { return .json(200, page, headers: headers) }
        return HTTPResponse(status: 200, headers: headers, body: body)
    }

    /// `GET /v1/directory`: every retailer without its offers. Its tag is the feed's head: 304 while nothing changed.
    func directory(_ request: HTTPRequest, _ position: CatalogPosition) throws -> HTTPResponse {
        let head = position.head
        let tag = "\"\(head.generation.uuidString.lowercased())-\(head.version)-directory\""
        if request.ifNoneMatchNames(tag) {
            return HTTPResponse(status: 304, headers: ["ETag": "W/" + tag, "Cache-Control": "no-cache"])
        }
        catalogPageBuilds.wait()
        defer { catalogPageBuilds.signal() }
        // The head read with the token may be older than the directory read after it: a client holding that older
        // tag is then sent this copy again, never told 304 for one it lacks.
        return .json(200, try database.directory(), headers: ["ETag": "W/" + tag, "Cache-Control": "no-cache"])
    }

    func addSeen(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        let push = try request.decodeBody(SeenPush.self)
        return .json(
            200, SeenPushResult(added: try database.addSeen(push.items, accountID: session.accountID)))
    }

    func listSeen(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        .json(200, try database.seen(accountID: session.accountID, since: try cursor(request)))
    }

    /// Each sighting that resolves is answered and recorded as the account's verified presence; one that does not
    /// is left out, the same whatever the reason (no oracle of other retailers' beacons), and so is one at a placed
    /// beacon that the account could not have reached since its previous verified sighting (an impossible journey).
    func resolveSightings(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        do {
            try limit(.sightings, session.deviceID.uuidString, taking: true)
        } catch {
            // A device at the limit is a flood (random identifiers sent to map someone's fleet, or a broken client):
            // one line an hour, not one a request.
            logOnce(
                "sightings_flood", session,
                [
                    "device_id": .string(session.deviceID.uuidString.lowercased()),
                    "account_id": .string(session.accountID.uuidString.lowercased()),
                    "reason": .string("rate_limited"),
                ])
            throw error
        }
        let batch = try request.decodeBody(SightingBatch.self)
        let now = database.clock()
        var found: [(index: Int, window: SecureBeaconTable.Window, sighting: Sighting)] = []
        let windows = try secureBeacons.resolve(batch.sightings, at: now)
        for (index, (sighting, window)) in zip(batch.sightings, windows).enumerated() {
            guard let window else { continue }
            found.append((index, window, sighting))
        }
        let possible = try possibleJourneys(found.map { ($0.window.beacon, $0.sighting.heardAt) }, session: session)
        var resolved: [ResolvedBeacon] = []
        var verified: [(window: SecureBeaconTable.Window, heardAt: Date)] = []
        var telemetry: [(beacon: SecureBeacon, heardAt: Date, telemetry: SightingTelemetry)] = []
        for (position, (index, window, sighting)) in found.enumerated() where possible[position] {
            let beacon = window.beacon
            resolved.append(
                ResolvedBeacon(
                    index: index, retailerID: beacon.retailerID, retailerName: beacon.retailerName, major: beacon.major,
                    minor: beacon.minor, validUntil: window.end))
            verified.append((window, sighting.heardAt))
            if let tlm = sighting.tlm { telemetry.append((beacon, sighting.heardAt, tlm)) }
        }
        try database.recordSightings(verified, accountID: session.accountID)
        try database.recordTelemetry(telemetry)
        return .json(200, SightingResolution(beacons: resolved))
    }

    /// For each resolved sighting, in order: whether the account could have been at its beacon's store, coming from
    /// its previous verified sighting at a placed beacon (or the batch's previous one, by heard time). A beacon placed
    /// in no store is always possible and moves no one. Each refusal is counted; the device is logged once an hour.
    private func possibleJourneys(_ sightings: [(beacon: SecureBeacon, heardAt: Date)], session: DeviceSession) throws
        -> [Bool]
    {
        var possible = [Bool](repeating: true, count: sightings.count)
        let locations = try database.storeLocations(of: sightings.map(\.beacon))
        guard !locations.isEmpty, var previous = try database.latestPlacedVisit(accountID: session.accountID) else {
            return possible
        }
        for position in sightings.indices.sorted(by: { sightings[$0].heardAt < sightings[$1].heardAt }) {
            let (beacon, heardAt) = sightings[position]
            guard
                let location = locations[Database.placementKey(beacon.retailerID, beacon.major, beacon.minor)]
            else { continue }
            let visit = JourneyRule.Visit(location: location, heardAt: heardAt)
            let journey = JourneyRule.isImpossible(from: previous, to: visit)
            guard journey.impossible else {
                previous = visit
                continue
            }
            possible[position] = false
            metrics.recordImpossibleJourney()
            logOnce(
                "impossible_journey", session,
                [
                    "device_id": .string(session.deviceID.uuidString.lowercased()),
                    "account_id": .string(session.accountID.uuidString.lowercased()),
                    "retailer_id": .string(beacon.retailerID.uuidString.lowercased()),
                    "beacon": .string("\(beacon.major):\(beacon.minor)"), "km": .double((journey.metres / 100).rounded() / 10),
                    "seconds": .double(abs(heardAt.timeIntervalSince(previous.heardAt)).rounded()),
                ])
        }
        return possible
    }

    /// `event` of the session's device, at most once an hour per device and event.
    private func logOnce(_ event: String, _ session: DeviceSession, _ fields: KeyValuePairs<String, JSONValue?>) {
        let now = database.clock()
        guard deviceEventLog.shouldLog("\(event) \(session.deviceID)", at: now) else { return }
        log(ServerLog.line(.warning, event, fields, time: now))
    }

    func redeem(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        let key = try idempotencyKey(request)
        let body = try request.decodeBody(RedemptionRequest.self)
        let (redemption, created) = try database.redeem(
            offerID: body.offerID, accountID: session.accountID, idempotencyKey: key)
        return .json(201, redemption, headers: created ? [:] : ["Idempotent-Replayed": "true"])
    }

    func listRedemptions(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        .json(200, try database.redemptions(accountID: session.accountID))
    }

    // MARK: The shopper's attention

    func showPreferences(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        .json(200, try database.preferences(accountID: session.accountID))
    }

    func putPreferences(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        let settings = try request.decodeBody(PreferenceSettings.self)
        return .json(200, try database.setPreferences(settings, accountID: session.accountID))
    }

    func muteRetailer(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        try setMuted(true, request, session)
    }

    func unmuteRetailer(_ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        try setMuted(false, request, session)
    }

    private func setMuted(_ muted: Bool, _ request: HTTPRequest, _ session: DeviceSession) throws -> HTTPResponse {
        guard let retailerID = request.pathParameters["retailer_id"].flatMap(UUID.init(uuidString:)),
            let preferences = try database.setMuted(muted, retailerID: retailerID, accountID: session.accountID)
        else { throw APIFailure(404, .notFound, "no retailer has this id: take it from `loyalty offers --json`") }
        return .json(200, preferences)
    }

    // MARK: Parameters

    /// The retailers `retailers=ID,ID,...` names (at most `maximumPartRetailers`), or those of `bucket=B&buckets=N`;
    /// nil for the whole feed.
    private func catalogPart(_ request: HTTPRequest) throws -> [UUID]? {
        let bucket = request.query["bucket"]
        let buckets = request.query["buckets"]
        if let list = request.query["retailers"] {
            guard bucket == nil, buckets == nil else {
                throw ValidationError(field: "retailers", message: "cannot go with bucket: ask for one or the other")
            }
            let ids = list.split(separator: ",", omittingEmptySubsequences: false).map { UUID(uuidString: String($0)) }
            guard !ids.isEmpty, ids.count <= Self.maximumPartRetailers, !ids.contains(nil) else {
                throw ValidationError(
                    field: "retailers", message: "must be 1 to \(Self.maximumPartRetailers) retailer ids, comma-separated")
            }
            return Array(Set(ids.compactMap { $0 })).sorted { $0.uuidString < $1.uuidString }
        }
        guard bucket != nil || buckets != nil else { return nil }
        guard let count = buckets.flatMap({ Int($0) }), (1...Database.maximumBuckets).contains(count) else {
            throw ValidationError(
                field: "buckets", message: "must be an integer from 1 to \(Database.maximumBuckets), as the directory says")
        }
        guard let number = bucket.flatMap({ Int($0) }), (0..<count).contains(number) else {
            throw ValidationError(field: "bucket", message: "must be an integer from 0 to buckets - 1")
        }
        return try database.retailers(inBucket: number, of: count)
    }

    /// The most retailers one `retailers=` asks for: a working set is a few dozen.
    static let maximumPartRetailers = 200

    /// A short name of a set of retailers for its tag: the first 12 bytes of the SHA-256 of their sorted ids.
    private static func partName(_ ids: [UUID]) -> String {
        let digest = SHA256.hash(Array(ids.map(\.uuidString).joined(separator: ",").utf8))
        return Hex.text(Array(digest.prefix(12)))
    }

    private func pageLimit(_ request: HTTPRequest) throws(ValidationError) -> Int {
        guard let text = request.query["limit"] else { return catalogPageLimit }
        guard let limit = Int(text), (1...catalogPageLimit).contains(limit) else {
            throw ValidationError(field: "limit", message: "must be an integer from 1 to \(catalogPageLimit)")
        }
        return limit
    }

    /// The feed's state, and for a near page the area it covers and where the next page starts (a page with
    /// more after it never matches the head's tag, so a client that stopped there is not told 304). No commas:
    /// If-None-Match lists tags separated by commas.
    private static func entityTag(_ head: FeedCursor, _ area: CatalogArea?) -> String {
        guard let area else { return head.entityTag }
        let next = head.nearPosition == nil ? "" : "-\(head.encoded())"
        return
            "\"\(head.generation.uuidString.lowercased())-\(head.version)-near-\(area.latitude)_\(area.longitude)_\(area.radiusKilometres)\(next)\""
    }
}
