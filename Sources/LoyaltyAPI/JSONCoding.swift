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

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseTimestamp(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected an ISO 8601 date-time such as 2026-01-31T09:00:00Z")
            }
            return date
        }
        return decoder
    }

    /// `2026-01-31T09:00:00Z`, or `2026-01-31T09:00:00.250Z` when the date has a fraction of a second.
    /// Rounded to the millisecond: the formatter truncates the binary fraction, so 59.26 (stored as
    /// 59.2599...) would come out as .259 and drift by a millisecond on every round trip.
    public static func formatTimestamp(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        let seconds = (milliseconds / 1000).rounded(.down)
        let plain = Date(timeIntervalSince1970: seconds).formatted(plainStyle)
        let fraction = Int(milliseconds - seconds * 1000)
        guard fraction != 0, plain.hasSuffix("Z") else { return plain }
        let digits = String(fraction)
        return plain.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// Reads an RFC 3339 date-time (`2026-01-31T09:00:00Z`, with an optional fraction, `Z` or a `+hh:mm`/`-hh:mm`
    /// offset, T and Z in either case) and nothing else. Read field by field: Foundation's parser also takes
    /// trailing text ("...Zjunk"), misreads some offsets and fails on some years before 1000.
    public static func parseTimestamp(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<(start + count)] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func separator(_ index: Int, _ expected: Character) -> Bool {
            index < bytes.count && Character(Unicode.Scalar(bytes[index])).uppercased() == String(expected)
        }
        guard let year = number(0, 4), separator(4, "-"), let month = number(5, 2), separator(7, "-"),
            let day = number(8, 2), separator(10, "T"), let hour = number(11, 2), separator(13, ":"),
            let minute = number(14, 2), separator(16, ":"), let second = number(17, 2),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour <= 23,
            minute <= 59, second <= 60  // 60: a leap second, read as the next second's start
        else { return nil }
        var index = 19
        var fraction = 0.0
        if separator(index, ".") {
            index += 1
            let digits = bytes[index...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            guard !digits.isEmpty, let value = Double(String(decoding: digits, as: UTF8.self)) else { return nil }
            fraction = value / pow(10, Double(digits.count))
            index += digits.count
        }
        var offset = 0
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
        let seconds = daysSinceEpoch(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60 + second
        return Date(timeIntervalSince1970: Double(seconds - offset) + fraction)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }

    private static let plainStyle = Date.ISO8601FormatStyle(timeZone: .gmt)
}
