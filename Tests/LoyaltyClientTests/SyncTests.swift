import Beacons
import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

private let mateysUUID = UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!

/// Matey's with its three offers on a fresh server.
private func mateys(_ server: TestServer) throws -> Credential {
    let (_, key) = try server.retailer("Matey's \(UUID().uuidString.prefix(4))", uuid: UUID())
    for (major, minor, title) in [
        (1, 1, "30% off sushi at The Japanese Kitchen"), (1, 2, "Buy one get one free at Tucci's Pizza"),
        (2, 1, "50% off all ladies' clothing"),
    ] as [(UInt16, UInt16, String)] {
        _ = try server.api.putOffer(major: major, minor: minor, OfferDraft(title: title), key)
    }
    return key
}

@Suite(.serialized) struct SyncTests {
    @Test func catalogAndSeenSetTravelBetweenDevices() throws {
        let server = try TestServer(.socket, clock: .machine(aheadBy: 3600))
        _ = try mateys(server)
        let first = try ShopperDevice(try server.api.createAccount(deviceName: "phone"))
        let code = try server.api.createLinkCode(first.credential)
        let second = try ShopperDevice(try server.api.linkDevice(code: code.code, deviceName: "tablet"))
        #expect(second.device.accountID == first.device.accountID)

        let report = try first.syncEngine(server).sync()
        #expect(report.fullCatalog)
        #expect(report.cachedOffers == 3)
        // The server runs an hour ahead; the cache learned it.
        #expect(abs(try first.cache.serverTimeOffset - 3600) < 5)

        // Device one shows sushi while walking past; the session records it in the outbox.
        let session = try OfferSession(
            cache: first.cache, holding: .dwell(5), sync: first.syncEngine(server), deviceClock: Date.init)
        #expect(session.regions.count == 1)
        let sushi = BeaconIdentity(uuid: try first.cache.retailers()[0].uuid, major: 1, minor: 1)
        let shown = try session.update(time: 10, beacons: [BeaconProximity(identity: sushi, proximity: .near)])
        #expect(shown?.offer.offer.title == "30% off sushi at The Japanese Kitchen")
        #expect(try first.cache.outboxCount == 1)

        let again = try first.syncEngine(server).sync()
        #expect(again.pushed == 1)
        #expect(!again.catalogChanged)  // 304: nothing changed
        #expect(try first.cache.outboxCount == 0)

        // Device two learns it; its session will not show sushi.
        _ = try second.syncEngine(server).sync()
        #expect(try second.cache.seen().keys.contains(shown!.offer.offer.id))
        let secondSession = try OfferSession(cache: second.cache, holding: .dwell(5), sync: nil, deviceClock: Date.init)
        #expect(
            try secondSession.update(time: 0, beacons: [BeaconProximity(identity: sushi, proximity: .immediate)]) == nil
        )
    }

    @Test func pushingTwiceIsHarmless() throws {
        let server = try TestServer(.socket, clock: .machine())
        _ = try mateys(server)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: nil))
        _ = try device.syncEngine(server).sync()
        let offer = try device.cache.offers()[0].offer
        let item = SeenItem(offerID: offer.id, seenAt: Date())
        // The acknowledgement was lost: the same item goes again at the next sync.
        _ = try server.api.pushSeen([item], device.credential)
        try device.cache.show(item.offerID, at: item.seenAt)
        #expect(try device.syncEngine(server).sync().pushed == 1)
        let page = try server.api.seen(since: nil, device.credential)
        #expect(page.items.map(\.offerID) == [offer.id])
    }

    @Test func removedOffersLeaveTheCache() throws {
        let server = try TestServer(.socket, clock: .machine())
        let key = try mateys(server)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: nil))
        _ = try device.syncEngine(server).sync()
        try server.api.deleteOffer(major: 1, minor: 2, key)
        let report = try device.syncEngine(server).sync()
        #expect(!report.fullCatalog)
        #expect(report.offersRemoved == 1)
        #expect(try device.cache.offers().map(\.offer.minor) == [1, 1])
    }

    @Test func fullSyncRebuildsFromNothing() throws {
        let server = try TestServer(.socket, clock: .machine())
        _ = try mateys(server)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: nil))
        _ = try device.syncEngine(server).sync()
        let report = try device.syncEngine(server).sync(full: true)
        #expect(report.fullCatalog)
        #expect(try device.cache.offerCount == 3)
    }

    @Test func cursorsAnotherServerMadeTurnIntoAFullSync() throws {
        let first = try TestServer(.socket, clock: .machine())
        _ = try mateys(first)
        let device = try ShopperDevice(try first.api.createAccount(deviceName: nil))
        try device.cache.stopWorkingSet()  // The whole catalog's cursor (`sync --all`).
        _ = try device.syncEngine(first).sync()
        try device.cache.show(try device.cache.offers()[0].offer.id, at: Date())
        _ = try device.syncEngine(first).sync()
        #expect(try device.cache.seenCursor != nil)

        // The same cache against another database: both cursors answer 410 there.
        let second = try TestServer(.socket, clock: .machine())
        _ = try mateys(second)
        let elsewhere = try second.api.createAccount(deviceName: nil)
        let engine = SyncEngine(
            cache: device.cache, api: second.api, credential: .device(elsewhere.deviceToken), now: Date.init)
        let report = try engine.sync()
        #expect(report.fullCatalog)
        #expect(try device.cache.offerCount == 3)
        #expect(Set(try device.cache.offers().map(\.retailer.uuid)).count == 1)
        #expect(try second.api.seen(since: nil, .device(elsewhere.deviceToken)).items.isEmpty)
    }

    /// The cached offers as the server's whole catalog has them now.
    private func expectCacheMatchesServer(_ device: ShopperDevice, _ server: TestServer) throws {
        guard case .page(let whole, _) = try server.api.catalog(since: nil, etag: nil, device.credential) else {
            Issue.record("no catalog page")
            return
        }
        #expect(!whole.more)
        let cached = try device.cache.offers().map(\.offer)
        #expect(Dictionary(uniqueKeysWithValues: cached.map { ($0.id, $0) }) == Dictionary(uniqueKeysWithValues: whole.offers.map { ($0.id, $0) }))
        #expect(try device.cache.retailers().sorted { $0.id.uuidString < $1.id.uuidString } == whole.retailers.sorted { $0.id.uuidString < $1.id.uuidString })
        #expect(!(try device.cache.catalogIsPartial))
    }

    @Test func aSyncOverSeveralPages() throws {
        let server = try TestServer(.socket, clock: .machine())
        let key = try mateys(server)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: nil))
        try device.cache.stopWorkingSet()  // The whole catalog's pages (`sync --all`).
        var engine = device.syncEngine(server)
        engine.catalogPageLimit = 2

        var stored: [Int] = []
        let full = try engine.sync { if case .storingOffers(let count) = $0 { stored.append(count) } }
        #expect(full.fullCatalog)
        #expect(full.catalogPages == 2)  // Matey's and its three offers: four rows.
        #expect(full.offersReceived == 3)
        #expect(stored == [1, 3])
        try expectCacheMatchesServer(device, server)

        for minor in 1...4 {
            _ = try server.api.putOffer(major: 3, minor: UInt16(minor), OfferDraft(title: "Shoes \(minor)"), key)
        }
        try server.api.deleteOffer(major: 1, minor: 2, key)
        let delta = try engine.sync()
        #expect(!delta.fullCatalog)
        #expect(delta.catalogPages == 3)
        #expect(delta.offersReceived == 4 && delta.offersRemoved == 1)
        try expectCacheMatchesServer(device, server)
        #expect(try device.cache.offerCount == 6)

        let unchanged = try engine.sync()
        #expect(!unchanged.catalogChanged)
    }

    /// A full sync stopped after its first page: the cache holds that page and nothing of the copy
    /// before, says it is partial, and the next sync goes on from there instead of starting over.
    @Test func anInterruptedFullSyncResumes() throws {
        let server = try TestServer(.socket, clock: .machine())
        let key = try mateys(server)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: nil))
        try device.cache.stopWorkingSet()  // The whole catalog (`sync --all`).
        _ = try device.syncEngine(server).sync()
        let old = try #require(try device.cache.offer(uuid: try device.cache.retailers()[0].uuid, major: 2, minor: 1))
        try server.api.deleteOffer(major: 2, minor: 1, key)
        for minor in 1...3 {
            _ = try server.api.putOffer(major: 3, minor: UInt16(minor), OfferDraft(title: "Shoes \(minor)"), key)
        }

        // What `sync --full` stores first, then the process dies.
        guard case .page(let first, let etag) = try server.api.catalog(since: nil, etag: nil, limit: 2, device.credential)
        else {
            Issue.record("no catalog page")
            return
        }
        #expect(first.full && first.more)
        try device.cache.apply(first, etag: etag, serverTimeOffset: 0)
        #expect(try device.cache.catalogIsPartial)
        #expect(try device.cache.offers().map(\.offer) == first.offers)
        #expect(try device.cache.offer(id: old.offer.id) == nil)

        // Meanwhile an offer of that first page changes.
        _ = try server.api.putOffer(major: 1, minor: 1, OfferDraft(title: "40% off sushi"), key)
        var engine = device.syncEngine(server)
        engine.catalogPageLimit = 2
        let resumed = try engine.sync()
        #expect(!resumed.fullCatalog)
        #expect(resumed.offersReceived == 5 - first.offers.count + 1)
        try expectCacheMatchesServer(device, server)
        #expect(try device.cache.offers().contains { $0.offer.title == "40% off sushi" })
    }

    /// An area's catalog comes in pages too (it once came whole, and a rival's imports made it too long for the
    /// client to take): the sync follows them, and ends with the area's copy whole and not partial.
    @Test func anAreaSyncsOverSeveralPages() throws {
        let server = try TestServer(.socket, clock: .machine())
        let key = try mateys(server)
        _ = try server.api.putStore(
            "carnaby", StoreDraft(name: "Carnaby", latitude: 51.5136, longitude: -0.1365, radiusMetres: 80), key)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: nil))
        try device.cache.stopWorkingSet()  // An area of the whole catalog (`sync --all --near`).
        var engine = device.syncEngine(server)
        engine.catalogPageLimit = 2

        let area = CatalogArea(latitude: 51.5136, longitude: -0.1365, radiusKilometres: 1)
        let report = try engine.sync(area: area)
        #expect(report.fullCatalog && report.catalogPages == 3 && report.offersReceived == 3)
        try expectCacheMatchesServer(device, server)
        #expect(try device.cache.stores().map(\.store.storeID) == ["carnaby"])
        #expect(!(try engine.sync(area: area)).catalogChanged)
    }

    @Test func theNextPageLinkGivesItsCursor() {
        #expect(CatalogDownload.nextCursor("</v1/catalog?since=djE6YWJj&limit=7>; rel=\"next\"") == "djE6YWJj")
        #expect(CatalogDownload.nextCursor("</v1/catalog?since=abc>; rel=\"prev\"") == nil)
        #expect(CatalogDownload.nextCursor("garbage") == nil)
        #expect(CatalogDownload.nextCursor(nil) == nil)
    }

    @Test func aSessionSyncsAtStartThenEveryInterval() throws {
        let server = try TestServer(.socket, clock: .machine())
        _ = try mateys(server)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: nil))
        let clock = ManualClock(Date())
        let session = try OfferSession(
            cache: device.cache, holding: .dwell(5), sync: device.syncEngine(server), syncInterval: 60,
            deviceClock: clock.now)
        #expect(session.regions.isEmpty)
        #expect(try session.syncIfDue()?.cachedOffers == 3)
        #expect(session.regions.count == 1)
        clock.advance(59)
        #expect(try session.syncIfDue() == nil)
        clock.advance(1)
        #expect(try session.syncIfDue() != nil)
    }

    @Test func aRevokedDeviceIsToldToLinkAgain() throws {
        let server = try TestServer(.socket, clock: .machine())
        let first = try ShopperDevice(try server.api.createAccount(deviceName: nil))
        let second = try ShopperDevice(
            try server.api.linkDevice(code: try server.api.createLinkCode(first.credential).code, deviceName: nil))
        try server.api.revokeDevice(second.device.deviceID, first.credential)
        #expect {
            _ = try second.syncEngine(server).sync()
        } throws: { error in
            error as? ClientError == .unauthorized(.device)
        }
    }

    /// A hostile or broken server whose catalog page says `more` and names itself as the next: the sync stops
    /// with a clear error after asking twice, not 567 times in 25 s and on for ever (issue 41, item 11).
    @Test func aCatalogPageThatNamesItselfAsTheNextStopsTheSync() throws {
        let page = CatalogPage(
            cursor: "c1", full: false, more: true, serverTime: Date(timeIntervalSince1970: 1_800_000_000),
            retailers: [], offers: [], removed: [])
        let server = try CannedHTTPServer([
            CannedHTTPServer.Answer(
                "GET /v1/catalog", status: 200, body: String(decoding: try page.json(), as: UTF8.self),
                headers: ["Link": #"</v1/catalog?since=c1>; rel="next""#])
        ])
        let directory = try temporaryDirectory()
        let cache = try OfferCache(file: directory.appendingPathComponent("cache.sqlite"))
        try cache.stopWorkingSet()  // The whole catalog's pages (`sync --all`).
        let api = LoyaltyAPIClient(server: URL(string: server.url)!, timeouts: Timeouts(connect: 1, total: 5))
        let engine = SyncEngine(cache: cache, api: api, credential: .device("x"), now: Date.init)
        let started = Date()
        #expect {
            _ = try engine.sync()
        } throws: { error in
            guard case .protocolViolation(let message) = error as? ClientError else { return false }
            return message.contains("names a page already read as the next (cursor c1)")
        }
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func anUnreachableServerIsANetworkError() throws {
        let directory = try temporaryDirectory()
        let cache = try OfferCache(file: directory.appendingPathComponent("cache.sqlite"))
        try cache.show(UUID(), at: Date())
        // Port 9 (discard) on loopback: nothing listens.
        let api = LoyaltyAPIClient(server: URL(string: "http://127.0.0.1:9")!, timeouts: Timeouts(connect: 1, total: 2))
        let engine = SyncEngine(cache: cache, api: api, credential: .device("x"), now: Date.init)
        #expect {
            _ = try engine.sync()
        } throws: { error in
            if case .network = error as? ClientError { true } else { false }
        }
        #expect(try cache.outboxCount == 1)
    }
}

