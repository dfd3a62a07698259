import Foundation

/// JSON lines written straight into bytes: a scan's output at replay speed is tens of megabytes, and
/// building each line as Swift strings (or a tree of values first) cost more than decoding the capture.
///
/// Keys come in the order written. Strings are escaped as `JSONEncoder` escapes them, numbers with a fixed
/// number of decimals are written without Foundation's formatter, and a number JSON cannot hold is `null`.
/// `clear()` keeps the storage, so a buffer reused line after line does not allocate.
public struct JSONLineBuffer: Sendable {
    /// The bytes written are `storage[..<count]`; past them, room (zeros, or what a writer stored past its text
    /// in one wide store) that `write(maxCount:_:)` writes into in place, so a line costs no copy and no
    /// capacity check per byte.
    private var storage: [UInt8]
    public private(set) var count = 0

    public init(capacity: Int = 1 << 14) {
        storage = Array(repeating: 0, count: capacity)
    }

    /// The bytes written, copied.
    public var bytes: [UInt8] { Array(storage[..<count]) }

    /// The bytes written, in place (until the next write).
    public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// Empties the buffer, keeping its storage.
    public mutating func clear() {
        count = 0
    }

    /// Text that needs no escaping: punctuation, keys and literals.
    public mutating func raw(_ text: StaticString) {
        write(maxCount: text.utf8CodeUnitCount) { $0.raw(text) }
    }

    /// Text already valid where it goes (a number's description, a line made elsewhere), copied as it is.
    public mutating func rawText(_ text: String) {
        appendingToStorage { $0.append(contentsOf: text.utf8) }
    }

    public mutating func byte(_ ascii: Unicode.Scalar) {
        write(maxCount: 1) { $0.byte(UInt8(ascii: ascii)) }
    }

    /// `text` as a JSON string literal.
    public mutating func string(_ text: String) {
        appendingToStorage { Self.appendString(text, to: &$0) }
    }

    /// `text` as a JSON string literal, escaped as `JSONEncoder` escapes it (`\"`, `\\`, `\n`, `\r`, `\t`,
    /// `\b`, `\f`, other control characters as `\u00xx`): the one escaper of this module's writers.
    static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        // The runs between escapes are copied whole: most text has none, and a byte at a time cost several times
        // what a copy does.
        text.withUTF8 { units in
            var runStart = 0
            for index in units.indices {
                let unit = units[index]
                guard unit < 0x20 || unit == UInt8(ascii: "\"") || unit == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: units[runStart..<index]))
                runStart = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch unit {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(unit)
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                default:
                    bytes.append(contentsOf: [
                        UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), ByteCursor.lowerHex[Int(unit >> 4)],
                        ByteCursor.lowerHex[Int(unit & 0xF)],
                    ])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: units[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func integer(_ value: Int) {
        write(maxCount: 20) { $0.integer(value) }
    }

    /// `value` rounded to `decimals` (at most 6) places and written with exactly that many (`-` only when
    /// the rounded value is not zero); `null` when it is not finite or beyond 10^18 once scaled.
    public mutating func fixed(_ value: Double, decimals: Int) {
        write(maxCount: ByteCursor.fixedMaxCount) { $0.fixed(value, decimals: decimals) }
    }

    /// A UUID in quotes, upper-case as `UUID.uuidString` writes it.
    public mutating func uuid(_ uuid: UUID) {
        write(maxCount: 38) { $0.uuid(uuid) }
    }

    /// Runs `body` on the room after the bytes written, at least `maxCount` bytes of it, and keeps what it
    /// wrote. Writing more than `maxCount` is a programming error, caught before the buffer is used again.
    public mutating func write(maxCount: Int, _ body: (inout ByteCursor) -> Void) {
        let start = count
        if storage.count - start < maxCount {
            // Room for many lines at a time (the array itself grows by doubling).
            storage.append(contentsOf: repeatElement(0, count: max(maxCount, 1 << 12)))
        }
        count = storage.withUnsafeMutableBufferPointer { room in
            var cursor = ByteCursor(room.baseAddress! + start)
            body(&cursor)
            precondition(cursor.count <= maxCount, "wrote past the room asked for")
            return start + cursor.count
        }
    }

    /// Runs `body` on the storage cut to the bytes written, for what `Array` itself appends (escaped
    /// strings, a string's UTF-8); the room is made again by the next `write(maxCount:_:)`.
    private mutating func appendingToStorage(_ body: (inout [UInt8]) -> Void) {
        storage.removeSubrange(count...)
        body(&storage)
        count = storage.count
    }
}

/// Writes into room the caller sized (`JSONLineBuffer.write(maxCount:_:)`, or memory of its own): no bounds
/// or capacity checks, and positions move with wrapping arithmetic (they stay within that room, nowhere near
/// `Int.max`). Inlinable, so that a line written in another module (`RangeLines`) gets its numbers and
/// literals written in place rather than through a call each.
public struct ByteCursor {
    @usableFromInline let base: UnsafeMutablePointer<UInt8>
    @usableFromInline var written = 0

