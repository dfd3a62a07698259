import Beacons
import BeaconsTesting
import Foundation
import LoyaltyAPI
import Testing

@testable import LoyaltyClient

/// The offer gate (`--min-proximity near`) sees the Ranger's stable class: a shopper who walks
/// up to a counter and stands 3.3 m from its beacon, just past the 3 m near limit, is rarely let through,
/// where the bare Kalman filter's bucket flaps into near again and again.
@Suite struct StableProximityGateTests {
    static let retailer = CatalogRetailer(
        id: UUID(), name: "Matey's", uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!)

    /// Presentations over `seeds` walks with the Ranger using `rule`, of an offer that may show again
    /// a second after it was shown for a second: how long the gate stood open.
    static func presentations(rule: ProximityRule, seeds: Range<UInt64>) throws -> Int {
        var presentations = 0
        for seed in seeds {
            var walk = BeaconWalk.counterLinger(rssiNoise: 6, seed: seed)
            // From 12 m in to the counter, then 60 s there.
            walk.beacons[0].path = [(0, 12), (10, 12), (24.5, 3.3), (84.5, 3.3)].map {
                BeaconWalk.Waypoint(time: $0.0, distance: $0.1)
            }
            walk.duration = 84.5
            let identity = walk.beacons[0].frame.identity
            let offer = ResolvedOffer(
                offer: Offer(
                    id: UUID(), retailerID: retailer.id, major: identity.major, minor: identity.minor,
                    title: "30% off sushi", reshowAfterSeconds: 1, updatedAt: Date(timeIntervalSince1970: 1_800_000_000)),
                retailer: retailer)
            var ranger = try Ranger(configuration: Ranger.Configuration(proximityRule: rule))
            var presenter = OfferPresenter(minimumProximity: .near, holding: .dwell(1))
            walk.forEachAdvert { sighting, _ in
                guard let snapshot = ranger.observe(sighting) else { return }
                let beacons = snapshot.beacons.map { BeaconProximity(identity: $0.identity, proximity: $0.proximity) }
                if presenter.update(
                    time: snapshot.time, serverTime: Date(timeIntervalSince1970: 1_800_000_000 + snapshot.time),
                    beacons: beacons, resolve: { $0 == identity ? offer : nil }) != nil
                {
                    presentations += 1
                }
            }
        }
        return presentations
    }

    @Test func aShopperStandingJustPastTheNearLimitIsRarelyLetThrough() throws {
        let seeds: Range<UInt64> = 1..<21
        let stable = try Self.presentations(rule: .evidence, seeds: seeds)
        let bucket = try Self.presentations(rule: .threshold, seeds: seeds)
        #expect(stable * 4 < bucket, "stable class \(stable), bare bucket \(bucket) presentations")
        #expect(bucket > 0)
    }
}
