import Foundation
import JSONCoding
import LoyaltyAPI
import Testing

@testable import Beacons
@testable import LoyaltyCLI

/// Eddystone beacons in `scan --json` range lines, byte for byte: their IDs, an EID's time, telemetry.
@Suite struct EddystoneRangeLineTests {
    let uid = EddystoneUID(
        namespace: EddystoneNamespace(bytes: [0xED, 0xD1, 0xEB, 0xEA, 0xC0, 0x4E, 0x5D, 0xEF, 0xA0, 0x17])!,
        instance: [1, 2, 3, 4, 5, 6])

    func ranged(_ identity: BeaconIdentity, _ kind: BeaconKind, telemetry: EddystoneTelemetry?) -> RangedBeacon {
        RangedBeacon(
            identity: identity, kind: kind, proximity: .near, distance: 1.5, rssi: -62, lastRSSI: -62, measuredPower: -61,
            address: BluetoothAddress(wire: (1, 2, 3, 4, 5, 6)), lastSeen: 2.25, telemetry: telemetry)
    }

    func line(_ beacons: [RangedBeacon]) -> String {
        var lines = RangeLines()
        var buffer = JSONLineBuffer(capacity: 16)
        lines.write(RangingSnapshot(time: 3, beacons: beacons), to: &buffer)
        return String(decoding: buffer.bytes, as: UTF8.self)
    }

    @Test func uidWithPlainTelemetryAndEIDWithEncrypted() throws {
        let plain = TelemetryFrame(batteryMillivolts: 2950, temperatureBits: 0xFF80, advertisingCount: 7, uptimeTenths: 12345)
        let encrypted = EncryptedTelemetryFrame(encrypted: Array(1...12), salt: 0xABCD, integrityCheck: 0x0102)
        let text = line([
            ranged(BeaconIdentity(eddystoneUID: uid), .eddystoneUID, telemetry: .plain(plain)),
            ranged(BeaconIdentity(ephemeralID: EphemeralID(0x1122_3344_5566_7788)), .eddystoneEID, telemetry: .encrypted(encrypted)),
        ])
        let expected =
            #"{"event":"range","t":3.000,"beacons":[{"kind":"eddystone-uid","namespace":"EDD1EBEAC04E5DEFA017","#
            + #""instance":"010203040506","rssi":-62.0,"distance_m":1.50,"proximity":"near","telemetry":{"battery_mv":2950,"#
            + #""temperature_c":-0.50,"advertising_count":7,"uptime_s":1234.5}},{"kind":"eddystone-eid","eid":"1122334455667788","#
            + #""rssi":-62.0,"distance_m":1.50,"proximity":"near","last_seen":2.250,"telemetry":{"encrypted":"#
            + #""0102030405060708090A0B0C","salt":"ABCD","mic":"0102"}}]}"# + "\n"
        #expect(text == expected)
        #expect(try JSONSerialization.jsonObject(with: Data(text.utf8)) is [String: Any])
    }

    /// The temperature as `fixed` would write the 8.8 value to the hundredth, for every value but "not supported".
    @Test func temperatureDigitsAgreeWithTheValue() throws {
        for bits in stride(from: 0, through: 0xFFFF, by: 7) where bits != 0x8000 {
            let telemetry = TelemetryFrame(
                batteryMillivolts: 0, temperatureBits: UInt16(bits), advertisingCount: 0, uptimeTenths: 0)
            let text = line([ranged(BeaconIdentity(eddystoneUID: uid), .eddystoneUID, telemetry: .plain(telemetry))])
            let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            let beacon = (object?["beacons"] as? [[String: Any]])?.first
            let written = try #require((beacon?["telemetry"] as? [String: Any])?["temperature_c"] as? Double)
            #expect(abs(written - telemetry.temperature!) <= 0.005 + 1e-9, "\(bits)")
        }
        let none = TelemetryFrame(batteryMillivolts: 0, temperatureBits: 0x8000, advertisingCount: 0, uptimeTenths: 0)
        #expect(line([ranged(BeaconIdentity(eddystoneUID: uid), .eddystoneUID, telemetry: .plain(none))]).contains(#""temperature_c":null"#))
    }
}
