import Arguments
import Foundation
import LoyaltyAPI

#if canImport(Glibc)
    import Glibc
#endif

/// A table kept current at the bottom of a terminal, under lines that stay: each draw moves the cursor
/// back up over the rows the table took, clears from there down, prints the new lines and then the
/// table again. What was printed above it is never redrawn, so it also stays in the scrollback.
final class LiveTable {
    private var table = ""
    /// The terminal rows the table took when it was drawn.
    private var rows = 0

    /// Replaces the table on screen with `table` (lines ending in "\n"), printing `line` where it began.
    func draw(_ table: String, after line: String? = nil) {
        print(erasure + (line.map { $0 + "\n" } ?? "") + table, terminator: "")
        self.table = table
        // A line longer than the terminal is wide wraps onto more rows (the width is 0 when unknown).
        let columns = Self.terminalColumns()
        rows = table.split(separator: "\n", omittingEmptySubsequences: false).dropLast().reduce(0) { total, line in
            total + (columns > 0 ? max(1, (line.count + columns - 1) / columns) : 1)
        }
    }

    /// Prints `line` above the table on screen, which moves down under it.
    func printAbove(_ line: String) { draw(table, after: line) }

    /// `printAbove` for a warning, which goes to standard error.
    func warnAbove(_ warning: String) {
        print(erasure, terminator: "")
        fflush(nil)  // The erasure reaches the terminal before the warning does.
        printError(warning)
        print(table, terminator: "")
    }

    /// Moves the cursor back up to where the table began and clears the screen from there.
    private var erasure: String { rows > 0 ? "\r\u{1B}[\(rows)A\u{1B}[J" : "" }

    private static func terminalColumns() -> Int {
        var size = winsize()
        return ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 ? Int(size.ws_col) : 0
    }
}

/// A line of the scan's event log on a terminal: `2026-01-01T10:00:00Z  entered Carnaby Street (Matey's)`.
func eventLine(at time: Double, _ text: String) -> String {
    "\(LoyaltyJSON.formatTimestamp(Date(timeIntervalSince1970: time)))  \(text)"
}

/// A warning during a scan: above its live table if it draws one, else simply on standard error.
func printWarning(_ warning: String, above table: LiveTable?) {
    if let table { table.warnAbove(warning) } else { printError(warning) }
}
