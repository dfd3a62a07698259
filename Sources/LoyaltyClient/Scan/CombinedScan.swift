import Beacons
import Geofencing

/// Beacons and, with a location, stores' geofences on one clock: whatever happened at time t is
/// reported after everything that happened before it, whichever side it came from.
public struct CombinedScan {
    public var beacons: BeaconScanSession
    public var stores: GeofenceSession?
    /// Whether the beacons' clock runs: from the first sighting (live: from the start) until the end
    /// of the capture, so positions before or after it do not move the ranging ticks.
    public var beaconsRunning = false

    public init(beacons: BeaconScanSession, stores: GeofenceSession?) {
        self.beacons = beacons
        self.stores = stores
    }

    public mutating func observe(_ sighting: BeaconSighting) throws {
        // Alone, the beacons' own clock is the sightings'; with stores, both sides catch up first.
        if stores != nil { try advance(to: sighting.time) }
        beaconsRunning = true
        try beacons.observe(sighting)
    }

    public mutating func observe(_ fix: GeoFix) throws {
        try advance(to: fix.time)
        try stores?.observe(fix)
    }

    /// Brings both sides to `time`. The beacons are moved to each store exit before it is reported,
    /// so what each side had due comes out in time order.
    public mutating func advance(to time: Double) throws {
        for exit in stores?.exitsDue(by: time) ?? [] {
            if beaconsRunning { try beacons.advance(to: exit.time) }
            stores?.report(exit)
        }
        if beaconsRunning { try beacons.advance(to: time) }
    }

    /// The machine resumed from a suspend at `time`: what the beacons' side makes of it (BeaconScanSession).
    public mutating func resume(at time: Double) throws {
        try advance(to: time)
        if beaconsRunning { try beacons.resume(at: time) }
    }

    /// The beacons' side ends at `time`: what fell due, and the last snapshot.
    public mutating func finishBeacons(at time: Double) throws {
        try advance(to: time)
        beaconsRunning = false
        try beacons.finish(at: time)
    }

    /// What a replay read: the capture's statistics and, with a NMEA log, the log's.
    public struct ReplayStatistics {
        public var capture: CaptureStatistics
        public var log: NMEAStream.Statistics?
    }

    /// Replays a capture and, given a position source, its fixes merged in by time: a NMEA log's own
    /// timestamps, or a fixed position once at the capture's first time. `pace` is called with each
    /// item's time before it is fed (a realtime replay sleeps there). Once `stopped` says so (Ctrl-C), the
    /// replay ends as if the capture ended there. A damaged capture throws `ReplayError.damaged` after
    /// everything before the damage was fed and `summary` was called.
    public mutating func replay(
        _ file: String, positions: LocationSource?, pace: ((Double) -> Void)? = nil, stopped: () -> Bool = { false },
        summary: (ReplayStatistics) -> Void
    ) throws {
        let capture: AdvertisingCapture
        do { capture = try AdvertisingCapture(path: file) } catch { throw ReplayError.unreadable(file: file, error) }
        var damage: BTSnoopError? = nil
        func nextSighting() -> BeaconSighting? {
            do { return try capture.nextSighting() } catch {
                damage = error
                return nil
            }
        }
        var sighting = nextSighting()
        var log: NMEAFixes? = nil
        var fix: GeoFix? = nil
        switch positions {
        case .nmea(let path)?:
            log = try NMEAFixes(path: path)
            fix = log?.next()
        case .fixed(let point)?:
            fix = sighting.map { GeoFix(time: $0.time, coordinate: point) }
        case .gpsd?, nil:
            break
        }
        var fed: Double? = nil
        if fix == nil, stores == nil, pace == nil {
            // A plain replay, beacons alone and unpaced: no clock to merge, so each sighting goes straight to
            // the session (the merging loop spent some 40 instructions a sighting finding that out).
            while let current = sighting {
                if stopped() {
                    if beaconsRunning, let fed { try finishBeacons(at: fed) }
                    break
                }
                beaconsRunning = true
                try beacons.observe(current)
                sighting = nextSighting()
                if sighting == nil { try finishBeacons(at: current.time) }
                fed = current.time
            }
        } else {
            while sighting != nil || fix != nil {
                let time = min(sighting?.time ?? .infinity, fix?.time ?? .infinity)
                pace?(time)
                if stopped() {
                    if beaconsRunning, let fed { try finishBeacons(at: fed) }
                    break
                }
                // A sighting goes before a fix of the same time.
                if let current = sighting, current.time == time {
                    try observe(current)
                    sighting = nextSighting()
                    if sighting == nil { try finishBeacons(at: current.time) }
                } else if let current = fix {
                    try observe(current)
                    fix = log?.next()
                }
                fed = time
            }
        }
        summary(ReplayStatistics(capture: capture.statistics, log: log?.statistics))
        if let damage { throw ReplayError.damaged(file: file, damage) }
    }

    public enum ReplayError: Error, CustomStringConvertible {
        case unreadable(file: String, BTSnoopError)
        case damaged(file: String, BTSnoopError)

        public var description: String {
            switch self {
            case .unreadable(let file, let error): "cannot replay \(file): \(error)"
            case .damaged(let file, let error): "\(file) is damaged: \(error); everything before it was replayed"
            }
        }
    }
}
