import Foundation
import LoyaltyTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// tshark on the PATH, or nil (the Makefile's `deps` installs it).
private let tshark: URL? = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
    .map { URL(fileURLWithPath: String($0)).appendingPathComponent("tshark") }
    .first { FileManager.default.isExecutableFile(atPath: $0.path) }

/// `loyalty beacon advertise` and `loyalty beacon calibrate` run as a user runs them; the advertised beacon is
/// heard back through `loyalty scan --replay`, and tshark reads the HCI commands written.
@Suite struct BeaconAdvertiseTests {
    let loyalty = Binary("loyalty")
    static let matey = "8F0C1DDC-11E5-4A07-8910-425941B072F9"
    /// The iBeacon manufacturer data after Apple's company id, for Matey's 1:2 at -61 dBm.
    static let iBeaconData = "0215" + "8f0c1ddc11e54a078910425941b072f9" + "0001" + "0002" + "c3"

    func temporaryFile(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID()).btsnoop").path
    }

    func advertise(_ extra: [String]) throws -> Binary.Result {
        try loyalty.run(
            ["beacon", "advertise", "--uuid", Self.matey, "--major", "1", "--minor", "2", "--measured-power", "-61"]
                + extra)
    }

    @Test(arguments: [false, true])
    func theWrittenFileReplaysToExactlyTheAdvertisedBeacon(extended: Bool) throws {
        let file = temporaryFile("advertise")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let written = try advertise(["--write", file, "--json"] + (extended ? ["--extended"] : []))
        #expect(written.status == 0, "\(written.stderr)")
        #expect(written.jsonLines.first?["file"] as? String == file)

        let replay = try loyalty.run(["scan", "--replay", file, "--json"])
        #expect(replay.status == 0, "\(replay.stderr)")
        let ranged = replay.jsonLines.filter { $0["event"] as? String == "range" }
            .flatMap { $0["beacons"] as? [[String: Any]] ?? [] }
        #expect(!ranged.isEmpty)
        for beacon in ranged {
            #expect(beacon["uuid"] as? String == Self.matey)
            #expect(beacon["major"] as? Int == 1)
            #expect(beacon["minor"] as? Int == 2)
            // Heard at the measured power, as 1 m away.
            #expect(beacon["rssi"] as? Double == -61)
        }
        let summary = try #require(replay.jsonLines.first { $0["event"] as? String == "summary" })
        #expect(summary["records"] as? Int == 5)
        #expect(summary["beacon_frames"] as? Int == 1)
        #expect(summary["malformed_skipped"] as? Int == 0)
    }

    @Test func dryRunPrintsEachCommandWithItsNameAndBytes() throws {
        let legacy = try advertise(["--dry-run", "--json", "--interval-ms", "250"])
        #expect(legacy.status == 0, "\(legacy.stderr)")
        #expect(legacy.jsonLines.map { $0["opcode"] as? String } == ["0x2006", "0x2008", "0x200A", "0x200A"])
        #expect(
            legacy.jsonLines.map { $0["command"] as? String } == [
                "LE Set Advertising Parameters", "LE Set Advertising Data", "LE Set Advertising Enable",
                "LE Set Advertising Enable",
            ])
        let packets = legacy.jsonLines.map { $0["packet"] as? String ?? "" }
        // 250 ms = 400 units = 0x0190, little-endian, for both interval fields; ADV_NONCONN_IND; channels 0x07.
        #expect(packets[0] == "06200F" + "9001" + "9001" + "03" + "00" + "00" + "000000000000" + "07" + "00")
        #expect(packets[1] == "082020" + "1E" + "020106" + "1AFF4C00" + Self.iBeaconData.uppercased() + "00")
        #expect(packets[2...] == ["0A200101", "0A200100"])

        let extended = try advertise(["--dry-run", "--json", "--extended"])
        #expect(extended.jsonLines.map { $0["opcode"] as? String } == ["0x2036", "0x2037", "0x2039", "0x2039"])

        let text = try advertise(["--dry-run"])
        #expect(text.stdout.hasPrefix("0x2006 LE Set Advertising Parameters\n  06 20 0F A0 00 A0 00 03"))
    }

    @Test(.enabled(if: tshark != nil || runningUnderCI, "tshark is not installed (make deps installs it)"), arguments: [false, true])
    func tsharkDecodesTheWrittenCommandsAsTheIntendedOnes(extended: Bool) throws {
        let tshark = try #require(tshark, "tshark is not installed (make deps installs it)")
        let file = temporaryFile("tshark")
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(try advertise(["--write", file] + (extended ? ["--extended"] : [])).status == 0)
        let fields = [
            "bthci_cmd.opcode", "bthci_cmd.le_advts_type", "bthci_cmd.advertising_properties",
            "bthci_cmd.le_advts_interval_min", "bthci_cmd.le_advts_enable", "bthci_evt.le_meta_subevent",
            "bthci_evt.le_advts_event_type", "btcommon.eir_ad.entry.company_id", "btcommon.eir_ad.entry.data",
            "bthci_evt.rssi",
        ]
        let process = Process()
        process.executableURL = tshark
        process.arguments = ["-r", file, "-T", "fields", "-E", "separator=|"] + fields.flatMap { ["-e", $0] }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let rows = text.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false) }
        func row(_ values: [String: String]) -> [Substring] { fields.map { Substring(values[$0] ?? "") } }
        let apple = "0x004c"
        let expected: [[Substring]]
        if extended {
            expected = [
                // Legacy PDU bit only: ADV_NONCONN_IND. 160 x 0.625 ms = 100 ms.
                row([
                    "bthci_cmd.opcode": "0x2036", "bthci_cmd.advertising_properties": "0x0010",
                    "bthci_cmd.le_advts_interval_min": "160",
                ]),
                row([
                    "bthci_cmd.opcode": "0x2037", "btcommon.eir_ad.entry.company_id": apple,
                    "btcommon.eir_ad.entry.data": Self.iBeaconData,
                ]),
                row(["bthci_cmd.opcode": "0x2039", "bthci_cmd.le_advts_enable": "0x01"]),
                row([
                    "bthci_evt.le_meta_subevent": "0x02", "bthci_evt.le_advts_event_type": "0x03",
                    "btcommon.eir_ad.entry.company_id": apple, "btcommon.eir_ad.entry.data": Self.iBeaconData,
                    "bthci_evt.rssi": "-61",
                ]),
                row(["bthci_cmd.opcode": "0x2039", "bthci_cmd.le_advts_enable": "0x00"]),
            ]
        } else {
            expected = [
                row([
                    "bthci_cmd.opcode": "0x2006", "bthci_cmd.le_advts_type": "0x03",
                    "bthci_cmd.le_advts_interval_min": "160",
                ]),
                row([
                    "bthci_cmd.opcode": "0x2008", "btcommon.eir_ad.entry.company_id": apple,
                    "btcommon.eir_ad.entry.data": Self.iBeaconData,
                ]),
                row(["bthci_cmd.opcode": "0x200a", "bthci_cmd.le_advts_enable": "0x01"]),
                row([
                    "bthci_evt.le_meta_subevent": "0x02", "bthci_evt.le_advts_event_type": "0x03",
                    "btcommon.eir_ad.entry.company_id": apple, "btcommon.eir_ad.entry.data": Self.iBeaconData,
                    "bthci_evt.rssi": "-61",
                ]),
                row(["bthci_cmd.opcode": "0x200a", "bthci_cmd.le_advts_enable": "0x00"]),
            ]
        }
        #expect(rows == expected, "\(text)")
    }

    @Test func badArgumentsAreRefusedBeforeAnyRadioWork() throws {
        let cases: [([String], String)] = [
            (["--uuid", "not-a-uuid", "--major", "1", "--minor", "2"], "--uuid: not a UUID; expected 8-4-4-4-12 hex digits"),
            (["--uuid", Self.matey, "--major", "65536", "--minor", "2"], "--major: expected a whole number 0...65535"),
            (["--uuid", Self.matey, "--major", "1", "--minor", "-1"], "--minor: expected a whole number 0...65535"),
            (["--uuid", Self.matey, "--major", "1"], "--uuid needs --major and --minor"),
            (["--uuid", Self.matey, "--major", "1", "--minor", "2", "--measured-power", "-101"], "-100...0"),
            (["--uuid", Self.matey, "--major", "1", "--minor", "2", "--measured-power", "3"], "-100...0"),
            (["--uuid", Self.matey, "--major", "1", "--minor", "2", "--interval-ms", "19"], "20 ms ... 10240 ms"),
            (["--uuid", Self.matey, "--major", "1", "--minor", "2", "--interval-ms", "10241"], "20 ms ... 10240 ms"),
            (["--uuid", Self.matey, "--major", "1", "--minor", "2", "--duration", "-1"], "--duration"),
            (["--uuid", Self.matey, "--major", "1", "--minor", "2", "--adapter", "eth0"], "--adapter"),
            (["--major", "1", "--minor", "2"], "--major and --minor go with --uuid"),
        ]
        for (arguments, message) in cases {
            let result = try loyalty.run(["beacon", "advertise"] + arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Bluetooth"), "no radio work before validation: \(result.stderr)")
        }
    }

    @Test func liveAdvertisingWithoutARadioSaysWhatToDo() throws {
        let result = try advertise(["--duration", "0.2"])
        let fd = socket(31, Int32(SOCK_RAW.rawValue), 1)  // AF_BLUETOOTH, BTPROTO_HCI
        let kernelHasBluetooth = fd >= 0 || errno != EAFNOSUPPORT
        if fd >= 0 { close(fd) }
        if !kernelHasBluetooth {
            #expect(result.status == 69)
            #expect(result.stderr.contains("AF_BLUETOOTH") && result.stderr.contains("--replay"), "\(result.stderr)")
        } else {
            // A radio and the capabilities: advertised for 0.2 s and stopped; else the reason, with its remedy.
            #expect([0, 69, 77].contains(result.status), "\(result.stderr)")
            if result.status == 0 { #expect(result.stdout.contains("stopped advertising")) }
        }
    }

    @Test func calibrationOfASimulatedBeaconRecoversItsMeasuredPower() throws {
        let file = temporaryFile("calibrate")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let simulated = try loyalty.run([
            "beacon", "simulate", "--walk", "\(Self.matey):1:1@0=1,40=1", "--walk", "\(Self.matey):1:2@0=4,40=4",
            "--measured-power", "-66", "--noise-db", "4", "--seed", "11", "--write", file,
        ])
        #expect(simulated.status == 0, "\(simulated.stderr)")

        let result = try loyalty.run(["beacon", "calibrate", "--replay", file, "--json", "\(Self.matey):1:1"])
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(result.jsonLines.first)
        let power = try #require(line["measured_power"] as? Int)
        #expect(abs(power + 66) <= 2, "\(line)")
        #expect(line["advertised_measured_power"] as? Int == -66)
        // 30 s of adverts every 100 ms: about 300 samples of this beacon, none of the other (4 m away).
        let used = try #require(line["samples_used"] as? Int)
        let rejected = try #require(line["samples_rejected"] as? Int)
        #expect((290...302).contains(used + rejected), "\(line)")
        #expect((3...5).contains(line["spread_db"] as? Double ?? 0), "\(line)")
        #expect((29...30).contains(line["seconds"] as? Double ?? 0))

        let text = try loyalty.run(["beacon", "calibrate", "--replay", file, "--seconds", "10", "\(Self.matey):1:1"])
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("measured power to program: -6"), "\(text.stdout)")
    }

    @Test func calibrationRefusesBelowTheMinimumSampleCount() throws {
        let file = temporaryFile("few")
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(try advertise(["--write", file]).status == 0)
        // The advertised file holds one report: enough for one sample, not for twenty.
        let refused = try loyalty.run(["beacon", "calibrate", "--replay", file, "\(Self.matey):1:2"])
        #expect(refused.status == 65)
        #expect(
            refused.stderr.contains("only 1 RSSI samples") && refused.stderr.contains("at least 20"),
            "\(refused.stderr)")
        let unheard = try loyalty.run(["beacon", "calibrate", "--replay", file, "\(Self.matey):7:7"])
        #expect(unheard.status == 65)
        #expect(unheard.stderr.contains("only 0 RSSI samples"))
        let one = try loyalty.run([
            "beacon", "calibrate", "--replay", file, "--min-samples", "1", "--json", "\(Self.matey):1:2",
        ])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.jsonLines.first?["measured_power"] as? Int == -61)

        for arguments in [
            ["\(Self.matey):1"], [], ["--min-samples", "0", "\(Self.matey):1:1"],
            ["--seconds", "x", "\(Self.matey):1:1"],
        ] {
            #expect(
                try loyalty.run(["beacon", "calibrate", "--replay", file] + arguments).status == 64, "\(arguments)")
        }
    }

    @Test func helpDocumentsTheExitCodes() throws {
        let calibrate = try loyalty.run(["beacon", "calibrate", "--help"])
        #expect(calibrate.status == 0)
        #expect(calibrate.stdout.contains("65 too few samples"))
        let advertise = try loyalty.run(["beacon", "advertise", "--help"])
        #expect(advertise.stdout.contains("--dry-run") && advertise.stdout.contains("--measured-power"))
    }
}
