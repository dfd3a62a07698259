import Digest
import Foundation
import HTTPServer
import LoyaltyAPI

/// The retailer's routes, from the CLI's API key or the console's session: the retailer and its key, offers
/// (one by one and in bulk as CSV), stores, figures over time, beacon health and the fleet, and till keys.
extension Endpoints {
    var retailerRoutes: [Route] {
        [
            Route("GET", "/v1/retailer", retailerKey) { _, access in .json(200, access.retailer) },
            Route("POST", "/v1/retailer/key", currentRetailerKey, rotateKey),
            Route("GET", "/v1/retailer/offers", retailerKey, listOffers),
            Route("PUT", "/v1/retailer/offers/{major}/{minor}", retailerKey, putOffer),
            Route("DELETE", "/v1/retailer/offers/{major}/{minor}", retailerKey, deleteOffer),
            Route("POST", "/v1/retailer/offers/import", retailerKey, maxBodyBytes: 32 << 20, importOffers),
            Route("GET", "/v1/retailer/offers/export", retailerKey, exportOffers),
            Route("GET", "/v1/retailer/stats", retailerKey, statistics),
            Route("GET", "/v1/retailer/stores", retailerKey, listStores),
            Route("PUT", "/v1/retailer/stores/{store_id}", retailerKey, putStore),
            Route("DELETE", "/v1/retailer/stores/{store_id}", retailerKey, deleteStore),
            Route("GET", "/v1/retailer/figures", retailerKey, figures),
            Route("GET", "/v1/retailer/beacons", retailerKey, beaconHealth),
            Route("GET", "/v1/retailer/fleet", retailerKey, fleet),
            Route("PUT", "/v1/retailer/fleet/{major}/{minor}", retailerKey, labelBeacon),
            Route("POST", "/v1/retailer/fleet/{major}/{minor}/secure", currentRetailerKey, secureBeacon),
            Route("GET", "/v1/retailer/eid-params", currentRetailerKey, eidParameters),
            Route("POST", "/v1/retailer/fleet/{major}/{minor}/eid-registration", currentRetailerKey, registerBeacon),
            Route("POST", "/v1/retailer/till-keys", currentRetailerKey, createTillKey),
            Route("GET", "/v1/retailer/till-keys", retailerKey, listTillKeys),
            Route("DELETE", "/v1/retailer/till-keys/{id}", currentRetailerKey, revokeTillKey),
        ]
    }

    /// The same from the CLI and the console: the key that asked (the console's: the one its session came from)
    /// goes into its grace period, and with it the session rotating it; every other session ends now.
    func rotateKey(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        let key = try database.rotateKey(retailerID: access.retailer.id, replacing: access.keyDigest)
        try database.endConsoleSessions(
            retailerID: access.retailer.id, keeping: request.bearerToken == nil ? request.consoleSessionToken : nil)
        return .json(200, key)
    }

    // MARK: Offers

    func listOffers(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        if let page = try offerPage(request, retailerID: access.retailer.id) { return .json(200, page) }
        return .json(200, OfferList(offers: try database.offers(retailerID: access.retailer.id)))
    }

    func putOffer(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        let (major, minor) = try beacon(request)
        let draft = try request.decodeBody(OfferDraft.self)
        let (offer, created) = try database.putOffer(
            retailerID: access.retailer.id, major: major, minor: minor, draft: draft)
        return .json(created ? 201 : 200, offer)
    }

    func deleteOffer(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        let (major, minor) = try beacon(request)
        guard try database.deleteOffer(retailerID: access.retailer.id, major: major, minor: minor) else {
            throw APIFailure(404, .notFound, "no offer at major \(major) minor \(minor)")
        }
        return HTTPResponse(status: 204)
    }

    /// All rows or none: every problem is listed (up to `OfferCSV.maxProblemsListed`) with its line, and
    /// nothing is written while there is one.
    func importOffers(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        switch OfferCSV.parse(request.body) {
        case .success(let rows):
            return .json(200, try database.importOffers(retailerID: access.retailer.id, rows: rows))
        case .failure(let failure):
            let problems = failure.problems
            let more = problems.count > OfferCSV.maxProblemsListed
                ? " (and \(problems.count - OfferCSV.maxProblemsListed) more)" : ""
            var answer = APIFailure(
                422, .validationFailed, "nothing was imported: \(problems[0])\(more)", field: problems[0].field)
            answer.body.error.rows = Array(problems.prefix(OfferCSV.maxProblemsListed))
            throw answer
        }
    }

