import Beacons

/// The Android Beacon Library's (AltBeacon's) two RSSI filters, as its sources define them, for
/// comparing proximity rules (`ProximityTrial`, `make bench`). Not used by the engine.

/// `RunningAverageRssiFilter`: the readings of the last `window` seconds (20 by default), sorted, with
/// `count / 10 + 1` dropped at the bottom and `count / 10 + 1` at the top (when more than two), averaged.
/// AltBeacon computes it once per scan cycle, as `value(at:)` does here once per snapshot.
public struct TrimmedRunningAverage: Sendable {
    public let window: Double
    private var readings: [(time: Double, rssi: Double)] = []
    private var sorted: [Double] = []

    public init(window: Double = 20) { self.window = window }

    public mutating func update(rssi: Double, at time: Double) {
        readings.append((time, rssi))
    }

    /// The trimmed mean of the readings younger than `window` at `time`; nil when there are none.
    public mutating func value(at time: Double) -> Double? {
        readings.removeAll { time - $0.time >= window }
        guard !readings.isEmpty else { return nil }
        sorted = readings.map(\.rssi).sorted()
        let count = sorted.count
        let range = count > 2 ? (count / 10 + 1)...(count - count / 10 - 2) : 0...(count - 1)
        return sorted[range].reduce(0, +) / Double(range.count)
    }
}

/// `ArmaRssiFilter`: `m = m - c * (m - rssi)` per reading, starting from the first reading. AltBeacon
/// keeps `m` in an `int` and truncates toward zero after every step (`Double.intValue()`), which biases it
/// toward stronger levels: a reading less than 1 / c dB below `m` never lowers it. `integerState: false`
/// is the same recurrence in real numbers, as the formula in its documentation reads.
public struct ARMAFilter: Sendable {
    public let coefficient: Double
    public let integerState: Bool
    public private(set) var value: Double?

    public init(coefficient: Double = 0.1, integerState: Bool) {
        self.coefficient = coefficient
        self.integerState = integerState
    }

    public mutating func update(rssi: Double) {
        let previous = value ?? rssi
        let next = previous - coefficient * (previous - rssi)
        value = integerState ? next.rounded(.towardZero) : next
    }
}