    /// Writes from `base` on, as far as the caller made room for.
    public init(_ base: UnsafeMutablePointer<UInt8>) { self.base = base }

    /// The bytes written so far.
    @inlinable public var count: Int { written }

    @inlinable public mutating func byte(_ value: UInt8) {
        base[written] = value
        written &+= 1
    }

    @inlinable @inline(always) public mutating func raw(_ text: StaticString) {
        let length = text.utf8CodeUnitCount
        (base + written).update(from: text.utf8Start, count: length)
        written &+= length
    }

    /// Bytes made before (text a line repeats): the first `count` of `blockSize` bytes at `start`, copied as
    /// one block of a size known where this is inlined (a few wide moves rather than a call to `memcpy` for a
    /// short copy). Writes all `blockSize` bytes of the room, and `start` must have them all to read.
    @inlinable @inline(always) public mutating func copy(_ start: UnsafeRawPointer, count: Int, blockSize: Int) {
        UnsafeMutableRawPointer(base + written).copyMemory(from: start, byteCount: blockSize)
        written &+= count
    }

    @inlinable public mutating func integer(_ value: Int) {
        if value < 0 { byte(UInt8(ascii: "-")) }
        digits(value.magnitude, width: 1)
    }

    /// The longest `fixed` writes: a sign, 18 digits and the point.
    public static let fixedMaxCount = 20

    @inlinable @inline(always) public mutating func fixed(_ value: Double, decimals: Int) {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = abs(value) * scale
        guard scaled < 1e18 else { return raw("null") }  // NaN fails the test too
        // Rounded half away from zero, as `rounded()` rounds, without its call into libm: `scaled - whole`
        // is exact (Sterbenz's lemma), so it is at least one half exactly when `rounded()` rounds up.
        // (From 2^52 up every Double is whole, so testing `scaled` rather than its rounding changes nothing.)
        var whole = UInt(Int(scaled))
        if scaled - Double(whole) >= 0.5 { whole &+= 1 }
        if value < 0, whole != 0 { byte(UInt8(ascii: "-")) }
        // A scan's RSSIs and distances: four digits at most, a decimal or two.
        if (1...3).contains(decimals), whole < 10_000 { return shortFixed(whole, point: decimals) }
        digits(whole, width: decimals + 1, point: decimals)
    }

    /// `digits(whole, width: point + 1, point: point)` for `whole` under 10,000 and `point` from 1 to 3, without
    /// its loops: the four digits from two pairs, the point put in, and the leading zeros shifted out, stored as
    /// one word (eight bytes of the room `fixed` was given; the text is up to five of them).
    @inlinable @inline(always) mutating func shortFixed(_ whole: UInt, point: Int) {
        let pairs = UnsafeRawPointer(Self.pairs.utf8Start)
        func pair(_ value: UInt) -> UInt64 {
            UInt64(UInt16(littleEndian: pairs.loadUnaligned(fromByteOffset: 2 &* Int(value), as: UInt16.self)))
        }
        let high = pair(whole / 100)
        let low = pair(whole % 100)
        // The digits in the order written, the first in the lowest byte.
        let digits = high | low << 16
        let split = UInt64(8 &* (4 &- point))
        let before: UInt64 = (1 << split) &- 1
        let text = (digits & before) | UInt64(UInt8(ascii: ".")) << split | (digits & ~before) << 8
        let length = max(whole >= 1000 ? 4 : whole >= 100 ? 3 : whole >= 10 ? 2 : 1, point &+ 1)
        let shown = text >> UInt64(8 &* (4 &- length))
        UnsafeMutableRawPointer(base + written).storeBytes(of: shown.littleEndian, as: UInt64.self)
        written &+= length &+ 1
    }

    /// 00 to 99, each pair of digits at twice its value.
    @inlinable static var pairs: StaticString {
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
    }

    /// At least `width` digits, zero-padded; with `point`, a decimal point before the last `point` of them
    /// (and at least one digit before it).
    @inlinable @inline(always) public mutating func digits(_ value: UInt, width: Int, point: Int = 0) {
        // As many as asked for (and one before the point), then more while `value` has them.
        var length = max(width, point &+ 1)
        var bound: UInt = 1
        for _ in 0..<min(length, 19) { bound &*= 10 }
        while value >= bound, length < 20 {
            length &+= 1
            bound &*= 10
        }
        let end = written &+ length &+ (point > 0 ? 1 : 0)
        // Last digits first, from the end of the text back.
        var index = end
        var rest = value
        for _ in 0..<point {
            index &-= 1
            base[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
        if point > 0 {
            index &-= 1
            base[index] = UInt8(ascii: ".")
        }
        // The whole part two digits at a time: one division per pair.
        let pairs = Self.pairs
        var left = length &- point
        while left >= 2 {
            let pair = Int(truncatingIfNeeded: rest % 100)
            rest /= 100
            index &-= 2
            (base + index).update(from: pairs.utf8Start + 2 &* pair, count: 2)
            left &-= 2
        }
        if left == 1 {
            base[index &- 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
        }
        written = end
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
