import Beacons
import Foundation
import JSONCoding
import Testing

@Suite struct JSONLineBufferTests {
    func text(_ body: (inout JSONLineBuffer) -> Void) -> String {
        var buffer = JSONLineBuffer()
        body(&buffer)
        return String(decoding: buffer.bytes, as: UTF8.self)
    }

    @Test func fixedDecimalsRoundHalfAwayFromZeroAndNeverWriteMinusZero() {
        #expect(text { $0.fixed(3.14159, decimals: 2) } == "3.14")
        #expect(text { $0.fixed(-1.25, decimals: 1) } == "-1.3")
        #expect(text { $0.fixed(-0.04, decimals: 1) } == "0.0")
        #expect(text { $0.fixed(0.05, decimals: 2) } == "0.05")
        #expect(text { $0.fixed(12, decimals: 0) } == "12")
        #expect(text { $0.fixed(1_700_000_000.1234, decimals: 3) } == "1700000000.123")
        for value in [Double.nan, .infinity, -.infinity, 1e30] {
            #expect(text { $0.fixed(value, decimals: 2) } == "null")
        }
    }

    @Test func fixedDecimalsReadBackWithinHalfAUnit() {
        // Other values each run, from a seed that every failure names.
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        for _ in 0..<2000 {
            let value = Double.random(in: -1e6...1e6, using: &random)
            for decimals in 0...3 {
                let written = text { $0.fixed(value, decimals: decimals) }
                let unit = pow(10, -Double(decimals))
                #expect(abs(Double(written)! - value) <= unit / 2 + 1e-6, "seed \(seed): \(value) -> \(written)")
                #expect(written.split(separator: ".").dropFirst().first?.count ?? 0 == decimals, "seed \(seed): \(value) -> \(written)")
            }
        }
    }

