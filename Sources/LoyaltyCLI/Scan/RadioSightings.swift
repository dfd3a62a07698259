import BeaconRadio
import Beacons
import Foundation
import LoyaltyClient

/// The radio feeds a live scan the beacon frames of each event it hears and, between events, a tick (once a
/// second, or each snapshot when they come more often), so exits and tracking ages fall due in a quiet room;
/// it counts what it heard for the closing summary.
final class RadioSightings: SightingSource, @unchecked Sendable {
    /// The longest time between ticks: how late an exit or an unknown proximity can come after it fell due,
    /// and the most a quiet scan wakes (issue 47: idle is idle).
    static let longestTickInterval = 1.0
    private let scanner: any LiveScanner
    private let tickInterval: Double
    /// Written only by `listen`'s thread, read after it returns.
    private(set) var statistics = CaptureStatistics()

    init(_ scanner: any LiveScanner, snapshotInterval: Double) {
        self.scanner = scanner
        tickInterval = min(snapshotInterval, Self.longestTickInterval)
    }

    func listen(onResume: (Double) -> Void, _ onEvent: ([BeaconSighting], Double) -> Void) throws {
        try scanner.run(
            tickInterval: tickInterval, onTick: { time in onEvent([], time) }, onResume: { time, _ in onResume(time) }
        ) { packet in
            onEvent(HCIEvent.beaconSightings(inEvent: packet.bytes, at: packet.time, counting: &statistics), packet.time)
        }
    }

    func cancel() { scanner.cancel() }
}
