import Foundation
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

/// A table kept current at the bottom of a terminal, under lines that stay: each draw moves the cursor
/// back up over the rows the table took, clears from there down, prints the new lines and then the
/// table again. What was printed above it is never redrawn, so it also stays in the scrollback.
///
/// Rows are counted in the terminal's cells (a CJK character or an emoji takes two), and a table taller
/// than the window is cut to fit, since the cursor cannot go back above the window's top row.
public struct LiveTable: Sendable {
    /// The table on screen (lines ending in "\n"), as cut to fit.
    public private(set) var table = ""
    /// The terminal rows the table took when it was drawn.
    private var rows = 0

    public init() {}

    /// What replaces the table on screen with `table`, printing `line` where it began, on a terminal
    /// `columns` wide and `windowRows` tall (0: unknown). A table taller than the window loses the last
    /// lines of its first paragraph (the farthest beacons; never its header), then lines from its end, and
    /// says how many in their place.
    public mutating func draw(_ table: String, after line: String? = nil, columns: Int, windowRows: Int = 0)
        -> String
    {
        let lines = table.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        // The row under the table holds the cursor.
        let fitted = Self.fitted(Array(lines), columns: columns, rows: windowRows - 1)
        let text = erasure + (line.map { $0 + "\n" } ?? "") + fitted.map { $0 + "\n" }.joined()
        self.table = fitted.map { $0 + "\n" }.joined()
        rows = fitted.reduce(0) { $0 + Self.rows(of: $1, columns: columns) }
        return text
    }

    /// Forgets the table on screen: the next draw starts at the cursor (the shell wrote under the table
    /// while the command was stopped).
    public mutating func startAfresh() { rows = 0 }

    /// Moves the cursor back up to where the table began and clears the screen from there.
    public var erasure: String { rows > 0 ? "\r\u{1B}[\(rows)A\u{1B}[J" : "" }

    /// The size of the terminal on standard output (0: unknown).
    public static var windowSize: (columns: Int, rows: Int) {
        var size = winsize()
        return ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 ? (Int(size.ws_col), Int(size.ws_row)) : (0, 0)
    }

    /// The terminal rows `line` takes on a terminal `columns` wide (0: unknown): a line wider than the
    /// terminal wraps, and a wide character that does not fit in the last column goes to the next row.
    /// Colours take no room.
    static func rows(of line: some StringProtocol, columns: Int) -> Int {
        guard columns > 0 else { return 1 }
        var rows = 1
        var column = 0
        for width in printedCells(line) {
            if column + width > columns {
                rows += 1
                column = 0
            }
            column += width
        }
        return rows
    }

    /// The cells each printed scalar of `line` takes, in order; the scan's colours (CSI sequences: ESC [,
    /// parameters, a final byte from @ to ~) take none.
    static func printedCells(_ line: some StringProtocol) -> [Int] {
        var widths: [Int] = []
        var scalars = line.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard scalar == "\u{1B}" else {
                widths.append(cells(scalar))
                continue
            }
            guard scalars.next() == "[" else { continue }
            while let byte = scalars.next(), !("@"..."~").contains(byte) {}
        }
        return widths
    }

    /// The cells `scalar` takes: glibc's wcwidth in a UTF-8 locale (set for this thread only while it asks);
    /// nothing for what it calls unprintable.
    static func cells(_ scalar: Unicode.Scalar) -> Int {
        if scalar.isASCII { return scalar.value >= 0x20 && scalar.value != 0x7F ? 1 : 0 }
        guard let utf8 = utf8Locale, let wcwidth else { return 1 }
        let previous = uselocale(utf8)
        defer { uselocale(previous) }
        return max(0, Int(wcwidth(wchar_t(bitPattern: scalar.value))))
    }

    /// Made once; never freed, like the process's own locales.
    nonisolated(unsafe) private static let utf8Locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", nil)
    /// Glibc declares wcwidth only for X/Open, which Swift's Glibc module is not built for.
    private static let wcwidth = dlsym(nil, "wcwidth").map {
        unsafeBitCast($0, to: (@convention(c) (wchar_t) -> Int32).self)
    }

    /// `lines` cut to fit in `rows` terminal rows (0 or less: no limit), with a line saying how many went.
    static func fitted(_ lines: [Substring], columns: Int, rows limit: Int) -> [String] {
        let heights = lines.map { rows(of: $0, columns: columns) }
        var total = heights.reduce(0, +)
        guard limit > 0, total > limit else { return lines.map(String.init) }
        let paragraphEnd = lines.firstIndex(of: "") ?? lines.count
        let order = (1..<max(1, paragraphEnd)).reversed() + (paragraphEnd..<lines.count).reversed() + [0]
        var leftOut = IndexSet()
        func fits() -> Bool { total + (leftOut.isEmpty ? 0 : rows(of: note(leftOut.count), columns: columns)) <= limit }
        for index in order where !fits() {
            leftOut.insert(index)
            total -= heights[index]
        }
        var kept = lines.indices.filter { !leftOut.contains($0) }.map { String(lines[$0]) }
        let notePlace = lines.indices.filter { $0 < leftOut.first! && !leftOut.contains($0) }.count
        kept.insert(note(leftOut.count), at: notePlace)
        return kept
    }

    private static func note(_ count: Int) -> String {
        "(\(count) more line\(count == 1 ? "" : "s"): the window is too short)"
    }
}
