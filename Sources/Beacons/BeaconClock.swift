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

/// Live time: Unix seconds at the start, then advanced by the monotonic clock, so `t` reads like a
/// capture's timestamps but never jumps when the wall clock is set (NTP, a suspended laptop's resync).
/// Timers and tracking ages measured on it hold across such jumps.
public struct MonotonicBeaconClock: BeaconClock {
    private let origin: (unix: Double, monotonic: Double)

    public init() { origin = (Date().timeIntervalSince1970, Self.monotonicSeconds()) }

    public func now() -> Double { origin.unix + (Self.monotonicSeconds() - origin.monotonic) }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
