import BeaconRadio
import Beacons
import Foundation
import Geofencing

/// Beacons and, with --location, stores' geofences on one clock: whatever happened at time t is
/// reported after everything that happened before it, whichever side it came from.
struct CombinedScan {
    var beacons: ScanSession
    var stores: GeofenceSession?
    /// Whether the beacons' clock runs: from the first sighting (live: from the start) until the end
    /// of the capture, so positions before or after it do not move the ranging ticks.
    var beaconsRunning = false

    mutating func observe(_ sighting: BeaconSighting) throws {
        // Alone, the beacons' own clock is the sightings'; with stores, both sides catch up first.
        if stores != nil { try advance(to: sighting.time) }
        beaconsRunning = true
        try beacons.observe(sighting)
    }

    mutating func observe(_ fix: GeoFix) throws {
        try advance(to: fix.time)
        try stores?.observe(fix)
    }

    /// Brings both sides to `time`. The beacons are moved to each store exit before it is reported,
    /// so what each side had due comes out in time order.
    mutating func advance(to time: Double) throws {
        for exit in stores?.exitsDue(by: time) ?? [] {
            if beaconsRunning { try beacons.advance(to: exit.time) }
            stores?.report(exit)
        }
        if beaconsRunning { try beacons.advance(to: time) }
    }

    /// The beacons' side ends at `time`: what fell due, and the last snapshot.
    mutating func finishBeacons(at time: Double) throws {
        try advance(to: time)
        beaconsRunning = false
        try beacons.finish(at: time)
    }

    /// Replays a capture and, given a position source, its fixes merged in by time: a NMEA log's own
    /// timestamps, or a fixed position once at the capture's first time.
    mutating func replay(_ file: String, realtime: Bool, positions: LocationSource?) throws {
        let capture: AdvertisingCapture
        do { capture = try AdvertisingCapture(path: file) } catch {
            throw CommandFailure("cannot replay \(file): \(error)", exitCode: ExitCode.dataError)
        }
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
        var pacing = realtime ? ReplayPacing() : nil
        while sighting != nil || fix != nil {
            if let current = sighting, fix.map({ current.time <= $0.time }) ?? true {
                pacing?.wait(until: current.time)
                try observe(current)
                sighting = nextSighting()
                if sighting == nil { try finishBeacons(at: current.time) }
            } else if let current = fix {
                pacing?.wait(until: current.time)
                try observe(current)
                fix = log?.next()
            }
        }
        beacons.reportSummary(capture.statistics, live: false)
        if let log { stores?.summary(log.statistics) }
        if let damage {
            throw CommandFailure(
                "\(file) is damaged: \(damage); everything before it was replayed", exitCode: ExitCode.dataError)
        }
    }
}

/// A live scan: the radio's events on the calling thread and, with --location, positions on a
/// thread of their own. The lock makes the two take turns with the one session. Between events the
/// scanner ticks, so exits and tracking ages fall due in a quiet room too.
final class LiveScan: @unchecked Sendable {
    /// Seconds between ticks: how late an exit or an unknown proximity can come after it fell due.
    static let tickInterval = 0.25
    private let lock = NSLock()
    // Guarded by `lock`.
    private var scan: CombinedScan
    private var failure: Error?
    /// The time of the last event or tick: where the scan ends.
    private var lastTime: Double?
    private var statistics = CaptureStatistics()

    init(_ scan: CombinedScan) {
        self.scan = scan
        self.scan.beaconsRunning = true
    }

    /// Runs until Ctrl-C, SIGTERM or a failure on either side; then the last snapshot and the summary.
    func run(_ scanner: any LiveScanner, positions: LocationSource?) throws {
        ScanInterruption.install(scanner)
        if let positions {
            Thread { [self] in
                do {
                    _ = try followPositions(positions, now: Date().timeIntervalSince1970) { fix in
                        try serially { try $0.observe(fix) }
                    }
                } catch {
                    serially { _ in failure = error }
                    scanner.cancel()
                }
            }.start()
        }
        try scanner.run(
            tickInterval: Self.tickInterval, onTick: { time in step(scanner, at: time, sightings: []) },
            { packet in
                let sightings = serially { _ in ScanSession.sightings(in: packet, counting: &statistics) }
                step(scanner, at: packet.time, sightings: sightings)
            })
        try serially { scan in
            if let failure { throw failure }
            if let lastTime { try scan.finishBeacons(at: lastTime) }
            scan.beacons.reportSummary(statistics, live: true)
        }
    }

    /// What was heard at `time` and what fell due by then.
    private func step(_ scanner: any LiveScanner, at time: Double, sightings: [BeaconSighting]) {
        do {
            try serially { scan in
                for sighting in sightings { try scan.observe(sighting) }
                try scan.advance(to: time)
                lastTime = time
                // A reader at the other end of a pipe gets each event as it happens.
                fflush(nil)
            }
        } catch {
            serially { _ in failure = error }
            scanner.cancel()
        }
    }

    private func serially<T>(_ body: (inout CombinedScan) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&scan)
    }
}
