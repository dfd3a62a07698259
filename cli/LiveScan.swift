import BeaconRadio
import Beacons
import Foundation
import LoyaltyClient

/// A live scan: the radio's events on the calling thread and, with --location, positions on a
/// thread of their own. The lock makes the two take turns with the one session.
final class LiveScan: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var scan: CombinedScan
    private var failure: Error?

    init(_ scan: CombinedScan) {
        self.scan = scan
        self.scan.beaconsRunning = true
    }

    /// Runs until Ctrl-C, SIGTERM or a failure on either side.
    func run(_ scanner: LEScanner, positions: LocationSource?) throws {
        ScanInterruption.install(scanner)
        if let positions {
            Thread { [self] in
                do {
                    let end = try followPositions(positions, now: Date().timeIntervalSince1970) { fix in
                        try serially { try $0.observe(fix) }
                    }
                    sayIfReceiversGone(end)
                } catch {
                    serially { _ in failure = error }
                    scanner.cancel()
                }
            }.start()
        }
        var lastTime: Double? = nil
        try scanner.run { packet in
            let sightings = HCIEvent.beaconSightings(inEvent: packet.bytes, at: packet.time)
            do {
                try serially { scan in
                    for sighting in sightings { try scan.observe(sighting) }
                    try scan.advance(to: packet.time)
                    // A reader at the other end of a pipe gets each event as it happens.
                    fflush(nil)
                }
                lastTime = packet.time
            } catch {
                serially { _ in failure = error }
                scanner.cancel()
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