    /// `fixed` as it was before it rounded without libm and wrote its digits two at a time: `rounded()` and
    /// the whole part and the fraction divided out and written apart. Every byte is held to it.
    static func referenceFixed(_ value: Double, decimals: Int) -> String {
        var scale: UInt = 1
        for _ in 0..<decimals { scale *= 10 }
        let magnitude = (abs(value) * Double(scale)).rounded()
        guard magnitude < 1e18 else { return "null" }
        let scaled = UInt(magnitude)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard decimals > 0 else { return sign + String(scaled) }
        let fraction = String(scaled % scale)
        return sign + String(scaled / scale) + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    @Test func fixedDecimalsWriteWhatTheReferenceWritesForEveryKindOfValue() {
        var values: [Double] = [
            0, -0.0, .nan, -.nan, .infinity, -.infinity, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
            .leastNormalMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .ulpOfOne, 0.5, -0.5,
            0.49999999999999994, -0.49999999999999994, 1.5, 2.5, -2.5, 2.675, 1.005, 0.045, -0.045, 1e17, 1e18, 9.5e17,
        ]
        // Around 2^52, where a Double's halves end, and 2^53, where its whole numbers do.
        for power in [52.0, 53.0] {
            let bound = pow(2, power)
            for offset in stride(from: -4.0, through: 4.0, by: 0.5) { values += [bound + offset, -(bound + offset)] }
        }
        var random = SplitMix64(seed: 26)
        for decimals in 0...6 {
            let scale = pow(10, Double(decimals))
            // Halves of the last place kept and the values beside them, from both sides of zero, and where a
            // fourth digit and a fifth begin (`shortFixed` writes up to four).
            let wholes =
                Array(-500...500) + Array(990...1010) + Array(9990...10010) + Array(-10010...(-9990))
                + (0..<1000).map { _ in Int.random(in: -1_000_000_000_000...1_000_000_000_000, using: &random) }
            for whole in wholes {
                for tie in [(Double(whole) + 0.5) / scale, Double(whole) / scale] {
                    values += [tie, tie.nextUp, tie.nextDown]
                }
            }
            // Where `null` begins: 10^18 once scaled.
            let limit = 1e18 / scale
            values += [limit, limit.nextDown, limit.nextUp, -limit.nextDown]
            // Decimal text read as a Double, as RSSI and distances come: rarely exactly what it says.
            for _ in 0..<1000 {
                let digits = Int.random(in: -10_000_000...10_000_000, using: &random)
                values.append(Double("\(digits / 1000).\(String(abs(digits % 1000)))5") ?? 0)
            }
        }
        // Every exponent: random bit patterns, and the ranges the scan writes.
        for _ in 0..<5000 {
            values.append(Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &random)))
            values.append(Double.random(in: -120...20, using: &random))
            values.append(Double.random(in: 0...200, using: &random))
            values.append(Double.random(in: 1.6e9...1.8e9, using: &random))
        }
        var mismatches: [String] = []
        for value in values {
            for decimals in 0...6 {
                let written = text { $0.fixed(value, decimals: decimals) }
                let expected = Self.referenceFixed(value, decimals: decimals)
                if written != expected { mismatches.append("\(value) to \(decimals): \(written), not \(expected)") }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(values.count * 7): \(mismatches.prefix(10))")
    }

    @Test func digitsPadAndIntegersAreWhatStringWrites() {
        var values: [UInt] = [0, 1, 9, 10, 99, 100, UInt(UInt16.max), UInt.max, UInt.max - 1, UInt(Int.max)]
        var power: UInt = 1
        for _ in 0..<19 {
            power *= 10
            values += [power - 1, power, power + 1]
        }
        var random = SplitMix64(seed: 7)
        for _ in 0..<10_000 {
            values.append(UInt.random(in: 0...UInt.max, using: &random) >> UInt.random(in: 0...63, using: &random))
        }
        for value in values {
            for width in [1, 3, 7] {
                let digits = String(value)
                let padded = String(repeating: "0", count: max(0, width - digits.count)) + digits
                #expect(text { buffer in buffer.write(maxCount: 20) { $0.digits(value, width: width) } } == padded)
            }
            let signed = Int(truncatingIfNeeded: value)
            #expect(text { $0.integer(signed) } == String(signed))
        }
    }

    @Test func integersUUIDsAndStrings() throws {
        #expect(text { $0.integer(Int.min) } == String(Int.min))
        #expect(text { $0.integer(0) } == "0")
        #expect(text { $0.integer(65535) } == "65535")
        let uuid = UUID()
        #expect(text { $0.uuid(uuid) } == "\"\(uuid.uuidString)\"")
        #expect(text { $0.string("a\"b\\c\n\r\t\u{1}é") } == "\"a\\\"b\\\\c\\n\\r\\t\\u0001é\"")
        // As JSONEncoder writes them.
        let encoded = try JSONEncoder().encode(["\u{8}\u{C}\u{1F}"])
        #expect("[" + text { $0.string("\u{8}\u{C}\u{1F}") } + "]" == String(decoding: encoded, as: UTF8.self))
    }

    /// Whatever mix of quotes, backslashes, control characters and multi-byte characters a string has, and
    /// wherever they fall, it is escaped as JSONEncoder escapes it (slashes left as they are, as the API's encoder
    /// leaves them). Other strings each run, from a seed that every failure names.
    @Test func stringsAreEscapedAsJSONEncoderEscapesThem() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        let pieces = ["a", "Z", "7", " ", "/", "\"", "\\", "\n", "\u{0}", "\u{1F}", "\u{7F}", "é", "€", "😀", "\u{2028}"]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        for _ in 0..<2000 {
            let count = Int(random.next() % 40)
            let value = (0..<count).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
            let expected = String(decoding: try encoder.encode([value]), as: UTF8.self)
            #expect("[" + text { $0.string(value) } + "]" == expected, "seed \(seed): \(value.debugDescription)")
        }
    }

    @Test func fixedDecimalsRoundHalfAwayAndKeepTheirZeros() {
        var text = ""
        text.appendFixed(-0.04, decimals: 1)
        text += " "
        text.appendFixed(2.5, decimals: 0)
        text += " "
        text.appendFixed(.nan, decimals: 2)
        #expect(text == "0.0 3 null")
        #expect(String(format1: 12.96) == "13.0")
    }
}
