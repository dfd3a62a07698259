import Foundation

/// How much of the time a live scan listens: the radio's duty cycle is the shopper's battery. `high` listens
/// all the time (a shopper looking at the screen); `balanced` and `low` listen passively in windows, with
/// Android's BALANCED (183 ms of 730) and LOW_POWER (140 ms of 1,400) duty cycles. iBeacon and Eddystone need
/// no scan response, so passive scanning loses nothing.
public enum ScanPower: String, CaseIterable, Codable, Hashable, Sendable {
    case high, balanced, low

    /// LE_Scan_Interval and LE_Scan_Window in 0.625 ms units.
    public var interval: UInt16 {
        switch self {
        case .high: 0x0010  // 10 ms
        case .balanced: 1168  // 730 ms
        case .low: 2240  // 1,400 ms
        }
    }

    public var window: UInt16 {
        switch self {
        case .high: 0x0010  // 10 ms: all the time
        case .balanced: 292  // 182.5 ms
        case .low: 224  // 140 ms
        }
    }

    public var intervalSeconds: Double { Double(interval) * 0.000_625 }
    public var windowSeconds: Double { Double(window) * 0.000_625 }
    /// The share of the time the radio listens, 0...1.
    public var dutyCycle: Double { Double(window) / Double(interval) }

    /// The slowest advertiser the silences below are sized for: beacons advertise every 100 ms to 1 s.
    public static let slowestAdvertisingInterval = 1.0

    /// The silence after which a region may be exited: long enough that a beacon advertising once a second
    /// is heard in it with probability 99.9 % (0 when listening all the time). A slower scan never exits a
    /// region the shopper is still in, so the exit timeout is at least this.
    public var minimumExitTimeout: Double { silence(missedWithProbability: 0.001) }

    /// The silence after which a beacon's proximity may be unknown: heard in it with probability 90 %.
    public var minimumTrackingAge: Double { silence(missedWithProbability: 0.1) }

    /// How long until the first window that hears a beacon advertising every `advertisingInterval` seconds:
    /// the worst case when each window is at least that long (every window hears it), else the mean.
    public func entryLatency(advertisingInterval: Double) -> Double {
        guard window < interval else { return advertisingInterval }
        let heardPerWindow = min(1, windowSeconds / advertisingInterval)
        if heardPerWindow >= 1 { return intervalSeconds - windowSeconds + advertisingInterval }
        return intervalSeconds / heardPerWindow
    }

    /// Whole scan intervals until a beacon advertising every `slowestAdvertisingInterval` is missed in each
    /// with `probability` at most: each window hears one of its advertisements with probability window/1 s.
    private func silence(missedWithProbability probability: Double) -> Double {
        guard window < interval else { return 0 }
        let heardPerWindow = min(1, windowSeconds / Self.slowestAdvertisingInterval)
        guard heardPerWindow < 1 else { return intervalSeconds }
        let windows = (log(probability) / log(1 - heardPerWindow)).rounded(.up)
        return windows * intervalSeconds
    }

    /// What `loyalty doctor` and the docs say of it.
    public var summary: String {
        let percent = String(format: "%.0f %%", dutyCycle * 100)
        switch self {
        case .high: return "listens all the time (\(percent)); active only with --active"
        case .balanced, .low:
            return String(
                format: "listens passively %.1f ms every %.0f ms (%@)", windowSeconds * 1000, intervalSeconds * 1000, percent)
        }
    }
}
