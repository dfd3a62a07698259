import Foundation
import Testing

@testable import QRCode

@Suite struct QRCodeTests {
    /// A 10-symbol code fits the smallest symbol (version 1, 21 modules) with its three finder patterns where
    /// ISO/IEC 18004 puts them: 7x7, dark ring, light ring, dark 3x3 centre.
    @Test func aRedemptionCodeIsAVersionOneSymbolWithItsFinderPatterns() throws {
        let code = try QRCode("K7M2Q9XP4H")
        #expect(code.width == 21)
        for (top, left) in [(0, 0), (0, code.width - 7), (code.width - 7, 0)] {
            for row in 0..<7 {
                for column in 0..<7 {
                    let ring = max(abs(row - 3), abs(column - 3))
                    #expect(code.isDark(row: top + row, column: left + column) == (ring != 2), "\(top),\(left) \(row),\(column)")
                }
            }
        }
        // The timing pattern between the top finders alternates, dark first.
        #expect((8..<code.width - 8).map { code.isDark(row: 6, column: $0) } == (8..<code.width - 8).map { $0 % 2 == 0 })
    }

    @Test func longerTextTakesALargerSymbolAndDifferentTextADifferentOne() throws {
        #expect(try QRCode(String(repeating: "A", count: 200)).width > 21)
        #expect(try QRCode("K7M2Q9XP4H") != (try QRCode("K7M2Q9XP4J")))
    }

    @Test func terminalLinesHaveTheQuietZoneAndTwoRowsALine() throws {
        let code = try QRCode("K7M2Q9XP4H")
        let lines = code.terminalLines()
        #expect(lines.count == (21 + 8 + 1) / 2)
        #expect(lines.allSatisfy { $0.count == 21 + 8 })
        #expect(lines[0] == String(repeating: "\u{2588}", count: 29), "the quiet zone is light")
        #expect(lines.joined().allSatisfy { " \u{2580}\u{2584}\u{2588}".contains($0) })
    }

    @Test func textThatCannotBeEncodedIsAnError() {
        #expect(throws: QRCode.Failure.self) { try QRCode("") }
        #expect(throws: QRCode.Failure.self) { try QRCode("a\u{0}b") }
        #expect(throws: QRCode.Failure.self) { try QRCode(String(repeating: "x", count: 4000)) }
    }

    @Test func textStandsBesideTheSymbol() throws {
        let code = try QRCode("K7M2Q9XP4H")
        let lines = code.terminalLines(beside: ["", "code K7M2Q9XP4H", "30% off sushi"])
        #expect(lines.count == code.terminalLines().count)
        #expect(lines[1] == code.terminalLines()[1] + "  code K7M2Q9XP4H")
        #expect(lines[3] == code.terminalLines()[3])
    }
}

/// The PNG a notification shows, read back by an independent decoder (ImageMagick's): every pixel as drawn.
@Suite struct QRCodePNGTests {
    static let convert = "/usr/bin/convert"

    @Test(arguments: [8, 12])  // 12: more image data than one stored deflate block holds
    func imageMagickReadsEveryPixel(scale: Int) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.convert) else {
            if ProcessInfo.processInfo.environment["CI"] != nil { Issue.record("ImageMagick is missing: make test-deps") }
            return
        }
        let code = try QRCode("K7M2Q9XP4H")
        let png = code.png(scale: scale)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString).png")
        try Data(png).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.convert)
        process.arguments = [file.path, "-depth", "8", "gray:-"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let pixels = [UInt8](out.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let side = (code.width + 8) * scale
        try #require(pixels.count == side * side)
        var wrong = 0
        for y in 0..<side {
            for x in 0..<side where (pixels[y * side + x] == 0) != code.isDark(row: y / scale - 4, column: x / scale - 4) {
                wrong += 1
            }
        }
        #expect(wrong == 0)
    }
}
