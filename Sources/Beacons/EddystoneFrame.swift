/// The 16-byte Eddystone-UID beacon ID: a 10-byte namespace (a retailer's, as an iBeacon's UUID) and a 6-byte
/// instance. Held as three words rather than arrays: every UID sighting is copied, hashed and compared.
public struct EddystoneUID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The namespace's first 8 bytes (big-endian) and its last 2.
    var namespaceHigh: UInt64
    var namespaceLow: UInt16
    /// The instance's 6 bytes, big-endian, in the low 48 bits.
    var instanceBits: UInt64

    public init(namespace: EddystoneNamespace, instance: [UInt8]) {
        precondition(instance.count == 6, "an Eddystone instance is 6 bytes")
        namespaceHigh = namespace.high
        namespaceLow = namespace.low
        instanceBits = instance.reduce(0) { $0 << 8 | UInt64($1) }
    }

    init(namespaceHigh: UInt64, namespaceLow: UInt16, instanceBits: UInt64) {
        self.namespaceHigh = namespaceHigh
        self.namespaceLow = namespaceLow
        self.instanceBits = instanceBits
    }

    @inline(__always)
    init(frame: UnsafeRawBufferPointer, at offset: Int) {
        namespaceHigh = UInt64(bitPattern: frame.int64BigEndian(at: offset))
        namespaceLow = frame.uint16BigEndian(at: offset + 8)
        instanceBits =
            UInt64(frame.uint16BigEndian(at: offset + 10)) << 32 | UInt64(frame.uint32BigEndian(at: offset + 12))
    }

    public var namespace: EddystoneNamespace { EddystoneNamespace(high: namespaceHigh, low: namespaceLow) }

    public var instance: [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: instanceBits >> (40 - 8 * $0)) } }

    /// `NAMESPACE:INSTANCE`, upper-case hex (20 and 12 digits).
    public var description: String { "\(namespace):\(instance.hexText())" }

    /// `NAMESPACE:INSTANCE` (20 and 12 hex digits), as a region or a walk names one UID beacon; nil otherwise.
    public init?(parsing text: String) {
        guard let region = try? BeaconIdentityConstraint(parsing: text), region.isEddystone,
            let namespace = region.namespace, let instance = region.instance
        else { return nil }
        self.init(namespaceHigh: namespace.high, namespaceLow: namespace.low, instanceBits: instance)
    }

    public static func < (lhs: EddystoneUID, rhs: EddystoneUID) -> Bool {
        (lhs.namespaceHigh, lhs.namespaceLow, lhs.instanceBits)
            < (rhs.namespaceHigh, rhs.namespaceLow, rhs.instanceBits)
    }
}

/// The 10-byte namespace of Eddystone-UID beacons: what names a region of them.
public struct EddystoneNamespace: Hashable, Comparable, Sendable, CustomStringConvertible {
    var high: UInt64
    var low: UInt16

    init(high: UInt64, low: UInt16) {
        self.high = high
        self.low = low
    }

    public init?(bytes: [UInt8]) {
        guard bytes.count == 10 else { return nil }
        high = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = UInt16(bytes[8]) << 8 | UInt16(bytes[9])
    }

    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + [UInt8(low >> 8), UInt8(truncatingIfNeeded: low)]
    }

    /// 20 upper-case hex digits.
    public var description: String { bytes.hexText() }

    public static func < (lhs: EddystoneNamespace, rhs: EddystoneNamespace) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}

/// An Eddystone-URL frame's URL as broadcast: the scheme byte and the encoded bytes, expanded on request (a scan
/// that does not show URLs never builds the string).
public struct EddystoneURL: Hashable, Sendable, CustomStringConvertible {
    /// 0 `http://www.`, 1 `https://www.`, 2 `http://`, 3 `https://`.
    public var scheme: UInt8
    /// 1 to 17 bytes: printable ASCII (0x21-0x7E) and the expansion codes 0x00-0x0D.
    public var encoded: [UInt8]