@Suite(.serialized) struct RedemptionTests {
    @Test func aRetriedRedeemReusesItsKey() throws {
        let server = try TestServer(.socket, clock: .machine())
        _ = try mateys(server)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: nil))
        _ = try device.syncEngine(server).sync()
        let offer = try OfferReference(parsing: "\(try device.cache.retailers()[0].uuid.uuidString):1:1")
            .resolve(in: device.cache)
        _ = try server.api.pushSeen([SeenItem(offerID: offer.offer.id, seenAt: Date())], device.credential)
        // The first attempt reached the server but its answer was lost.
        let key = try device.cache.idempotencyKey(forRedeeming: offer.offer.id, now: Date()) { "lost-answer-key" }
        let lost = try server.api.redeem(offerID: offer.offer.id, idempotencyKey: key, device.credential)

        let redeemer = Redeemer(cache: device.cache, api: server.api, credential: device.credential, now: Date.init)
        let retried = try redeemer.redeem(offer)
        #expect(retried == lost)
        let stored = try #require(try device.cache.redemptions().first?.redemption)
        #expect(stored.id == lost.id)
        #expect(stored.code == lost.code)
        #expect(abs(stored.redeemedAt.timeIntervalSince(lost.redeemedAt)) < 0.001)

        // per_shopper_limit 1: a second, new redemption is refused, and its key is not kept.
        #expect {
            _ = try redeemer.redeem(offer)
        } throws: { error in
            guard case .server(409, .limitReached, _) = error as? ClientError else { return false }
            return true
        }
        #expect(try device.cache.redemptions().count == 1)
    }

    @Test func offerReferences() throws {
        let id = UUID()
        #expect(try OfferReference(parsing: id.uuidString) == .id(id))
        #expect(
            try OfferReference(parsing: "\(mateysUUID.uuidString):2:1")
                == .beacon(BeaconIdentity(uuid: mateysUUID, major: 2, minor: 1)))
        #expect(throws: ClientError.self) { try OfferReference(parsing: "\(mateysUUID.uuidString):2") }
        #expect(throws: ClientError.self) { try OfferReference(parsing: "sushi") }
    }
}

