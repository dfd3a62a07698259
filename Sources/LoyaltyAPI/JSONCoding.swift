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

    /// `2026-01-31T09:00:00Z`, or `2026-01-31T09:00:00.250Z` when the date has a fraction of a second
    /// (milliseconds, truncated).
    public static func formatTimestamp(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        let wholeSeconds = seconds.rounded(.down) == seconds
        // A catalog holds hundreds of thousands of dates: they are written by hand in `handFormattedRange`,
        // the rest (Julian calendar dates, the far future, NaN) by the format style.
        guard handFormattedRange.contains(seconds) else {
            return wholeSeconds ? date.formatted(plainStyle) : date.formatted(fractionalStyle)
        }
        // Truncated, except that float noise within 10 µs under a millisecond does not lose it: a parsed
        // `.773` is 0.772999... seconds.
        let scaled = seconds * 1000
        let milliseconds = Int64(scaled.rounded() - scaled < 0.01 ? scaled.rounded() : scaled.rounded(.down))
        let (days, millisecondOfDay) = floorDivision(milliseconds, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        var text = [UInt8]()
        text.reserveCapacity(24)
        func append(_ value: Int64, width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        let secondOfDay = millisecondOfDay / 1000
        append(year, width: 4)
        text.append(UInt8(ascii: "-"))
        append(month, width: 2)
        text.append(UInt8(ascii: "-"))
        append(day, width: 2)
        text.append(UInt8(ascii: "T"))
        append(secondOfDay / 3600, width: 2)
        text.append(UInt8(ascii: ":"))
        append(secondOfDay / 60 % 60, width: 2)
        text.append(UInt8(ascii: ":"))
        append(secondOfDay % 60, width: 2)
        if !wholeSeconds {
            text.append(UInt8(ascii: "."))
            append(millisecondOfDay % 1000, width: 3)
        }
        text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }

    /// Accepts RFC 3339 date-times with or without a fraction, in UTC or with an offset.
    public static func parseTimestamp(_ text: String) -> Date? {
        if let date = parseUTCTimestamp(text) { return date }
        return (try? fractionalStyle.parse(text)) ?? (try? plainStyle.parse(text))
    }

    /// The shape this API writes, `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, parsed by hand (a full catalog holds
    /// hundreds of thousands of dates), millisecond fractions and Gregorian years only; nil for anything else,
    /// which the format styles then judge.
    private static func parseUTCTimestamp(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            guard bytes.count >= 20, bytes[bytes.count - 1] == UInt8(ascii: "Z") else { return nil }
            func number(_ start: Int, _ count: Int) -> Int64? {
                var value: Int64 = 0
                for index in start..<start + count {
                    let digit = bytes[index] &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int64(digit)
                }
                return value
            }
            let separators =
                [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":")] as [(Int, Unicode.Scalar)]
            guard separators.allSatisfy({ bytes[$0.0] == UInt8(ascii: $0.1) }),
                let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
                let hour = number(11, 2),
                let minute = number(14, 2), let second = number(17, 2),
                (1583...2254).contains(year), (1...12).contains(month), day >= 1,
                day <= daysInMonth(month, year: year), hour < 24, minute < 60,
                second < 60
            else { return nil }
            var milliseconds: Int64 = 0
            if bytes.count > 20 {
                let digits = bytes.count - 21
                guard bytes[19] == UInt8(ascii: "."), (1...3).contains(digits),
                    let value = number(20, digits)
                else {
                    return nil
                }
                milliseconds = value * [100, 10, 1][digits - 1]
            } else if bytes[19] != UInt8(ascii: "Z") {
                return nil
            }
            let whole = days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
            return Date(timeIntervalSince1970: Double(whole * 1000 + milliseconds) / 1000)
        }
    }

    /// From 1583-01-01 (Foundation's format styles use the Julian calendar before the Gregorian reform) to
    /// 2255-01-01 (far enough to hold every realistic date; the Double's noise stays under a microsecond).
    private static let handFormattedRange: Range<Double> = -12_212_553_600..<8_961_379_200

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    private static func daysInMonth(_ month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Proleptic Gregorian calendar conversions (Howard Hinnant's days_from_civil and civil_from_days).
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static let plainStyle = Date.ISO8601FormatStyle(timeZone: .gmt)
    private static let fractionalStyle = Date.ISO8601FormatStyle(
        includingFractionalSeconds: true, timeZone: .gmt)
}
