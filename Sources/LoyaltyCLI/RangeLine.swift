import Beacons
import Foundation
import LoyaltyAPI
import LoyaltyClient

extension JSONLineBuffer {
    /// A scan's `range` line for `snapshot`, newline included:
    /// `{"event":"range","t":..,"beacons":[{"uuid":..,"major":..,"minor":..,"rssi":..,"distance_m":..,"proximity":..}]}`
    /// with `t` to the millisecond, `rssi` to 0.1 dB and `distance_m` to the centimetre (null when unknown).
    public mutating func rangeLine(_ snapshot: RangingSnapshot) {
        raw("{\"event\":\"range\",\"t\":")
        fixed(snapshot.time, decimals: 3)
        raw(",\"beacons\":[")
        // A store's beacons share a UUID or a few: a beacon's text up to its major is made once for a run of them.
        var opening: (uuid: UUID, text: [UInt8])?
        for (index, beacon) in snapshot.beacons.enumerated() {
            let uuid = beacon.identity.uuid
            if opening?.uuid != uuid {
                var text = JSONLineBuffer(capacity: 64)
                text.raw("{\"uuid\":")
                text.uuid(uuid)
                text.raw(",\"major\":")
                opening = (uuid, text.bytes)
            }
            // At most 170 bytes: every field at its longest.
            write(maxCount: 192) { line in
                if index > 0 { line.byte(UInt8(ascii: ",")) }
                line.copy(opening!.text)
                line.digits(UInt(beacon.identity.major), width: 1)
                line.raw(",\"minor\":")
                line.digits(UInt(beacon.identity.minor), width: 1)
                line.raw(",\"rssi\":")
                if let rssi = beacon.rssi { line.fixed(rssi, decimals: 1) } else { line.raw("null") }
                line.raw(",\"distance_m\":")
                if let distance = beacon.distance { line.fixed(distance, decimals: 2) } else { line.raw("null") }
                switch beacon.proximity {
                case .immediate: line.raw(",\"proximity\":\"immediate\"}")
                case .near: line.raw(",\"proximity\":\"near\"}")
                case .far: line.raw(",\"proximity\":\"far\"}")
                case .unknown: line.raw(",\"proximity\":\"unknown\"}")
                }
            }
        }
        raw("]}\n")
    }
}
