import Foundation
import LoyaltyTesting
import Testing

/// `loyalty beacon advertise --secure FILE` and `loyalty beacon simulate --secure FILE`, run as a user runs them on a
/// provisioning document as `loyalty retailer beacon secure --output FILE` writes it: the HCI commands' bytes, the
/// EIDs of Google's reference tool (Tests/Fixtures/eddystone-eid-vectors.json) in both forms, the turn of the
/// window, and each kind of bad document.
@Suite struct SecureAdvertiseTests {
    let loyalty = Binary("loyalty")
    static let uuid = "8F0C1DDC-11E5-4A07-8910-425941B072F9"
    /// The vectors' first identity key and its EIDs for K = 10 at counters 65280 and 65536 (the next window).
    static let identityKey = "000102030405060708090a0b0c0d0e0f"
    static let eidOfCounter65280 = "3439C83A6564BFDF"
    static let eidOfCounter65536 = "EC31AE4CB8ABC2D8"

    struct Vector: Decodable, Sendable, CustomTestStringConvertible {
        let identity_key: String
        let exponent: UInt8
        let counter: UInt32
        let eid: String
        var testDescription: String { "\(identity_key) K=\(exponent) counter \(counter)" }
    }

    static let vectors: [Vector] = {
        struct File: Decodable { let eids: [Vector] }
        let data = try! Data(contentsOf: fixturesDirectory.appendingPathComponent("eddystone-eid-vectors.json"))
        return try! JSONDecoder().decode(File.self, from: data).eids
    }()

