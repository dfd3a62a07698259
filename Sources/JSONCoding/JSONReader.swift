import Foundation

// The byte-level half of the table-driven JSON reader: JSON's grammar, read as `LoyaltyJSON.decoder()`
// reads it (unknown keys skipped, null as absent). `JSONTable` drives it field by field.

package struct JSONReader {
    package let bytes: UnsafeBufferPointer<UInt8>
    package var index = 0
    /// Nesting of skipped values, bounded so hostile input cannot exhaust the stack.
    package var depth = 0
    static let maximumDepth = 256
    /// Told how far reading has come about every `progressStep` bytes, so that a caller reading a mapped file can
    /// let the bytes behind go. Every scan is bounded (a string by `maximumStringBytes`, a number's digits by
    /// `maximumDigits`) or checks it as it goes (white space), so no more than about a step is read between two
    /// calls, whatever the text.
    package var progress: ((Int) -> Void)?
    private var nextProgress = progressStep
    static let progressStep = 4 << 20
    /// No text the API writes comes near it (a description is at most 2,000 characters).
    static let maximumStringBytes = 64 << 10
    static let maximumDigits = 400

    package init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    package func failure(_ message: String) -> JSONCodingError {
        JSONCodingError(offset: index, message: message)
    }

    package func missing(_ key: StaticString, in object: String) -> JSONCodingError {
        failure("the \(object) has no \"\(key)\"")
    }

    package mutating func end() throws(JSONCodingError) {
        skipWhitespace()
        guard index == bytes.count else { throw failure("text after the JSON value") }
    }

    package mutating func skipWhitespace() {
        while index < bytes.count {
            if index >= nextProgress, let progress {
                nextProgress = index + Self.progressStep
                progress(index)
            }
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// The next non-space byte, not consumed.
    package mutating func peek() throws(JSONCodingError) -> UInt8 {
        skipWhitespace()
        guard index < bytes.count else { throw failure("unexpected end of the text") }
        return bytes[index]
    }

    package mutating func expect(_ byte: UInt8) throws(JSONCodingError) {
        guard try peek() == byte else {
            throw failure("expected '\(Character(Unicode.Scalar(byte)))'")
        }
        index += 1
    }

    /// Calls `field` with each key of an object, the reader placed at its value; `field` reads or skips it.
    package mutating func object(
        _ what: String, _ field: (inout JSONReader, ObjectKey) throws(JSONCodingError) -> Void
    ) throws(JSONCodingError) {
        guard try peek() == UInt8(ascii: "{") else { throw failure("the \(what) is not an object") }
        index += 1
        if try peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            guard try peek() == UInt8(ascii: "\"") else { throw failure("expected a key in the \(what)") }
            let key = try objectKey()
            try expect(UInt8(ascii: ":"))
            try field(&self, key)
            switch try peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return
            default: throw failure("expected ',' or '}' in the \(what)")
            }
        }
    }

    package mutating func array<Element>(
        _ what: String, _ element: (inout JSONReader) throws(JSONCodingError) -> Element
    ) throws(JSONCodingError) -> [Element] {
        var elements: [Element] = []
        try forEach(what) { reader throws(JSONCodingError) in elements.append(try element(&reader)) }
        return elements
    }

    /// Calls `element` with the reader placed at each element of an array; `element` reads or skips it.
    package mutating func forEach(
        _ what: String, _ element: (inout JSONReader) throws(JSONCodingError) -> Void
    ) throws(JSONCodingError) {
        guard try peek() == UInt8(ascii: "[") else { throw failure("\(what) is not an array") }
        index += 1
        if try peek() == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            try element(&self)
            switch try peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return
            default: throw failure("expected ',' or ']' in \(what)")
            }
        }
    }

    /// A key: the raw bytes when it has no escapes (the usual case), else its decoded text.
    package struct ObjectKey {
        var raw: UnsafeBufferPointer<UInt8>
        var decoded: String?

        package func `is`(_ name: StaticString) -> Bool {
            if let decoded { return decoded == name.description }
            return name.withUTF8Buffer { name in
                name.count == raw.count && memcmp(name.baseAddress!, raw.baseAddress!, raw.count) == 0
            }
        }
    }

    mutating func objectKey() throws(JSONCodingError) -> ObjectKey {
        let start = index + 1
        var end = start
        while end < bytes.count, end - start < Self.maximumStringBytes, bytes[end] != UInt8(ascii: "\""),
            bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20, bytes[end] < 0x80
        {
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            index = end + 1
            return ObjectKey(raw: UnsafeBufferPointer(rebasing: bytes[start..<end]), decoded: nil)
        }
        let decoded = try string()
        return ObjectKey(raw: UnsafeBufferPointer(rebasing: bytes[start..<start]), decoded: decoded)
    }

    /// Whether the value is `null` (consumed), for optional fields.
    package mutating func null() throws(JSONCodingError) -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    package mutating func literal(_ word: StaticString) throws(JSONCodingError) {
        let matches = word.withUTF8Buffer { word in
            index + word.count <= bytes.count
                && memcmp(word.baseAddress!, bytes.baseAddress! + index, word.count) == 0
        }
        guard matches else { throw failure("expected \(word)") }
        index += word.utf8CodeUnitCount
    }

    package mutating func bool() throws(JSONCodingError) -> Bool {
        switch try peek() {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        default: throw failure("expected true or false")
        }
    }

    private static let tooLong = "a string longer than \(maximumStringBytes) bytes"

    package mutating func string() throws(JSONCodingError) -> String {
        guard try peek() == UInt8(ascii: "\"") else { throw failure("expected a string") }
        index += 1
        let start = index
        while index < bytes.count {
            guard index - start < Self.maximumStringBytes else { throw failure(Self.tooLong) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                guard let text else { throw failure("the string is not UTF-8") }
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw failure("a control character in a string") }
            index += 1
        }
        // With escapes: unescaped into a copy.
        var text = Array(bytes[start..<index])
        while index < bytes.count {
            guard index - start < Self.maximumStringBytes else { throw failure(Self.tooLong) }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: text, as: UTF8.self) else {
                    throw failure("the string is not UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hexQuad()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw failure("a high surrogate without its low surrogate") }
                        index += 2
                        let low = try hexQuad()
                        guard (0xDC00..<0xE000).contains(low) else {
                            throw failure("a high surrogate without its low surrogate")
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw failure("a low surrogate without its high surrogate")
                    }
                    // Surrogates are excluded above, so the scalar exists.
                    text.append(contentsOf: Unicode.Scalar(scalar)!.utf8)
                default: throw failure("an unknown escape in a string")
                }
            default:
                guard byte >= 0x20 else { throw failure("a control character in a string") }
                text.append(byte)
                index += 1
            }
        }
        throw failure("unterminated string")
    }

    package mutating func hexQuad() throws(JSONCodingError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("a short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let digit = Self.hexValue(bytes[index])
            guard digit < 16 else { throw failure("a \\u escape with a non-hex digit") }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// 0...15 for a hex digit in either case, 255 for anything else.
    package static func hexValue(_ byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: 255
        }
    }

    /// A UUID string in either case, as `UUID(uuidString:)` reads it; the 36 bytes are read in place.
    package mutating func uuid() throws(JSONCodingError) -> UUID {
        guard try peek() == UInt8(ascii: "\"") else { throw failure("expected a UUID string") }
        if index + 37 < bytes.count, bytes[index + 37] == UInt8(ascii: "\""),
            let uuid = Self.uuid(UnsafeBufferPointer(rebasing: bytes[(index + 1)..<(index + 37)]))
        {
            index += 38
            return uuid
        }
        let start = index
        let text = try string()
        let utf8 = Array(text.utf8)
        guard let uuid = utf8.withUnsafeBufferPointer({ Self.uuid($0) })
        else {
            index = start
            throw failure("expected a UUID such as E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        }
        return uuid
    }

    /// 8-4-4-4-12 hex digits.
    package static func uuid(_ text: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard text.count == 36, text[8] == UInt8(ascii: "-"), text[13] == UInt8(ascii: "-"),
            text[18] == UInt8(ascii: "-"), text[23] == UInt8(ascii: "-")
        else { return nil }
        var octets: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let valid = withUnsafeMutableBytes(of: &octets) { octets in
            var position = 0
            for octet in 0..<16 {
                if position == 8 || position == 13 || position == 18 || position == 23 { position += 1 }
                let high = hexValue(text[position])
                let low = hexValue(text[position + 1])
                guard high | low < 16 else { return false }
                octets[octet] = high << 4 | low
                position += 2
            }
            return true
        }
        return valid ? UUID(uuid: octets) : nil
    }

    package mutating func date() throws(JSONCodingError) -> Date {
        let start = index
        guard let date = LoyaltyJSON.parseTimestamp(try string()) else {
            index = start
            throw failure("expected an ISO 8601 date-time such as 2026-01-31T09:00:00Z")
        }
        return date
    }

    /// The bytes of a number, checked against JSON's grammar.
    package mutating func number() throws(JSONCodingError) -> (text: UnsafeBufferPointer<UInt8>, integral: Bool) {
        _ = try peek()
        let start = index
        func digits() -> Int {
            let first = index
            while index < bytes.count, index - first <= Self.maximumDigits, bytes[index] &- UInt8(ascii: "0") < 10 {
                index += 1
            }
            return index - first <= Self.maximumDigits ? index - first : 0
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let leading = index
        guard digits() > 0, bytes[leading] != UInt8(ascii: "0") || index == leading + 1 else {
            index = start
            throw failure("expected a number")
        }
        var integral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            integral = false
            guard digits() > 0 else { throw failure("a number without digits after '.'") }
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            integral = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { throw failure("a number without exponent digits") }
        }
        return (UnsafeBufferPointer(rebasing: bytes[start..<index]), integral)
    }

    package mutating func integer() throws(JSONCodingError) -> Int {
        let start = index
        let (text, integral) = try number()
        if integral {
            var value = 0
            let negative = text[0] == UInt8(ascii: "-")
            for byte in text.dropFirst(negative ? 1 : 0) {
                let (product, overflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, carry) = product.addingReportingOverflow(
                    negative ? -Int(byte - UInt8(ascii: "0")) : Int(byte - UInt8(ascii: "0")))
                guard !overflow, !carry else {
                    index = start
                    throw failure("the number does not fit an integer")
                }
                value = sum
            }
            return value
        }
        // Foundation reads 1.0 or 1e2 as an integer when it is one exactly.
        guard let double = Double(String(decoding: text, as: UTF8.self)), let value = Int(exactly: double) else {
            index = start
            throw failure("expected an integer")
        }
        return value
    }

    package mutating func double() throws(JSONCodingError) -> Double {
        let start = index
        let (text, _) = try number()
        guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else {
            index = start
            throw failure("the number does not fit a Double")
        }
        return value
    }

    /// Reads and drops any value (an unknown key's).
    package mutating func skipValue() throws(JSONCodingError) {
        switch try peek() {
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try bool()
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            depth += 1
            defer { depth -= 1 }
            guard depth <= Self.maximumDepth else { throw failure("nested too deeply") }
            if bytes[index] == UInt8(ascii: "{") {
                try object("value") { reader, _ throws(JSONCodingError) in try reader.skipValue() }
            } else {
                try forEach("the value") { reader throws(JSONCodingError) in try reader.skipValue() }
            }
        default: _ = try number()
        }
    }
}
