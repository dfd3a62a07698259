import BeaconRadio
import Beacons
import LoyaltyClient

/// The radio feeds a live scan the beacon frames of each event it hears.
extension LEScanner: SightingSource {
    public func listen(_ onEvent: ([BeaconSighting], Double) -> Void) throws {
        try run { packet in onEvent(HCIEvent.beaconSightings(inEvent: packet.bytes, at: packet.time), packet.time) }
    }
}
