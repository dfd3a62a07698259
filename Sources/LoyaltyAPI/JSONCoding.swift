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

    /// Accepts RFC 3339 date-times with or without a fraction, in UTC or with an offset, and nothing else:
    /// Foundation's parser alone also takes trailing text ("...Zjunk") and reads odd offsets.
    public static func parseTimestamp(_ text: String) -> Date? {
        guard isRFC3339(Array(text.utf8)) else { return nil }
        let text = text.uppercased()
        return (try? fractionalStyle.parse(text)) ?? (try? plainStyle.parse(text))
    }

    /// `dddd-dd-ddTdd:dd:dd`, an optional `.d+`, then `Z` or `+dd:dd`/`-dd:dd` (T and Z in either case).
    private static func isRFC3339(_ bytes: [UInt8]) -> Bool {
        func matches(_ pattern: String, at start: Int) -> Bool {
            let pattern = Array(pattern.utf8)
            guard start + pattern.count <= bytes.count else { return false }
            return zip(pattern, bytes[start...]).allSatisfy { expected, byte in
                switch expected {
                case UInt8(ascii: "d"): (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                case UInt8(ascii: "T"), UInt8(ascii: "Z"): byte == expected || byte == expected + 32
                default: byte == expected
                }
            }
        }
        guard matches("dddd-dd-ddTdd:dd:dd", at: 0) else { return false }
        var index = 19
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let digits = bytes[index...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.count
            guard digits > 0 else { return false }
            index += digits
        }
        let rest = bytes.count - index
        return (rest == 1 && matches("Z", at: index))
            || (rest == 6 && (matches("+dd:dd", at: index) || matches("-dd:dd", at: index)))
    }

    private static let plainStyle = Date.ISO8601FormatStyle(timeZone: .gmt)
    private static let fractionalStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
}
