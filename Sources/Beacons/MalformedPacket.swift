/// Bytes that do not hold the HCI event or advertising data they claim to: the typed error of every parser
/// in this module that works on one packet. Parsers stop at the damage; they never read past the end.
public struct MalformedPacket: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// A field starts or ends past the last byte.
        case truncated
        /// The event header's parameter length disagrees with the number of bytes that follow it.
        case parameterLengthMismatch(declared: Int, actual: Int)
        /// An AD structure's length byte points past the end of the advertising data.
        case advertisingDataLengthPastEnd(length: Int, available: Int)
        /// Empty input.
        case empty
        /// Eddystone service data too short for its frame type's fields (`frameType` nil: no frame type byte).
        case eddystoneFrameShort(frameType: UInt8?, length: Int)
        /// An Eddystone frame longer than its type's fixed length (or a UID frame of 19 bytes: 18 or 20 only).
        case eddystoneFrameLength(frameType: UInt8, length: Int)
        /// A byte the Eddystone spec reserves as zero is not: the frame type's low nibble, a UID frame's last two.
        case eddystoneReservedNotZero(byte: UInt8)
        /// An Eddystone-URL scheme prefix byte beyond the four the spec defines (0-3).
        case eddystoneURLScheme(UInt8)
        /// An Eddystone-URL byte the spec reserves (0x0E-0x20, 0x7F-0xFF): neither printable ASCII nor an expansion.
        case eddystoneURLByte(UInt8)
        /// An Eddystone-TLM version other than 0 (plain) and 1 (encrypted).
        case eddystoneTelemetryVersion(UInt8)
    }

    public var reason: Reason
    /// Byte offset of the damaged field, counted from the first byte given to the parser.
    public var offset: Int

    public init(_ reason: Reason, offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String {
        switch reason {
        case .truncated:
            "malformed packet at byte \(offset): a field runs past the end"
        case .parameterLengthMismatch(let declared, let actual):
            "malformed packet at byte \(offset): parameter length \(declared) but \(actual) bytes follow"
        case .advertisingDataLengthPastEnd(let length, let available):
            "malformed packet at byte \(offset): AD structure of length \(length) but only \(available) bytes left"
        case .empty:
            "malformed packet: no bytes"
        case .eddystoneFrameShort(nil, _):
            "malformed Eddystone frame at byte \(offset): no frame type"
        case .eddystoneFrameShort(let type?, let length):
            "malformed Eddystone frame at byte \(offset): \(Self.frameName(type)) of \(length) bytes is short"
                + " (\(Self.frameLengths(type)))"
        case .eddystoneFrameLength(let type, let length):
            "malformed Eddystone frame at byte \(offset): \(Self.frameName(type)) of \(length) bytes"
                + " (\(Self.frameLengths(type)))"
        case .eddystoneReservedNotZero(let byte):
            "malformed Eddystone frame at byte \(offset): reserved bits must be zero, not \(Self.hex(byte))"
        case .eddystoneURLScheme(let byte):
            "malformed Eddystone frame at byte \(offset): URL scheme \(Self.hex(byte)) (0x00-0x03)"
        case .eddystoneURLByte(let byte):
            "malformed Eddystone frame at byte \(offset): URL byte \(Self.hex(byte)) is reserved"
                + " (0x00-0x0D expansions, 0x21-0x7E text)"
        case .eddystoneTelemetryVersion(let version):
            "malformed Eddystone frame at byte \(offset): TLM version \(Self.hex(version)) (0x00 plain, 0x01 encrypted)"
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        "0x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
    }

    private static func frameName(_ type: UInt8) -> String {
        switch type {
        case 0x00: "UID frame"
        case 0x10: "URL frame"
        case 0x20: "TLM frame"
        default: "EID frame"
        }
    }

    /// The lengths the spec allows a frame type, counted from the frame type byte.
    private static func frameLengths(_ type: UInt8) -> String {
        switch type {
        case 0x00: "a UID frame is 20 bytes, or 18 without its reserved bytes"
        case 0x10: "a URL frame is 4 to 20 bytes"
        case 0x20: "a TLM frame is 14 bytes, 18 encrypted"
        default: "an EID frame is 10 bytes"
        }
    }
}