    func exportOffers(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        HTTPResponse(
            status: 200,
            headers: [
                "Content-Type": "text/csv; charset=utf-8",
                "Content-Disposition": "attachment; filename=\"offers.csv\"",
            ],
            body: Array(OfferCSV.export(try database.offers(retailerID: access.retailer.id)).utf8))
    }

    /// With `limit` (1 to 1,000) or `after` (`MAJOR.MINOR`, a page's `next`): one page of the offers; nil
    /// without either (the whole list, as before paging).
    private func offerPage(_ request: HTTPRequest, retailerID: UUID) throws -> OfferList? {
        guard request.query["limit"] != nil || request.query["after"] != nil else { return nil }
        let (after, limit) = try pageBounds(request, limits: 1...1000, default: 100)
        return try database.offerPage(retailerID: retailerID, after: after, limit: limit)
    }

    /// A page's `after` (`MAJOR.MINOR`, the previous page's `next`) and `limit`.
    private func pageBounds(_ request: HTTPRequest, limits: ClosedRange<Int>, default value: Int)
        throws(ValidationError) -> (after: (major: UInt16, minor: UInt16)?, limit: Int)
    {
        var limit = value
        if let limitText = request.query["limit"] {
            guard let value = Int(limitText), limits.contains(value) else {
                throw ValidationError(
                    field: "limit", message: "must be an integer from \(limits.lowerBound) to \(limits.upperBound)")
            }
            limit = value
        }
        guard let afterText = request.query["after"] else { return (nil, limit) }
        let parts = afterText.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let major = UInt16(parts[0]), let minor = UInt16(parts[1]) else {
            throw ValidationError(field: "after", message: "must be MAJOR.MINOR, a page's next")
        }
        return ((major, minor), limit)
    }

    func statistics(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        .json(200, try database.statistics(retailerID: access.retailer.id))
    }

    // MARK: Stores

    func listStores(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        .json(200, StoreList(stores: try database.stores(retailerID: access.retailer.id)))
    }

    func putStore(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        let storeID = try Validation.storeID(request.pathParameters["store_id"] ?? "")
        let draft = try request.decodeBody(StoreDraft.self)
        let (stored, created) = try database.putStore(
            retailerID: access.retailer.id, storeID: storeID, draft: draft)
        return .json(created ? 201 : 200, stored)
    }

    func deleteStore(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        let storeID = try Validation.storeID(request.pathParameters["store_id"] ?? "")
        guard try database.deleteStore(retailerID: access.retailer.id, storeID: storeID) else {
            throw APIFailure(404, .notFound, "no store \(storeID)")
        }
        return HTTPResponse(status: 204)
    }

    // MARK: Figures and the fleet

    func figures(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        .json(
            200, try database.figures(retailerID: access.retailer.id, days: try days(request, "days", default: 30)))
    }

    func beaconHealth(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        .json(
            200,
            try database.beaconHealth(
                retailerID: access.retailer.id, quietDays: try days(request, "quiet_days", default: 7)))
    }

    /// Always a page (`limit`, 1 to 500, default 500): any key may ask, so no answer grows with the fleet.
    func fleet(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        let (after, limit) = try pageBounds(
            request, limits: Validation.fleetPageLimit, default: Validation.fleetPageLimit.upperBound)
        return .json(
            200,
            try database.fleet(
                retailerID: access.retailer.id, days: try days(request, "days", default: 14),
                quietDays: try days(request, "quiet_days", default: 7), after: after, limit: limit))
    }

    func labelBeacon(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        let (major, minor) = try beacon(request)
        let label = try request.decodeBody(BeaconLabel.self)
        let created = try database.labelBeacon(
            retailerID: access.retailer.id, major: major, minor: minor, label: label)
        return .json(created ? 201 : 200, label)
    }

    /// Hands out a new identity key, as a till key is: only to the retailer's current key, not one rotated out.
    func secureBeacon(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        let (major, minor) = try beacon(request)
        let body = try request.decodeBody(SecureBeaconRequest.self, emptyIsObject: true)
        let provisioning = try database.secureBeacon(
            retailer: access.retailer, major: major, minor: minor,
            exponent: body.exponent ?? SecureBeaconRequest.defaultExponent, form: body.form ?? .eddystone,
            keyring: beaconKeyring)
        secureBeacons.invalidate()
        return .json(201, provisioning)
    }

