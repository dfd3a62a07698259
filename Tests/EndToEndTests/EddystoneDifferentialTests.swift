import Beacons
import Foundation
import LoyaltyTesting
import Testing

/// `loyalty decode` against Python's beacontools (PyPI, an independent parser) on thousands of random Eddystone
/// frames, valid and one defect away from valid. Valid frames must decode to the same fields. beacontools is more
/// lenient than the spec: where it accepts what the spec forbids, `loyalty decode` must refuse it with the
/// defect's own malformed error, and only for the defects listed in `beacontoolsAccepts`.
@Suite struct EddystoneDifferentialTests {
    let loyalty = Binary("loyalty")

    /// What a case is: a valid frame, or which rule of the spec it breaks.
    enum Defect: String, CaseIterable {
        case none, short, long, uidOf19, reservedBytes, frameTypeBits, urlScheme, urlByte, telemetryVersion, undefinedType
    }

    struct Case {
        let frame: [UInt8]
        let defect: Defect
        /// The advertising data: Flags, the service UUID list, the frame as service data (last, as beacontools'
        /// URL reader takes every byte to the end).
        var advertisingData: [UInt8] { [2, 0x01, 0x06, 3, 0x03, 0xAA, 0xFE, UInt8(frame.count + 3), 0x16, 0xAA, 0xFE] + frame }
    }

    /// The error text each defect must give (`loyalty decode`'s message), nil: no frame and no error.
    static let message: [Defect: String?] = [
        .short: "is short", .long: "bytes (", .uidOf19: "bytes (", .reservedBytes: "reserved bits must be zero",
        .frameTypeBits: "reserved bits must be zero", .urlScheme: "URL scheme", .urlByte: "is reserved",
        .telemetryVersion: "TLM version", .undefinedType: nil,
    ]

    /// Defects beacontools lets through (it reads the fields it knows and ignores the rest).
    static let beacontoolsAccepts: Set<Defect> = [.short, .long, .uidOf19, .reservedBytes, .urlByte]

    static func randomBytes(_ count: Int, _ random: inout SplitMix64) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    static func validFrame(_ random: inout SplitMix64) -> [UInt8] {
        let power = UInt8.random(in: 0...255, using: &random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return [0x00, power] + randomBytes(16, &random) + [0, 0]
        case 1: return [0x00, power] + randomBytes(16, &random)
        case 2:
            let allowed = Array(0x00...0x0D) + Array(0x21...0x7E).map(UInt8.init)
            let url = (0..<Int.random(in: 1...17, using: &random)).map { _ in allowed.randomElement(using: &random)! }
            return [0x10, power, UInt8.random(in: 0...3, using: &random)] + url
        case 3:
            // Temperatures include "not supported" (0x8000) and negative values.
            var frame: [UInt8] = [0x20, 0x00] + randomBytes(12, &random)
            if Bool.random(using: &random) { (frame[4], frame[5]) = (0x80, 0x00) }
            return frame
        case 4: return [0x20, 0x01] + randomBytes(16, &random)
        default: return [0x30, power] + randomBytes(8, &random)
        }
    }

    static func randomCase(_ random: inout SplitMix64) -> Case {
        // Half valid, half spread over the defects.
        let defect = Bool.random(using: &random) ? .none : Defect.allCases.dropFirst().randomElement(using: &random)!
        var frame = validFrame(&random)
        let isUID20 = frame[0] == 0x00 && frame.count == 20
        switch defect {
        case .none: break
        case .short:
            let minimum = frame[0] == 0x00 ? 18 : frame[0] == 0x10 ? 4 : frame.count
            frame = Array(frame.prefix(Int.random(in: 1..<minimum, using: &random)))
        case .long:
            // UID frames of 19 bytes are their own case, of 20 valid: a long UID is a whole one and more.
            if frame[0] == 0x00 { frame = [0x00, 0] + randomBytes(16, &random) + [0, 0] }
            if frame[0] == 0x10 { frame = Array(frame.prefix(3)) + Array(repeating: 0x61, count: 17) }
            frame += randomBytes(Int.random(in: 1...3, using: &random), &random)
        case .uidOf19:
            frame = [0x00] + randomBytes(17, &random) + [0]
        case .reservedBytes:
            if !isUID20 { frame = [0x00, 0] + randomBytes(16, &random) + [0, 0] }
            frame[Int.random(in: 18...19, using: &random)] = UInt8.random(in: 1...255, using: &random)
        case .frameTypeBits:
            frame[0] |= UInt8.random(in: 1...15, using: &random)
        case .urlScheme:
            frame = [0x10, 0, UInt8.random(in: 4...255, using: &random), 0x61]
        case .urlByte:
            let reserved = Array(0x0E...0x20) + Array(0x7F...0xFF).map(UInt8.init)
            frame = [0x10, 0, 3] + Array(repeating: 0x61, count: Int.random(in: 0...5, using: &random))
            frame.append(reserved.randomElement(using: &random)!)
        case .telemetryVersion:
            frame = [0x20, UInt8.random(in: 2...255, using: &random)] + randomBytes(12, &random)
        case .undefinedType:
            frame = [UInt8.random(in: 4...15, using: &random) << 4] + randomBytes(Int.random(in: 0...19, using: &random), &random)
        }
        return Case(frame: frame, defect: defect)
    }

