import CivilCalendar
import Foundation

/// The JSON coders both ends use: keys are spelled out in each type's `CodingKeys` (snake_case),
/// dates are ISO 8601 in UTC, with fractional seconds only when there are any.
public enum LoyaltyJSON {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(formatTimestamp(date))
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// What a date that does not parse is told (the server's 422 repeats it).
    public static let timestampExpectation = "must be an ISO 8601 date-time such as 2026-01-31T09:00:00Z"

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseTimestamp(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: timestampExpectation)
            }
            return date
        }
        return decoder
    }

    /// `2026-01-31T09:00:00Z`, or `2026-01-31T09:00:00.250Z` when the date has a fraction of a second.
    /// Rounded to the millisecond: truncating the binary fraction would write 59.26 (stored as 59.2599...)
    /// as .259 and drift by a millisecond on every round trip. Written by hand (a full catalog holds
    /// hundreds of thousands of dates) in the proleptic Gregorian calendar `parseTimestamp` reads.
    public static func formatTimestamp(_ date: Date) -> String {
        var text = [UInt8]()
        text.reserveCapacity(24)
        appendTimestamp(date, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// `formatTimestamp`'s text appended to `text`: the catalog page's writer puts it straight into the page.
    static func appendTimestamp(_ date: Date, to text: inout [UInt8]) {
        let scaled = (date.timeIntervalSince1970 * 1000).rounded()
        guard formattableMilliseconds.contains(scaled) else {
            text.append(contentsOf: date.formatted(plainStyle).utf8)
            return
        }
        let milliseconds = Int64(scaled)
        let (days, millisecondOfDay) = CivilCalendar.floorDivision(milliseconds, 86_400_000)
        let (year, month, day) = CivilCalendar.date(days: days)
        CivilCalendar.appendDateTime(
            year: year, month: month, day: day, secondOfDay: millisecondOfDay / 1000, to: &text)
        if millisecondOfDay % 1000 != 0 {
            text.append(UInt8(ascii: "."))
            CivilCalendar.appendDigits(millisecondOfDay % 1000, width: 3, to: &text)
        }
        text.append(UInt8(ascii: "Z"))
    }

    /// Reads an RFC 3339 date-time (`2026-01-31T09:00:00Z`, with an optional fraction, `Z` or a `+hh:mm`/`-hh:mm`
    /// offset, T and Z in either case) and nothing else. Read field by field: Foundation's parser also takes
    /// trailing text ("...Zjunk"), misreads some offsets and fails on some years before 1000.
    public static func parseTimestamp(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            func number(_ start: Int, _ count: Int) -> Int64? {
                guard start + count <= bytes.count else { return nil }
                var value: Int64 = 0
                for index in start..<start + count {
                    let digit = bytes[index] &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int64(digit)
                }
                return value
            }
            /// `expected` in either case for letters (RFC 3339 allows t and z).
            func separator(_ index: Int, _ expected: Unicode.Scalar) -> Bool {
                guard index < bytes.count else { return false }
                let byte = bytes[index]
                let letter = UInt8(ascii: expected) >= UInt8(ascii: "A")
                return byte == UInt8(ascii: expected) || (letter && byte == UInt8(ascii: expected) | 0x20)
            }
            guard let year = number(0, 4), separator(4, "-"), let month = number(5, 2), separator(7, "-"),
                let day = number(8, 2), separator(10, "T"), let hour = number(11, 2), separator(13, ":"),
                let minute = number(14, 2), separator(16, ":"), let second = number(17, 2),
                (1...12).contains(month), (1...CivilCalendar.daysInMonth(month, year: year)).contains(day), hour <= 23,
                minute <= 59, second <= 60  // 60: a leap second, read as the next second's start
            else { return nil }
            var index = 19
            var fraction = 0.0
            if separator(index, ".") {
                index += 1
                var scale = 1.0
                while index < bytes.count, let digit = number(index, 1) {
                    scale /= 10
                    fraction += Double(digit) * scale
                    index += 1
                }
                guard scale < 1 else { return nil }
            }
            var offset: Int64 = 0
            if separator(index, "Z"), index + 1 == bytes.count {
                offset = 0
            } else if index + 6 == bytes.count, separator(index, "+") || separator(index, "-"),
                let hours = number(index + 1, 2), separator(index + 3, ":"), let minutes = number(index + 4, 2),
                hours <= 23, minutes <= 59
            {
                offset = (separator(index, "-") ? -1 : 1) * (hours * 3600 + minutes * 60)
            } else {
                return nil
            }
            let seconds = CivilCalendar.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
            return Date(timeIntervalSince1970: Double(seconds - offset) + fraction)
        }
    }

    /// Years 0000 to 9999 in milliseconds since 1970: what four year digits can write.
    private static let formattableMilliseconds: ClosedRange<Double> = -62_167_219_200_000...253_402_300_799_999

    /// Dates beyond four-digit years (and NaN) only.
    private static let plainStyle = Date.ISO8601FormatStyle(timeZone: .gmt)
}
