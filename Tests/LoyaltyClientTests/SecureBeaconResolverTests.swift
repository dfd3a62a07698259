import Beacons
import Digest
import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyClient

/// A retailer with an offer on a secure beacon 1:1 (K = 10) and a shopper device whose cache knows it, against a
/// real server over loopback.
private struct SecureShop {
    let server: TestServer
    let uuid = UUID()
    let provisioning: BeaconProvisioning
    let device: ShopperDevice

    init() throws {
        server = try TestServer(.socket, clock: .machine())
        let (_, key) = try server.retailer("Secure \(UUID().uuidString.prefix(4))", uuid: uuid)
        _ = try server.api.putOffer(major: 1, minor: 1, OfferDraft(title: "Sushi for visitors"), key)
        provisioning = try server.api.secureBeacon(major: 1, minor: 1, SecureBeaconRequest(exponent: 10), key)
        device = try ShopperDevice(try server.api.createAccount(deviceName: nil))
        _ = try device.syncEngine(server).sync()
    }

    /// The beacon's EID now (`windowsAgo` windows earlier).
    func eid(windowsAgo: UInt32 = 0) throws -> UInt64 {
        let counter =
            provisioning.counter + UInt32(Date().timeIntervalSince(provisioning.counterAt)) - windowsAgo << 10
        let key = Hex.bytes(provisioning.identityKey)!
        return try EddystoneEID.ephemeralID(identityKey: key, exponent: 10, counter: counter)
            .reduce(0) { $0 << 8 | UInt64($1) }
    }

    func offers() throws -> OfferSession {
        try OfferSession(cache: device.cache, holding: .dwell(5), sync: nil, deviceClock: Date.init)
    }

    func resolver(_ offers: OfferSession, online: Bool = true, api: LoyaltyAPIClient? = nil) -> SecureBeaconResolver {
        SecureBeaconResolver(
            offers: offers,
            sender: online ? SightingSender(like: api ?? server.api, credential: device.credential) : nil,
            waitsForAnswers: true)
    }

    static func sighting(eid: UInt64, at time: Double) -> BeaconSighting {
        BeaconSighting(
            frame: BeaconFrame(kind: .eddystoneEID, identity: BeaconIdentity(ephemeralID: EphemeralID(eid)), measuredPower: -59),
            address: BluetoothAddress(wire: (1, 2, 3, 4, 5, 6)), rssi: -50, time: time)
    }
}

@Suite struct SecureBeaconResolverTests {
    @Test func anIdentityIsAskedOnceAWindowAndThenIsItsBeacon() throws {
        let shop = try SecureShop()
        let offers = try shop.offers()
        let resolver = shop.resolver(offers)
        let eid = try shop.eid()
        let beacon = BeaconIdentity(uuid: shop.uuid, major: 1, minor: 1)
        var seen: [BeaconSighting] = []
        for tenth in 0..<30 {
            let time = Double(tenth) / 10
            seen.append(try resolver.resolve(SecureShop.sighting(eid: eid, at: time)))
            try resolver.advance(to: time)
        }
        // Heard for 3 s, sent once: after the first batch (1 s) the EID is the beacon, heard as loud.
        #expect(resolver.counts == SecureBeaconResolver.Counts(resolved: 1))
        #expect(seen.first?.frame.kind == .eddystoneEID)
        let last = try #require(seen.last)
        #expect(last.frame.kind == .iBeacon && last.identity == beacon && last.rssi == -50)
        #expect(seen.filter { $0.identity == beacon }.count >= 15)
        #expect(resolver.isVerified(beacon, at: offers.serverNow()))
        #expect(!resolver.isVerified(beacon, at: offers.serverNow().addingTimeInterval(2048)))

        // An identity of nobody is asked once, and not again for a while, however often it is heard.
        for tenth in 30..<60 {
            let time = Double(tenth) / 10
            let heard = SecureShop.sighting(eid: 0x0102_0304_0506_0708, at: time)
            #expect(try resolver.resolve(heard) == heard)
            try resolver.advance(to: time)
        }
        try resolver.finish()
        #expect(resolver.counts == SecureBeaconResolver.Counts(resolved: 1, unresolved: 1))
    }

    @Test func anIdentityFromAnEarlierWindowResolvesToNothing() throws {
        let shop = try SecureShop()
        let resolver = shop.resolver(try shop.offers())
        let stale = SecureShop.sighting(eid: try shop.eid(windowsAgo: 3), at: 0)
        #expect(try resolver.resolve(stale) == stale)
        try resolver.finish()
        #expect(resolver.counts == SecureBeaconResolver.Counts(unresolved: 1))
        #expect(!resolver.isVerified(BeaconIdentity(uuid: shop.uuid, major: 1, minor: 1), at: Date()))
    }

