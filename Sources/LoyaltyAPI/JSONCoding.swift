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
    public static func formatTimestamp(_ date: Date) -> String {
        let wholeSeconds = date.timeIntervalSince1970.rounded(.down) == date.timeIntervalSince1970
        return wholeSeconds
            ? date.formatted(plainStyle) : date.formatted(fractionalStyle)
    }

    /// Accepts RFC 3339 date-times with or without a fraction, in UTC or with an offset.
    public static func parseTimestamp(_ text: String) -> Date? {
        (try? fractionalStyle.parse(text)) ?? (try? plainStyle.parse(text))
    }

    private static let plainStyle = Date.ISO8601FormatStyle(timeZone: .gmt)
    private static let fractionalStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
}