    func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())").path
    }

    /// A provisioning document as the service writes it, mode `mode`, whose beacon's counter was `counter` at
    /// `counterAt` (default: 10 s ago, so that its counter is 10 more now).
    func document(
        form: String = "eddystone", key: String = identityKey, exponent: String = "10", counter: UInt32 = 65270,
        counterAt: Date = Date().addingTimeInterval(-10), mode: Int = 0o600, text: String? = nil
    ) throws -> String {
        let path = temporaryPath("beacon-1-1") + ".json"
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let json =
            text
            ?? """
            {
              "counter" : \(counter),
              "counter_at" : "\(formatter.string(from: counterAt))",
              "exponent" : \(exponent),
              "form" : "\(form)",
              "identity_key" : "\(key)",
              "major" : 1,
              "minor" : 1,
              "uuid" : "\(Self.uuid)"
            }

            """
        #expect(FileManager.default.createFile(atPath: path, contents: Data(json.utf8)))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    func remove(_ paths: String...) { for path in paths { try? FileManager.default.removeItem(atPath: path) } }

    /// The packets (hex) of a `--dry-run --json`, in order.
    func dryRun(_ arguments: [String]) throws -> [String] {
        let result = try loyalty.run(["beacon", "advertise", "--dry-run", "--json"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return result.jsonLines.compactMap { $0["packet"] as? String }
    }

    /// LE Set Advertising Data (0x2008) with `data`, zero-padded to 31 bytes.
    static func setData(_ data: String) -> String {
        "082020" + String(format: "%02X", data.count / 2) + data + String(repeating: "00", count: 31 - data.count / 2)
    }

    /// Flags, 0xFEAA listed, and an Eddystone-EID frame of ranging power -18 dBm (-59 at 1 m, plus 41 dB).
    static func eidData(_ eid: String) -> String { "020106" + "0303AAFE" + "0D16AAFE30EE" + eid }

    /// Flags and an iBeacon of the retailer's UUID whose major and minor are the EID's first 4 bytes, -59 dBm at 1 m.
    static func iBeaconData(_ eid: String) -> String {
        "0201061AFF4C000215" + uuid.replacingOccurrences(of: "-", with: "") + eid.prefix(8) + "C5"
    }

    /// Parameters (ADV_NONCONN_IND, 100 ms), the data of counter 65280, enable; 256 s later, when counter 65536
    /// begins the next 2^10-second window, the data of its EID; then disable. Byte for byte, both forms.
    @Test func theCommandsCarryTheEIDOfNowAndOfTheNextWindow() throws {
        let eddystone = try document()
        let iBeacon = try document(form: "ibeacon")
        defer { remove(eddystone, iBeacon) }
        let parameters = "06200FA000A0000300000000000000000700"
        #expect(try dryRun(["--secure", eddystone, "--duration", "300"]) == [
            parameters, Self.setData(Self.eidData(Self.eidOfCounter65280)), "0A200101",
            Self.setData(Self.eidData(Self.eidOfCounter65536)), "0A200100",
        ])
        #expect(try dryRun(["--secure", iBeacon, "--duration", "300"]) == [
            parameters, Self.setData(Self.iBeaconData(Self.eidOfCounter65280)), "0A200101",
            Self.setData(Self.iBeaconData(Self.eidOfCounter65536)), "0A200100",
        ])
        // Without --duration, the start's data only; --extended, the extended commands (unpadded data).
        let extended = try dryRun(["--secure", iBeacon, "--extended"])
        #expect(extended.count == 4)
        let data = Self.iBeaconData(Self.eidOfCounter65280)
        #expect(extended.dropFirst().first == "3720" + String(format: "%02X", 4 + data.count / 2) + "000301" + "1E" + data)
    }

    /// The 2^K-second window turns on the counter's seconds: a beacon whose counter is 65530 and a half now changes
    /// its identity 5.5 s into the capture, and a replay hears the two identities in turn.
    @Test func theCaptureTurnsAtTheWindowBoundary() throws {
        for form in ["eddystone", "ibeacon"] {
            let at = Date(timeIntervalSince1970: 1_796_536_800)
            let file = try document(form: form, counter: 65530, counterAt: at.addingTimeInterval(-0.5))
            let capture = temporaryPath("store") + ".btsnoop"
            defer { remove(file, capture) }
            let written = try loyalty.run([
                "beacon", "simulate", "--secure", file, "--walk", "secure@0=1,10=1", "--at", "2026-12-06T06:00:00Z",
                "--noise-db", "0", "--write", capture,
            ])
            #expect(written.status == 0, "\(written.stderr)")
            let replay = try loyalty.run(["scan", "--replay", capture, "--json"])
            #expect(replay.status == 0, "\(replay.stderr)")
            // Each identity when it was first ranged (the old one stays in the range lines until its tracking ends).
            var heard: [(time: Double, name: String)] = []
            for line in replay.jsonLines where line["event"] as? String == "range" {
                for beacon in line["beacons"] as? [[String: Any]] ?? [] {
                    let name =
                        (beacon["eid"] as? String)
                        ?? String(format: "%04X%04X", beacon["major"] as? Int ?? -1, beacon["minor"] as? Int ?? -1)
                    if !heard.contains(where: { $0.name == name }) { heard.append((line["t"] as? Double ?? 0, name)) }
                }
            }
            let expected = [Self.eidOfCounter65280, Self.eidOfCounter65536].map { form == "ibeacon" ? String($0.prefix(8)) : $0 }
            #expect(heard.map(\.name) == expected, "\(form)")
            // Ranged about once a second: the first range line of the new identity within a second of its turn.
            let turn = at.timeIntervalSince1970 + 5.5
            #expect(heard.count == 2 && heard[0].time < turn && heard[1].time >= turn && heard[1].time < turn + 1.5, "\(heard)")
            if form == "ibeacon" {
                let uuids = Set(replay.jsonLines.flatMap { $0["beacons"] as? [[String: Any]] ?? [] }.compactMap { $0["uuid"] as? String })
                #expect(uuids == [Self.uuid], "the retailer's own UUID, for region monitoring")
            }
        }
    }

    /// Every vector of Google's tool, byte for byte: the capture of a beacon whose counter is the vector's at --at
    /// replays as the vector's EID (Eddystone), and as its first 4 bytes for major and minor (iBeacon).
    @Test(arguments: vectors.filter { $0.exponent == 10 || ($0.exponent == 0 && $0.identity_key == identityKey) })
    func theEIDsAreTheReferenceTool(vector: Vector) throws {
        for form in ["eddystone", "ibeacon"] {
            let at = Date(timeIntervalSince1970: 1_796_536_800)
            let file = try document(
                form: form, key: vector.identity_key, exponent: "\(vector.exponent)", counter: vector.counter, counterAt: at)
            let capture = temporaryPath("vector") + ".btsnoop"
            defer { remove(file, capture) }
            let written = try loyalty.run([
                "beacon", "simulate", "--secure", file, "--walk", "secure@0=1,0.5=1", "--at", "2026-12-06T06:00:00Z",
                "--write", capture,
            ])
            #expect(written.status == 0, "\(written.stderr)")
            let replay = try loyalty.run(["scan", "--replay", capture, "--json"])
            let beacons = replay.jsonLines.flatMap { $0["beacons"] as? [[String: Any]] ?? [] }
            let eid = vector.eid.uppercased()
            if form == "eddystone" {
                #expect(Set(beacons.compactMap { $0["eid"] as? String }) == [eid])
            } else {
                let major = Int(eid.prefix(4), radix: 16)
                let minor = Int(eid.dropFirst(4).prefix(4), radix: 16)
                #expect(!beacons.isEmpty && beacons.allSatisfy { $0["major"] as? Int == major && $0["minor"] as? Int == minor })
            }
        }
    }

    /// --at dates the capture: a walk recorded an hour ago carries that hour's identities and timestamps; without
    /// it, a secure walk is of now.
    @Test func atDatesTheCaptureAndItsIdentities() throws {
        let file = try document(counterAt: Date(timeIntervalSince1970: 1_796_536_800))
        let capture = temporaryPath("walk") + ".btsnoop"
        defer { remove(file, capture) }
        for (at, time) in [("2026-12-06T05:00:00Z", 1_796_533_200.0), (nil, Date().timeIntervalSince1970)] {
            let written = try loyalty.run(
                ["beacon", "simulate", "--secure", file, "--walk", "secure@0=1,1=1", "--write", capture]
                    + (at.map { ["--at", $0] } ?? []))
            #expect(written.status == 0, "\(written.stderr)")
            let replay = try loyalty.run(["scan", "--replay", capture, "--json"])
            let first = try #require(replay.jsonLines.first { $0["event"] as? String == "range" })
            #expect(abs((first["t"] as? Double ?? 0) - time) < 5, "\(first)")
        }
        // An hour before counter 65270: counter 61670, in the window of 61440 (K = 10), not the one of now.
        let written = try loyalty.run([
            "beacon", "simulate", "--secure", file, "--walk", "secure@0=1,1=1", "--at", "2026-12-06T05:00:00Z", "--write",
            capture,
        ])
        #expect(written.status == 0)
        let replay = try loyalty.run(["scan", "--replay", capture, "--json"])
        let eids = Set(replay.jsonLines.flatMap { $0["beacons"] as? [[String: Any]] ?? [] }.compactMap { $0["eid"] as? String })
        #expect(eids.count == 1 && !eids.contains(Self.eidOfCounter65280))
    }

    /// A document others may read (77, with the chmod), missing (74), not JSON, incomplete, with a key that is
    /// not 32 hex digits, a K over 15 or an unknown form (65, each saying what is wrong and how to get a good one).
    @Test func aBadDocumentIsRefusedWithWhatIsWrong() throws {
        for mode in [0o644, 0o640, 0o604] {
            let file = try document(mode: mode)
            defer { remove(file) }
            for command in [["beacon", "advertise", "--dry-run"], ["beacon", "simulate", "--walk", "secure@0=1", "--write", "/dev/null"]] {
                let result = try loyalty.run(command + ["--secure", file])
                #expect(result.status == 77, "\(command) mode \(String(mode, radix: 8))")
                #expect(result.stderr.contains("chmod 600 \(file)"), "\(result.stderr)")
                #expect(result.stdout.isEmpty)
            }
        }
        let missing = try loyalty.run(["beacon", "advertise", "--dry-run", "--secure", temporaryPath("none")])
        #expect(missing.status == 74, "\(missing.stderr)")
        let cases: [(String, String)] = [
            (try document(text: "{\"major\": 1,"), "not JSON"),
            (try document(text: "[]"), "not a JSON object"),
            (
                try document(
                    text: "{\"major\":1,\"minor\":1,\"exponent\":10,\"form\":\"eddystone\",\"uuid\":\"\(Self.uuid)\","
                        + "\"counter\":1,\"counter_at\":\"2026-12-06T06:00:00Z\"}"), "no identity_key"
            ),
            (try document(key: "000102030405060708090a0b0c0d0e"), "identity_key must be 32 hex digits"),
            (try document(key: "000102030405060708090a0b0c0d0e0g"), "identity_key must be 32 hex digits"),
            (try document(exponent: "16"), "exponent must be 0 to 15"),
            (try document(exponent: "-1"), "exponent must be 0 to 15"),
            (try document(exponent: "300"), "exponent must be 0 to 15"),
            (try document(exponent: "1.5"), "exponent must be 0 to 15"),
            (try document(form: "altbeacon"), "form"),
        ]
        for (file, message) in cases {
            defer { remove(file) }
            for command in [["beacon", "advertise", "--dry-run"], ["beacon", "simulate", "--walk", "secure@0=1", "--write", "/dev/null"]] {
                let result = try loyalty.run(command + ["--secure", file])
                #expect(result.status == 65, "\(message): \(result.stderr)")
                #expect(result.stderr.contains(message), "\(result.stderr)")
                #expect(result.stderr.contains("loyalty retailer beacon secure"), "\(result.stderr)")
            }
        }
    }

    @Test func badArgumentsAreUsageErrorsBeforeAnythingElse() throws {
        let eddystone = try document()
        let iBeacon = try document(form: "ibeacon")
        defer { remove(eddystone, iBeacon) }
        let cases: [([String], String)] = [
            (["advertise", "--secure", eddystone, "--uuid", Self.uuid, "--major", "1", "--minor", "1"], "give only one of"),
            (["advertise", "--secure", eddystone, "--eddystone-uid", "00112233445566778899:AABBCCDDEEFF"], "give only one of"),
            (["advertise", "--secure", eddystone, "--eid-exponent", "8"], "K is the provisioning document's"),
            (["advertise", "--secure", iBeacon, "--tlm-every", "4"], "broadcasts as an iBeacon"),
            (["advertise"], "--secure"),
            (["simulate", "--walk", "secure@0=1", "--write", "/dev/null"], "--secure FILE: give it"),
            (["simulate", "--secure", eddystone, "--walk", "\(Self.uuid):1:1@0=1", "--write", "/dev/null"], "--walk secure@"),
            (["simulate", "--secure", eddystone, "--walk", "secure@0=1", "--at", "yesterday", "--write", "/dev/null"],
             "--at: expected an ISO 8601 date-time"),
        ]
        for (arguments, message) in cases {
            let result = try loyalty.run(["beacon"] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        // A time before the beacon's counter began: no identity then.
        let before = try loyalty.run([
            "beacon", "simulate", "--secure", eddystone, "--walk", "secure@0=1", "--at", "2000-01-01T00:00:00Z",
            "--write", "/dev/null",
        ])
        #expect(before.status == 65 && before.stderr.contains("no time counter at 2000-01-01T00:00:00Z"), "\(before.stderr)")
    }

    /// `--write` captures the advertiser's commands and what a scanner hears: the iBeacon form of now.
    @Test func theWrittenCaptureOfTheIBeaconFormReplaysAsItsIdentityOfNow() throws {
        let iBeacon = try document(form: "ibeacon")
        let capture = temporaryPath("advertised") + ".btsnoop"
        defer { remove(iBeacon, capture) }
        let written = try loyalty.run(["beacon", "advertise", "--secure", iBeacon, "--write", capture, "--json"])
        #expect(written.status == 0, "\(written.stderr)")
        let replay = try loyalty.run(["scan", "--replay", capture, "--json"])
        let beacons = replay.jsonLines.flatMap { $0["beacons"] as? [[String: Any]] ?? [] }
        #expect(beacons.first?["major"] as? Int == 0x3439 && beacons.first?["minor"] as? Int == 0xC83A, "\(replay.stdout)")
    }
}
