import Beacons
import Foundation

/// Where a live scan's beacons come from: a radio, which calls back with the sightings of each event it
/// hears and the event's time, and with the time of each resume from a suspend, until cancelled (from any
/// thread) or failing.
public protocol SightingSource: AnyObject, Sendable {
    func listen(onResume: (_ time: Double) -> Void, _ onEvent: (_ sightings: [BeaconSighting], _ time: Double) -> Void)
        throws
    func cancel()
}

/// A live scan: the radio's events on the calling thread and, with a location, positions on a thread of
/// their own. The lock makes the two take turns with the one session; each event is a clock tick too.
public final class LiveScan: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var scan: CombinedScan
    private var failure: Error?

    public init(_ scan: CombinedScan) {
        self.scan = scan
        self.scan.beaconsRunning = true
    }

    /// Runs until the source stops (cancelled, say by a signal) or a failure on either side, which it throws.
    public func run(_ source: SightingSource, positions: LocationSource?) throws {
        if let positions {
            Thread { [self] in
                do {
                    let end = try followPositions(positions, now: Date().timeIntervalSince1970) { fix in
                        try serially { try $0.observe(fix) }
                    }
                    serially { $0.beacons.output.positionsEnded(end) }
                } catch {
                    serially { _ in failure = error }
                    source.cancel()
                }
            }.start()
        }
        var lastTime: Double? = nil
        func handle(_ time: Double, _ body: (inout CombinedScan) throws -> Void) {
            do {
                try serially { scan in
                    try body(&scan)
                    scan.beacons.output.eventHandled()
                }
                lastTime = time
            } catch {
                serially { _ in failure = error }
                source.cancel()
            }
        }
        try source.listen(onResume: { time in handle(time) { try $0.resume(at: time) } }) { sightings, time in
            handle(time) { scan in
                for sighting in sightings { try scan.observe(sighting) }
                try scan.advance(to: time)
            }
        }
        try serially { scan in
            if let failure { throw failure }
            if let lastTime { try scan.finishBeacons(at: lastTime) }
        }
    }

    private func serially<T>(_ body: (inout CombinedScan) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&scan)
    }
}