    /// Nil for what the spec does not allow: a scheme beyond 3, no or more than 17 bytes, a reserved byte.
    public init?(scheme: UInt8, encoded: [UInt8]) {
        guard scheme < Self.schemes.count, (1...17).contains(encoded.count), encoded.allSatisfy(Self.isAllowed) else {
            return nil
        }
        self.scheme = scheme
        self.encoded = encoded
    }

    /// `url` in the spec's encoding: its scheme prefix as the scheme byte, then each expansion as its code (the
    /// longest that matches, so `.com/` before `.com`). Nil when it starts with none of the four prefixes, holds a
    /// character outside printable ASCII, or encodes to more than 17 bytes.
    public init?(encoding url: String) {
        // "http://www." before "http://": the longer prefix saves four bytes.
        guard let scheme = Self.schemes.indices.sorted(by: { Self.schemes[$0].count > Self.schemes[$1].count })
            .first(where: { url.hasPrefix(Self.schemes[$0]) })
        else { return nil }
        var rest = Substring(url.dropFirst(Self.schemes[scheme].count))
        var encoded: [UInt8] = []
        while let first = rest.unicodeScalars.first {
            if let code = Self.expansions.indices.filter({ rest.hasPrefix(Self.expansions[$0]) })
                .max(by: { Self.expansions[$0].count < Self.expansions[$1].count })
            {
                encoded.append(UInt8(code))
                rest = rest.dropFirst(Self.expansions[code].count)
            } else {
                guard first.isASCII else { return nil }
                encoded.append(UInt8(first.value))
                rest = Substring(rest.unicodeScalars.dropFirst())
            }
        }
        self.init(scheme: UInt8(scheme), encoded: encoded)
    }

    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/", ".com", ".org", ".edu", ".net", ".info",
        ".biz", ".gov",
    ]

    /// Whether `byte` may appear in an encoded URL: 0x0E-0x20 and 0x7F-0xFF are reserved.
    @inline(__always)
    static func isAllowed(_ byte: UInt8) -> Bool { byte <= 0x0D || (0x21...0x7E).contains(byte) }

    /// Bytes the decoder checked.
    init(checkedScheme scheme: UInt8, encoded: [UInt8]) {
        self.scheme = scheme
        self.encoded = encoded
    }

    /// The URL the frame stands for.
    public var description: String {
        encoded.reduce(into: Self.schemes[Int(scheme)]) { text, byte in
            if byte <= 0x0D {
                text += Self.expansions[Int(byte)]
            } else {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
    }
}

/// An unencrypted Eddystone-TLM frame (version 0): the beacon's own telemetry, with no beacon ID in it (it is
/// tied to a beacon by the advertiser address it shares with that beacon's UID or EID frames).
public struct TelemetryFrame: Hashable, Sendable {
    /// Battery voltage in mV; 0 when the beacon does not measure it (mains powered).
    public var batteryMillivolts: UInt16
    /// Signed 8.8 fixed point, °C; 0x8000 (-128 °C) means not supported.
    public var temperatureBits: UInt16
    /// Advertising PDUs sent since power-up or reboot.
    public var advertisingCount: UInt32
    /// Time since power-up or reboot, in 0.1 s.
    public var uptimeTenths: UInt32

    public init(batteryMillivolts: UInt16, temperatureBits: UInt16, advertisingCount: UInt32, uptimeTenths: UInt32) {
        self.batteryMillivolts = batteryMillivolts
        self.temperatureBits = temperatureBits
        self.advertisingCount = advertisingCount
        self.uptimeTenths = uptimeTenths
    }

    public static let temperatureNotSupported: UInt16 = 0x8000

    /// °C, nil when the beacon has no sensor.
    public var temperature: Double? {
        temperatureBits == Self.temperatureNotSupported ? nil : Double(Int16(bitPattern: temperatureBits)) / 256
    }

    public var uptimeSeconds: Double { Double(uptimeTenths) / 10 }
}

/// An encrypted Eddystone-TLM frame (version 1): recognised, not readable without the beacon's identity key.
/// Held in words rather than arrays, so a sighting carrying it copies as plain bytes.
public struct EncryptedTelemetryFrame: Hashable, Sendable {
    /// The 12 encrypted bytes, big-endian.
    var encryptedHigh: UInt64
    var encryptedLow: UInt32
    /// The salt and the message integrity check, big-endian as broadcast.
    public var salt: UInt16
    public var integrityCheck: UInt16

    public init(encrypted: [UInt8], salt: UInt16, integrityCheck: UInt16) {
        precondition(encrypted.count == 12, "encrypted TLM data is 12 bytes")
        encryptedHigh = encrypted[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        encryptedLow = encrypted[8..<12].reduce(0) { $0 << 8 | UInt32($1) }
        self.salt = salt
        self.integrityCheck = integrityCheck
    }

    @inline(__always)
    init(frame: UnsafeRawBufferPointer) {
        encryptedHigh = UInt64(bitPattern: frame.int64BigEndian(at: 2))
        encryptedLow = frame.uint32BigEndian(at: 10)
        salt = frame.uint16BigEndian(at: 14)
        integrityCheck = frame.uint16BigEndian(at: 16)
    }

    public var encrypted: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: encryptedHigh >> (56 - 8 * $0)) }
            + (0..<4).map { UInt8(truncatingIfNeeded: encryptedLow >> (24 - 8 * $0)) }
    }
}

