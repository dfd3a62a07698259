import Foundation

/// Distance and `Proximity` from a filtered RSSI and the beacon's measured power (RSSI at 1 m).
///
/// The log-distance path-loss model, `d = 10 ^ ((measuredPower - rssi) / (10 n))`, rather than the
/// Android Beacon Library's curve `d = A (rssi / measuredPower) ^ B + C`: that curve's coefficients
/// were fitted to one phone's receiver (a Nexus 5), while this code runs on whatever adapter a Linux
/// machine has. The log-distance model has one physical parameter, the path-loss exponent `n` (2 in
/// free space, roughly 2.5 to 4 indoors), which a deployment can calibrate.
public struct DistanceModel: Sendable, Hashable {
    /// `n`: how fast the signal falls with distance.
    public var pathLossExponent: Double
    /// Below this distance (metres) a beacon is `.immediate`.
    public var immediateLimit: Double
    /// Below this distance (metres) a beacon is `.near`; beyond it, `.far`.
    public var nearLimit: Double

    public init(pathLossExponent: Double = 2, immediateLimit: Double = 0.5, nearLimit: Double = 3) {
        self.pathLossExponent = pathLossExponent
        self.immediateLimit = immediateLimit
        self.nearLimit = nearLimit
    }

    /// Why this model cannot run, or nil when it can.
    public var problem: String? {
        guard pathLossExponent.isFinite, pathLossExponent > 0 else {
            return "path-loss exponent must be finite and greater than 0, got \(pathLossExponent)"
        }
        guard immediateLimit.isFinite, nearLimit.isFinite, immediateLimit > 0, immediateLimit < nearLimit else {
            return "proximity limits must satisfy 0 < immediate (\(immediateLimit)) < near (\(nearLimit))"
        }
        return nil
    }

    /// Metres, or nil when the beacon is not calibrated: a measured power of 0 dBm or more at 1 m is
    /// not something a BLE transmitter produces, so it carries no distance information.
    public func distance(rssi: Double, measuredPower: Int8) -> Double? {
        guard measuredPower < 0, rssi.isFinite else { return nil }
        return pow(10, (Double(measuredPower) - rssi) / (10 * pathLossExponent))
    }

    /// The bucket of a distance; `.unknown` when there is none.
    public func proximity(distance: Double?) -> Proximity {
        guard let distance else { return .unknown }
        if distance < immediateLimit { return .immediate }
        if distance < nearLimit { return .near }
        return .far
    }
}
