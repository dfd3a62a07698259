import Foundation
import Geofencing
import JSONCoding
import LoyaltyAPI
import Testing

@testable import Beacons
@testable import LoyaltyCLI
import LoyaltyClient

/// The JSON lines of `loyalty scan --json`, byte for byte: scripts and the end-to-end tests read them.
@Suite struct ScanJSONLinesTests {
    let uuid = UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!

    func beacon(_ identity: BeaconIdentity, _ proximity: Proximity, distance: Double?, rssi: Double?) -> RangedBeacon {
        RangedBeacon(
            identity: identity, kind: .iBeacon, proximity: proximity, distance: distance, rssi: rssi, lastRSSI: -61,
            measuredPower: -59, address: BluetoothAddress(wire: (1, 2, 3, 4, 5, 6)), lastSeen: 3)
    }

    @Test func regionRangeAndSummaryLines() {
        let lines = ScanJSONLines()
        let region = BeaconIdentityConstraint(uuid: uuid, major: 1)
        #expect(
            lines.line(RegionEvent(kind: .enter, region: region, time: 1.23456))
                == #"{"event":"enter","t":1.235,"region":"8F0C1DDC-11E5-4A07-8910-425941B072F9:1"}"#)
        #expect(lines.line(RegionEvent(kind: .exit, region: region, time: 2)).hasPrefix(#"{"event":"exit","t":2.0,"#))
        let snapshot = RangingSnapshot(
            time: 3.5,
            beacons: [
                beacon(BeaconIdentity(uuid: uuid, major: 1, minor: 2), .near, distance: 1.006, rssi: -61.04),
                beacon(BeaconIdentity(uuid: uuid, major: 2, minor: 1), .unknown, distance: nil, rssi: nil),
            ])
        let expected =
            #"{"event":"range","t":3.500,"beacons":[{"uuid":"8F0C1DDC-11E5-4A07-8910-425941B072F9","major":1,"minor":2,"rssi":-61.0,"distance_m":1.01,"proximity":"near"},"#
            + #"{"uuid":"8F0C1DDC-11E5-4A07-8910-425941B072F9","major":2,"minor":1,"rssi":null,"distance_m":null,"proximity":"unknown"}]}"#
        var rangeLines = RangeLines()
        var buffer = JSONLineBuffer(capacity: 16)  // grows as it is written
        rangeLines.write(snapshot, to: &buffer)
        #expect(String(decoding: buffer.bytes, as: UTF8.self) == expected + "\n")
        buffer.clear()
        rangeLines.write(snapshot, to: &buffer)  // the beacons' openings made for the first line
        #expect(String(decoding: buffer.bytes, as: UTF8.self) == expected + "\n")
        var statistics = CaptureStatistics()
        statistics.records = 9
        statistics.advertisingReports = 7
        statistics.beaconFrames = 5
        statistics.malformedEvents = 1
        #expect(
            lines.line(statistics, held: 3, byReason: [.muted: 1, .quietHours: 2, .hourlyCap: 1])
                == #"{"event":"summary","records":9,"advertising_reports":7,"beacon_frames":5,"malformed_skipped":1,"held_back":3,"held_by":{"muted":1,"quiet_hours":2,"hourly_cap":1,"daily_cap":0}}"#
        )
    }

    @Test func rangeLinesStayTheSameWhileTheirBeaconsTakeEachOthersSlots() {
        // Far more beacons than slots, in another order each line: every beacon's text is made, kept, lost to
        // another and made again, and each line must still say what its snapshot holds.
        var random = SplitMix64(seed: 26)
        let uuids = [uuid, UUID(uuidString: "1FA25D1A-8048-0E11-8EAB-375C997B88B4")!]
        let identities = (0..<3000).map { index in
            BeaconIdentity(
                uuid: uuids[index % 2], major: UInt16.random(in: 0...UInt16.max, using: &random),
                minor: UInt16(index % 7 == 0 ? 65535 : index))
        }
        var rangeLines = RangeLines()
        var buffer = JSONLineBuffer()
        for line in 0..<20 {
            let beacons = identities.shuffled(using: &random).prefix(line % 2 == 0 ? 40 : 700).map { identity in
                beacon(
                    identity, [.immediate, .near, .far][Int.random(in: 0...2, using: &random)],
                    distance: Double.random(in: 0...40, using: &random), rssi: Double.random(in: -110...(-30), using: &random))
            }
            let snapshot = RangingSnapshot(time: 1_700_000_000 + Double(line) / 3, beacons: Array(beacons))
            let objects = beacons.map { beacon in
                "{\"uuid\":\"\(beacon.identity.uuid.uuidString)\",\"major\":\(beacon.identity.major),"
                    + "\"minor\":\(beacon.identity.minor),\"rssi\":\(fixed(beacon.rssi!, decimals: 1)),"
                    + "\"distance_m\":\(fixed(beacon.distance!, decimals: 2)),"
                    + "\"proximity\":\"\(beacon.proximity.rawValue)\"}"
            }
            let expected =
                "{\"event\":\"range\",\"t\":\(fixed(snapshot.time, decimals: 3)),"
                + "\"beacons\":[\(objects.joined(separator: ","))]}\n"
            buffer.clear()
            rangeLines.write(snapshot, to: &buffer)
            #expect(String(decoding: buffer.bytes, as: UTF8.self) == expected, "line \(line)")
        }
    }

    /// A number as `JSONLineBuffer.fixed` writes it, which JSONCodingTests hold to a reference byte for byte.
    private func fixed(_ value: Double, decimals: Int) -> String {
        var text = ""
        text.appendFixed(value, decimals: decimals)
        return text
    }
}