/// What an Eddystone-TLM frame told, plain or encrypted.
public enum EddystoneTelemetry: Hashable, Sendable {
    case plain(TelemetryFrame)
    case encrypted(EncryptedTelemetryFrame)
}

/// An Eddystone-EID frame's 8-byte ephemeral identifier, big-endian in one word.
public struct EphemeralID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var value: UInt64

    public init(_ value: UInt64) { self.value = value }

    public init?(bytes: [UInt8]) {
        guard bytes.count == 8 else { return nil }
        value = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    public var bytes: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }

    /// 16 upper-case hex digits.
    public var description: String { bytes.hexText() }

    public static func < (lhs: EphemeralID, rhs: EphemeralID) -> Bool { lhs.value < rhs.value }
}

/// One Eddystone frame (service data of the 16-bit service UUID 0xFEAA). The ranging power is the RSSI the
/// beacon says a receiver sees at 0 m, where iBeacon's measured power is at 1 m.
public enum EddystoneFrame: Hashable, Sendable {
    case uid(EddystoneUID, rangingPower: Int8)
    case url(EddystoneURL, rangingPower: Int8)
    case telemetry(TelemetryFrame)
    case encryptedTelemetry(EncryptedTelemetryFrame)
    case eid(EphemeralID, rangingPower: Int8)

    /// The Eddystone service UUID as it lies in service data (little-endian).
    public static let serviceUUID: UInt16 = 0xFEAA

    /// Frame types (high nibble; the low nibble is reserved and must be zero).
    public static let uidType: UInt8 = 0x00
    public static let urlType: UInt8 = 0x10
    public static let telemetryType: UInt8 = 0x20
    public static let eidType: UInt8 = 0x30

    /// Path loss over the first metre: an Eddystone ranging power minus this is the iBeacon measured power of
    /// the same beacon (the Eddystone-URL spec's note on calibration).
    public static let pathLossAtOneMetre: Int8 = 41

