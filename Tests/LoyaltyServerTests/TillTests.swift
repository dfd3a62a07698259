import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

extension TestServer {
    func createTillKey(_ retailer: RetailerCredentials, name: String) throws -> TillKeyCredentials {
        let reply = try request(
            "POST", "/v1/retailer/till-keys", token: retailer.apiKey, json: TillKeyDraft(name: name))
        try #require(reply.status == 201, "\(reply.text)")
        return try reply.decode()
    }

    func till(_ operation: String, _ code: String, key: String, idempotencyKey: String? = nil) throws -> TestResponse {
        try request(
            "POST", "/v1/till/\(operation)", token: key, json: TillCodeRequest(code: code),
            headers: idempotencyKey.map { ["Idempotency-Key": $0] } ?? [:])
    }

    /// A shopper's redemption of a new offer of `retailer` at (major, 1).
    func redemption(_ retailer: RetailerCredentials, major: Int, _ draft: OfferDraft = OfferDraft(title: "Sushi"))
        throws -> (offer: Offer, redemption: Redemption, shopper: DeviceCredentials)
    {
        let offer = try putOffer(retailer, major: major, minor: 1, draft)
        let shopper = try createAccount()
        try see(shopper, offer.id)
        let reply = try redeem(shopper, offer.id)
        try #require(reply.status == 201, "\(reply.text)")
        return (offer, try reply.decode(), shopper)
    }
}

@Suite struct TillTests {
    @Test func aTillKeyIsShownOnceListedWithoutItselfAndRevocable() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let key = try server.createTillKey(matey, name: "Front till")
        #expect(key.tillKey.hasPrefix("lt_") && key.tillKey.count > 40)
        let listed = try server.request("GET", "/v1/retailer/till-keys", token: matey.apiKey)
        #expect(!listed.text.contains(key.tillKey))
        #expect(try listed.decode(TillKeyList.self).tillKeys.map(\.name) == ["Front till"])
        let stored = try server.pool.withConnection {
            try $0.query("SELECT key_hash FROM till_keys")[0].decode("key_hash", as: [UInt8].self)
        }
        #expect(stored == Secrets.digest(of: key.tillKey), "stored as its SHA-256 only")

