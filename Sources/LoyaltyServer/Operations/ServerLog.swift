import Foundation
import JSONCoding
import LoyaltyAPI
import Postgres
import SystemCalls

/// The one shape of the server's log lines: a JSON object on one line, `time`, `level` and `event` first,
/// then the event's own fields in the order given, so a line can be grepped by its start and parsed whole.
/// Not an encoder: one per request cost more than the 304 it logs.
public enum ServerLog {
    public enum Level: String, Sendable {
        case info, warning, error
    }

    /// The line for `event` at `time`, without its newline; fields whose value is nil are left out.
    public static func line(
        _ level: Level, _ event: String, _ fields: KeyValuePairs<String, JSONValue?> = [:], time: Date = Date()
    ) -> String {
        JSONValue.objectText(
            ["time": .string(LoyaltyJSON.formatTimestamp(time)), "level": .string(level.rawValue), "event": .string(event)],
            fields)
    }

    /// Writes each line, with its newline, to standard error in one write, so lines of concurrent requests
    /// never interleave.
    public static let standardError = writer(to: STDERR_FILENO)

    /// Writes each line, with its newline, to `descriptor` in one write(2).
    public static func writer(to descriptor: Int32) -> @Sendable (String) -> Void {
        { line in
            var text = line + "\n"
            text.withUTF8 { try? writeAll(UnsafeRawBufferPointer($0), to: descriptor) }
        }
    }

    /// A change in where reads go: `standby_reads` at info when a standby serves them, at warning when they fall
    /// back to the primary, saying why.
    public static func line(standbyEvent event: StandbyReads.Event) -> String {
        switch event {
        case .standbyInUse(let server):
            line(.info, "standby_reads", ["target": .string("standby"), "server": .string(server)])
        case .fallingBack(let reason, let server, let detail):
            line(
                .warning, "standby_reads",
                [
                    "target": .string("primary"), "reason": .string(reason.rawValue),
                    "server": server.map { .string($0) }, "detail": .string(detail),
                ])
        }
    }
}