    /// beacontools' frames as `loyalty decode --json` names them; temperature and uptime as their raw integers.
    static let beacontoolsScript = """
        import json, sys
        from beacontools import parse_packet
        from beacontools.packet_types import EddystoneUIDFrame, EddystoneURLFrame, EddystoneTLMFrame, \\
            EddystoneEncryptedTLMFrame, EddystoneEIDFrame
        for line in open(sys.argv[1]):
            p = parse_packet(bytes.fromhex(line.strip()))
            if isinstance(p, EddystoneUIDFrame):
                out = {"kind": "eddystone-uid", "namespace": p.namespace.upper(), "instance": p.instance.upper(),
                       "ranging_power": p.tx_power}
            elif isinstance(p, EddystoneURLFrame):
                out = {"kind": "eddystone-url", "url": p.url, "ranging_power": p.tx_power}
            elif isinstance(p, EddystoneTLMFrame):
                out = {"kind": "eddystone-tlm", "version": 0, "battery_mv": p.voltage,
                       "temperature_bits": round(p.temperature * 256), "advertising_count": p.advertising_count,
                       "uptime_tenths": p.seconds_since_boot}
            elif isinstance(p, EddystoneEncryptedTLMFrame):
                out = {"kind": "eddystone-tlm", "version": 1, "encrypted": p.encrypted_data.hex().upper(),
                       "salt": p.salt.to_bytes(2, "little").hex().upper(), "mic": p.mic.to_bytes(2, "little").hex().upper()}
            elif isinstance(p, EddystoneEIDFrame):
                out = {"kind": "eddystone-eid", "eid": p.eid.hex().upper(), "ranging_power": p.tx_power}
            else:
                out = None
            print(json.dumps(out, sort_keys=True))
        """

    /// A `loyalty decode --json` line in beacontools' terms: raw temperature bits and uptime tenths.
    static func normalized(_ line: [String: Any]) -> [String: Any] {
        var line = line
        if let uptime = line.removeValue(forKey: "uptime_s") as? Double { line["uptime_tenths"] = Int((uptime * 10).rounded()) }
        if line["kind"] as? String == "eddystone-tlm", line["version"] as? Int == 0 {
            let celsius = line.removeValue(forKey: "temperature_c") as? Double
            line["temperature_bits"] = celsius.map { Int(UInt16(bitPattern: Int16(($0 * 256).rounded()))) } ?? 0x8000
        }
        return line
    }

    @Test func decodeAgreesWithBeacontools() throws {
        let python = Binary(at: "python3")
        guard try python.run(["-c", "import beacontools"]).status == 0 else {
            if ProcessInfo.processInfo.environment["CI"] != nil { Issue.record("beacontools is missing: make test-deps installs it") }
            print("EddystoneDifferentialTests not run: beacontools is missing (make test-deps)")
            return
        }
        var random = SplitMix64(seed: 0xEDD1_5702E)
        let cases = (0..<4000).map { _ in Self.randomCase(&random) }
        let hex = cases.map { $0.advertisingData.hexText() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("eddystone-\(UUID()).hex")
        try hex.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }

        let reference = try python.run(["-c", Self.beacontoolsScript, file.path], timeout: 300)
        #expect(reference.status == 0, "\(reference.stderr)")
        let theirs = reference.stdout.split(separator: "\n").map {
            try? JSONSerialization.jsonObject(with: Data($0.utf8), options: .fragmentsAllowed) as? [String: Any]
        }
        let decoded = try loyalty.run(["decode", "--json"] + hex, timeout: 300)
        let ours = decoded.jsonLines
        try #require(theirs.count == cases.count && ours.count == cases.count, "one line per case: \(decoded.stderr.prefix(300))")

        var compared = 0
        var stricter: [Defect: Int] = [:]
        for (index, testCase) in cases.enumerated() {
            let mine = Self.normalized(ours[index])
            let kind = mine["kind"] as? String
            let context = "\(testCase.defect) \(hex[index]): ours \(mine), beacontools \(String(describing: theirs[index]))"
            switch testCase.defect {
            case .none:
                let theirFrame = try #require(theirs[index], "beacontools reads every valid frame: \(context)")
                #expect(NSDictionary(dictionary: mine).isEqual(to: theirFrame), "\(context)")
                compared += 1
            case let defect:
                if let expected = Self.message[defect] ?? nil {
                    #expect(kind == "error" && (mine["error"] as? String)?.contains(expected) == true, "\(context)")
                } else {
                    #expect(kind == "none", "\(context)")
                }
                if theirs[index] != nil {
                    #expect(Self.beacontoolsAccepts.contains(defect), "beacontools accepts a defect not listed: \(context)")
                    stricter[defect, default: 0] += 1
                }
            }
        }
        #expect(compared > 1500)
        #expect(decoded.status == 65, "the malformed cases make it exit 65")
        print("EddystoneDifferentialTests: \(compared) valid frames agree; stricter than beacontools on \(stricter.map { "\($0.key.rawValue) \($0.value)" }.sorted())")
    }
}
