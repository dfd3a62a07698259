/// A value too large for the length field the Bluetooth format gives it.
public struct EncodingError: Error, Hashable, Sendable, CustomStringConvertible {
    public var field: String
    public var length: Int
    public var maximum: Int

    public init(field: String, length: Int, maximum: Int) {
        self.field = field
        self.length = length
        self.maximum = maximum
    }

    public var description: String { "\(field) is \(length) bytes long; the format allows at most \(maximum)" }
}