        let (_, redemption, _) = try server.redemption(matey, major: 1)
        #expect(try server.till("check", redemption.code, key: key.tillKey).status == 200)
        #expect(
            try server.request("DELETE", "/v1/retailer/till-keys/\(key.id)", token: matey.apiKey).status == 204)
        #expect(try server.till("check", redemption.code, key: key.tillKey).status == 401)
        let revoked: TillKeyList = try server.request("GET", "/v1/retailer/till-keys", token: matey.apiKey).decode()
        #expect(revoked.tillKeys.first?.revokedAt != nil)
    }

    @Test func aCodeIsAcceptedOnceAndThenSaysWhenAndWhere() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let till = try server.createTillKey(matey, name: "Till 3")
        let (offer, redemption, shopper) = try server.redemption(matey, major: 1)

        let checked: TillCode = try server.till("check", redemption.code, key: till.tillKey).decode()
        #expect(checked.status == .valid && checked.offerID == offer.id && checked.title == "Sushi")

        // Typed in lower case, in groups, with a dash and spaces: the same code.
        let typed = redemption.code.lowercased().enumerated().map { $0.offset == 5 ? "- \($0.element)" : "\($0.element)" }
            .joined()
        server.clock.advance(by: 60)
        let accepted = try server.till("accept", " " + typed + " ", key: till.tillKey)
        #expect(accepted.status == 200, "\(accepted.text)")
        let acceptedCode: TillCode = try accepted.decode()
        #expect(acceptedCode.status == .accepted && acceptedCode.acceptedTill == "Till 3")
        #expect(acceptedCode.acceptedAt == server.clock.read())

        server.clock.advance(by: 60)
        let again = try server.till("accept", redemption.code, key: till.tillKey)
        #expect(again.status == 409 && again.errorCode == .codeAlreadyAccepted)
        #expect(
            again.text.contains(LoyaltyJSON.formatTimestamp(acceptedCode.acceptedAt!)) && again.text.contains("Till 3"),
            "\(again.text)")
        let state: TillCode = try server.till("check", redemption.code, key: till.tillKey).decode()
        #expect(state.status == .accepted && state.acceptedTill == "Till 3")

        // The shopper's history and the retailer's statistics see it.
        let history: RedemptionList = try server.request("GET", "/v1/redemptions", token: shopper.deviceToken).decode()
        #expect(history.redemptions.first?.acceptedAt == acceptedCode.acceptedAt)
        let stats: RetailerStatistics = try server.request("GET", "/v1/retailer/stats", token: matey.apiKey).decode()
        #expect(stats.offers.first?.accepted == 1 && stats.offers.first?.redemptions == 1)
    }

    /// A till's accept whose answer was lost (its COMMIT done, the reply gone in a failover) is sent again with
    /// the same Idempotency-Key: the first answer again, marked replayed, not "already used". Another till, the
    /// same till with another key or none, still get the 409.
    @Test func aTillRetryingWithItsIdempotencyKeyGetsTheFirstAnswer() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let till = try server.createTillKey(matey, name: "Till 1")
        let other = try server.createTillKey(matey, name: "Till 2")
        let (_, redemption, _) = try server.redemption(matey, major: 1)

        let first = try server.till("accept", redemption.code, key: till.tillKey, idempotencyKey: "accept-1")
        #expect(first.status == 200 && first.headers["idempotent-replayed"] == nil, "\(first.text)")
        server.clock.advance(by: 60)
        let retry = try server.till("accept", redemption.code, key: till.tillKey, idempotencyKey: "accept-1")
        #expect(retry.status == 200 && retry.headers["idempotent-replayed"] == "true", "\(retry.text)")
        #expect(retry.text == first.text)

        for (key, idempotencyKey) in [(other.tillKey, "accept-1"), (till.tillKey, "accept-2"), (till.tillKey, nil)] {
            let refused = try server.till("accept", redemption.code, key: key, idempotencyKey: idempotencyKey)
            #expect(refused.status == 409 && refused.errorCode == .codeAlreadyAccepted, "\(refused.text)")
        }
        let malformed = try server.till("accept", redemption.code, key: till.tillKey, idempotencyKey: "")
        #expect(malformed.status == 400 && malformed.errorField == "Idempotency-Key", "\(malformed.text)")
    }

    /// Sixteen tills, each with its own key, accept the same code at once, for eight codes: one wins each.
    @Test func manyTillsAcceptingAtOnceOneSucceeds() async throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let tills = try (1...16).map { try server.createTillKey(matey, name: "Till \($0)") }
        for round in 1...8 {
            let (_, redemption, _) = try server.redemption(matey, major: round)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for till in tills {
                    group.addTask { try server.till("accept", redemption.code, key: till.tillKey).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1, "round \(round): \(statuses)")
            #expect(statuses.filter { $0 == 409 }.count == 15, "round \(round): \(statuses)")
        }
        let accepted = try server.pool.withConnection {
            try $0.query("SELECT count(*) AS n FROM redemptions WHERE accepted_at IS NOT NULL")[0].decode("n", as: Int.self)
        }
        #expect(accepted == 8)
    }

    /// Bob's till cannot tell Alice's real code from a made-up one: both are unknown, word for word.
    @Test func anotherRetailersCodeIsUnknown() throws {
        let server = try TestServer()
        let alice = try server.registerRetailer("Alice")
        let bob = try server.registerRetailer("Bob")
        let bobsTill = try server.createTillKey(bob, name: "Bob's till")
        let (_, redemption, _) = try server.redemption(alice, major: 1)
        for operation in ["check", "accept"] {
            let real = try server.till(operation, redemption.code, key: bobsTill.tillKey)
            let madeUp = try server.till(operation, "ZZZZZZZZZZ", key: bobsTill.tillKey)
            #expect(real.status == 404 && real.errorCode == .codeUnknown)
            #expect(real.body.count == madeUp.body.count && real.errorCode == madeUp.errorCode)
        }
        let aliceSees: TillCode = try server.till(
            "check", redemption.code, key: try server.createTillKey(alice, name: "A").tillKey
        ).decode()
        #expect(aliceSees.status == .valid, "Bob's accept changed nothing")
    }

    @Test func expiredAndRemovedCodesSayWhy() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let till = try server.createTillKey(matey, name: "Till").tillKey
        let ends = server.clock.read().addingTimeInterval(3600)
        let (_, ending, _) = try server.redemption(matey, major: 1, OfferDraft(title: "Today only", endsAt: ends))
        let (_, removing, _) = try server.redemption(matey, major: 2)
        #expect(try server.request("DELETE", "/v1/retailer/offers/2/1", token: matey.apiKey).status == 204)
        server.clock.advance(by: 7200)
        for operation in ["check", "accept"] {
            let expired = try server.till(operation, ending.code, key: till)
            #expect(expired.status == 410 && expired.errorCode == .codeExpired, "\(expired.text)")
            #expect(expired.text.contains(LoyaltyJSON.formatTimestamp(ends)))
            let removed = try server.till(operation, removing.code, key: till)
            #expect(removed.status == 410 && removed.errorCode == .codeOfferRemoved, "\(removed.text)")
        }
    }

    /// 0, O, 1, I and L are in no code, nor are letters of other scripts that look like Latin ones: each is
    /// refused naming its position, never read as a near symbol. Full-width letters are the ASCII ones.
    @Test func lookAlikeCharactersAreRefusedNamingThem() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let till = try server.createTillKey(matey, name: "Till").tillKey
        let (_, redemption, _) = try server.redemption(matey, major: 1)
        let code = redemption.code
        for (replacement, shown) in [("O", "'O'"), ("0", "'0'"), ("l", "'L'"), ("1", "'1'"), ("\u{0410}", "U+0410")] {
            let typed = replacement + code.dropFirst()
            let reply = try server.till("check", typed, key: till)
            #expect(reply.status == 422 && reply.errorField == "code", "\(replacement): \(reply.text)")
            #expect(reply.text.contains("\(shown) at position 1"), "\(reply.text)")
        }
        let fullWidth = String(
            String.UnicodeScalarView(code.unicodeScalars.map { Unicode.Scalar($0.value + 0xFEE0)! }))
        let reply = try server.till("check", fullWidth, key: till)
        #expect(reply.status == 200, "\(reply.text)")
        #expect(try server.till("check", "", key: till).status == 422)
        #expect(try server.till("check", String(repeating: "A", count: 33), key: till).status == 422)
    }

    /// A till key does nothing but check and accept; a retailer key cannot act as a till.
    @Test func aTillKeyIsRefusedOnRetailerRoutesAndTheRetailerKeyOnTillRoutes() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let till = try server.createTillKey(matey, name: "Till").tillKey
        let (_, redemption, _) = try server.redemption(matey, major: 1)
        for (method, path) in [
            ("GET", "/v1/retailer"), ("GET", "/v1/retailer/offers"), ("POST", "/v1/retailer/key"),
            ("GET", "/v1/retailer/till-keys"), ("GET", "/v1/retailer/offers/export"), ("GET", "/v1/catalog"),
            ("GET", "/v1/redemptions"), ("DELETE", "/v1/retailer/offers/1/1"),
        ] {
            let reply = try server.request(method, path, token: till)
            #expect(reply.status == 403 && reply.errorCode == .forbidden, "\(method) \(path): \(reply.text)")
        }
        let created = try server.request(
            "POST", "/v1/retailer/till-keys", token: till, json: TillKeyDraft(name: "sneaky"))
        #expect(created.status == 403)
        let byRetailer = try server.till("accept", redemption.code, key: matey.apiKey)
        #expect(byRetailer.status == 403)
        #expect(try server.till("check", redemption.code, key: "lt_" + String(till.dropFirst(3).reversed())).status == 401)
        let offers: OfferList = try server.request("GET", "/v1/retailer/offers", token: matey.apiKey).decode()
        #expect(offers.offers.count == 1, "the till key's DELETE removed nothing")
    }
}
