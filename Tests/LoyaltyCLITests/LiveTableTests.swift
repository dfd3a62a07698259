import Testing

@testable import LoyaltyCLI
import LoyaltyClient

/// The live table counts the terminal's cells, not characters, and fits the window it is drawn in.
@Suite struct LiveTableTests {
    /// East Asian wide characters and emoji take two cells, combining marks none (glibc's wcwidth).
    @Test func wideCharactersTakeTwoCells() {
        #expect(LiveTable.cells("寿") == 2)
        #expect(LiveTable.cells("🍣") == 2)
        #expect(LiveTable.cells("é") == 1)
        #expect(LiveTable.cells("\u{301}") == 0)
        #expect(LiveTable.cells("a") == 1)
    }

    /// "OFFER: " and thirty CJK characters are 67 cells: two rows of a 40-column terminal (37 characters
    /// would be one), so the next draw goes back up three rows over the table.
    @Test func aWideTitleWrapsOntoTheRowsItTakes() {
        var table = LiveTable()
        let title = String(repeating: "寿", count: 30)
        _ = table.draw("BEACON\nOFFER: \(title)\n", columns: 40)
        #expect(table.erasure == "\r\u{1B}[3A\u{1B}[J")
        // A wide character that does not fit in the last column starts the next row.
        #expect(LiveTable.rows(of: String(repeating: "a", count: 39) + "寿", columns: 40) == 2)
        #expect(LiveTable.rows(of: String(repeating: "寿", count: 20), columns: 40) == 1)
        #expect(LiveTable.rows(of: "", columns: 40) == 1)
    }

    /// A table taller than the window loses its farthest beacons, counted in one line, and keeps its
    /// header and the offer under it: the cursor can go back up over every row it drew.
    @Test func aTableTallerThanTheWindowIsCutToFit() {
        var table = LiveTable()
        let beacons = (1...10).map { "beacon \($0)" }
        let screen = (["BEACON"] + beacons + ["", "OFFER: sushi"]).joined(separator: "\n") + "\n"
        let drawn = table.draw(screen, columns: 80, windowRows: 8)
        #expect(
            drawn == "BEACON\nbeacon 1\nbeacon 2\nbeacon 3\n(7 more lines: the window is too short)\n\nOFFER: sushi\n")
        #expect(table.erasure == "\r\u{1B}[7A\u{1B}[J")
        #expect(table.table == drawn)
        // A window too short for anything but the count; an unknown height cuts nothing.
        #expect(table.draw(screen, columns: 80, windowRows: 2).hasSuffix("(13 more lines: the window is too short)\n"))
        #expect(table.erasure == "\r\u{1B}[1A\u{1B}[J")
        #expect(table.draw(screen, columns: 80).hasSuffix(screen))
        #expect(table.erasure == "\r\u{1B}[13A\u{1B}[J")
    }
}
