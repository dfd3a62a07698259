import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

@Suite struct RetailerTests {
    @Test func registrationAssignsOrClaimsAUniqueUUID() throws {
        let server = try TestServer()
        let matey = UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!
        let claimed = try server.registerRetailer("Matey's", uuid: matey)
        #expect(claimed.uuid == matey)
        #expect(claimed.apiKey.hasPrefix("lk_"))

        let taken = try server.request(
            "POST", "/v1/retailers", token: server.operatorToken, json: RetailerRegistration(name: "Copy", uuid: matey))
        #expect(taken.status == 409)
        #expect(taken.errorCode == .uuidTaken)

        let assigned = try server.registerRetailer("Tucci's")
        #expect(assigned.uuid != matey)

        let shown: Retailer = try server.request("GET", "/v1/retailer", token: claimed.apiKey).decode()
        #expect(shown.id == claimed.id && shown.uuid == matey && shown.name == "Matey's")
    }

    @Test func registrationNeedsTheOperatorToken() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let body = RetailerRegistration(name: "Nobody")
        #expect(try server.request("POST", "/v1/retailers", json: body).status == 401)
        #expect(
            try server.request("POST", "/v1/retailers", token: "operator-token-for-testz", json: body).status == 401)
        let withRetailerKey = try server.request("POST", "/v1/retailers", token: retailer.apiKey, json: body)
        #expect(withRetailerKey.status == 403)
        #expect(withRetailerKey.errorCode == .forbidden)
    }

    /// The old key works until the new one is first used (a client that could not save the new
    /// key is not locked out), then stops.
    @Test func rotatingTheKeyRetiresTheOldOneAtTheNewOnesFirstUse() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let rotated: APIKey = try server.request("POST", "/v1/retailer/key", token: retailer.apiKey).decode()
        #expect(rotated.apiKey != retailer.apiKey)
        #expect(try server.request("GET", "/v1/retailer", token: retailer.apiKey).status == 200)
        #expect(try server.request("GET", "/v1/retailer", token: rotated.apiKey).status == 200)
        #expect(try server.request("GET", "/v1/retailer", token: retailer.apiKey).status == 401)
        #expect(try server.request("GET", "/v1/retailer", token: rotated.apiKey).status == 200)
    }

    /// Unused, the new key leaves the old one working for 24 hours, as the rotation's answer says.
    @Test func aRotatedOutKeyExpiresAfter24Hours() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let first: APIKey = try server.request("POST", "/v1/retailer/key", token: retailer.apiKey).decode()
        #expect(first.previousKeyExpiresAt == server.clock.read().addingTimeInterval(24 * 3600))
        server.clock.advance(by: 24 * 3600 - 1)
        #expect(try server.request("GET", "/v1/retailer", token: retailer.apiKey).status == 200)
        server.clock.advance(by: 1)
        #expect(try server.request("GET", "/v1/retailer", token: retailer.apiKey).status == 401)
        #expect(try server.request("GET", "/v1/retailer", token: first.apiKey).status == 200)
    }

    /// Shoppers pick a retailer by its name (issue 23, item 16): one that reads as another's (case, width, spaces,
    /// invisible characters aside) is refused, one of nothing visible too, and names are stored folded.
    @Test func lookAlikeDuplicateAndInvisibleRetailerNamesAreRefused() throws {
        let server = try TestServer()
        _ = try server.registerRetailer("Matey's")
        func register(_ name: String) throws -> TestResponse {
            try server.request("POST", "/v1/retailers", token: server.operatorToken, json: RetailerRegistration(name: name))
        }
        // Issue 41, item 13: a right single quotation mark, a Cyrillic а, "rn" for "m" (UTS #39's skeleton).
        for lookAlike in [
            "Matey's", "matey's", " Matey's ", "\u{FF2D}\u{FF41}\u{FF54}\u{FF45}\u{FF59}'s", "Mat\u{200B}ey's", "MATEY'S\u{FEFF}",
            "Matey\u{2019}s", "M\u{0430}tey's", "rnatey's", "MATEY\u{2019}S",
        ] {
            let reply = try register(lookAlike)
            #expect(reply.status == 409 && reply.errorCode == .nameTaken, "\(lookAlike.debugDescription): \(reply.text)")
        }
        for invisible in ["\u{200B}", " \u{200D} ", "\u{FEFF}\u{00AD}", "   ", "\u{2800}", "Matey's\u{2800}West", "\u{3164}"] {
            let reply = try register(invisible)
            #expect(reply.status == 422 && reply.errorField == "name", "\(invisible.debugDescription): \(reply.text)")
        }
        let folded: RetailerCredentials = try register(" \u{FF34}ucci's  Pizza\u{200B} ").decode()
        #expect(folded.name == "Tucci's  Pizza")
        #expect(try register("Tucci's Pizza").errorCode == .nameTaken)
        #expect(try register("Matey's West End").status == 201)
        #expect(try register("Mateys Emporium").status == 201)
        #expect(try register("M\u{0430}teys Emporium").errorCode == .nameTaken)
        #expect(try register("Mateys  Emp0rium").errorCode == .nameTaken)
    }

    /// A key is rotated because it may have leaked: in its grace period it reads and syncs, and nothing more. It
    /// cannot rotate again (which locked the retailer's new key out), sign in to the console (whose session
    /// outlived the key) or make keys.
    @Test func aRotatedOutKeyReadsAndSyncsButMakesNoCredentials() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let old = retailer.apiKey
        let new: APIKey = try server.request("POST", "/v1/retailer/key", token: old).decode()

        #expect(try server.request("GET", "/v1/retailer", token: old).status == 200)
        #expect(try server.request("GET", "/v1/retailer/offers", token: old).status == 200)
        #expect(
            try server.request("PUT", "/v1/retailer/offers/1/1", token: old, json: OfferDraft(title: "Sushi")).status
                == 201)
        let refusals = [
            try server.request("POST", "/v1/retailer/key", token: old),
            try server.request("POST", "/v1/retailer/till-keys", token: old, json: TillKeyDraft(name: "till 1")),
            try server.request("POST", "/v1/console/session", json: ConsoleSignIn(apiKey: old)),
        ]
        #expect(refusals.map(\.status) == [403, 403, 403])
        #expect(refusals.allSatisfy { $0.text.contains("rotated out") }, "\(refusals.map(\.text))")
        #expect(try server.request("GET", "/v1/retailer/till-keys", token: new.apiKey).decode(TillKeyList.self).tillKeys.isEmpty)
        #expect(try server.request("GET", "/v1/retailer", token: new.apiKey).status == 200)
    }

    @Test(arguments: Transport.allCases) func offerCreateReplaceListDelete(_ transport: Transport) throws {
        let server = try TestServer(transport)
        let retailer = try server.registerRetailer()
        let path = "/v1/retailer/offers/1/1"
        let created = try server.request(
            "PUT", path, token: retailer.apiKey,
            json: OfferDraft(title: "30% off sushi", category: "food", totalLimit: 5))
        #expect(created.status == 201)
        let first: Offer = try created.decode()
        #expect(first.major == 1 && first.minor == 1 && first.perShopperLimit == 1 && first.totalLimit == 5)

        let replaced = try server.request("PUT", path, token: retailer.apiKey, json: OfferDraft(title: "40% off sushi"))
        #expect(replaced.status == 200)
        let second: Offer = try replaced.decode()
        #expect(second.id == first.id && second.title == "40% off sushi" && second.totalLimit == nil)

        let listed: OfferList = try server.request("GET", "/v1/retailer/offers", token: retailer.apiKey).decode()
        #expect(listed.offers == [second])

        #expect(try server.request("DELETE", path, token: retailer.apiKey).status == 204)
        #expect(try server.request("DELETE", path, token: retailer.apiKey).status == 404)
        let empty: OfferList = try server.request("GET", "/v1/retailer/offers", token: retailer.apiKey).decode()
        #expect(empty.offers.isEmpty)

        let again = try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "Back"))
        #expect(again.id != first.id, "a new offer at a freed beacon is a new offer")
    }

    @Test(arguments: [
        ("/v1/retailer/offers/65536/1", #"{"title":"x"}"#, "major"),
        ("/v1/retailer/offers/1/-1", #"{"title":"x"}"#, "minor"),
        ("/v1/retailer/offers/1/one", #"{"title":"x"}"#, "minor"),
        ("/v1/retailer/offers/1/1", #"{"title":""}"#, "title"),
        ("/v1/retailer/offers/1/1", "{\"title\":\"\(String(repeating: "x", count: 201))\"}", "title"),
        ("/v1/retailer/offers/1/1", #"{"description":"no title"}"#, "title"),
        (
            "/v1/retailer/offers/1/1",
            #"{"title":"x","starts_at":"2026-02-01T00:00:00Z","ends_at":"2026-01-01T00:00:00Z"}"#, "ends_at"
        ),
        ("/v1/retailer/offers/1/1", #"{"title":"x","per_shopper_limit":0}"#, "per_shopper_limit"),
        ("/v1/retailer/offers/1/1", #"{"title":"x","image_url":"not a url"}"#, "image_url"),
        ("/v1/retailer/offers/1/1", #"{"title":"x","titel":"typo"}"#, "titel"),
        ("/v1/retailer/offers/1/1", #"{"title":"a\u0000b"}"#, "title"),
        ("/v1/retailer/offers/1/1", #"{"title":"x","total_limit":1099511627776}"#, "total_limit"),
        ("/v1/retailer/offers/1/1", #"{"title":"x","starts_at":"0001-01-01T00:00:00Z"}"#, "starts_at"),
    ])
    func invalidOffersAre422NamingTheField(path: String, body: String, field: String) throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let reply = try server.request("PUT", path, token: retailer.apiKey, rawJSON: body)
        #expect(reply.status == 422, "\(reply.text)")
        #expect(reply.errorCode == .validationFailed)
        #expect(reply.errorField == field)
    }

    @Test func statisticsCountSeenAndRedeemed() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let offer = try server.putOffer(retailer, major: 2, minor: 1, OfferDraft(title: "50% off", totalLimit: 3))
        let shopper = try server.createAccount()
        _ = try server.request(
            "POST", "/v1/seen", token: shopper.deviceToken,
            json: SeenPush(items: [SeenItem(offerID: offer.id, seenAt: server.clock.read())]))
        #expect(try server.redeem(shopper, offer.id).status == 201)
        let stats: RetailerStatistics = try server.request("GET", "/v1/retailer/stats", token: retailer.apiKey).decode()
        #expect(
            stats.offers == [
                OfferStatistics(
                    offerID: offer.id, major: 2, minor: 1, title: "50% off", seenBy: 1, redemptions: 1, remaining: 2)
            ])
    }
}