    @Test func aStaticBeaconOfTheCatalogIsNoCandidateAndAnUnknownMinorIs() throws {
        let shop = try SecureShop()
        let resolver = shop.resolver(try shop.offers())
        func iBeacon(_ minor: UInt16) -> BeaconSighting {
            BeaconSighting(
                frame: BeaconFrame(kind: .iBeacon, identity: BeaconIdentity(uuid: shop.uuid, major: 1, minor: minor), measuredPower: -59),
                address: BluetoothAddress(wire: (1, 2, 3, 4, 5, 6)), rssi: -50, time: 0)
        }
        _ = try resolver.resolve(iBeacon(1))
        try resolver.finish()
        #expect(resolver.counts == SecureBeaconResolver.Counts())
        let second = shop.resolver(try shop.offers())
        _ = try second.resolve(iBeacon(4242))
        try second.finish()
        #expect(second.counts == SecureBeaconResolver.Counts(unresolved: 1))
    }

    @Test func offlineSightingsAreQueuedAndTheSyncSendsThemOrDropsThoseTooOld() throws {
        let shop = try SecureShop()
        let resolver = shop.resolver(try shop.offers(), online: false)
        _ = try resolver.resolve(SecureShop.sighting(eid: try shop.eid(), at: 0))
        _ = try resolver.resolve(SecureShop.sighting(eid: try shop.eid(), at: 0.5))
        try resolver.finish()
        #expect(resolver.counts == SecureBeaconResolver.Counts(queued: 1))
        let old = Date().addingTimeInterval(-SecureBeaconResolver.maximumAge - 60)
        try shop.device.cache.queueSightings([Sighting(eid: "0102030405060708", heardAt: old)])
        #expect(try shop.device.cache.queuedSightingCount == 2)

        let sent = try shop.device.syncEngine(shop.server).sendSightings()
        #expect(sent.resolved == 1 && sent.unresolved == 0 && sent.dropped == 1)
        // The visit is verified: its presence offer is recorded as seen, and the server takes it.
        #expect(sent.offers.map(\.offer.title) == ["Sushi for visitors"])
        #expect(try shop.device.cache.queuedSightingCount == 0)
        #expect(try shop.device.syncEngine(shop.server).pushOutbox() == 1)
    }

    @Test func makingABeaconSecureReachesADeviceInItsNextDelta() throws {
        let server = try TestServer(.socket, clock: .machine())
        let uuid = UUID()
        let (_, key) = try server.retailer("Delta \(UUID().uuidString.prefix(4))", uuid: uuid)
        _ = try server.api.putOffer(major: 1, minor: 1, OfferDraft(title: "Sushi"), key)
        _ = try server.api.putOffer(major: 1, minor: 2, OfferDraft(title: "Pizza"), key)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: nil))
        _ = try device.syncEngine(server).sync()
        #expect(try device.cache.offer(uuid: uuid, major: 1, minor: 1)?.offer.presenceRequired == nil)

        _ = try server.api.secureBeacon(major: 1, minor: 1, SecureBeaconRequest(), key)
        let report = try device.syncEngine(server).sync()
        #expect(!report.fullCatalog && report.offersReceived == 1)
        #expect(try device.cache.offer(uuid: uuid, major: 1, minor: 1)?.offer.presenceRequired == true)
        #expect(try device.cache.offer(uuid: uuid, major: 1, minor: 2)?.offer.presenceRequired == nil)
    }

    @Test func theQueueKeepsTheNewest() throws {
        let shop = try SecureShop()
        let now = Date()
        let sightings = (0..<(OfferCache.sightingQueueLimit + 5)).map { index in
            Sighting(eid: "00000000000000" + String(format: "%02x", index % 256), heardAt: now.addingTimeInterval(Double(index)))
        }
        #expect(try shop.device.cache.queueSightings(sightings) == 5)
        let queued = try shop.device.cache.queuedSightings(limit: 1)
        let oldest = try #require(queued.first?.sighting.heardAt)
        #expect(abs(oldest.timeIntervalSince(sightings[5].heardAt)) < 0.001)
    }

    @Test func whatCannotBeSentIsQueuedAndSentByTheNextScanThatReachesTheService() throws {
        let shop = try SecureShop()
        let nowhere = LoyaltyAPIClient(server: URL(string: "http://127.0.0.1:9")!, timeouts: Timeouts(connect: 2, total: 5))
        let unreachable = shop.resolver(try shop.offers(), api: nowhere)
        _ = try unreachable.resolve(SecureShop.sighting(eid: try shop.eid(), at: 0))
        try unreachable.finish()
        #expect(unreachable.counts == SecureBeaconResolver.Counts(queued: 1))

        let reachable = shop.resolver(try shop.offers())
        try reachable.advance(to: 0)
        try reachable.finish()
        #expect(reachable.counts == SecureBeaconResolver.Counts(resolved: 1))
        #expect(try shop.device.cache.queuedSightingCount == 0)
    }
}
