import Beacons
import Foundation
import JSONCoding
import LoyaltyCLI
import Testing

@Suite struct RangeLineTests {
    func text(_ body: (inout JSONLineBuffer) -> Void) -> String {
        var buffer = JSONLineBuffer()
        body(&buffer)
        return String(decoding: buffer.bytes, as: UTF8.self)
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
