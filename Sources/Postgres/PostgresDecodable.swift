import CivilCalendar
import Foundation

/// A Swift value that travels to PostgreSQL as a text-format parameter.
public protocol PostgresEncodable: Sendable {
    /// The value in PostgreSQL's text input syntax; nil is SQL NULL.
    var postgresText: String? { get }
}

/// A Swift value read from PostgreSQL's text output.
public protocol PostgresDecodable {
    init(postgresText: String) throws(PostgresError)
    /// The same from the text's UTF-8 bytes where libpq holds them: rows are decoded through this, and a type that
    /// reads bytes (uuids, bytea: longer than a String keeps inline) makes no String of each value. The default
    /// makes one.
    init(postgresBytes: UnsafeBufferPointer<UInt8>) throws(PostgresError)
    /// What SQL NULL decodes to; nil (the default) makes NULL a decoding error. `Optional` answers `.some(nil)`.
    static var valueForSQLNull: Self? { get }
}

extension PostgresDecodable {
    public init(postgresBytes: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
        try self.init(postgresText: String(decoding: postgresBytes, as: UTF8.self))
    }
    public static var valueForSQLNull: Self? { nil }
}

extension PostgresError {
    static func cannotDecode(_ type: Any.Type) -> PostgresError {
        PostgresError(kind: .decoding, message: "the column's text is not a valid \(type)")
    }
}

extension String: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? { self }
    public init(postgresText: String) { self = postgresText }
}

extension Bool: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? { self ? "t" : "f" }
    public init(postgresText: String) throws(PostgresError) {
        switch postgresText {
        case "t", "true": self = true
        case "f", "false": self = false
        default: throw .cannotDecode(Bool.self)
        }
    }
}

/// The integer widths share one decoder: PostgreSQL prints integers as plain decimal.
public protocol PostgresInteger: FixedWidthInteger, PostgresEncodable, PostgresDecodable {}

extension PostgresInteger {
    public var postgresText: String? { String(self) }
    public init(postgresText: String) throws(PostgresError) {
        guard let value = Self(postgresText, radix: 10) else { throw .cannotDecode(Self.self) }
        self = value
    }
}

extension Int: PostgresInteger {}
extension Int64: PostgresInteger {}
extension Int32: PostgresInteger {}
extension Int16: PostgresInteger {}
extension UInt16: PostgresInteger {}

extension Double: PostgresEncodable, PostgresDecodable {
    /// Swift's shortest round-trip spelling, with PostgreSQL's names for the non-finite values.
    public var postgresText: String? {
        if isNaN { return "NaN" }
        if isInfinite { return self < 0 ? "-Infinity" : "Infinity" }
        return String(self)
    }

    public init(postgresText: String) throws(PostgresError) {
        switch postgresText {
        case "NaN": self = .nan
        case "Infinity": self = .infinity
        case "-Infinity": self = -.infinity
        default:
            guard let value = Double(postgresText) else { throw .cannotDecode(Double.self) }
            self = value
        }
    }
}

/// uuid as PostgreSQL prints it, 8-4-4-4-12 hex digits. Coded by hand: Foundation's text form goes through
/// sprintf and sscanf, which a profile of the busiest request (a 304 decodes three and binds one) showed.
extension UUID: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var index = 0
                for (offset, byte) in bytes.enumerated() {
                    if isUUIDDashOffset(offset) {
                        text[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    text[index] = hexDigits[Int(byte >> 4)]
                    text[index + 1] = hexDigits[Int(byte & 0x0f)]
                    index += 2
                }
                return index
            }
        }
    }

    public init(postgresText: String) throws(PostgresError) {
        var text = postgresText
        guard let uuid = text.withUTF8(Self.parsed) else { throw .cannotDecode(UUID.self) }
        self = UUID(uuid: uuid)
    }

    public init(postgresBytes text: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
        guard let uuid = Self.parsed(text) else { throw .cannotDecode(UUID.self) }
        self = UUID(uuid: uuid)
    }

    private static func parsed(_ text: UnsafeBufferPointer<UInt8>) -> uuid_t? {
        guard text.count == 36 else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &uuid) { bytes -> Bool in
            var index = 0
            for offset in 0..<16 {
                if isUUIDDashOffset(offset) {
                    guard text[index] == UInt8(ascii: "-") else { return false }
                    index += 1
                }
                guard let high = hexValue(text[index]), let low = hexValue(text[index + 1]) else { return false }
                bytes[offset] = high << 4 | low
                index += 2
            }
            return true
        }
        return parsed ? uuid : nil
    }
}

