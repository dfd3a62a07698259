import BeaconRadio
import Beacons
import Foundation
import LoyaltyClient

/// The radio feeds a live scan the beacon frames of each event it hears and, between events, a tick every
/// quarter second, so exits and tracking ages fall due in a quiet room; it counts what it heard for the
/// closing summary.
final class RadioSightings: SightingSource, @unchecked Sendable {
    /// Seconds between ticks: how late an exit or an unknown proximity can come after it fell due.
    static let tickInterval = 0.25
    private let scanner: any LiveScanner
    /// Written only by `listen`'s thread, read after it returns.
    private(set) var statistics = CaptureStatistics()

    init(_ scanner: any LiveScanner) { self.scanner = scanner }

    func listen(_ onEvent: ([BeaconSighting], Double) -> Void) throws {
        try scanner.run(tickInterval: Self.tickInterval, onTick: { time in onEvent([], time) }) { packet in
            onEvent(HCIEvent.beaconSightings(inEvent: packet.bytes, at: packet.time, counting: &statistics), packet.time)
        }
    }

    func cancel() { scanner.cancel() }
}
