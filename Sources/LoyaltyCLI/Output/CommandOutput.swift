import Foundation
import JSONCoding
import LoyaltyAPI
import Synchronization
import SystemCalls

#if canImport(Glibc)
    import Glibc
#endif

/// Where `loyalty` writes: the process's standard output and error, or memory, so that tests run commands
/// in process and read what they said. Bound for a run by `LoyaltyCommand.run`.
///
/// Standard output is buffered here, not in stdio: what is written waits in `pending` and goes out in large
/// writes (a replay's tens of megabytes of JSON lines in a few hundred), at once on a terminal, whenever
/// `flush` asks, and before anything goes to standard error, so that a reader of both sees them in order.
public final class OutputSink: Sendable {
    /// Whether writes go to `captured` rather than the process's streams.
    private let isCapturing: Bool
    private let pending = Mutex(JSONLineBuffer(capacity: OutputSink.writeSize + (1 << 12)))
    private let captured = Mutex<(output: [UInt8], error: [UInt8])>(([], []))
    /// Whether standard output is a terminal: only there does a scan draw its live table and take keys,
    /// and a code come with its QR symbol.
    public let isTerminal: Bool
    /// The keys a scan on this terminal reads, when they are not the process's standard input.
    let keys: (any ShopperKeys)?

    /// What collects in `pending` before it is written.
    private static let writeSize = 1 << 16

    /// The process's standard output and error.
    public static let standard = OutputSink(isCapturing: false, isTerminal: isatty(STDOUT_FILENO) == 1, keys: nil)

    /// Memory, as a pipe: never a terminal.
    public static func capturing() -> OutputSink { OutputSink(isCapturing: true, isTerminal: false, keys: nil) }

    /// Memory as a terminal whose shopper presses `keys`: a scan draws its table into it and reads them.
    public static func capturingTerminal(keys: any ShopperKeys) -> OutputSink {
        OutputSink(isCapturing: true, isTerminal: true, keys: keys)
    }

    private init(isCapturing: Bool, isTerminal: Bool, keys: (any ShopperKeys)?) {
        self.isCapturing = isCapturing
        self.isTerminal = isTerminal
        self.keys = keys
    }

    /// What was written to standard output and to standard error, when capturing.
    public var output: String {
        flush()
        return String(decoding: captured.withLock { $0.output }, as: UTF8.self)
    }
    public var error: String { String(decoding: captured.withLock { $0.error }, as: UTF8.self) }

    /// Text as it is.
    func write(_ text: String) {
        append { $0.rawText(text) }
    }

    /// Bytes written at once, after what waits before them (an offer's line, which a kill must not lose).
    func write(bytes: [UInt8]) {
        pending.withLock { pending in
            writePending(&pending)
            if isCapturing {
                captured.withLock { $0.output += bytes }
            } else {
                writeAll(STDOUT_FILENO, bytes)
            }
        }
    }

    /// What `body` writes into the buffer of standard output (a scan's range lines, made in place).
    func append(_ body: (inout JSONLineBuffer) -> Void) {
        pending.withLock { pending in
            body(&pending)
            if isTerminal || pending.count >= Self.writeSize { writePending(&pending) }
        }
    }

    /// To standard error, unbuffered, after what standard output holds.
    func writeError(_ text: String) {
        flush()
        guard isCapturing else { return writeAll(STDERR_FILENO, Array(text.utf8)) }
        captured.withLock { $0.error += Array(text.utf8) }
    }

    /// What was written reaches a reader at the other end of a pipe now.
    func flush() {
        pending.withLock { writePending(&$0) }
    }

    private func writePending(_ pending: inout JSONLineBuffer) {
        guard pending.count > 0 else { return }
        if isCapturing {
            captured.withLock { $0.output += pending.bytes }
        } else {
            pending.withBytes { try? SystemCalls.writeAll($0, to: STDOUT_FILENO) }
        }
        pending.clear()
    }

    private func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) {
        try? SystemCalls.writeAll(bytes, to: descriptor)
    }
}

/// What a command prints, through one sink: text, or JSON lines with --json, chosen once for the command
/// (a pipe gets the same as a terminal; only what a terminal alone can show, such as the live table, keys,
/// progress and QR symbols, depends on `isTerminal`).
public struct CommandOutput: Sendable {
    public enum Format: Sendable { case text, json }
    public let format: Format
    let sink: OutputSink

    init(_ sink: OutputSink, json: Bool) {
        self.sink = sink
        format = json ? .json : .text
    }

    public var isJSON: Bool { format == .json }
    public var isTerminal: Bool { sink.isTerminal }

    /// `text` or `json`, whichever the format is; only that one is made.
    func emit(text: @autoclosure () throws -> String, json: @autoclosure () throws -> String) rethrows {
        line(isJSON ? try json() : try text())
    }

    /// `text`, or every JSON line of `jsonLines` (none may be none).
    func emit(text: @autoclosure () throws -> String, jsonLines: @autoclosure () throws -> [String]) rethrows {
        guard isJSON else { return line(try text()) }
        try jsonLines().forEach(line)
    }

    /// A line whatever the format, ending with a newline.
    func line(_ text: String) {
        sink.write(text.hasSuffix("\n") ? text : text + "\n")
    }

    /// Text as it is, no newline added (a live table's redraw).
    func write(_ text: String) { sink.write(text) }

    func write(bytes: [UInt8]) { sink.write(bytes: bytes) }

    /// What `body` writes in place into standard output's buffer.
    func append(_ body: (inout JSONLineBuffer) -> Void) { sink.append(body) }

    /// To standard error; `newline: false` for a progress line that rewrites itself.
    func error(_ text: String, newline: Bool = true) {
        sink.writeError(!newline || text.hasSuffix("\n") ? text : text + "\n")
    }

    func flush() { sink.flush() }
}
