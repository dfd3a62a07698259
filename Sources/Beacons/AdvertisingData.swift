import Foundation

/// One AD structure of advertising or scan response data (Core spec Vol 3, Part C, 11): a type and its value.
/// `value` borrows the bytes being parsed.
public struct AdvertisingDataStructure {
    public var type: UInt8
    public var value: UnsafeRawBufferPointer
}

/// Walks the AD structures of advertising data without copying: `length, type, value[length - 1]`, repeated.
/// A zero length ends the significant part (what follows is padding). A length that points past the end
/// throws, after the structures before it were returned.
public struct AdvertisingDataIterator {
    private let data: UnsafeRawBufferPointer
    private let baseOffset: Int
    private var offset = 0

    /// `baseOffset` is added to error offsets, so they count from the start of an enclosing packet.
    public init(_ data: UnsafeRawBufferPointer, baseOffset: Int = 0) {
        self.data = data
        self.baseOffset = baseOffset
    }

    @inline(__always)
    public mutating func next() throws(MalformedPacket) -> AdvertisingDataStructure? {
        guard offset < data.count else { return nil }
        let length = Int(data[offset])
        if length == 0 {
            offset = data.count
            return nil
        }
        let end = offset &+ 1 &+ length  // offset < data.count, length < 256: no overflow
        guard end <= data.count else {
            let error = MalformedPacket(
                .advertisingDataLengthPastEnd(length: length, available: data.count - offset - 1),
                offset: baseOffset + offset)
            offset = data.count
            throw error
        }
        let structure = AdvertisingDataStructure(
            type: data[offset &+ 1], value: data.slice(offset &+ 2, count: length &- 1))
        offset = end
        return structure
    }

    /// The next iBeacon or AltBeacon frame, skipping the structures that are not one.
    @inline(__always)
    public mutating func nextBeaconFrame() throws(MalformedPacket) -> BeaconFrame? {
        while let structure = try next() {
            if structure.type == AdvertisingDataType.manufacturerSpecificData,
                let frame = BeaconFrame(manufacturerData: structure.value)
            {
                return frame
            }
        }
        return nil
    }

    /// The next iBeacon, AltBeacon or Eddystone frame, skipping the structures that are none. A malformed
    /// Eddystone frame throws; the structures after it can still be read.
    @inline(__always)
    public mutating func nextFrame() throws(MalformedPacket) -> AdvertisedFrame? {
        while let structure = try next() {
            switch structure.type {
            case AdvertisingDataType.manufacturerSpecificData:
                if let frame = BeaconFrame(manufacturerData: structure.value) { return .beacon(frame) }
            case AdvertisingDataType.serviceData16BitUUID:
                // `next` left `offset` at the end of the structure's value.
                let valueOffset = baseOffset + offset - structure.value.count
                if let frame = try EddystoneFrame(serviceData: structure.value, offset: valueOffset) {
                    return .eddystone(frame)
                }
            default:
                break
            }
        }
        return nil
    }
}

/// A frame of either beacon format found in advertising data.
public enum AdvertisedFrame: Hashable, Sendable {
    /// iBeacon or AltBeacon (manufacturer specific data).
    case beacon(BeaconFrame)
    /// Eddystone (service data of UUID 0xFEAA).
    case eddystone(EddystoneFrame)
}

/// AD type numbers (Bluetooth Assigned Numbers, "Common Data Types") this module reads or writes.
public enum AdvertisingDataType {
    public static let flags: UInt8 = 0x01
    public static let completeList16BitServiceUUIDs: UInt8 = 0x03
    public static let completeLocalName: UInt8 = 0x09
    public static let serviceData16BitUUID: UInt8 = 0x16
    public static let manufacturerSpecificData: UInt8 = 0xFF
}

extension BeaconFrame {
    /// Apple's company identifier, the first two bytes (little-endian) of an iBeacon's manufacturer data.
    public static let appleCompanyID: UInt16 = 0x004C
    /// Radius Networks, the company identifier AltBeacon's reference implementation uses.
    public static let radiusNetworksCompanyID: UInt16 = 0x0118

    /// Decodes the value of a manufacturer specific data AD structure (type 0xFF).
    ///
    /// - iBeacon: `4C 00 02 15`, UUID[16], major (BE), minor (BE), measured power (int8).
    /// - AltBeacon: company id (any, LE), `BE AC`, id1[16] (the UUID), id2 (BE, major), id3 (BE, minor),
    ///   reference RSSI (int8), one reserved byte.
    ///
    /// Longer data still decodes (some devices, e.g. Jaalee, append a byte); shorter data does not.
    @inline(__always)
    public init?(manufacturerData value: UnsafeRawBufferPointer) {
        guard value.count >= 25 else { return nil }
        // The four bytes before the UUID, read as one little-endian word: company id, then the layout's marker.
        let prefix = value.uint32LittleEndian(at: 0)
        let kind: BeaconKind
        if prefix == 0x1502_0000 | UInt32(Self.appleCompanyID) {
            kind = .iBeacon
        } else if prefix >> 16 == 0xACBE, value.count >= 26 {
            kind = .altBeacon
        } else {
            return nil
        }
        self.init(
            kind: kind,
            identity: BeaconIdentity(
                uuid: value.uuid(at: 4), major: value.uint16BigEndian(at: 20), minor: value.uint16BigEndian(at: 22)),
            measuredPower: value.int8(at: 24))
    }
}

