import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

/// Bad input, other tenants, and the operational endpoints.
@Suite struct BoundaryTests {
    @Test(arguments: Transport.allCases)
    func oneRetailerCannotReachAnothersOffersOrStats(_ transport: Transport) throws {
        let server = try TestServer(transport)
        let alice = try server.registerRetailer("Alice")
        let bob = try server.registerRetailer("Bob")
        let alicesOffer = try server.putOffer(alice, major: 1, minor: 1, OfferDraft(title: "Alice's"))
        try server.putOffer(alice, major: 2, minor: 2, OfferDraft(title: "Alice's other"))

        let bobsList: OfferList = try server.request("GET", "/v1/retailer/offers", token: bob.apiKey).decode()
        #expect(bobsList.offers.isEmpty)
        let bobsStats: RetailerStatistics = try server.request("GET", "/v1/retailer/stats", token: bob.apiKey).decode()
        #expect(bobsStats.offers.isEmpty)
        #expect(try server.request("DELETE", "/v1/retailer/offers/2/2", token: bob.apiKey).status == 404)
        let bobsOwn = try server.putOffer(bob, major: 1, minor: 1, OfferDraft(title: "Bob's"))
        #expect(bobsOwn.id != alicesOffer.id && bobsOwn.retailerID == bob.id)

        let alicesList: OfferList = try server.request("GET", "/v1/retailer/offers", token: alice.apiKey).decode()
        #expect(alicesList.offers.map(\.title) == ["Alice's", "Alice's other"])
    }

