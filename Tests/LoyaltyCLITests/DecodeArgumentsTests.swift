import Foundation
import LoyaltyTesting
import Testing

/// `loyalty decode` with many arguments: an error says which argument it is about.
@Suite struct DecodeArgumentsTests {
    /// 1,000 iBeacon payloads with minors 1...1000, and the one at `bad` cut short by a byte.
    func payloads(bad: Int) -> [String] {
        (1...1000).map { minor in
            let hex = "0201061aff4c0002158f0c1ddc11e54a078910425941b072f90001" + String(format: "%04x", minor) + "c5"
            return minor == bad ? String(hex.dropLast(2)) : hex
        }
    }

    @Test(arguments: LoyaltyRun.allCases) func anErrorNamesTheArgumentByPositionAndFirstCharacters(_ run: LoyaltyRun) throws {
        let arguments = payloads(bad: 537)
        let result = try run(["decode"] + arguments)
        #expect(result.status == 65)
        #expect(result.stderr.contains("argument 537 of 1000 (\"0201061aff4c0002158f0c1d...\")"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        // Every other argument still decoded, in order.
        let minors = result.jsonLines.compactMap { $0["minor"] as? Int }
        #expect(minors == Array(1...1000).filter { $0 != 537 })
    }

    @Test(arguments: LoyaltyRun.allCases) func withJSONTheErrorIsALineInItsPlace(_ run: LoyaltyRun) throws {
        let clean = try run(["decode", "--json"] + payloads(bad: 0).prefix(3))
        #expect(clean.status == 0)
        #expect(clean.jsonLines.count == 3)

        let result = try run(["decode", "--json", "--", "zz\u{1B}[2J"] + payloads(bad: 0).prefix(2))
        #expect(result.status == 65)
        let lines = result.jsonLines
        #expect(lines.count == 3)
        #expect(lines[0]["kind"] as? String == "error")
        #expect(lines[0]["argument"] as? Int == 1)
        #expect(lines[0]["input"] as? String == "zz\u{1B}[2J")
        #expect(lines[1]["minor"] as? Int == 1)
        // The terminal never sees the escape character raw.
        #expect(!result.stderr.contains("\u{1B}"))
        #expect(result.stderr.contains("argument 1 of 3 (\"zz\\u001b[2J\")"), "\(result.stderr)")
    }
}