/// Reading and writing advertising data (AD structures).
public enum AdvertisingData {
    /// Calls `body` with every iBeacon and AltBeacon frame in `data`, in order. Malformed data throws after the
    /// frames before the damage were delivered.
    @inline(__always)
    public static func forEachBeaconFrame(
        in data: UnsafeRawBufferPointer, baseOffset: Int = 0, _ body: (BeaconFrame) -> Void
    ) throws(MalformedPacket) {
        var structures = AdvertisingDataIterator(data, baseOffset: baseOffset)
        while let frame = try structures.nextBeaconFrame() { body(frame) }
    }

    /// The beacon frames in `data`, in order.
    public static func beaconFrames(in data: [UInt8]) throws(MalformedPacket) -> [BeaconFrame] {
        var frames: [BeaconFrame] = []
        try data.withBytes { bytes throws(MalformedPacket) in try forEachBeaconFrame(in: bytes) { frames.append($0) } }
        return frames
    }

    /// Every beacon frame of either format in `data`, in order.
    public static func frames(in data: [UInt8]) throws(MalformedPacket) -> [AdvertisedFrame] {
        try data.withBytes { bytes throws(MalformedPacket) in
            var structures = AdvertisingDataIterator(bytes)
            var frames: [AdvertisedFrame] = []
            while let frame = try structures.nextFrame() { frames.append(frame) }
            return frames
        }
    }

    /// Appends an Eddystone advertisement as the spec lays it out: Flags (unless nil), the complete list of
    /// 16-bit service UUIDs naming 0xFEAA, and the frame as service data.
    public static func appendEddystone(_ frame: EddystoneFrame, flags: UInt8? = 0x06, to data: inout [UInt8]) {
        if let flags { data += [2, AdvertisingDataType.flags, flags] }
        data += [3, AdvertisingDataType.completeList16BitServiceUUIDs]
        data.appendLittleEndian(EddystoneFrame.serviceUUID)
        let serviceData = frame.serviceData
        data += [UInt8(serviceData.count + 1), AdvertisingDataType.serviceData16BitUUID] + serviceData
    }

    /// An Eddystone advertisement's data; see `appendEddystone`.
    public static func eddystone(_ frame: EddystoneFrame, flags: UInt8? = 0x06) -> [UInt8] {
        var data: [UInt8] = []
        appendEddystone(frame, flags: flags, to: &data)
        return data
    }

    /// Appends one AD structure. Its value must fit the length byte: at most 254 bytes.
    public static func appendStructure(
        type: UInt8, value: some Collection<UInt8>, to data: inout [UInt8]
    ) throws(EncodingError) {
        guard value.count <= 254 else {
            throw EncodingError(field: "AD structure value", length: value.count, maximum: 254)
        }
        data.append(UInt8(value.count + 1))
        data.append(type)
        data.append(contentsOf: value)
    }

    /// Appends a beacon advertisement: a Flags structure (unless `flags` is nil) and the frame's manufacturer
    /// data. iBeacon frames use Apple's layout; AltBeacon frames use `altBeaconCompanyID`; Eddystone UID and EID
    /// frames are written as `appendEddystone` writes them. A TLM sighting's frame is no beacon: not allowed.
    public static func appendBeacon(
        _ frame: BeaconFrame, flags: UInt8? = 0x06, altBeaconCompanyID: UInt16 = BeaconFrame.radiusNetworksCompanyID,
        to data: inout [UInt8]
    ) {
        if frame.kind.isEddystone {
            guard let eddystone = frame.eddystoneFrame else {
                preconditionFailure("a TLM sighting's frame is no beacon")
            }
            return appendEddystone(eddystone, flags: flags, to: &data)
        }
        if let flags {
            data.append(2)
            data.append(AdvertisingDataType.flags)
            data.append(flags)
        }
        data.append(frame.kind == .iBeacon ? 26 : 27)
        data.append(AdvertisingDataType.manufacturerSpecificData)
        switch frame.kind {
        case .iBeacon:
            data.appendLittleEndian(BeaconFrame.appleCompanyID)
            data.append(0x02)
            data.append(0x15)
        case .altBeacon:
            data.appendLittleEndian(altBeaconCompanyID)
            data.append(0xBE)
            data.append(0xAC)
        case .eddystoneUID, .eddystoneEID, .eddystoneTelemetry:
            preconditionFailure("Eddystone frames returned above")
        }
        withUnsafeBytes(of: frame.identity.uuid.uuid) { data.append(contentsOf: $0) }
        data.appendBigEndian(frame.identity.major)
        data.appendBigEndian(frame.identity.minor)
        data.append(UInt8(bitPattern: frame.measuredPower))
        if frame.kind == .altBeacon {
            data.append(0)  // manufacturer reserved
        }
    }

    /// A beacon advertisement's data; see `appendBeacon`.
    public static func beacon(
        _ frame: BeaconFrame, flags: UInt8? = 0x06, altBeaconCompanyID: UInt16 = BeaconFrame.radiusNetworksCompanyID
    ) -> [UInt8] {
        var data: [UInt8] = []
        appendBeacon(frame, flags: flags, altBeaconCompanyID: altBeaconCompanyID, to: &data)
        return data
    }
}