    /// The service's X25519 public key for the retailer's beacons, as the Eddystone-EID spec's key exchange needs it.
    func eidParameters(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        .json(
            200,
            EIDParameters(
                servicePublicKey: Hex.text(try beaconKeyring.exchangePublicKey(retailerID: access.retailer.id)),
                maxExponent: EddystoneEID.maximumExponent))
    }

    /// The spec's key exchange: the identity key derived from the beacon's public key and the service's private key,
    /// accepted only if the beacon's first EID is the one it gives at the beacon's counter.
    func registerBeacon(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        let (major, minor) = try beacon(request)
        let body = try request.decodeBody(EIDRegistrationRequest.self)
        let retailer = access.retailer
        let exponent = body.exponent ?? SecureBeaconRequest.defaultExponent
        let form = body.form ?? .eddystone
        let beaconPublicKey = Hex.bytes(body.beaconPublicKey) ?? []
        let servicePublicKey = Hex.bytes(body.servicePublicKey) ?? []
        guard
            let servicePrivateKey = try beaconKeyring.exchangePrivateKey(
                publicKey: servicePublicKey, retailerID: retailer.id)
        else {
            throw APIFailure.invalid(
                ValidationError(
                    field: "service_public_key",
                    message: "is not this service's key for you: write the one GET /v1/retailer/eid-params answers "
                        + "(loyalty retailer beacon eid-params) to the beacon, and register again"))
        }
        let identityKey: [UInt8]
        do {
            identityKey = try EddystoneEID.identityKey(
                privateKey: servicePrivateKey, peerPublicKey: beaconPublicKey, resolverPublicKey: servicePublicKey,
                beaconPublicKey: beaconPublicKey)
        } catch {
            throw APIFailure.invalid(
                ValidationError(
                    field: "beacon_public_key", message: "is no usable X25519 public key (its shared secret is zero)"))
        }
        let eid = try EddystoneEID.ephemeralID(identityKey: identityKey, exponent: exponent, counter: body.counter)
        guard Secrets.constantTimeEqual(eid, Hex.bytes(body.firstEID) ?? []) else {
            throw APIFailure.invalid(
                ValidationError(
                    field: "first_eid",
                    message: "is not the EID of that key exchange at counter \(body.counter) with exponent \(exponent): "
                        + "check the beacon's public key, its counter when it broadcast this EID, and K"))
        }
        let counterAt = Date(timeIntervalSince1970: database.clock().timeIntervalSince1970.rounded(.down))
        try database.saveSecureBeacon(
            retailerID: retailer.id, major: major, minor: minor, exponent: exponent, form: form,
            identityKey: identityKey, counter: Int64(body.counter), at: counterAt, keyring: beaconKeyring)
        secureBeacons.invalidate()
        return .json(
            201,
            EIDRegistration(
                major: major, minor: minor, exponent: exponent, form: form, uuid: retailer.uuid, counter: body.counter,
                counterAt: counterAt, servicePublicKey: body.servicePublicKey.lowercased()))
    }

    private func days(_ request: HTTPRequest, _ name: String, default value: Int) throws(ValidationError) -> Int {
        guard let text = request.query[name] else { return value }
        guard let days = Int(text), Validation.figureDays.contains(days) else {
            throw ValidationError(
                field: name,
                message: "must be an integer from \(Validation.figureDays.lowerBound) to \(Validation.figureDays.upperBound)")
        }
        return days
    }

    // MARK: Till keys

    func createTillKey(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        let draft = try request.decodeBody(TillKeyDraft.self)
        return .json(201, try database.createTillKey(retailerID: access.retailer.id, name: draft.name))
    }

    func listTillKeys(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        .json(200, try database.tillKeys(retailerID: access.retailer.id))
    }

    func revokeTillKey(_ request: HTTPRequest, _ access: RetailerAccess) throws -> HTTPResponse {
        guard let keyID = request.pathParameters["id"].flatMap(UUID.init(uuidString:)),
            try database.revokeTillKey(keyID, retailerID: access.retailer.id)
        else { throw APIFailure(404, .notFound, "this retailer has no such till key") }
        return HTTPResponse(status: 204)
    }
}
