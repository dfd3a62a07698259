import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Synchronization
import Testing

@testable import LoyaltyServer

@Suite struct ShopperTests {
    @Test(arguments: Transport.allCases)
    func seenIsAUnionAcrossDevicesAndRepushingChangesNothing(_ transport: Transport) throws {
        let server = try TestServer(transport)
        let retailer = try server.registerRetailer()
        let sushi = try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "sushi"))
        let pizza = try server.putOffer(retailer, major: 1, minor: 2, OfferDraft(title: "pizza"))
        let phone = try server.createAccount()
        let laptop = try server.linkDevice(to: phone)
        #expect(laptop.accountID == phone.accountID && laptop.deviceID != phone.deviceID)

        // Both in the past, after the offers were made: a time after the server's clock would be taken as now, one
        // before the offer was made as its making (SeenTimeTests).
        server.clock.advance(by: 600)
        let later = server.clock.read()
        let early = later.addingTimeInterval(-300)
        let fromPhone = SeenPush(items: [SeenItem(offerID: sushi.id, seenAt: early)])
        let fromLaptop = SeenPush(items: [
            SeenItem(offerID: pizza.id, seenAt: later), SeenItem(offerID: sushi.id, seenAt: later),
        ])
        let added: SeenPushResult = try server.request("POST", "/v1/seen", token: phone.deviceToken, json: fromPhone)
            .decode()
        #expect(added.added == 1)
        let addedByLaptop: SeenPushResult = try server.request(
            "POST", "/v1/seen", token: laptop.deviceToken, json: fromLaptop
        ).decode()
        #expect(addedByLaptop.added == 1)

        let seen: SeenPage = try server.request("GET", "/v1/seen", token: phone.deviceToken).decode()
        #expect(
            Set(seen.items) == [SeenItem(offerID: sushi.id, seenAt: early), SeenItem(offerID: pizza.id, seenAt: later)])

        let again: SeenPushResult = try server.request("POST", "/v1/seen", token: laptop.deviceToken, json: fromLaptop)
            .decode()
        #expect(again.added == 0)
        let sinceReply = try server.request("GET", "/v1/seen?since=\(seen.cursor)", token: laptop.deviceToken)
        let since: SeenPage = try sinceReply.decode()
        #expect(since.items.isEmpty)
        let full: SeenPage = try server.request("GET", "/v1/seen", token: laptop.deviceToken).decode()
        #expect(Set(full.items) == Set(seen.items))

        let stranger = try server.createAccount()
        let strangers: SeenPage = try server.request("GET", "/v1/seen", token: stranger.deviceToken).decode()
        #expect(strangers.items.isEmpty)
        let borrowedCursor = try server.request("GET", "/v1/seen?since=\(seen.cursor)", token: stranger.deviceToken)
        #expect(borrowedCursor.status == 410)
    }

    @Test func linkCodesAreSingleUseAndExpire() throws {
        let server = try TestServer()
        let phone = try server.createAccount()
        let code: LinkCode = try server.request("POST", "/v1/link-codes", token: phone.deviceToken).decode()
        #expect(code.expiresAt == server.clock.read().addingTimeInterval(600))

        let used = try server.request("POST", "/v1/devices", json: DeviceRegistration(code: code.code.lowercased()))
        #expect(used.status == 201)
        let reused = try server.request("POST", "/v1/devices", json: DeviceRegistration(code: code.code))
        #expect(reused.status == 404)
        #expect(reused.errorCode == .linkCodeInvalid)

        let late: LinkCode = try server.request("POST", "/v1/link-codes", token: phone.deviceToken).decode()
        server.clock.advance(by: 601)
        #expect(try server.request("POST", "/v1/devices", json: DeviceRegistration(code: late.code)).status == 404)
        let missing = try server.request("POST", "/v1/devices", rawJSON: "{}")
        #expect(missing.status == 422 && missing.errorField == "code")
    }

    @Test func linkCodesAreLongAndSpendAsTyped() throws {
        let server = try TestServer()
        let phone = try server.createAccount()
        func issue() throws -> String {
            let reply = try server.request("POST", "/v1/link-codes", token: phone.deviceToken)
            try #require(reply.status == 201, "\(reply.text)")
            return try reply.decode(LinkCode.self).code
        }
        let codes = try (0..<20).map { _ in try issue() }
        #expect(Set(codes).count == codes.count)
        for code in codes {
            #expect(code.wholeMatch(of: /[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}/) != nil, "\(code)")
        }

        let typings: [(String) -> String] = [
            { $0.lowercased() },
            { $0.filter { $0 != "-" } },
            { $0.lowercased().replacingOccurrences(of: "-", with: " ") },
            { " " + $0.lowercased().replacingOccurrences(of: "-", with: " - ") + "\n" },
        ]
        for (code, typed) in zip(codes, typings) {
            let reply = try server.request("POST", "/v1/devices", json: DeviceRegistration(code: typed(code)))
            #expect(reply.status == 201, "\(typed(code)): \(reply.text)")
            #expect(try reply.decode(DeviceCredentials.self).accountID == phone.accountID)
        }

        // One symbol off: the right shape, but no code.
        let live = codes[codes.count - 1]
        let wrong = String(live.dropLast()) + (live.last == "Z" ? "Y" : "Z")
        let guessed = try server.request("POST", "/v1/devices", json: DeviceRegistration(code: wrong))
        #expect(guessed.status == 404 && guessed.errorCode == .linkCodeInvalid, "\(guessed.text)")
        #expect(try server.request("POST", "/v1/devices", json: DeviceRegistration(code: live)).status == 201)

        // An 8-symbol code issued before the upgrade, stored as it was then, spends as typed too.
        let expiresAt = server.clock.read().addingTimeInterval(60)
        _ = try server.pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO link_codes (code_hash, account_id, expires_at)
                VALUES (\(Secrets.digest(of: "K7M2Q9XP")), \(phone.accountID), \(expiresAt))
                """)
        }
        let old = try server.request("POST", "/v1/devices", json: DeviceRegistration(code: "k7m2-q9xp"))
        #expect(old.status == 201, "\(old.text)")
    }

    /// A link code made by a device that is then revoked (a stolen phone) links nothing (issue 23, item 9); one
    /// made by another device of the account still does.
    @Test func aLinkCodeDiesWithTheRevokedDeviceThatMadeIt() throws {
        let server = try TestServer()
        let phone = try server.createAccount()
        let stolen = try server.linkDevice(to: phone, name: "stolen")
        let thiefs: LinkCode = try server.request("POST", "/v1/link-codes", token: stolen.deviceToken).decode()
        let owners: LinkCode = try server.request("POST", "/v1/link-codes", token: phone.deviceToken).decode()
        #expect(try server.request("DELETE", "/v1/devices/\(stolen.deviceID)", token: phone.deviceToken).status == 204)

        let refused = try server.request("POST", "/v1/devices", json: DeviceRegistration(code: thiefs.code))
        #expect(refused.status == 404 && refused.errorCode == .linkCodeInvalid, "\(refused.text)")
        #expect(try server.request("POST", "/v1/devices", json: DeviceRegistration(code: owners.code)).status == 201)
    }

    @Test func aRevokedDeviceIsLockedOut() throws {
        let server = try TestServer()
        let phone = try server.createAccount()
        let laptop = try server.linkDevice(to: phone)
        let stranger = try server.createAccount()

        #expect(
            try server.request("DELETE", "/v1/devices/\(laptop.deviceID)", token: stranger.deviceToken).status == 404)
        #expect(try server.request("DELETE", "/v1/devices/\(laptop.deviceID)", token: phone.deviceToken).status == 204)
        let refused = try server.request("GET", "/v1/devices", token: laptop.deviceToken)
        #expect(refused.status == 401)
        #expect(refused.errorCode == .unauthorized)

        let devices: DeviceList = try server.request("GET", "/v1/devices", token: phone.deviceToken).decode()
        #expect(devices.devices.count == 2)
        #expect(devices.devices.first { $0.id == laptop.deviceID }?.revokedAt != nil)
        #expect(devices.devices.first { $0.id == phone.deviceID }?.current == true)
    }

    @Test func anIdempotencyKeyReplaysTheFirstAnswer() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let offer = try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "sushi", perShopperLimit: 1))
        let other = try server.putOffer(retailer, major: 1, minor: 2, OfferDraft(title: "pizza"))
        let shopper = try server.createAccount()
        try server.see(shopper, offer.id, other.id)

        let first = try server.redeem(shopper, offer.id, key: "k-1")
        #expect(first.status == 201)
        let redemption: Redemption = try first.decode()
        #expect(redemption.offerID == offer.id && redemption.code.count == 10)

        server.clock.advance(by: 5)
        let replay = try server.redeem(shopper, offer.id, key: "k-1")
        #expect(replay.status == 201)
        #expect(try replay.decode(Redemption.self) == redemption)
        #expect(replay.headers["idempotent-replayed"] == "true")

        let overLimit = try server.redeem(shopper, offer.id, key: "k-2")
        #expect(overLimit.status == 409 && overLimit.errorCode == .limitReached)
        let keyForAnotherOffer = try server.redeem(shopper, other.id, key: "k-1")
        #expect(keyForAnotherOffer.status == 409 && keyForAnotherOffer.errorCode == .idempotencyKeyReused)

        let list: RedemptionList = try server.request("GET", "/v1/redemptions", token: shopper.deviceToken).decode()
        #expect(list.redemptions == [redemption])
    }

    @Test func redeemingOutsideTheWindowOrAfterRemovalIs410AndUnknownIs404() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let now = server.clock.read()
        let future = try server.putOffer(
            retailer, major: 1, minor: 1, OfferDraft(title: "soon", startsAt: now.addingTimeInterval(3600)))
        let past = try server.putOffer(
            retailer, major: 1, minor: 2,
            OfferDraft(title: "over", startsAt: now.addingTimeInterval(-7200), endsAt: now.addingTimeInterval(-3600)))
        let removed = try server.putOffer(retailer, major: 1, minor: 3, OfferDraft(title: "removed"))
        #expect(try server.request("DELETE", "/v1/retailer/offers/1/3", token: retailer.apiKey).status == 204)
        let shopper = try server.createAccount()
        try server.see(shopper, removed.id)

        for offer in [future, past, removed] {
            let reply = try server.redeem(shopper, offer.id)
            #expect(reply.status == 410 && reply.errorCode == .offerUnavailable, "\(offer.title): \(reply.text)")
        }
        #expect(try server.redeem(shopper, UUID()).status == 404)
        server.clock.advance(by: 3601)
        try server.see(shopper, future.id)
        #expect(try server.redeem(shopper, future.id).status == 201)
    }

    /// Thirty fresh accounts from one address once took 17 of a rival's 20 codes without a visit: an offer is
    /// redeemed only once it is in the account's seen set (issue 23, item 5).
    @Test func anAccountThatNeverSawTheOfferCannotRedeemIt() throws {
        let server = try TestServer()
        let rival = try server.registerRetailer()
        let offer = try server.putOffer(rival, major: 1, minor: 1, OfferDraft(title: "20 only", totalLimit: 20))
        let drainers = try (0..<5).map { _ in try server.createAccount() }
        for drainer in drainers {
            let reply = try server.redeem(drainer, offer.id)
            #expect(reply.status == 409 && reply.errorCode == .offerNotSeen, "\(reply.text)")
        }
        let stats: RetailerStatistics = try server.request("GET", "/v1/retailer/stats", token: rival.apiKey).decode()
        #expect(stats.offers.first?.redemptions == 0 && stats.offers.first?.remaining == 20)

        try server.see(drainers[0], offer.id)
        #expect(try server.redeem(drainers[0], offer.id).status == 201)
    }

    @Test func theTotalLimitHoldsUnderFiftyParallelRedemptions() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let offer = try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "10 only", totalLimit: 10))
        let shoppers = try (0..<50).map { _ in try server.createAccount() }
        for shopper in shoppers { try server.see(shopper, offer.id) }
        let statuses = parallelStatuses(50) { index in try server.redeem(shoppers[index], offer.id).status }
        #expect(statuses.filter { $0 == 201 }.count == 10)
        #expect(statuses.filter { $0 == 409 }.count == 40)
        let stats: RetailerStatistics = try server.request("GET", "/v1/retailer/stats", token: retailer.apiKey).decode()
        #expect(stats.offers.first?.redemptions == 10 && stats.offers.first?.remaining == 0)
    }

    @Test(arguments: Transport.allCases)
    func thePerShopperLimitHoldsUnderFiftyParallelRedemptions(_ transport: Transport) throws {
        let server = try TestServer(transport)
        let retailer = try server.registerRetailer()
        let offer = try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "once", perShopperLimit: 1))
        let shopper = try server.createAccount()
        try server.see(shopper, offer.id)
        let statuses = parallelStatuses(50) { index in try server.redeem(shopper, offer.id, key: "key-\(index)").status
        }
        #expect(statuses.filter { $0 == 201 }.count == 1)
        #expect(statuses.filter { $0 == 409 }.count == 49)
        let list: RedemptionList = try server.request("GET", "/v1/redemptions", token: shopper.deviceToken).decode()
        #expect(list.redemptions.count == 1)
    }

    /// Runs `body` `count` times at once, each on its own thread and HTTP connection, released together;
    /// -1 for a transport error.
    private func parallelStatuses(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Int) -> [Int] {
        let results = Mutex([Int](repeating: -1, count: count))
        let ready = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for index in 0..<count {
            done.enter()
            Thread {
                ready.signal()
                go.wait()
                let status = (try? body(index)) ?? -1
                results.withLock { $0[index] = status }
                done.leave()
            }.start()
        }
        for _ in 0..<count { ready.wait() }
        for _ in 0..<count { go.signal() }
        done.wait()
        return results.withLock { $0 }
    }
}
