import Beacons
import Foundation
import LoyaltyAPI

/// An identity that may be a secure beacon's, which only the service can resolve: an Eddystone EID, or a rotating
/// iBeacon (the EID's first 4 bytes as major and minor under a retailer's own UUID).
public enum SecureIdentity: Hashable, Sendable {
    case eid(UInt64)
    case rotating(BeaconIdentity)

    /// The sighting to send for this identity heard at `heardAt`.
    public func sighting(heardAt: Date, rssi: Int?) -> Sighting {
        switch self {
        case .eid(let value):
            return Sighting(eid: Hex.text(withUnsafeBytes(of: value.bigEndian) { Array($0) }), heardAt: heardAt, rssi: rssi)
        case .rotating(let identity):
            return Sighting(
                uuid: identity.uuid, major: identity.major, minor: identity.minor, heardAt: heardAt, rssi: rssi)
        }
    }

    /// The identity a sighting sent (or queued) names; nil for one that names none (a damaged queue row).
    public init?(_ sighting: Sighting) {
        if let eid = sighting.eid {
            guard let bytes = Hex.bytes(eid), bytes.count == 8 else { return nil }
            self = .eid(bytes.reduce(0) { $0 << 8 | UInt64($1) })
        } else if let uuid = sighting.uuid, let major = sighting.major, let minor = sighting.minor {
            self = .rotating(BeaconIdentity(uuid: uuid, major: major, minor: minor))
        } else {
            return nil
        }
    }
}
