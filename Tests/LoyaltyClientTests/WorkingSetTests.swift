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

@Suite(.serialized) struct WorkingSetTests {
    /// A device carries the retailers near its home area only; changed ones come by delta, unchanged ones cost no
    /// request; a retailer a week away leaves the cache, but its offers that wait (one claimed for showing and not
    /// yet shown, one redeemed and not yet used at a till) stay; one heard within the week stays whole.
    @Test func aWorkingSetCarriesItsRetailersAndEvictionKeepsWhatWaits() throws {
        let server = try TestServer(.socket, clock: .machine())
        let near = try shop(server, "Near", latitude: 51.5)
        let far = try shop(server, "Far", latitude: 48.0)
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

        // Two offers wait: 1:1 claimed for showing (this process, still running, has not shown it) and 1:2 shown
        // and redeemed, its code not yet used at a till.
        let offers = try device.cache.offers()
        let sushi = try #require(offers.first { $0.offer.minor == 1 })
        let pizza = try #require(offers.first { $0.offer.minor == 2 })
        #expect(try device.cache.claimShown(sushi.offer.id, shownAt: Date(), reportedAt: Date(), reshowAfter: nil))
        #expect(try device.cache.claimShown(pizza.offer.id, shownAt: Date(), reportedAt: Date(), reshowAfter: nil))
        try device.cache.shown(pizza.offer.id)
        _ = try Redeemer(cache: device.cache, api: server.api, credential: device.credential, now: Date.init)
            .redeem(pizza)

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
        let device = try ShopperDevice(try server.api.createAccount(deviceName: "phone"))
        let engine = device.syncEngine(server)
        try device.cache.startWorkingSet()
        #expect(try engine.sync().cachedOffers == 0)

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

        try device.cache.stopWorkingSet()
        let whole = try engine.sync()
        #expect(whole.fullCatalog && whole.carriedRetailers == nil && whole.cachedOffers >= 9)
    }
}
