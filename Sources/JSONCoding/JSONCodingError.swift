/// Why JSON could not be read or written by the table-driven coder.
public struct JSONCodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The byte offset in the input where reading stopped (0 when writing).
    public var offset: Int
    public var message: String

    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    public var description: String { "at byte \(offset): \(message)" }
}
