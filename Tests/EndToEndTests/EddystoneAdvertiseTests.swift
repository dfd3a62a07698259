import Foundation
import LoyaltyTesting
import Testing

/// `loyalty beacon advertise` as an Eddystone beacon, run as a user runs it: the advertising data of its dry run
/// decodes back, through `loyalty decode`, to the UID, URL, EID and TLM asked for, and its capture replays to them.
@Suite struct EddystoneAdvertiseTests {
    let loyalty = Binary("loyalty")
    static let uid = "00112233445566778899:AABBCCDDEEFF"
    /// The EID vectors' first identity key (Tests/Fixtures/eddystone-eid-vectors.json) and its EIDs for K = 10.
    static let identityKey = "000102030405060708090a0b0c0d0e0f"
    static let eidOfCounter0 = "DF8E76BBFEC4EFC5"
    static let eidOfCounter65280 = "3439C83A6564BFDF"
    static let eidOfCounter65536 = "EC31AE4CB8ABC2D8"

    func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())").path
    }

    /// A key file of `mode` holding the vectors' key, and its counter file when `counter` is given (saved now).
    func keyFile(mode: Int = 0o600, counter: UInt32? = nil) throws -> String {
        let path = temporaryPath("eid-key")
        #expect(FileManager.default.createFile(atPath: path, contents: Data((Self.identityKey + "\n").utf8)))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        if let counter {
            let text = "\(counter) \(Date().timeIntervalSince1970)\n"
            #expect(FileManager.default.createFile(atPath: path + ".counter", contents: Data(text.utf8)))
        }
        return path
    }

    func remove(_ key: String) {
        try? FileManager.default.removeItem(atPath: key)
        try? FileManager.default.removeItem(atPath: key + ".counter")
    }

    /// The Eddystone frames `loyalty decode` finds in each LE Set Advertising Data of a `--dry-run --json`.
    func advertisedFrames(_ arguments: [String]) throws -> [[String: Any]] {
        let result = try loyalty.run(["beacon", "advertise", "--dry-run", "--json"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        let data = result.jsonLines.filter { $0["opcode"] as? String == "0x2008" }.map { line -> String in
            // Opcode (2 bytes), parameter length, Advertising_Data_Length, then the data, zero-padded to 31.
            let packet = Array((line["packet"] as? String ?? "").utf8)
            let length = Int(String(decoding: packet[6..<8], as: UTF8.self), radix: 16)!
            return String(decoding: packet[8..<(8 + 2 * length)], as: UTF8.self)
        }
        let decoded = try loyalty.run(["decode", "--json"] + data)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        return decoded.jsonLines
    }

    @Test func uidAndURLDecodeBackToWhatWasAsked() throws {
        let uid = try advertisedFrames(["--eddystone-uid", Self.uid, "--measured-power", "-61"])
        #expect(uid.count == 1)
        #expect(uid.first?["kind"] as? String == "eddystone-uid")
        #expect(uid.first?["namespace"] as? String == "00112233445566778899")
        #expect(uid.first?["instance"] as? String == "AABBCCDDEEFF")
        #expect(uid.first?["ranging_power"] as? Int == -20)  // -61 dBm at 1 m, plus the 41 dB of the first metre

        for url in ["https://www.example.com/shop", "http://matey.info/sushi?x=1", "https://goo.gl/S6zT6P"] {
            let frames = try advertisedFrames(["--eddystone-url", url])
            #expect(frames.map { $0["kind"] as? String } == ["eddystone-url"])
            #expect(frames.first?["url"] as? String == url)
        }
    }

    @Test func tlmTakesEveryNthIntervalWithWhatWasAsked() throws {
        let frames = try advertisedFrames([
            "--eddystone-uid", Self.uid, "--tlm-every", "3", "--battery-mv", "2950", "--temperature", "21.5",
            "--interval-ms", "100", "--duration", "0.65",
        ])
        // UID at 0 s, TLM at 0.2 s, UID at 0.3 s, TLM at 0.5 s, UID at 0.6 s.
        #expect(frames.map { $0["kind"] as? String } == [
            "eddystone-uid", "eddystone-tlm", "eddystone-uid", "eddystone-tlm", "eddystone-uid",
        ])
        let telemetry = frames.filter { $0["kind"] as? String == "eddystone-tlm" }
        #expect(telemetry.map { $0["battery_mv"] as? Int } == [2950, 2950])
        #expect(telemetry.map { $0["temperature_c"] as? Double } == [21.5, 21.5])
        #expect(telemetry.map { $0["advertising_count"] as? Int } == [3, 6])
        #expect(telemetry.map { $0["uptime_s"] as? Double } == [0.2, 0.5])

        let without = try advertisedFrames(["--eddystone-uid", Self.uid, "--tlm-every", "2"])
        #expect(without.first?["kind"] as? String == "eddystone-uid")
        let none = try loyalty.run(["beacon", "advertise", "--eddystone-uid", Self.uid, "--dry-run", "--tlm-every", "2"])
        let sent = none.stdout.components(separatedBy: "LE Set Advertising Data").count - 1
        #expect(sent == 1, "no --duration: the start's data only")
    }

    /// The EID of the vectors for the counter kept beside the key, replaced when the 2^K window turns (256 s after
    /// counter 65280 with K = 10); a dry run neither makes nor moves the counter file.
    @Test func theEIDIsTheSpecsAndTurnsWithTheWindow() throws {
        let key = try keyFile(counter: 65280)
        defer { remove(key) }
        let counter = try String(contentsOfFile: key + ".counter", encoding: .utf8)
        let frames = try advertisedFrames(["--eddystone-eid", key, "--eid-exponent", "10", "--duration", "300"])
        #expect(frames.map { $0["kind"] as? String } == ["eddystone-eid", "eddystone-eid"])
        #expect(frames.map { $0["eid"] as? String } == [Self.eidOfCounter65280, Self.eidOfCounter65536])
        #expect(try String(contentsOfFile: key + ".counter", encoding: .utf8) == counter)

        let fresh = try keyFile()
        defer { remove(fresh) }
        let first = try advertisedFrames(["--eddystone-eid", fresh, "--eid-exponent", "10"])
        #expect(first.map { $0["eid"] as? String } == [Self.eidOfCounter0])
        #expect(!FileManager.default.fileExists(atPath: fresh + ".counter"))
    }

    /// Written to a capture with --duration, the EID beacon replays as its two EIDs, one a window.
    @Test func theCaptureReplaysBothEIDs() throws {
        let key = try keyFile(counter: 65280)
        let file = temporaryPath("eid") + ".btsnoop"
        defer {
            remove(key)
            try? FileManager.default.removeItem(atPath: file)
        }
        let written = try loyalty.run([
            "beacon", "advertise", "--eddystone-eid", key, "--eid-exponent", "10", "--duration", "300",
            "--write", file, "--json",
        ])
        #expect(written.status == 0, "\(written.stderr)")
        let replay = try loyalty.run(["scan", "--replay", file, "--json"])
        #expect(replay.status == 0, "\(replay.stderr)")
        let heard = Set(
            replay.jsonLines.filter { $0["event"] as? String == "range" }
                .flatMap { $0["beacons"] as? [[String: Any]] ?? [] }.compactMap { $0["eid"] as? String })
        #expect(heard == [Self.eidOfCounter65280, Self.eidOfCounter65536])
    }

    @Test func aKeyFileOthersMayReadIsRefused() throws {
        for mode in [0o644, 0o640, 0o602] {
            let key = try keyFile(mode: mode)
            defer { remove(key) }
            let result = try loyalty.run(["beacon", "advertise", "--eddystone-eid", key, "--dry-run"])
            #expect(result.status == 77, "mode \(String(mode, radix: 8))")
            #expect(result.stderr.contains("chmod 600"), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        let missing = try loyalty.run(["beacon", "advertise", "--eddystone-eid", temporaryPath("none"), "--dry-run"])
        #expect(missing.status == 74, "\(missing.stderr)")
        let notAKey = temporaryPath("not-a-key")
        defer { remove(notAKey) }
        #expect(
            FileManager.default.createFile(
                atPath: notAKey, contents: Data("0123".utf8), attributes: [.posixPermissions: 0o600]))
        let malformed = try loyalty.run(["beacon", "advertise", "--eddystone-eid", notAKey, "--dry-run"])
        #expect(malformed.status == 65, "\(malformed.stderr)")
    }

    @Test func badInputIsAUsageErrorBeforeAnythingElse() throws {
        let key = try keyFile()
        defer { remove(key) }
        let cases: [([String], String)] = [
            (["--eddystone-uid", "0011223344556677889:AABBCCDDEEFF"], "--eddystone-uid: expected NAMESPACE:INSTANCE"),
            (["--eddystone-uid", "00112233445566778899:AABBCCDDEEFG"], "--eddystone-uid: expected NAMESPACE:INSTANCE"),
            (["--eddystone-url", "ftp://example.com"], "--eddystone-url: expected"),
            (["--eddystone-url", "https://www.a-name-far-too-long.com/"], "--eddystone-url: expected"),
            (["--eddystone-url", "https://café.fr"], "--eddystone-url: expected"),
            (["--eddystone-eid", key, "--eid-exponent", "16"], "--eid-exponent: expected a whole number 0...15"),
            (["--eddystone-uid", Self.uid, "--eid-exponent", "2"], "--eid-exponent goes with --eddystone-eid"),
            (["--eddystone-uid", Self.uid, "--tlm-every", "1"], "--tlm-every: expected"),
            (["--eddystone-uid", Self.uid, "--battery-mv", "3000"], "give --tlm-every"),
            (["--eddystone-uid", Self.uid, "--eddystone-url", "https://a.com"], "give only one of"),
            (["--eddystone-uid", Self.uid, "--major", "1"], "--major and --minor go with --uuid"),
            (["--uuid", "8F0C1DDC-11E5-4A07-8910-425941B072F9", "--major", "1", "--minor", "2", "--tlm-every", "3"],
             "--tlm-every applies to Eddystone"),
            ([], "name the beacon"),
        ]
        for (arguments, message) in cases {
            let result = try loyalty.run(["beacon", "advertise"] + arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Bluetooth"), "no radio work before validation: \(result.stderr)")
        }
    }
}
