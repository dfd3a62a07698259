import Foundation

/// Where "now" comes from, in seconds.
///
/// `Ranger` and `RegionMonitor` never read a clock: they take their time from the sightings they are
/// given and from explicit `advance(to:)` calls. A clock is read only at the edge, by whoever stamps
/// live radio events or paces a replay; tests and replays use the capture's own timestamps.
public protocol BeaconClock: Sendable {
    /// Seconds on this clock's scale.
    func now() -> Double
}

/// Wall-clock time in seconds since the Unix epoch, the scale BTSnoop captures use, so live and
/// replayed `t` values read the same way.
public struct SystemBeaconClock: BeaconClock {
    public init() {}

    public func now() -> Double { Date().timeIntervalSince1970 }
}
