import Beacons
import Foundation

extension CalibrationSamples {
    /// The samples of `identity` that `scanner` hears in `seconds` (or until it is cancelled earlier).
    public static func listening(to scanner: any LiveScanner, of identity: BeaconIdentity, seconds: Double)
        throws(RadioError) -> CalibrationSamples
    {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { scanner.cancel() }
        var heard = CalibrationSamples(of: identity)
        try scanner.run(tickInterval: nil, onTick: { _ in }, onResume: { _, _ in }) { packet in
            for sighting in HCIEvent.beaconSightings(inEvent: packet.bytes, at: packet.time) { heard.add(sighting) }
        }
        return heard
    }
}