/// Whether a dash precedes the byte at `offset` in a uuid's text (8-4-4-4-12 hex digits).
private func isUUIDDashOffset(_ offset: Int) -> Bool {
    offset == 4 || offset == 6 || offset == 8 || offset == 10
}

private let hexDigits = Array("0123456789abcdef".utf8)

/// bytea, in the hex format (`\x0aff`) that PostgreSQL prints by default.
extension [UInt8]: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? {
        var text = [UInt8](repeating: 0, count: 2 + 2 * count)
        text[0] = UInt8(ascii: "\\")
        text[1] = UInt8(ascii: "x")
        for (offset, byte) in enumerated() {
            text[2 + 2 * offset] = hexDigits[Int(byte >> 4)]
            text[3 + 2 * offset] = hexDigits[Int(byte & 0x0f)]
        }
        return String(decoding: text, as: UTF8.self)
    }

    public init(postgresText: String) throws(PostgresError) {
        var text = postgresText
        guard let bytes = text.withUTF8(Self.decodedHex) else { throw .cannotDecode([UInt8].self) }
        self = bytes
    }

    public init(postgresBytes text: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
        guard let bytes = Self.decodedHex(text) else { throw .cannotDecode([UInt8].self) }
        self = bytes
    }

    private static func decodedHex(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x"), text.count % 2 == 0
        else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity((text.count - 2) / 2)
        var index = 2
        while index < text.count {
            guard let high = hexValue(text[index]), let low = hexValue(text[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}

private func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public var postgresText: String? {
        switch self {
        case .some(let value): value.postgresText
        case .none: nil
        }
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public init(postgresText: String) throws(PostgresError) {
        self = .some(try Wrapped(postgresText: postgresText))
    }
    public init(postgresBytes: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
        self = .some(try Wrapped(postgresBytes: postgresBytes))
    }
    public static var valueForSQLNull: Self? { .some(.none) }
}

extension Date: PostgresEncodable, PostgresDecodable {
    /// ISO 8601 in UTC with microseconds (PostgreSQL's precision), e.g. `2026-11-29T21:51:29.123456Z`.
    public var postgresText: String? {
        let seconds = timeIntervalSinceReferenceDate
        if seconds.isNaN { return "NaN" }  // PostgreSQL rejects it with a typed error
        if seconds.isInfinite { return seconds < 0 ? "-infinity" : "infinity" }
        return TimestampText.format(
            microsecondsSinceEpoch: Int64((seconds * 1_000_000).rounded()) + TimestampText.referenceDateOffset)
    }

    /// timestamptz (ISO DateStyle, any session time zone: the offset is read), timestamp (taken as UTC) or date.
    public init(postgresText: String) throws(PostgresError) {
        switch postgresText {
        case "infinity": self = .distantFuture
        case "-infinity": self = .distantPast
        default:
            let parsed =
                postgresText.utf8.withContiguousStorageIfAvailable(TimestampText.parse)
                ?? TimestampText.parse(Array(postgresText.utf8).withUnsafeBufferPointer { $0 })
            guard let micros = parsed else { throw .cannotDecode(Date.self) }
            self = Date(
                timeIntervalSinceReferenceDate: Double(micros - TimestampText.referenceDateOffset) / 1_000_000)
        }
    }
}

/// Hand-written timestamp text conversion: the catalog decodes 100,000 rows, and DateFormatter is too slow for that.
enum TimestampText {
    /// 2001-01-01 (Foundation's reference date) in microseconds since 1970-01-01.
    static let referenceDateOffset: Int64 = 978_307_200 * 1_000_000

    static func format(microsecondsSinceEpoch micros: Int64) -> String {
        let (seconds, fraction) = CivilCalendar.floorDivision(micros, 1_000_000)
        let (days, secondOfDay) = CivilCalendar.floorDivision(seconds, 86_400)
        let (year, month, day) = CivilCalendar.date(days: days)
        var text = [UInt8]()
        text.reserveCapacity(30)
        CivilCalendar.appendDateTime(
            year: year > 0 ? year : 1 - year, month: month, day: day, secondOfDay: secondOfDay, to: &text)
        text.append(UInt8(ascii: "."))
        CivilCalendar.appendDigits(fraction, width: 6, to: &text)
        text.append(UInt8(ascii: "Z"))
        if year <= 0 { text += Array(" BC".utf8) }
        return String(decoding: text, as: UTF8.self)
    }

    /// Microseconds since 1970 of `YYYY-MM-DD[( |T)HH:MM:SS[.ffffff][Z|±HH[:MM[:SS]]]][ BC]`, or nil.
    static func parse(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        func peek() -> UInt8? { index < text.count ? text[index] : nil }
        func expect(_ character: Character) -> Bool {
            guard peek() == character.asciiValue else { return false }
            index += 1
            return true
        }
        func number(minDigits: Int, maxDigits: Int) -> Int64? {
            var value: Int64 = 0
            var count = 0
            while count < maxDigits, let digit = peek(), digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") {
                value = value * 10 + Int64(digit - UInt8(ascii: "0"))
                count += 1
                index += 1
            }
            return count >= minDigits ? value : nil
        }

        guard var year = number(minDigits: 4, maxDigits: 7), expect("-"),
            let month = number(minDigits: 2, maxDigits: 2), (1...12).contains(month), expect("-"),
            let day = number(minDigits: 2, maxDigits: 2), (1...31).contains(day)
        else { return nil }
        var secondOfDay: Int64 = 0
        var fraction: Int64 = 0
        var offset: Int64 = 0
        if expect(" ") || expect("T") {
            guard let hour = number(minDigits: 2, maxDigits: 2), hour <= 24, expect(":"),
                let minute = number(minDigits: 2, maxDigits: 2), minute <= 59, expect(":"),
                let second = number(minDigits: 2, maxDigits: 2), second <= 60
            else { return nil }
            secondOfDay = hour * 3600 + minute * 60 + second
            if expect(".") {
                var scale: Int64 = 100_000
                var digits = 0
                while let digit = peek(), digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") {
                    fraction += Int64(digit - UInt8(ascii: "0")) * scale
                    scale /= 10
                    digits += 1
                    index += 1
                }
                guard digits > 0 else { return nil }
            }
            if expect("Z") {
                offset = 0
            } else if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                index += 1
                guard let hours = number(minDigits: 2, maxDigits: 2) else { return nil }
                var seconds = hours * 3600
                if expect(":") {
                    guard let minutes = number(minDigits: 2, maxDigits: 2) else { return nil }
                    seconds += minutes * 60
                    if expect(":") {
                        guard let rest = number(minDigits: 2, maxDigits: 2) else { return nil }
                        seconds += rest
                    }
                }
                offset = sign == UInt8(ascii: "+") ? seconds : -seconds
            }
        }
        if expect(" ") {
            guard expect("B"), expect("C") else { return nil }
            year = 1 - year
        }
        guard index == text.count, day <= CivilCalendar.daysInMonth(month, year: year) else { return nil }
        let seconds = CivilCalendar.days(year: year, month: month, day: day) * 86_400 + secondOfDay - offset
        return seconds * 1_000_000 + fraction
    }
}
