/// What a terminal shows after the bytes a program wrote to it, cell by cell with the colours each cell was
/// written in: as much of a VT100 as the scan uses (carriage return, line feed, CSI n A cursor up, CSI H home,
/// CSI J and 2J erase below and all, CSI K erase to the end of the line, CSI m colours). A terminal `columns`
/// wide (0: unlimited) wraps a line at its right margin as xterm does (once a character follows the last
/// column) and counts each wrap, so a test sees whether anything was wider than the window. It is as tall as
/// it needs to be, so nothing scrolls out of reach.
struct TerminalScreen {
    struct Cell {
        var scalar: Unicode.Scalar
        /// The SGR parameters in effect when it was written ("" for none: the terminal's default).
        var colour: String
    }

    private(set) var rows: [[Cell]] = [[]]
    /// How many times a line went past the right margin.
    private(set) var wraps = 0

    init(_ output: String, columns: Int = 0) {
        var row = 0
        var column = 0
        var colour = ""
        var scalars = output.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            switch scalar {
            case "\r": column = 0
            case "\n":
                row += 1
                if rows.count == row { rows.append([]) }
            case "\u{1B}":
                guard scalars.next() == "[" else { continue }
                var parameters = ""
                var final = scalars.next()
                while let byte = final, ("0"..."?").contains(byte) {
                    parameters.unicodeScalars.append(byte)
                    final = scalars.next()
                }
                switch final {
                case "A": row = max(0, row - (Int(parameters) ?? 1))
                case "H": (row, column) = (0, 0)
                case "J" where parameters == "2": rows = rows.map { _ in [] }
                case "J":
                    rows[row].removeSubrange(min(column, rows[row].count)...)
                    rows.removeSubrange((row + 1)...)
                case "K": rows[row].removeSubrange(min(column, rows[row].count)...)
                case "m": colour = parameters == "0" ? "" : parameters
                default: break
                }
            default:
                if columns > 0, column == columns {
                    wraps += 1
                    (row, column) = (row + 1, 0)
                    if rows.count == row { rows.append([]) }
                }
                while rows[row].count < column { rows[row].append(Cell(scalar: " ", colour: "")) }
                let cell = Cell(scalar: scalar, colour: colour)
                if column < rows[row].count { rows[row][column] = cell } else { rows[row].append(cell) }
                column += 1
            }
        }
    }

    /// The text of each row.
    var lines: [String] { rows.map { String(String.UnicodeScalarView($0.map(\.scalar))) } }

    /// The cells of the last row holding `text`.
    func row(holding text: String) -> [Cell]? {
        lines.lastIndex { $0.contains(text) }.map { rows[$0] }
    }
}
