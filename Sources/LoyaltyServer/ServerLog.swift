import Foundation
import LoyaltyAPI

/// The one shape of the server's log lines: a JSON object on one line, `time`, `level` and `event` first,
/// then the event's own fields in the order given, so a line can be grepped by its start and parsed whole.
/// Written by hand: an encoder per request cost more than the 304 it logs.
public enum ServerLog {
    public enum Level: String, Sendable {
        case info, warning, error
    }

    public enum Value: Sendable {
        case string(String)
        case integer(Int)
        case number(Double)
    }

    /// The line for `event` at `time`, without its newline; fields whose value is nil are left out.
    public static func line(
        _ level: Level, _ event: String, _ fields: KeyValuePairs<String, Value?> = [:], time: Date = Date()
    ) -> String {
        var line = "{\"time\":\"\(LoyaltyJSON.formatTimestamp(time))\",\"level\":\"\(level.rawValue)\""
        line += ",\"event\":\(LoyaltyJSON.quoted(event))"
        for (key, value) in fields {
            guard let value else { continue }
            line += ",\(LoyaltyJSON.quoted(key)):"
            switch value {
            case .string(let text): line += LoyaltyJSON.quoted(text)
            case .integer(let number): line += String(number)
            case .number(let number): line += number.isFinite ? "\(number)" : "null"
            }
        }
        return line + "}"
    }

    /// Writes each line, with its newline, to standard error in one write, so lines of concurrent requests
    /// never interleave.
    public static let standardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