/// A device clock the test moves by hand.
final class ManualClock: @unchecked Sendable {
    private var current: Date

    init(_ start: Date) { current = start }

    func now() -> Date { current }
    func advance(_ seconds: Double) { current = current.addingTimeInterval(seconds) }
}

@Suite struct ServerAnswerTests {
    @Test func anErrorBodyBecomesOneLineWithItsCode() throws {
        let server = try TestServer(.socket, clock: .machine())
        let (_, key) = try server.retailer("Tidy \(UUID().uuidString.prefix(4))")
        // The client validates first; sent anyway, the server's own answer comes back typed.
        #expect {
            _ = try server.api.putOffer(major: 1, minor: 1, OfferDraft(title: ""), key)
        } throws: { error in
            guard case .server(422, .validationFailed, let message) = error as? ClientError else { return false }
            return !message.isEmpty
        }
        #expect {
            _ = try server.api.retailer(.retailer("not-a-key"))
        } throws: { error in
            error as? ClientError == .unauthorized(.retailer)
        }
    }

    @Test func aServerThatNeverAnswersTimesOut() throws {
        let silent = try LoopbackSocket(listening: true)
        defer { withExtendedLifetime(silent) {} }
        let api = LoyaltyAPIClient(
            server: URL(string: silent.url)!, timeouts: Timeouts(connect: 1, total: 1))
        let started = Date()
        #expect {
            _ = try api.devices(.device("x"))
        } throws: { error in
            if case .network = error as? ClientError { true } else { false }
        }
        // The limit is the behaviour: the 1 s given, not the default 30 s (nor never).
        #expect(Date().timeIntervalSince(started) < 5)
    }
}

