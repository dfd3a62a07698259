import Foundation
import LoyaltyTesting
import Testing

/// Eddystone through the guest's kernel stack, in the same guest as LiveRadioTests (one suite, so one boot).
extension LiveRadioTests {
    static let namespace: [UInt8] = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99]
    static let instance: [UInt8] = [0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF]

    /// Flags, 0xFEAA in the service UUIDs, and `frame` as 0xFEAA's service data.
    static func eddystone(_ frame: [UInt8]) -> [UInt8] {
        [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, UInt8(frame.count + 3), 0x16, 0xAA, 0xFE] + frame
    }

    /// The peer advertises a UID with TLM from one address and an EID from another: the scan ranges both, the
    /// telemetry on the UID.
    @Test func scanRangesThePeersEddystoneUIDWithItsTelemetryAndItsEID() throws {
        guard let guest = guest() else { return }
        try ready(guest, extended: false)
        let uid = Self.eddystone([0x00, 0xEE] + Self.namespace + Self.instance + [0, 0])
        let tlm = Self.eddystone([0x20, 0x00, 0x0B, 0xB8, 0x15, 0x80, 0, 0, 0, 7, 0, 0, 0, 20])
        let eid = Self.eddystone([0x30, 0xEE, 0x38, 0x76, 0xA2, 0x9C, 0xB9, 0x14, 0x03, 0x0D])
        try guest.peer.advertise(uid, id: "uid", address: "C1:C1:C1:C1:C1:C2")
        try guest.peer.advertise(tlm, id: "tlm", intervalMS: 300, address: "C1:C1:C1:C1:C1:C2")
        try guest.peer.advertise(eid, id: "eid", address: "C1:C1:C1:C1:C1:C3")
        defer { try? guest.peer.stop() }
        try guest.startInBackground("exec " + shell("scan --json --snapshot-interval 0.5"), name: "scan-eddystone")
        try waitForLine(guest, "scan-eddystone", containing: "\"battery_mv\"", seconds: 30)
        try waitForLine(guest, "scan-eddystone", containing: "\"eddystone-eid\"", seconds: 10)
        _ = try guest.run("kill -TERM $(cat \(guest.resultsPath)/scan-eddystone.pid)")
        let scan = try guest.background("scan-eddystone", timeout: 30)
        let beacons = rangedBeacons(scan)
        let uids = beacons.filter { $0["kind"] as? String == "eddystone-uid" }
        #expect(!uids.isEmpty, "\(scan.stdout.suffix(600))\(scan.stderr)")
        #expect(uids.allSatisfy { $0["namespace"] as? String == "00112233445566778899" && $0["instance"] as? String == "AABBCCDDEEFF" })
        #expect(uids.contains { ($0["telemetry"] as? [String: Any])?["battery_mv"] as? Int == 3000 }, "\(uids.suffix(2))")
        #expect(beacons.contains { $0["eid"] as? String == "3876A29CB914030D" }, "\(scan.stdout.suffix(600))")
        #expect(scan.jsonLines.last?["event"] as? String == "summary")
    }

    /// `beacon advertise` with an EID key (K = 1) over raw HCI: the peer hears the spec's EID for counter 0 first
    /// (a fresh key), then a new EID each 2 s, each heard in one run, never back to an earlier one; with the
    /// legacy commands and with the extended ones (LE Set Extended Advertising Data while the set is enabled).
    @Test(arguments: [false, true])
    func beaconAdvertiseRotatesTheEIDThePeerHears(extended: Bool) throws {
        guard let guest = guest() else { return }
        try ready(guest, extended: extended)
        let key = "/tmp/eid-\(UUID().uuidString).key"
        #expect(try guest.run("printf 000102030405060708090a0b0c0d0e0f > \(key) && chmod 600 \(key)").status == 0)
        let since = try guest.peer.heard().next
        let advertised = try guest.run(
            shell("beacon advertise --eddystone-eid \(key) --eid-exponent 1 --duration 7"), timeout: 60)
        #expect(advertised.status == 0, "\(advertised.stdout)\(advertised.stderr)")
        #expect(try guest.run("test -f \(key).counter").status == 0, "the counter is kept beside the key")
        let eids = try guest.peer.heard(since: since).pdus.compactMap { pdu -> String? in
            let frame = Array(pdu.data.dropFirst(11))
            guard pdu.data.count == 21, frame.first == 0x30 else { return nil }
            return frame.dropFirst(2).map { String(format: "%02X", $0) }.joined()
        }
        var runs: [String] = []
        for eid in eids where runs.last != eid { runs.append(eid) }
        #expect(runs.first == "3876A29CB914030D", "\(runs)")
        #expect((3...5).contains(runs.count), "a new EID every 2 s for 7 s: \(runs)")
        #expect(Set(runs).count == runs.count, "an EID came back: \(runs)")
        #expect(try guest.peer.guestControllerState().advertising == false)
    }
}
