import Foundation

/// JSON lines written straight into bytes: a scan's output at replay speed is tens of megabytes, and
/// building each line as Swift strings (or a tree of values first) cost more than decoding the capture.
///
/// Keys come in the order written. Strings are escaped as `JSONEncoder` escapes them, numbers with a fixed
/// number of decimals are written without Foundation's formatter, and a number JSON cannot hold is `null`.
/// `clear()` keeps the storage, so a buffer reused line after line does not allocate.
public struct JSONLineBuffer: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 1 << 14) {
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer, keeping its storage.
    public mutating func clear() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// Text that needs no escaping: punctuation, keys and literals.
    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Text already valid where it goes (a number's description), copied as it is.
    public mutating func rawText(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    public mutating func byte(_ ascii: Unicode.Scalar) {
        bytes.append(UInt8(ascii: ascii))
    }

    /// `text` as a JSON string literal.
    public mutating func string(_ text: String) {
        Self.appendString(text, to: &bytes)
    }

    /// `text` as a JSON string literal, escaped as `JSONEncoder` escapes it (`\"`, `\\`, `\n`, `\r`, `\t`,
    /// `\b`, `\f`, other control characters as `\u00xx`): the one escaper of this module's writers.
    static func appendString(_ text: String, to bytes: inout [UInt8]) {
        func escaped(_ letter: Unicode.Scalar) {
            bytes.append(UInt8(ascii: "\\"))
            bytes.append(UInt8(ascii: letter))
        }
        bytes.append(UInt8(ascii: "\""))
        for unit in text.utf8 {
            switch unit {
            case UInt8(ascii: "\""): escaped("\"")
            case UInt8(ascii: "\\"): escaped("\\")
            case 0x0A: escaped("n")
            case 0x0D: escaped("r")
            case 0x09: escaped("t")
            case 0x08: escaped("b")
            case 0x0C: escaped("f")
            case ..<0x20:
                escaped("u")
                bytes.append(contentsOf: [UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(ByteCursor.lowerHex[Int(unit >> 4)])
                bytes.append(ByteCursor.lowerHex[Int(unit & 0xF)])
            default: bytes.append(unit)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func integer(_ value: Int) {
        write(maxCount: 20) { $0.integer(value) }
    }

    /// `value` rounded to `decimals` (at most 6) places and written with exactly that many (`-` only when
    /// the rounded value is not zero); `null` when it is not finite or beyond 10^18 once scaled.
    public mutating func fixed(_ value: Double, decimals: Int) {
        write(maxCount: 27) { $0.fixed(value, decimals: decimals) }
    }

    /// A UUID in quotes, upper-case as `UUID.uuidString` writes it.
    public mutating func uuid(_ uuid: UUID) {
        write(maxCount: 38) { $0.uuid(uuid) }
    }

    /// Runs `body` on scratch space of `maxCount` bytes and appends what it wrote: one copy, instead of a
    /// capacity check per byte.
    public mutating func write(maxCount: Int, _ body: (inout ByteCursor) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxCount) { scratch in
            var cursor = ByteCursor(scratch.baseAddress!)
            body(&cursor)
            assert(cursor.count <= maxCount)
            bytes.append(contentsOf: UnsafeBufferPointer(start: scratch.baseAddress, count: cursor.count))
        }
    }

}

/// Writes into scratch space the caller sized (`JSONLineBuffer.write(maxCount:_:)`): no bounds or capacity
/// checks.
public struct ByteCursor {
    private let base: UnsafeMutablePointer<UInt8>
    public private(set) var count = 0

    init(_ base: UnsafeMutablePointer<UInt8>) { self.base = base }

    public mutating func byte(_ value: UInt8) {
        base[count] = value
        count += 1
    }

    public mutating func raw(_ text: StaticString) {
        let length = text.utf8CodeUnitCount
        (base + count).update(from: text.utf8Start, count: length)
        count += length
    }

    /// Bytes made before (text a line repeats), copied as they are.
    public mutating func copy(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { (base + count).update(from: $0.baseAddress!, count: $0.count) }
        count += bytes.count
    }

    public mutating func integer(_ value: Int) {
        if value < 0 { byte(UInt8(ascii: "-")) }
        digits(value.magnitude, width: 1)
    }

    public mutating func fixed(_ value: Double, decimals: Int) {
        var scale: UInt = 1
        for _ in 0..<decimals { scale *= 10 }
        let magnitude = (abs(value) * Double(scale)).rounded()
        guard magnitude < 1e18 else { return raw("null") }  // NaN fails the test too
        let scaled = UInt(magnitude)
        if value < 0, scaled != 0 { byte(UInt8(ascii: "-")) }
        digits(scaled / scale, width: 1)
        guard decimals > 0 else { return }
        byte(UInt8(ascii: "."))
        digits(scaled % scale, width: decimals)
    }

    /// At least `width` digits, zero-padded.
    public mutating func digits(_ value: UInt, width: Int) {
        var length = 1
        var bound: UInt = 10
        while length < 20, value >= bound {
            length += 1
            bound = bound &* 10
        }
        length = max(length, width)
        var rest = value
        for index in stride(from: count + length - 1, through: count, by: -1) {
            base[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        count += length
    }

    public mutating func uuid(_ uuid: UUID) {
        byte(UInt8(ascii: "\""))
        withUnsafeBytes(of: uuid.uuid) { octets in
            Self.upperHex.withUnsafeBufferPointer { hex in
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 { byte(UInt8(ascii: "-")) }
                    byte(hex[Int(octets[index] >> 4)])
                    byte(hex[Int(octets[index] & 0xF)])
                }
            }
        }
        byte(UInt8(ascii: "\""))
    }

    static let lowerHex = Array("0123456789abcdef".utf8)
    static let upperHex = Array("0123456789ABCDEF".utf8)
}