@Suite(.serialized) struct TillAcceptanceTests {
    /// A code accepted at a till shows in the device's history after its next sync, and only then.
    @Test func aCodeUsedAtTheTillShowsAfterTheNextSync() throws {
        let server = try TestServer(.socket, clock: .machine())
        let key = try mateys(server)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: nil))
        _ = try device.syncEngine(server).sync()
        let offer = try OfferReference(parsing: "\(try device.cache.retailers()[0].uuid.uuidString):1:1")
            .resolve(in: device.cache)
        _ = try server.api.pushSeen([SeenItem(offerID: offer.offer.id, seenAt: Date())], device.credential)
        let redemption = try Redeemer(cache: device.cache, api: server.api, credential: device.credential, now: Date.init)
            .redeem(offer)
        #expect(try device.syncEngine(server).sync().codesAccepted == 0)

        let till = try server.api.createTillKey(name: "Till 1", key)
        let accepted = try server.api.till(redemption.code.lowercased(), accept: true, .till(till.tillKey))
        #expect(accepted.status == .accepted && accepted.acceptedTill == "Till 1")
        #expect(try device.cache.redemptions().first?.redemption?.acceptedAt == nil, "not before a sync")

        #expect(try device.syncEngine(server).sync().codesAccepted == 1)
        let stored = try #require(try device.cache.redemptions().first?.redemption)
        #expect(abs(stored.acceptedAt!.timeIntervalSince(accepted.acceptedAt!)) < 0.001)
        #expect(try device.syncEngine(server).sync().codesAccepted == 0)
        #expect(try !device.cache.hasUnacceptedRedemptions, "nothing left to ask the server about")
    }
}
