import Foundation

// How Eddystone frames travel the iBeacon pipeline (Ranger, snapshots, output): as `BeaconFrame`s whose identity
// holds the Eddystone ID and whose measured power is the ranging power brought from 0 m to 1 m.

extension BeaconIdentity {
    /// An Eddystone-UID beacon: its 16-byte ID (namespace, then instance) in the UUID's place, major and minor 0.
    public init(eddystoneUID uid: EddystoneUID) {
        self.init(
            uuidStorage: (uid.namespaceHigh.bigEndian, (UInt64(uid.namespaceLow) << 48 | uid.instanceBits).bigEndian),
            major: 0, minor: 0)
    }

    /// An Eddystone-EID beacon while its EID lasts: the 8 bytes, then 8 zero bytes, in the UUID's place.
    public init(ephemeralID: EphemeralID) {
        self.init(uuidStorage: (ephemeralID.value.bigEndian, 0), major: 0, minor: 0)
    }

    /// A secure beacon's iBeacon form while its EID lasts: under `uuid` (the retailer's), the EID's first 4 bytes
    /// as major and minor, big-endian, as the service resolves them.
    public init(uuid: UUID, rotatingWith ephemeralID: EphemeralID) {
        self.init(
            uuid: uuid, major: UInt16(truncatingIfNeeded: ephemeralID.value >> 48),
            minor: UInt16(truncatingIfNeeded: ephemeralID.value >> 32))
    }

    /// No beacon: what an Eddystone-TLM sighting carries.
    static let none = BeaconIdentity(uuidStorage: (0, 0), major: 0, minor: 0)

    /// The Eddystone-UID this identity holds (meaningful for `.eddystoneUID` frames only).
    public var eddystoneUID: EddystoneUID {
        let low = UInt64(bigEndian: uuidStorage.1)
        return EddystoneUID(
            namespaceHigh: UInt64(bigEndian: uuidStorage.0), namespaceLow: UInt16(low >> 48),
            instanceBits: low & 0xFFFF_FFFF_FFFF)
    }

    /// The EID this identity holds (meaningful for `.eddystoneEID` frames only).
    public var ephemeralID: EphemeralID { EphemeralID(UInt64(bigEndian: uuidStorage.0)) }
}

extension BeaconFrame {
    /// The frame an Eddystone frame travels as; nil for URL frames, which name no beacon and are not ranged.
    @inline(__always)
    init?(eddystone frame: EddystoneFrame) {
        switch frame {
        case .uid(let uid, let power):
            let identity = BeaconIdentity(eddystoneUID: uid)
            self.init(kind: .eddystoneUID, identity: identity, measuredPower: Self.measuredPower(power))
        case .eid(let eid, let power):
            let identity = BeaconIdentity(ephemeralID: eid)
            self.init(kind: .eddystoneEID, identity: identity, measuredPower: Self.measuredPower(power))
        case .telemetry, .encryptedTelemetry:
            self.init(kind: .eddystoneTelemetry, identity: .none, measuredPower: 0)
        case .url:
            return nil
        }
    }

    /// The RSSI at 1 m of a beacon whose ranging power (RSSI at 0 m) is `rangingPower`.
    public static func measuredPower(_ rangingPower: Int8) -> Int8 {
        Int8(clamping: Int(rangingPower) - Int(EddystoneFrame.pathLossAtOneMetre))
    }

    /// The ranging power (RSSI at 0 m) of a beacon whose RSSI at 1 m is `measuredPower`.
    public static func rangingPower(_ measuredPower: Int8) -> Int8 {
        Int8(clamping: Int(measuredPower) + Int(EddystoneFrame.pathLossAtOneMetre))
    }

    /// The Eddystone frame of a UID or EID beacon frame, its ranging power back at 0 m; nil for other kinds.
    public var eddystoneFrame: EddystoneFrame? {
        let rangingPower = Self.rangingPower(measuredPower)
        switch kind {
        case .eddystoneUID: return .uid(identity.eddystoneUID, rangingPower: rangingPower)
        case .eddystoneEID: return .eid(identity.ephemeralID, rangingPower: rangingPower)
        default: return nil
        }
    }
}

extension EddystoneFrame {
    /// What a TLM frame carries; nil for the other frames.
    var telemetry: EddystoneTelemetry? {
        switch self {
        case .telemetry(let frame): .plain(frame)
        case .encryptedTelemetry(let frame): .encrypted(frame)
        default: nil
        }
    }
}
