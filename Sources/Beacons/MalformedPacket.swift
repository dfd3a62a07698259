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
        }
    }
}
