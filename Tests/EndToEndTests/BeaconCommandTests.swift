import Foundation
import LoyaltyTesting
import Testing

/// `loyalty decode` and `loyalty scan --replay` run as a user runs them, on published vectors and real captures.
@Suite struct BeaconCommandTests {
    let loyalty = Binary("loyalty")

    struct Vector: Decodable {
        let name: String
        let input: String
        let hex: String
        let expect: Expectation
    }

    enum Expectation: Decodable {
        case error
        case beacons([[String: JSONScalar]])

        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let word = try? container.decode(String.self), word == "error" {
                self = .error
            } else {
                self = .beacons(try container.decode([[String: JSONScalar]].self))
            }
        }
    }

    enum JSONScalar: Decodable, Equatable, CustomStringConvertible {
        case int(Int)
        case string(String)

        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let int = try? container.decode(Int.self) { self = .int(int) } else { self = .string(try container.decode(String.self)) }
        }

        init?(_ any: Any?) {
            if let int = any as? Int { self = .int(int) } else if let string = any as? String { self = .string(string) } else { return nil }
        }

        var description: String {
            switch self {
            case .int(let i): "\(i)"
            case .string(let s): s
            }
        }
    }

    static let vectors: [Vector] = {
        let data = try! Data(contentsOf: fixturesDirectory.appendingPathComponent("vectors.json"))
        return try! JSONDecoder().decode([Vector].self, from: data)
    }()

    @Test(arguments: vectors.map(\.name))
    func vectorDecodesExactly(name: String) throws {
        let vector = try #require(Self.vectors.first { $0.name == name })
        let result = try loyalty.run(["decode"] + (vector.input == "hci" ? ["--hci"] : []) + [vector.hex])
        switch vector.expect {
        case .error:
            #expect(result.status == 65)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.hasPrefix("error: "))
        case .beacons(let expected):
            #expect(result.status == 0, "\(result.stderr)")
            let beacons = result.jsonLines.filter { $0["kind"] as? String == "ibeacon" }
            if expected.isEmpty {
                #expect(beacons.isEmpty)
                #expect(result.jsonLines.allSatisfy { $0["kind"] as? String == "none" })
            }
            let decoded = beacons.map { line in
                Dictionary(uniqueKeysWithValues: expected.first!.keys.compactMap { key in JSONScalar(line[key]).map { (key, $0) } })
            }
            #expect(decoded == expected.map { correctingAddress($0, of: name) })
        }
    }

    /// blemon_govee_h5075's event carries address bytes 11 6C 24 38 C1 A4 (A4:C1:38:24:6C:11, a Govee
    /// prefix); its expectation repeats blemon_ibeacon_sensor's address. We check what the bytes hold.
    func correctingAddress(_ beacon: [String: JSONScalar], of name: String) -> [String: JSONScalar] {
        guard name == "blemon_govee_h5075" else { return beacon }
        return beacon.merging(["address": .string("A4:C1:38:24:6C:11")]) { $1 }
    }

    /// The identity sets the fixtures README lists for each capture.
    static let captures: [String: Set<String>] = [
        "horizon-scan-response-ibeacons.btsnoop": [
            "494E5445-4C4C-495F-524F-434B535F4857:20594:62207", "494E5445-4C4C-495F-524F-434B535F4857:20597:62207",
        ],
        "btsnooper-extended-ibeacons.btsnoop": Set(
            ["100:19641", "102:19641", "43240:6545", "43240:6694", "39144:6686", "10240:180"].map {
                "FDA50693-A4E2-4FB1-AFCF-C6EB07647825:\($0)"
            }),
        "pongbot-extended-ibeacon.btsnoop": ["74278BDA-B644-4520-8F0C-720EAF059935:0:970"],
        "juicessh-no-beacons-vendor-trap.btsnoop": [],
        "oppo-earbuds-no-beacons.btsnoop": [],
        "revcar-no-adverts.btsnoop": [],
        "dsp408-apple-non-ibeacon-malformed.btsnoop": [],
    ]

    @Test(arguments: captures.keys.sorted())
    func captureReplaysToItsIdentities(file: String) throws {
        let result = try loyalty.run(["scan", "--replay", fixturesDirectory.appendingPathComponent(file).path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.jsonLines
        var heard = Set<String>()
        for line in lines where line["event"] as? String == "range" {
            for beacon in line["beacons"] as? [[String: Any]] ?? [] {
                heard.insert("\(beacon["uuid"]!):\(beacon["major"]!):\(beacon["minor"]!)")
            }
        }
        #expect(heard == Self.captures[file])
        #expect(lines.last?["event"] as? String == "summary")
        let uuids = Set(heard.map { String($0.prefix(36)) })
        let entered = Set(lines.filter { $0["event"] as? String == "enter" }.compactMap { $0["region"] as? String })
        #expect(entered == uuids, "every UUID heard is monitored and entered")
    }

    @Test func truncatedCaptureDeliversWhatCameBeforeAndFailsWithOffset() throws {
        let original = try Data(contentsOf: fixturesDirectory.appendingPathComponent("horizon-scan-response-ibeacons.btsnoop"))
        let truncated = FileManager.default.temporaryDirectory.appendingPathComponent("truncated-\(UUID()).btsnoop")
        try original.prefix(original.count * 3 / 4 + 5).write(to: truncated)
        defer { try? FileManager.default.removeItem(at: truncated) }

        let result = try loyalty.run(["scan", "--replay", truncated.path, "--json"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("byte"), "the error names the byte offset: \(result.stderr)")
        #expect(result.jsonLines.contains { $0["event"] as? String == "range" }, "events before the damage are delivered")
    }

    @Test func garbageFileIsAClearErrorNotACrash() throws {
        let garbage = FileManager.default.temporaryDirectory.appendingPathComponent("garbage-\(UUID()).btsnoop")
        try Data("this is not a capture at all".utf8).write(to: garbage)
        defer { try? FileManager.default.removeItem(at: garbage) }
        let result = try loyalty.run(["scan", "--replay", garbage.path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("btsnoop") || result.stderr.contains("BTSnoop"), "\(result.stderr)")
        let missing = try loyalty.run(["scan", "--replay", "/nonexistent/capture.btsnoop"])
        #expect(missing.status != 0 && missing.status < 128)
        #expect(missing.stderr.contains("/nonexistent/capture.btsnoop"))
    }

    @Test func badHexAndBadArgumentsAreUsageOrDataErrors() throws {
        #expect(try loyalty.run(["decode", "zz"]).status == 65)
        #expect(try loyalty.run(["decode", "--hci", "043e"]).status == 65)
        #expect(try loyalty.run(["decode"]).status == 64)
        #expect(try loyalty.run(["scan", "--region", "not-a-uuid", "--replay", "x"]).status == 64)
        #expect(try loyalty.run(["scan", "--bogus"]).status == 64)
    }

    @Test func liveScanWithoutARadioSaysWhatToDo() throws {
        let result = try loyalty.run(["scan", "--json"])
        // This machine has no AF_BLUETOOTH; a machine with a radio but no privileges gets 77.
        #expect([69, 77].contains(result.status))
        #expect(result.stderr.contains("--replay") || result.stderr.contains("setcap"), "\(result.stderr)")
    }

    @Test func everyCommandHasHelp() throws {
        for command in [[], ["scan"], ["decode"], ["doctor"]] {
            let result = try loyalty.run(command + ["--help"])
            #expect(result.status == 0)
            #expect(result.stdout.contains("USAGE: loyalty"))
        }
    }
}