    /// Decodes the value of a 16-bit service data AD structure (type 0x16): nil when its UUID is not Eddystone's
    /// or its frame type is none the spec defines (0x40 is reserved; later types are for later specs).
    ///
    /// Lengths are the spec's: UID 20 bytes, or 18 without its reserved bytes (older beacons truncate them); URL 4
    /// to 20 (1 to 17 encoded bytes); TLM 14 (version 0) or 18 (version 1); EID 10. `offset` is where `value`
    /// starts in the parsed packet, for the error's offset.
    @inline(__always)
    public init?(serviceData value: UnsafeRawBufferPointer, offset: Int) throws(MalformedPacket) {
        guard value.count >= 2, value.uint16LittleEndian(at: 0) == Self.serviceUUID else { return nil }
        let frame = value.slice(2, count: value.count - 2)
        let offset = offset + 2
        guard frame.count >= 1 else {
            throw MalformedPacket(.eddystoneFrameShort(frameType: nil, length: 0), offset: offset)
        }
        let type = frame[0]
        guard type & 0xF0 <= Self.eidType else { return nil }
        guard type & 0x0F == 0 else { throw MalformedPacket(.eddystoneReservedNotZero(byte: type), offset: offset) }
        func short() -> MalformedPacket {
            MalformedPacket(.eddystoneFrameShort(frameType: type, length: frame.count), offset: offset)
        }
        func length() -> MalformedPacket {
            MalformedPacket(.eddystoneFrameLength(frameType: type, length: frame.count), offset: offset)
        }
        switch type {
        case Self.uidType:
            guard frame.count >= 18 else { throw short() }
            guard frame.count == 18 || frame.count == 20 else { throw length() }
            if frame.count == 20 {
                for index in 18..<20 where frame[index] != 0 {
                    throw MalformedPacket(.eddystoneReservedNotZero(byte: frame[index]), offset: offset + index)
                }
            }
            self = .uid(EddystoneUID(frame: frame, at: 2), rangingPower: frame.int8(at: 1))
        case Self.urlType:
            guard frame.count >= 4 else { throw short() }
            guard frame.count <= 20 else { throw length() }
            let scheme = frame[2]
            guard scheme < EddystoneURL.schemes.count else {
                throw MalformedPacket(.eddystoneURLScheme(scheme), offset: offset + 2)
            }
            for index in 3..<frame.count where !EddystoneURL.isAllowed(frame[index]) {
                throw MalformedPacket(.eddystoneURLByte(frame[index]), offset: offset + index)
            }
            let url = EddystoneURL(checkedScheme: scheme, encoded: Array(frame[3...]))
            self = .url(url, rangingPower: frame.int8(at: 1))
        case Self.telemetryType:
            guard frame.count >= 2 else { throw short() }
            switch frame[1] {
            case 0:
                guard frame.count >= 14 else { throw short() }
                guard frame.count == 14 else { throw length() }
                self = .telemetry(
                    TelemetryFrame(
                        batteryMillivolts: frame.uint16BigEndian(at: 2), temperatureBits: frame.uint16BigEndian(at: 4),
                        advertisingCount: frame.uint32BigEndian(at: 6), uptimeTenths: frame.uint32BigEndian(at: 10)))
            case 1:
                guard frame.count >= 18 else { throw short() }
                guard frame.count == 18 else { throw length() }
                self = .encryptedTelemetry(EncryptedTelemetryFrame(frame: frame))
            case let version:
                throw MalformedPacket(.eddystoneTelemetryVersion(version), offset: offset + 1)
            }
        default:  // eidType
            guard frame.count >= 10 else { throw short() }
            guard frame.count == 10 else { throw length() }
            self = .eid(EphemeralID(UInt64(bitPattern: frame.int64BigEndian(at: 2))), rangingPower: frame.int8(at: 1))
        }
    }

    /// The frame as service data (UUID first), ready for an AD structure of type 0x16.
    public var serviceData: [UInt8] {
        var data: [UInt8] = []
        data.appendLittleEndian(Self.serviceUUID)
        switch self {
        case .uid(let uid, let power):
            data += [Self.uidType, UInt8(bitPattern: power)] + uid.namespace.bytes + uid.instance + [0, 0]
        case .url(let url, let power):
            data += [Self.urlType, UInt8(bitPattern: power), url.scheme] + url.encoded
        case .telemetry(let telemetry):
            data += [Self.telemetryType, 0]
            data.appendBigEndian(telemetry.batteryMillivolts)
            data.appendBigEndian(telemetry.temperatureBits)
            data.appendBigEndian(telemetry.advertisingCount)
            data.appendBigEndian(telemetry.uptimeTenths)
        case .encryptedTelemetry(let telemetry):
            data += [Self.telemetryType, 1] + telemetry.encrypted
            data.appendBigEndian(telemetry.salt)
            data.appendBigEndian(telemetry.integrityCheck)
        case .eid(let eid, let power):
            data += [Self.eidType, UInt8(bitPattern: power)] + eid.bytes
        }
        return data
    }
}
