import Beacons
import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Synchronization
import Testing

@testable import LoyaltyClient

/// A device's clock that a test moves on.
private final class DeviceClock: Sendable {
    private let seconds = Mutex<Double>(Date().timeIntervalSince1970)
    var now: Date { Date(timeIntervalSince1970: seconds.withLock { $0 }) }
    func advance(days: Double) { seconds.withLock { $0 += days * 86_400 } }
}

/// A retailer with a store at `latitude`, -0.1 and offers at 1:1, 1:2, 1:3.
private func shop(_ server: TestServer, _ name: String, latitude: Double) throws -> RetailerCredentials {
    let (credentials, key) = try server.retailer("\(name) \(UUID().uuidString.prefix(6))", uuid: UUID())
    _ = try server.api.putStore(
        "main", StoreDraft(name: "\(name) main", latitude: latitude, longitude: -0.1, radiusMetres: 80), key)
    for minor in 1...3 {
        _ = try server.api.putOffer(major: 1, minor: UInt16(minor), OfferDraft(title: "\(name) \(minor)"), key)
    }
    return credentials
}

/// Retailers without stores or offers, enough with `others` for the directory to have two buckets (32): below that, a
/// working set carries every retailer.
private func fillTwoBuckets(_ server: TestServer, others: Int) throws {
    for index in others..<32 { _ = try server.retailer("Filler \(index) \(UUID().uuidString.prefix(6))") }
}

/// Makes two of `offers` wait: 1:1 claimed for showing (by a process still running, which has not shown it) and 1:2
/// shown and redeemed, its code not yet used at a till.
private func makeTwoWait(_ device: ShopperDevice, _ server: TestServer, of offers: [ResolvedOffer]) throws
    -> (claimed: ResolvedOffer, redeemed: ResolvedOffer)
{
    let sushi = try #require(offers.first { $0.offer.minor == 1 })
    let pizza = try #require(offers.first { $0.offer.minor == 2 })
    #expect(try device.cache.claimShown(sushi.offer.id, shownAt: Date(), reportedAt: Date(), reshowAfter: nil))
    #expect(try device.cache.claimShown(pizza.offer.id, shownAt: Date(), reportedAt: Date(), reshowAfter: nil))
    try device.cache.shown(pizza.offer.id)
    _ = try Redeemer(cache: device.cache, api: server.api, credential: device.credential, now: Date.init).redeem(pizza)
    return (sushi, pizza)
}

