import Beacons
import Foundation
import LoyaltyTesting
import Testing

/// A capture mixing iBeacon and Eddystone (UID, EID, TLM), written by `beacon simulate` and replayed by `scan`.
@Suite struct EddystoneReplayTests {
    let loyalty = Binary("loyalty")
    static let uid = "EDD1EBEAC04E5DEFA017:010203040506"
    static let eidKey = "000102030405060708090a0b0c0d0e0f"

    func simulate(_ file: String) throws {
        let result = try loyalty.run([
            "beacon", "simulate", "--walk", "8F0C1DDC-11E5-4A07-8910-425941B072F9:1:1@0=5,20=1", "--walk",
            "\(Self.uid)@0=1,20=6", "--walk", "eid:\(Self.eidKey):2@0=2,20=2", "--tlm-every", "4", "--write", file,
        ])
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func mixedCaptureReplaysDeterministicallyWithEveryFormat() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mixed-\(UUID()).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try simulate(file)
        let first = try loyalty.run(["scan", "--replay", file, "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try loyalty.run(["scan", "--replay", file, "--json"]).stdout == first.stdout)

        let beacons = first.jsonLines.filter { $0["event"] as? String == "range" }.flatMap { $0["beacons"] as? [[String: Any]] ?? [] }
        let uids = Set(beacons.compactMap { b in (b["namespace"] as? String).map { "\($0):\(b["instance"]!)" } })
        #expect(uids == [Self.uid])
        // K = 2 from counter 65280: a new EID every 4 s, 6 of them in 20 s.
        let eids = Set(beacons.compactMap { $0["eid"] as? String })
        #expect(eids.count == 6)
        let telemetry = beacons.compactMap { $0["telemetry"] as? [String: Any] }
        #expect(!telemetry.isEmpty && telemetry.allSatisfy { ($0["battery_mv"] as? Int ?? 0) <= 3000 })
        #expect(beacons.contains { $0["uuid"] as? String == "8F0C1DDC-11E5-4A07-8910-425941B072F9" })
        let regions = Set(first.jsonLines.filter { $0["event"] as? String == "enter" }.compactMap { $0["region"] as? String })
        #expect(regions == ["8F0C1DDC-11E5-4A07-8910-425941B072F9", "EDD1EBEAC04E5DEFA017"])

        // An independent parser over the capture's payloads finds the same Eddystone identities.
        let python = Binary(at: "python3")
        guard try python.run(["-c", "import beacontools"]).status == 0 else {
            if ProcessInfo.processInfo.environment["CI"] != nil { Issue.record("beacontools is missing: make test-deps installs it") }
            return
        }
        let capture = try AdvertisingCapture(path: file)
        var payloads: [String] = []
        while let (report, _) = try capture.nextReport() { payloads.append(Array(report.data).hexText()) }
        let list = FileManager.default.temporaryDirectory.appendingPathComponent("payloads-\(UUID()).hex")
        try payloads.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: list) }
        let script = """
            import sys
            from beacontools import parse_packet
            from beacontools.packet_types import EddystoneUIDFrame, EddystoneEIDFrame
            for line in open(sys.argv[1]):
                p = parse_packet(bytes.fromhex(line.strip()))
                if isinstance(p, EddystoneUIDFrame): print("uid", (p.namespace + ":" + p.instance).upper())
                elif isinstance(p, EddystoneEIDFrame): print("eid", p.eid.hex().upper())
            """
        let reference = try python.run(["-c", script, list.path], timeout: 120)
        #expect(reference.status == 0, "\(reference.stderr)")
        let found = reference.stdout.split(separator: "\n").map { $0.split(separator: " ") }
        #expect(Set(found.filter { $0[0] == "uid" }.map { String($0[1]) }) == uids)
        #expect(Set(found.filter { $0[0] == "eid" }.map { String($0[1]) }) == eids)
    }
}
