import Foundation
import Geofencing

/// How far a shopper can have gone between two verified sightings at placed beacons: at `speed` for the time
/// between them, plus `allowance` for where in a store (or a mall of stores) each beacon hangs and for clocks. A
/// sighting farther than that from the account's previous one is an impossible journey: an identifier relayed from a
/// store to someone elsewhere, or one account shared by devices in two cities.
struct JourneyRule: Sendable {
    /// 200 km/h: faster than any road or regional train a shopper takes between two shops; an intercity train or a
    /// flight between two visits is longer than the presence window anyway.
    static let speedMetresPerSecond = 200_000.0 / 3600
    /// 2 km: two beacons of one shopping centre, or stores placed with a rough location, are never a journey.
    static let allowanceMetres = 2_000.0

    /// A verified sighting at a placed beacon: where the beacon's store is, and when it was heard.
    struct Visit: Sendable {
        var location: GeoCoordinate
        var heardAt: Date
    }

    /// Whether going from `previous` to `next` is faster than the rule allows; the distance in metres either way.
    static func isImpossible(from previous: Visit, to next: Visit) -> (impossible: Bool, metres: Double) {
        let metres = GreatCircle.distance(previous.location, next.location)
        let seconds = abs(next.heardAt.timeIntervalSince(previous.heardAt))
        return (metres > allowanceMetres + speedMetresPerSecond * seconds, metres)
    }
}
