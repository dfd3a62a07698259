import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Single keys from the terminal on standard input, without echo or Enter. `restore` puts the terminal
/// back as it was; a second signal, which ends the process at once, does so too.
public final class TerminalKeys: Sendable {
    private let original: termios
    private let interruption: Interruption

    /// Nil when standard input is not a terminal.
    public init?(interruption: Interruption) {
        var original = termios()
        guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &original) == 0 else { return nil }
        self.original = original
        self.interruption = interruption
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        interruption.restores { [original] in Self.set(original) }
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
    }

    /// A key pressed since the last call, if any.
    public func poll() -> UInt8? {
        var byte: UInt8 = 0
        return read(STDIN_FILENO, &byte, 1) == 1 ? byte : nil
    }

    /// Blocks until a key is pressed; nil when a signal asks the command to end or the terminal is gone.
    public func waitForKey() -> UInt8? {
        while interruption.waitForInput(STDIN_FILENO) {
            var byte: UInt8 = 0
            switch read(STDIN_FILENO, &byte, 1) {
            case 1: return byte
            case 0: return nil  // readable with nothing to read: hung up
            default: if errno != EINTR && errno != EAGAIN { return nil }
            }
        }
        return nil
    }

    public func restore() { Self.set(original) }

    private static func set(_ settings: termios) {
        var settings = settings
        tcsetattr(STDIN_FILENO, TCSANOW, &settings)
    }
}

/// A table kept current at the bottom of a terminal, under lines that stay: each draw moves the cursor
/// back up over the rows the table took, clears from there down, prints the new lines and then the
/// table again. What was printed above it is never redrawn, so it also stays in the scrollback.
public struct LiveTable: Sendable {
    /// The table on screen (lines ending in "\n").
    public private(set) var table = ""
    /// The terminal rows the table took when it was drawn.
    private var rows = 0

    public init() {}

    /// What replaces the table on screen with `table`, printing `line` where it began, on a terminal
    /// `columns` wide (0: unknown).
    public mutating func draw(_ table: String, after line: String? = nil, columns: Int) -> String {
        let text = erasure + (line.map { $0 + "\n" } ?? "") + table
        self.table = table
        // A line longer than the terminal is wide wraps onto more rows.
        rows = table.split(separator: "\n", omittingEmptySubsequences: false).dropLast().reduce(0) { total, line in
            total + (columns > 0 ? max(1, (line.count + columns - 1) / columns) : 1)
        }
        return text
    }

    /// Moves the cursor back up to where the table began and clears the screen from there.
    public var erasure: String { rows > 0 ? "\r\u{1B}[\(rows)A\u{1B}[J" : "" }

    /// How wide the terminal on standard output is (0: unknown).
    public static var columns: Int {
        var size = winsize()
        return ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 ? Int(size.ws_col) : 0
    }
}
