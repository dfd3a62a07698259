import Beacons
import Foundation
import LoyaltyAPI
import LoyaltyCLI
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

    @Test func aRangeLineIsJSONWithItsFieldsInOrder() throws {
        let uuid = UUID()
        var ranger = try Ranger()
        func heard(minor: UInt16, rssi: Int8, at time: Double) -> BeaconSighting {
            BeaconSighting(
                frame: BeaconFrame(
                    kind: .iBeacon, identity: BeaconIdentity(uuid: uuid, major: 1, minor: minor), measuredPower: -59),
                address: BluetoothAddress(wire: (1, 2, 3, 4, 5, 6)), rssi: rssi, time: time)
        }
        _ = ranger.observe(heard(minor: 65535, rssi: -80, at: 1_700_000_000))
        for step in 0..<59 {
            _ = ranger.observe(heard(minor: 7, rssi: step % 2 == 0 ? -66 : -68, at: 1_700_000_000 + Double(step) / 10))
        }
        // 7 is heard until 5.8 s, 65535 only at 0: lost at 6.
        let snapshot = ranger.snapshot(at: 1_700_000_006)
        let near = snapshot.beacons[0]
        let lost = snapshot.beacons[1]
        #expect(near.identity.minor == 7 && lost.proximity == .unknown && lost.distance == nil)
        var lines = RangeLines()
        let line = text { lines.write(snapshot, to: &$0) }
        let expected =
            "{\"event\":\"range\",\"t\":1700000006.000,\"beacons\":[{\"uuid\":\"\(uuid.uuidString)\",\"major\":1,"
            + "\"minor\":7,\"rssi\":\(String(format: "%.1f", near.rssi!)),"
            + "\"distance_m\":\(String(format: "%.2f", near.distance!)),\"proximity\":\"\(near.proximity.rawValue)\"},"
            + "{\"uuid\":\"\(uuid.uuidString)\",\"major\":1,\"minor\":65535,\"rssi\":-80.0,\"distance_m\":null,"
            + "\"proximity\":\"unknown\"}]}\n"
        #expect(line == expected)
        #expect(try JSONSerialization.jsonObject(with: Data(line.utf8)) is [String: Any])
    }
}
