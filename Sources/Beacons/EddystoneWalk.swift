/// A simulated Eddystone-EID beacon's identifiers over a walk, computed beforehand (the computation needs AES,
/// which this module does not link): `ids[i]` is the EID of the `i`-th rotation period from `startCounter`.
public struct EphemeralIDSchedule: Hashable, Sendable {
    /// K: a new EID every 2^K seconds.
    public var exponent: UInt8
    /// The beacon's time counter at the walk's start.
    public var startCounter: UInt32
    public var ids: [EphemeralID]

    public init(exponent: UInt8, startCounter: UInt32, ids: [EphemeralID]) {
        self.exponent = exponent
        self.startCounter = startCounter
        self.ids = ids
    }

    /// The counters whose EIDs a walk of `seconds` needs, one per rotation period it touches.
    public static func counters(exponent: UInt8, startCounter: UInt32, seconds: Double) -> [UInt32] {
        let first = UInt64(startCounter) >> exponent
        let last = (UInt64(startCounter) + UInt64(max(0, seconds).rounded(.up))) >> exponent
        return (first...last).map { UInt32(truncatingIfNeeded: $0 << exponent) }
    }

    /// The EID broadcast `elapsed` seconds into the walk.
    func id(at elapsed: Double) -> EphemeralID {
        let counter = UInt64(startCounter) + UInt64(max(0, elapsed))
        let index = Int((counter >> exponent) - (UInt64(startCounter) >> exponent))
        return ids[min(index, ids.count - 1)]
    }
}

/// Eddystone-TLM frames interleaved with a simulated Eddystone beacon's own: every `every`-th advert from its
/// address is TLM, whose battery drains linearly from `batteryMillivolts`.
public struct TelemetrySchedule: Hashable, Sendable {
    public var every: Int
    public var batteryMillivolts: UInt16
    public var drainMillivoltsPerHour: Double
    /// Signed 8.8 fixed point, °C.
    public var temperatureBits: UInt16

    public init(
        every: Int, batteryMillivolts: UInt16 = 3000, drainMillivoltsPerHour: Double = 600,
        temperatureBits: UInt16 = 0x1580
    ) {
        precondition(every >= 1, "TLM every advert at most")
        self.every = every
        self.batteryMillivolts = batteryMillivolts
        self.drainMillivoltsPerHour = drainMillivoltsPerHour
        self.temperatureBits = temperatureBits
    }

    /// The TLM frame of the `advert`-th advert (counting from 1), `elapsed` seconds into the walk.
    public func frame(advert: Int, elapsed: Double) -> TelemetryFrame {
        let battery = max(0, Double(batteryMillivolts) - drainMillivoltsPerHour * elapsed / 3600)
        return TelemetryFrame(
            batteryMillivolts: UInt16(battery.rounded()), temperatureBits: temperatureBits,
            advertisingCount: UInt32(clamping: advert),
            uptimeTenths: UInt32(clamping: Int((elapsed * 10).rounded(.down))))
    }
}

extension BeaconWalk {
    /// The advertising data of a beacon's `advert`-th advert (from 1), `elapsed` seconds into the walk: its frame,
    /// an EID of the moment (for an iBeacon frame, major and minor from it), or TLM in place of every
    /// `telemetry.every`-th advert of an Eddystone beacon.
    func advertisingData(of beacon: Beacon, advert: Int, elapsed: Double) -> [UInt8] {
        var frame = beacon.frame
        if frame.kind.isEddystone, let telemetry, advert % telemetry.every == 0 {
            return AdvertisingData.eddystone(.telemetry(telemetry.frame(advert: advert, elapsed: elapsed)))
        }
        if let schedule = beacon.ephemeralIDs {
            // An iBeacon frame with EIDs is a secure beacon's iBeacon form.
            let id = schedule.id(at: elapsed)
            frame.identity =
                frame.kind == .iBeacon
                ? BeaconIdentity(uuid: frame.identity.uuid, rotatingWith: id) : BeaconIdentity(ephemeralID: id)
        }
        return AdvertisingData.beacon(frame)
    }
}
