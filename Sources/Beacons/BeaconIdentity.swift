import Foundation

/// The (proximity UUID, major, minor) triplet that names one beacon.
///
/// Beacons are tracked by identity, never by MAC address: addresses rotate.
public struct BeaconIdentity: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The proximity UUID's 16 bytes as two words as they lie in memory. Held as a `UUID`, its tuple of 16
    /// bytes was moved a byte at a time wherever a sighting was copied, and every sighting is copied, looked
    /// up and compared by identity.
    var uuidStorage: (UInt64, UInt64)
    public var major: UInt16
    public var minor: UInt16

    public init(uuid: UUID, major: UInt16, minor: UInt16) {
        uuidStorage = unsafeBitCast(uuid.uuid, to: (UInt64, UInt64).self)
        self.major = major
        self.minor = minor
    }

    init(uuidStorage: (UInt64, UInt64), major: UInt16, minor: UInt16) {
        self.uuidStorage = uuidStorage
        self.major = major
        self.minor = minor
    }

    public var uuid: UUID {
        get { unsafeBitCast(uuidStorage, to: UUID.self) }
        set { uuidStorage = unsafeBitCast(newValue.uuid, to: (UInt64, UInt64).self) }
    }

    /// 32 bits that tell apart the beacons of one UUID: major and minor, mixed with the UUID's words, where an
    /// Eddystone identity's instance or EID is (its major and minor are 0). For hashing into small tables.
    public var distinguishingBits: UInt32 {
        let words = uuidStorage.0 ^ uuidStorage.1 ^ uuidStorage.1 >> 32
        return (UInt32(major) << 16 | UInt32(minor)) ^ UInt32(truncatingIfNeeded: words)
    }

    /// `UUID:MAJOR:MINOR`, the upper-case canonical UUID.
    public var description: String { "\(uuid.uuidString):\(major):\(minor)" }

    /// The order of `description`: the UUID's bytes compare as its upper-case hex text does.
    public static func < (lhs: BeaconIdentity, rhs: BeaconIdentity) -> Bool {
        let (a, b) = (lhs.uuidWords, rhs.uuidWords)
        if a.high != b.high { return a.high < b.high }
        if a.low != b.low { return a.low < b.low }
        return (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }

    public static func == (lhs: BeaconIdentity, rhs: BeaconIdentity) -> Bool {
        lhs.major == rhs.major && lhs.minor == rhs.minor && lhs.uuidStorage == rhs.uuidStorage
    }

    /// Three integers rather than the UUID's 16 bytes one by one: every sighting is looked up by identity.
    public func hash(into hasher: inout Hasher) {
        let words = uuidStorage
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(UInt32(major) << 16 | UInt32(minor))
    }

    /// The UUID's bytes as two big-endian words, so comparing the words compares the bytes in order.
    private var uuidWords: (high: UInt64, low: UInt64) {
        let (high, low) = uuidStorage
        return (UInt64(bigEndian: high), UInt64(bigEndian: low))
    }

}

/// Which beacon layout a frame was decoded from. All share the identity shape: an Eddystone beacon's ID is held in
/// it as `BeaconIdentity(eddystoneUID:)` and `BeaconIdentity(ephemeralID:)` say.
public enum BeaconKind: String, Sendable, Hashable {
    case iBeacon = "ibeacon"
    case altBeacon = "altbeacon"
    case eddystoneUID = "eddystone-uid"
    case eddystoneEID = "eddystone-eid"
    /// An Eddystone-TLM frame: no beacon of its own, only telemetry (`BeaconSighting.telemetry`) for the beacon
    /// heard from the same address.
    case eddystoneTelemetry = "eddystone-tlm"

    public var isEddystone: Bool { self != .iBeacon && self != .altBeacon }
}

/// A decoded beacon advertisement: who it is and how loud it claims to be at 1 m.
public struct BeaconFrame: Hashable, Sendable {
    public var kind: BeaconKind
    public var identity: BeaconIdentity
    /// RSSI in dBm the transmitter says a receiver sees at 1 m ("measured power", "tx power").
    public var measuredPower: Int8

    public init(kind: BeaconKind, identity: BeaconIdentity, measuredPower: Int8) {
        self.kind = kind
        self.identity = identity
        self.measuredPower = measuredPower
    }
}

/// A 48-bit Bluetooth device address, stored as it appears on the wire (least significant byte first).
public struct BluetoothAddress: Hashable, Sendable, CustomStringConvertible {
    /// The six bytes, the first in the low byte, in one word: a sighting's address is copied, compared and
    /// hashed as one value where the six bytes went one by one (about 35 instructions a sighting).
    private var word: UInt64

    public var bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) {
        get {
            func byte(_ index: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: word >> (8 * index)) }
            return (byte(0), byte(1), byte(2), byte(3), byte(4), byte(5))
        }
        set { self = BluetoothAddress(wire: newValue) }
    }

    public init(wire b: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)) {
        word = UInt64(b.0) | UInt64(b.1) << 8 | UInt64(b.2) << 16 | UInt64(b.3) << 24 | UInt64(b.4) << 32
            | UInt64(b.5) << 40
    }

    /// The address whose wire bytes are `low` (the first four, little-endian) then `high` (the last two).
    @inline(__always)
    init(wireLow low: UInt32, high: UInt16) { word = UInt64(low) | UInt64(high) << 32 }

    /// The usual colon form, most significant byte first: `6A:6B:C9:A2:3E:43`.
    public var description: String {
        let b = bytes
        let ordered = [b.5, b.4, b.3, b.2, b.1, b.0]
        return ordered.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return byte < 0x10 ? "0" + hex : hex
        }.joined(separator: ":")
    }
}

/// How near a beacon is, in Core Location's four buckets. Ordered nearest first.
public enum Proximity: String, Sendable, Hashable, Comparable, CaseIterable {
    case immediate, near, far, unknown

    private var rank: Int {
        switch self {
        case .immediate: 0
        case .near: 1
        case .far: 2
        case .unknown: 3
        }
    }

    public static func < (lhs: Proximity, rhs: Proximity) -> Bool { lhs.rank < rhs.rank }
}

/// One beacon heard once: the input of ranging and monitoring.
public struct BeaconSighting: Hashable, Sendable {
    public var frame: BeaconFrame
    public var address: BluetoothAddress
    public var rssi: Int8
    /// Seconds on the injected clock (the capture's timestamps when replaying).
    public var time: Double

    /// What an Eddystone-TLM frame said; nil for every other frame.
    public var telemetry: EddystoneTelemetry?

    public init(
        frame: BeaconFrame, address: BluetoothAddress, rssi: Int8, time: Double, telemetry: EddystoneTelemetry? = nil
    ) {
        self.frame = frame
        self.address = address
        self.rssi = rssi
        self.time = time
        self.telemetry = telemetry
    }

    public var identity: BeaconIdentity { frame.identity }
}
