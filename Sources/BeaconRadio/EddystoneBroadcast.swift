import Beacons

/// An Eddystone beacon as an advertiser broadcasts it over time: its UID, URL or EID frame, the EID recomputed when
/// the 2^K-second window of its time counter turns, and TLM in place of every Nth advertising interval.
public struct EddystoneBroadcast: Sendable {
    public enum Beacon: Sendable {
        case uid(EddystoneUID)
        case url(EddystoneURL)
        /// K, the time counter at the start (with the fraction of its second, so that the windows turn on the
        /// counter's seconds, not the start's), and the EID of a counter (the caller computes it: AES is Digest's).
        case eid(exponent: UInt8, startCounter: Double, ephemeralID: @Sendable (UInt32) -> EphemeralID)
    }

    public var beacon: Beacon
    /// The RSSI at 1 m, as iBeacon's measured power; the frames carry it plus 41 dB (their power at 0 m).
    public var measuredPower: Int8
    /// TLM every `telemetry.every`-th interval; nil for none.
    public var telemetry: TelemetrySchedule?

    public init(beacon: Beacon, measuredPower: Int8, telemetry: TelemetrySchedule? = nil) {
        self.beacon = beacon
        self.measuredPower = measuredPower
        self.telemetry = telemetry
    }

    /// The frame of the advertising interval under way `elapsed` seconds after the start, intervals being
    /// `intervalSeconds` long: TLM for every `telemetry.every`-th (counting from 1, as the walks do), else the
    /// beacon's frame, whose EID is that of the time counter then.
    public func frame(elapsed: Double, intervalSeconds: Double) -> EddystoneFrame {
        let advert = Self.interval(at: elapsed, intervalSeconds: intervalSeconds) + 1
        if let telemetry, advert % telemetry.every == 0 {
            return .telemetry(telemetry.frame(advert: advert, elapsed: elapsed))
        }
        let rangingPower = BeaconFrame.rangingPower(measuredPower)
        switch beacon {
        case .uid(let uid): return .uid(uid, rangingPower: rangingPower)
        case .url(let url): return .url(url, rangingPower: rangingPower)
        case .eid(let exponent, let startCounter, let ephemeralID):
            let counter = EIDTimeCounter(exponent: exponent, start: startCounter).counter(elapsed: elapsed)
            return .eid(ephemeralID(counter), rangingPower: rangingPower)
        }
    }

    /// The number of the interval under way at `elapsed` (0 first). A time computed as a multiple of the interval
    /// is that interval's start, not the end of the one before: the division may land just under the whole number.
    static func interval(at elapsed: Double, intervalSeconds: Double) -> Int {
        Int((max(0, elapsed) / intervalSeconds + 1e-6).rounded(.down))
    }

    /// When, after `elapsed`, the frame may next change: the next interval with TLM interleaved, the next turn of
    /// the EID's 2^K-second window without; nil for a frame that never changes.
    public func nextChange(after elapsed: Double, intervalSeconds: Double) -> Double? {
        if telemetry != nil {
            return Double(Self.interval(at: elapsed, intervalSeconds: intervalSeconds) + 1) * intervalSeconds
        }
        guard case .eid(let exponent, let startCounter, _) = beacon else { return nil }
        return EIDTimeCounter(exponent: exponent, start: startCounter).nextTurn(after: elapsed)
    }
}