    @Test func oneAccountCannotSeeAnothersHistory() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let offer = try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "x"))
        let alice = try server.createAccount()
        let bob = try server.createAccount()
        _ = try server.request(
            "POST", "/v1/seen", token: alice.deviceToken,
            json: SeenPush(items: [SeenItem(offerID: offer.id, seenAt: server.clock.read())]))
        #expect(try server.redeem(alice, offer.id, key: "shared-key").status == 201)

        let bobsSeen: SeenPage = try server.request("GET", "/v1/seen", token: bob.deviceToken).decode()
        #expect(bobsSeen.items.isEmpty)
        let bobsRedemptions: RedemptionList = try server.request("GET", "/v1/redemptions", token: bob.deviceToken)
            .decode()
        #expect(bobsRedemptions.redemptions.isEmpty)
        // The same idempotency key from another account is another request, not a replay.
        try server.see(bob, offer.id)
        let bobs = try server.redeem(bob, offer.id, key: "shared-key")
        #expect(bobs.status == 201 && bobs.headers["idempotent-replayed"] == nil)
        let bobsDevices: DeviceList = try server.request("GET", "/v1/devices", token: bob.deviceToken).decode()
        #expect(bobsDevices.devices.map(\.id) == [bob.deviceID])
    }

    @Test(arguments: Transport.allCases)
    func badInputGetsTheJSONErrorWithTheRightStatus(_ transport: Transport) throws {
        let server = try TestServer(transport)
        let retailer = try server.registerRetailer()
        let shopper = try server.createAccount()
        let key = retailer.apiKey

        let malformed = try server.request("PUT", "/v1/retailer/offers/1/1", token: key, rawJSON: #"{"title": "x""#)
        #expect(malformed.status == 400 && malformed.errorCode == .malformedJSON)
        let notAnObject = try server.request("PUT", "/v1/retailer/offers/1/1", token: key, rawJSON: "[1]")
        #expect(notAnObject.status == 400 && notAnObject.errorCode == .malformedJSON)
        let wrongType = try server.request("PUT", "/v1/retailer/offers/1/1", token: key, rawJSON: #"{"title": 5}"#)
        #expect(wrongType.status == 400 && wrongType.errorField == "title")
        let badDate = try server.request(
            "PUT", "/v1/retailer/offers/1/1", token: key, rawJSON: #"{"title": "x", "ends_at": "tomorrow"}"#)
        #expect(badDate.status == 422 && badDate.errorField == "ends_at")
        let badUUID = try server.request(
            "POST", "/v1/redemptions", token: shopper.deviceToken, rawJSON: #"{"offer_id": "nope"}"#)
        #expect(badUUID.status == 422 && badUUID.errorField == "offer_id")
        let noItems = try server.request("POST", "/v1/seen", token: shopper.deviceToken, rawJSON: #"{"items": []}"#)
        #expect(noItems.status == 422 && noItems.errorField == "items")
        let nestedType = try server.request(
            "POST", "/v1/seen", token: shopper.deviceToken,
            rawJSON: #"{"items": [{"offer_id": "\#(UUID())", "seen_at": 1}]}"#)
        #expect(nestedType.status == 400 && nestedType.errorField == "items[0].seen_at")
        let nestedUnknown = try server.request(
            "POST", "/v1/seen", token: shopper.deviceToken,
            rawJSON: #"{"items": [{"offer_id": "\#(UUID())", "seen_at": "2026-01-01T00:00:00Z", "extra": 1}]}"#)
        #expect(nestedUnknown.status == 422 && nestedUnknown.errorField == "items[0].extra")
        // The first unknown key by element, counted past objects, arrays and strings holding commas and brackets.
        let laterUnknown = try server.request(
            "POST", "/v1/seen", token: shopper.deviceToken,
            rawJSON: #"{"items": [{"offer_id": "\#(UUID())", "seen_at": "2026-01-01T00:00:00Z"}, {"offer_id": "\#(UUID())", "seen_at": "2026-01-01T00:00:00Z", "z": [1, {"y": ",]}"}], "extra": {"x": 1}}]}"#)
        #expect(laterUnknown.status == 422 && laterUnknown.errorField == "items[1].extra", "\(laterUnknown.text)")

        let huge = try server.request(
            "PUT", "/v1/retailer/offers/1/1", token: key,
            rawJSON: #"{"title": "x", "description": "\#(String(repeating: "a", count: 70_000))"}"#)
        #expect(huge.status == 413 && huge.errorCode == .payloadTooLarge)

        let noToken = try server.request("GET", "/v1/retailer")
        #expect(noToken.status == 401 && noToken.errorCode == .unauthorized)
        #expect(noToken.headers["www-authenticate"] == #"Bearer realm="loyalty""#)
        let badToken = try server.request("GET", "/v1/retailer", token: key + "x")
        #expect(badToken.status == 401)
        #expect(badToken.headers["www-authenticate"] == #"Bearer realm="loyalty", error="invalid_token""#)
        #expect(try server.request("GET", "/v1/catalog", token: "ld_forged").status == 401)
        #expect(try server.request("GET", "/v1/retailer", token: shopper.deviceToken).status == 403)
        #expect(try server.request("GET", "/v1/catalog", token: key).status == 403)
        #expect(
            try server.request("GET", "/v1/retailer", headers: ["Authorization": "Basic \(key)"]).status == 401)

        let unknown = try server.request("GET", "/v1/nowhere")
        #expect(unknown.status == 404 && unknown.errorCode == .notFound)
        let wrongMethod = try server.request("PATCH", "/v1/retailer/offers/1/1", token: key)
        #expect(wrongMethod.status == 405 && wrongMethod.errorCode == .methodNotAllowed)
        let longKey = try server.redeem(shopper, UUID(), key: String(repeating: "k", count: 201))
        #expect(longKey.status == 400 && longKey.errorField == "Idempotency-Key")
    }

    @Test(arguments: Transport.allCases) func operationalEndpointsAndLogs(_ transport: Transport) throws {
        let server = try TestServer(transport)
        let retailer = try server.registerRetailer()
        let shopper = try server.createAccount()
        #expect(try server.catalog(shopper).status == 200)
        #expect(try server.request("GET", "/healthz").status == 200)
        #expect(try server.request("GET", "/readyz").status == 200)
        let document = try server.request("GET", "/openapi.yaml")
        #expect(document.status == 200 && document.text.hasPrefix("openapi: 3.0.3"))

        let metrics = try server.request("GET", "/metrics", token: server.operatorToken).text
        #expect(metrics.contains(#"loyalty_http_requests_total{route="/v1/catalog",method="GET",status="200"} 1"#))
        #expect(metrics.contains(#"loyalty_http_request_duration_seconds_count{route="/v1/catalog"} 1"#))
        #expect(metrics.contains("loyalty_db_pool_connections 8"))

        let lines = server.log.recorded
        #expect(lines.count >= 6)
        // Unique, one line per request: a counter, not random bytes, makes them now.
        let ids = lines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["request_id"] as? String
        }
        #expect(Set(ids).count == lines.count)
        for line in lines {
            let fields = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            // The server's one log line shape: time, level and event first.
            #expect(
                line.range(
                    of: #"^\{"time":"[-0-9T:.]+Z","level":"info","event":"request","request_id":"#,
                    options: .regularExpression) != nil, "\(line)")
            #expect(fields["request_id"] is String && fields["route"] is String && fields["status"] is Int)
            #expect((fields["request_id"] as? String)?.count == 16)
            #expect(fields["duration_ms"] is Double && fields["method"] is String)
            for secret in [retailer.apiKey, shopper.deviceToken, server.operatorToken] {
                #expect(!line.contains(secret))
            }
        }
    }

    @Test func theDatabaseBeingDownIs503UntilItComesBack() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-503-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cluster = EmbeddedPostgres(directory: directory, log: { _ in })
        defer { cluster.stop() }
        let server = try TestServer(cluster: cluster)
        let shopper = try server.createAccount()

        cluster.stop()
        let notReady = try server.request("GET", "/readyz")
        #expect(notReady.status == 503 && notReady.errorCode == .databaseUnavailable)
        let catalog = try server.catalog(shopper)
        #expect(catalog.status == 503 && catalog.errorCode == .databaseUnavailable)
        #expect(try server.request("GET", "/healthz").status == 200)

        _ = try cluster.start()
        var recovered = false
        for _ in 0..<50 where !recovered {
            recovered = try server.catalog(shopper).status == 200
            if !recovered { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(recovered)
        #expect(try server.request("GET", "/readyz").status == 200)
    }
}
