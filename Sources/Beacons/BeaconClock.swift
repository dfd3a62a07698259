import Foundation

/// Where "now" comes from, in seconds.
///
/// `Ranger` and `RegionMonitor` never read a clock: they take their time from the sightings they are
/// given and from explicit `advance(to:)` calls. A clock is read only at the edge, by whoever stamps
/// live radio events or paces a replay; tests and replays use the capture's own timestamps.
public protocol BeaconClock: Sendable {
    /// Seconds on this clock's scale.
    func now() -> Double
    /// Seconds the machine has been suspended since it booted, which `now()` does not count (a clock that
    /// counts them, or cannot tell, says 0). A live scan compares it between two reads to notice a resume.
    var sleptSeconds: Double { get }
}

extension BeaconClock {
    public var sleptSeconds: Double { 0 }
}

/// Wall-clock time in seconds since the Unix epoch, the scale BTSnoop captures use, so live and
/// replayed `t` values read the same way.
public struct SystemBeaconClock: BeaconClock {
    public init() {}

    public func now() -> Double { Date().timeIntervalSince1970 }
}

/// Live time: Unix seconds at the start, then advanced by the monotonic clock, so `t` reads like a
/// capture's timestamps but never jumps when the wall clock is set (NTP, a suspended laptop's resync).
/// Timers and tracking ages measured on it hold across such jumps. CLOCK_MONOTONIC stops while the machine
/// is suspended: time asleep is not time unheard. CLOCK_BOOTTIME runs on, so their difference is the sleep.
public struct MonotonicBeaconClock: BeaconClock {
    private let origin: (unix: Double, monotonic: Double)

    public init() { origin = (Date().timeIntervalSince1970, Self.monotonicSeconds()) }

    public func now() -> Double { origin.unix + (Self.monotonicSeconds() - origin.monotonic) }

    public var sleptSeconds: Double {
        // Monotonic first: the other order reads a hair less than 0 while awake.
        let monotonic = Self.monotonicSeconds()
        return max(0, Self.seconds(CLOCK_BOOTTIME) - monotonic)
    }

    private static func monotonicSeconds() -> Double { seconds(CLOCK_MONOTONIC) }

    private static func seconds(_ clock: clockid_t) -> Double {
        var now = timespec()
        clock_gettime(clock, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
