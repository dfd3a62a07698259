/// Paces a replay at the speed its timestamps were recorded: how long to wait before each item, given
/// the wall clock, so that capture time and wall time advance together from the first item on.
public struct ReplayPacing: Sendable {
    private var origin: (capture: Double, wall: Double)? = nil

    public init() {}

    /// Seconds to wait before the item at `captureTime` (nil: none), at most `limit`; the first item sets the origin.
    public mutating func delay(before captureTime: Double, now: Double, limit: Double = 60) -> Double? {
        guard let origin else {
            self.origin = (captureTime, now)
            return nil
        }
        let delay = (captureTime - origin.capture) - (now - origin.wall)
        return delay > 0 ? min(delay, limit) : nil
    }
}