@Suite(.serialized) struct WorkingSetTests {
    /// A device carries the retailers near its home area only; changed ones come by delta, unchanged ones cost no
    /// request; a retailer a week away leaves the cache, but its offers that wait (one claimed for showing and not
    /// yet shown, one redeemed and not yet used at a till) stay; one heard within the week stays whole.
    @Test func aWorkingSetCarriesItsRetailersAndEvictionKeepsWhatWaits() throws {
        let server = try TestServer(.socket, clock: .machine())
        let near = try shop(server, "Near", latitude: 51.5)
        let far = try shop(server, "Far", latitude: 48.0)
        try fillTwoBuckets(server, others: 2)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: "phone"))
        let clock = DeviceClock()
        let engine = SyncEngine(cache: device.cache, api: server.api, credential: device.credential, now: { clock.now })
        try device.cache.startWorkingSet(home: CatalogArea(latitude: 51.5, longitude: -0.1, radiusKilometres: 2))

        let first = try engine.sync()
        #expect(first.carriedRetailers == 1 && first.cachedOffers == 3)
        #expect(Set(try device.cache.offers().map(\.retailer.id)) == [near.id])
        #expect(try device.cache.directoryRetailers().count >= 2)
        let again = try engine.sync()
        #expect(!again.catalogChanged && again.catalogPages == 0, "an unchanged retailer costs no request")

        // The far retailer's change is nothing to this device; the near one's comes as a delta.
        _ = try server.api.putOffer(major: 9, minor: 9, OfferDraft(title: "Far new"), .retailer(far.apiKey))
        #expect(try engine.sync().catalogPages == 0)
        _ = try server.api.putOffer(major: 1, minor: 3, OfferDraft(title: "Near 3, new"), .retailer(near.apiKey))
        let delta = try engine.sync()
        #expect(delta.catalogPages == 1 && delta.offersReceived == 1 && !delta.fullCatalog)

        // Two offers wait: one claimed for showing, one redeemed.
        let (sushi, pizza) = try makeTwoWait(device, server, of: try device.cache.offers())

        // The shopper moves away: after eight days the near retailer leaves, but for what waits; heard two days
        // before, it would have stayed.
        try device.cache.startWorkingSet(home: CatalogArea(latitude: 10, longitude: 10, radiusKilometres: 1))
        clock.advance(days: 6)
        try device.cache.noteHeardCarried(near.uuid, at: clock.now)
        clock.advance(days: 2)
        #expect(try engine.sync().carriedRetailers == 1)
        #expect(try device.cache.offers().count == 3)
        clock.advance(days: 6)
        let moved = try engine.sync()
        #expect(moved.carriedRetailers == 0)
        #expect(Set(try device.cache.offers().map(\.offer.id)) == [sushi.offer.id, pizza.offer.id])
        #expect(try device.cache.stores().isEmpty)
    }

    /// A UUID heard offline is queued and fetched (by its bucket, keeping only it) at the next sync; a followed
    /// retailer is carried wherever the device is; `--all` brings the whole catalog back.
    @Test func aHeardRetailerIsFetchedAtTheNextSyncAndAFollowedOneIsCarried() throws {
        let server = try TestServer(.socket, clock: .machine())
        let heard = try shop(server, "Heard", latitude: 40)
        let followed = try shop(server, "Followed", latitude: 30)
        _ = try shop(server, "Other", latitude: 20)
        try fillTwoBuckets(server, others: 3)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: "phone"))
        let engine = device.syncEngine(server)
        // A new cache carries a working set: the directory, and no retailer's offers without a home, heard or followed.
        let first = try engine.sync()
        #expect(first.cachedOffers == 0 && first.carriedRetailers == 0 && first.directoryRetailers == 32)
        #expect(first.catalogPages == 0)
        #expect(try device.cache.directoryBuckets == 2)

        // Offline, a scan heard the retailer's beacon (EndToEndTests' WorkingSetStoryTests hears it in a replay).
        try device.cache.noteHeard(heard.uuid, at: Date())
        #expect(try device.cache.heardRetailers().map(\.id) == [heard.id])

        #expect(try device.cache.follow(named: followed.name.uppercased())?.id == followed.id)
        let report = try engine.sync()
        #expect(Set(try device.cache.offers().map(\.retailer.id)) == [heard.id, followed.id])
        #expect(report.carriedRetailers == 2)
        #expect(try device.cache.heardRetailers().isEmpty)

        // Online, a scan shows the heard retailer's offer from the cache.
        let online = try OfferSession(cache: device.cache, holding: .dwell(5), sync: engine, deviceClock: Date.init)
        let beacon = BeaconIdentity(uuid: heard.uuid, major: 1, minor: 1)
        let shown = try online.update(time: 10, beacons: [BeaconProximity(identity: beacon, proximity: .near)])
        #expect(shown?.offer.offer.title.hasPrefix("Heard") == true)

        // `--all` carries the whole catalog, and later syncs keep to it until the working set returns.
        try device.cache.stopWorkingSet()
        let whole = try engine.sync()
        #expect(whole.fullCatalog && whole.carriedRetailers == nil && whole.cachedOffers == 9)
        #expect(try engine.sync().carriedRetailers == nil && !device.cache.carriesWorkingSet)
        try device.cache.startWorkingSet()
        let back = try engine.sync()
        #expect(back.carriedRetailers == 1, "the followed one: heard ones were let go with the whole catalog")
        #expect(Set(try device.cache.offers().map(\.retailer.id)) == [followed.id])
    }

    /// Below 32 retailers the directory has one bucket, and a new device's plain sync fetches it whole (one page): it
    /// carries every retailer, takes their deltas, fetches a newcomer by id; once the directory has two buckets, the
    /// retailers no longer near, heard or followed leave a week later.
    @Test func oneBucketCarriesEveryRetailerUntilThereAreTwo() throws {
        let server = try TestServer(.socket, clock: .machine())
        let first = try shop(server, "First", latitude: 40)
        _ = try shop(server, "Second", latitude: 30)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: "phone"))
        let clock = DeviceClock()
        let engine = SyncEngine(cache: device.cache, api: server.api, credential: device.credential, now: { clock.now })

        let new = try engine.sync()
        #expect(new.carriedRetailers == 2 && new.directoryRetailers == 2 && new.cachedOffers == 6)
        #expect(new.catalogPages == 1 && new.fullCatalog, "the one bucket, whole")
        #expect(try device.cache.directoryBuckets == 1)
        _ = try server.api.putOffer(major: 1, minor: 4, OfferDraft(title: "First 4"), .retailer(first.apiKey))
        let delta = try engine.sync()
        #expect(delta.catalogPages == 1 && delta.offersReceived == 1 && !delta.fullCatalog)
        let third = try shop(server, "Third", latitude: 20)
        let joined = try engine.sync()
        #expect(joined.carriedRetailers == 3 && joined.offersReceived == 3 && joined.cachedOffers == 10)
        #expect(Set(try device.cache.offers().map(\.retailer.id)).contains(third.id))

        try fillTwoBuckets(server, others: 3)
        #expect(try engine.sync().carriedRetailers == 3, "carried a week more")
        clock.advance(days: 8)
        let later = try engine.sync()
        #expect(later.carriedRetailers == 0 && later.cachedOffers == 0 && later.directoryRetailers == 32)
    }

    /// A cache from before the working set was the default (no scope, the whole catalog) turns to a working set at its
    /// next plain sync: the offers of the retailers it does not carry go, but the one claimed for showing and the one
    /// redeemed stay, and so do the seen set, the outbox (sent by that sync) and the redemptions.
    @Test func aCacheOfTheWholeCatalogFromBeforeTurnsToAWorkingSet() throws {
        let server = try TestServer(.socket, clock: .machine())
        let near = try shop(server, "Near", latitude: 51.5)
        _ = try shop(server, "Far", latitude: 48.0)
        try fillTwoBuckets(server, others: 2)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: "phone"))
        let engine = device.syncEngine(server)
        try device.cache.stopWorkingSet()
        #expect(try engine.sync().cachedOffers == 6)
        try device.cache.write { db in try OfferCache.setState(db, .catalogScope, nil) }
        #expect(try device.cache.carriesWorkingSet)

        let offers = try device.cache.offers().filter { $0.retailer.id == near.id }
        let (sushi, pizza) = try makeTwoWait(device, server, of: offers)
        // The redemption sent the outbox; one more offer is claimed, and its seen item waits to be sent.
        let third = try #require(offers.first { $0.offer.minor == 3 })
        #expect(try device.cache.claimShown(third.offer.id, shownAt: Date(), reportedAt: Date(), reshowAfter: nil))

        let moved = try engine.sync()
        #expect(moved.carriedRetailers == 0 && moved.directoryRetailers == 32 && moved.pushed == 1)
        #expect(try device.cache.directoryBuckets == 2)
        #expect(Set(try device.cache.offers().map(\.offer.id)) == [sushi.offer.id, pizza.offer.id, third.offer.id])
        #expect(try device.cache.seen().count == 3)
        #expect(try device.cache.redemptions().map(\.offerID) == [pizza.offer.id])
    }

    /// `sync --all` on a cache of the whole catalog from before keeps it and its cursor: no download again.
    @Test func aCacheOfTheWholeCatalogFromBeforeKeptWithAllCostsNoDownload() throws {
        let server = try TestServer(.socket, clock: .machine())
        _ = try shop(server, "Near", latitude: 51.5)
        let device = try ShopperDevice(try server.api.createAccount(deviceName: "phone"))
        let engine = device.syncEngine(server)
        try device.cache.stopWorkingSet()
        #expect(try engine.sync().fullCatalog)
        try device.cache.write { db in try OfferCache.setState(db, .catalogScope, nil) }
        try device.cache.stopWorkingSet()
        let kept = try engine.sync()
        #expect(!kept.catalogChanged && kept.carriedRetailers == nil && kept.cachedOffers == 3)
    }
}
