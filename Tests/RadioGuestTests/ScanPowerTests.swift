import Foundation
import LoyaltyTesting
import Testing

/// `loyalty scan --power` against Root-Canal's controllers, legacy and extended: the scan parameters the
/// controller received (its HCI sniffer's pcap, decoded by tshark), which profile the flag, the config and the
/// user unit's default choose, and how often a scan with nothing in range wakes.
@Suite(.serialized) struct ScanPowerTests {
    let loyalty = Binary("loyalty")

    /// LE_Scan_Type, LE_Scan_Interval and LE_Scan_Window (0.625 ms units) each profile must ask for: passive
    /// always; high 10 ms of 10 ms (continuous); balanced 182.5 ms of 730 ms and low 140 ms of 1,400 ms,
    /// Android's BALANCED and LOW_POWER duty cycles (25 % and 10 %).
    static let expected: [String: (type: String, interval: String, window: String)] = [
        "high": ("0x00", "16", "16"), "balanced": ("0x00", "1168", "292"), "low": ("0x00", "2240", "224"),
    ]

    func rootCanal(sniffingInto directory: URL) -> RootCanal? {
        do {
            return try RootCanal(sniffingInto: directory)
        } catch {
            if runningUnderCI { Issue.record("Root-Canal cannot run: \(error)") } else { print("ScanPowerTests not run: \(error)") }
            return nil
        }
    }

    func temporaryDirectory(_ name: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Scans until the first ranging snapshot, then stops the scan as SIGTERM does.
    func scanBriefly(port: UInt16, _ extra: [String], environment: [String: String] = [:]) throws -> Binary.Result {
        let scanner = try Started(loyalty, ["scan", "--hci", "tcp:127.0.0.1:\(port)", "--json"] + extra, environment: environment)
        _ = scanner.waitFor { $0.stdout.contains("\"event\":\"range\"") }
        return scanner.terminate()
    }

    /// The scan parameter and enable commands in the sniffer's pcaps, one row each in the order sent:
    /// opcode, then type, interval and window (parameters) or enable (enable).
    func scanCommands(in directory: URL) throws -> [[String]] {
        let tshark = try #require(
            (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
                .map { URL(fileURLWithPath: String($0)).appendingPathComponent("tshark") }
                .first { FileManager.default.isExecutableFile(atPath: $0.path) }, "tshark is not installed (make deps)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".pcap") }.sorted()
        var rows: [[String]] = []
        for file in files {
            let process = Process()
            process.executableURL = tshark
            process.arguments =
                ["-r", directory.appendingPathComponent(file).path, "-T", "fields", "-E", "separator=|"]
                + [
                    "bthci_cmd.opcode", "bthci_cmd.le_scan_type", "bthci_cmd.le_scan_interval", "bthci_cmd.le_scan_window",
                    "bthci_cmd.le_scan_enable",
                ].flatMap { ["-e", $0] }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                guard ["0x200b", "0x2041", "0x200c", "0x2042"].contains(fields[0]) else { continue }
                rows.append(fields.filter { !$0.isEmpty })
            }
        }
        return rows
    }

    @Test(arguments: ["high", "balanced", "low"])
    func theControllerIsAskedForTheProfilesPassiveDutyCycle(power: String) throws {
        let directory = try temporaryDirectory("scan-power-\(power)")
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let canal = rootCanal(sniffingInto: directory) else { return }
        for port in [canal.legacyPort, canal.extendedPort] {
            let scan = try scanBriefly(port: port, ["--power", power])
            #expect(scan.status == 0, "\(scan.stderr)")
        }
        canal.stop()
        let want = try #require(Self.expected[power])
        let parameters = [want.type, want.interval, want.window]
        // Legacy, then extended: parameters, enable, disable on each.
        #expect(
            try scanCommands(in: directory) == [
                ["0x200b"] + parameters, ["0x200c", "0x01"], ["0x200c", "0x00"],
                ["0x2041"] + parameters, ["0x2042", "0x01"], ["0x2042", "0x00"],
            ])
    }

    /// `--power` wins over the config's scan_power, which wins over LOYALTY_SCAN_POWER_DEFAULT (the user unit's
    /// low), which wins over high.
    @Test func theProfileComesFromTheFlagTheConfigOrTheUnitsDefault() throws {
        let directory = try temporaryDirectory("scan-power-choice")
        let home = try temporaryDirectory("scan-power-home")
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: home)
        }
        guard let canal = rootCanal(sniffingInto: directory) else { return }
        let unit = ["LOYALTY_HOME": home.path, "LOYALTY_SCAN_POWER_DEFAULT": "low"]
        var runs: [Binary.Result] = []
        runs.append(try scanBriefly(port: canal.legacyPort, [], environment: ["LOYALTY_HOME": home.path]))
        runs.append(try scanBriefly(port: canal.legacyPort, [], environment: unit))
        let set = try loyalty.run(["config", "set", "scan_power", "balanced", "--json"], environment: unit)
        #expect(set.status == 0 && set.stdout.contains("\"value\":\"balanced\""), "\(set.stderr)")
        runs.append(try scanBriefly(port: canal.legacyPort, [], environment: unit))
        runs.append(try scanBriefly(port: canal.legacyPort, ["--power", "high"], environment: unit))
        canal.stop()
        for run in runs { #expect(run.status == 0, "\(run.stderr)") }
        let windows = try scanCommands(in: directory).filter { $0[0] == "0x200b" }.map { $0[3] }
        #expect(windows == ["16", "224", "292", "16"])
    }

    /// `loyalty doctor` says the duty cycle a scan asks for, on the path it takes.
    @Test func doctorSaysTheDutyCycleOnThePathTheScanTakes() throws {
        let directory = try temporaryDirectory("scan-power-doctor")
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let canal = rootCanal(sniffingInto: directory) else { return }
        let doctor = try loyalty.run(["doctor", "--hci", "tcp:127.0.0.1:\(canal.legacyPort)", "--power", "low"], timeout: 20)
        #expect(doctor.status == 0, "\(doctor.stderr)")
        let line = doctor.stdout.split(separator: "\n").first { $0.contains("scan-power") } ?? ""
        #expect(line.contains("--power low: listens passively 140.0 ms every 1400 ms (10 %)") && line.contains("over H4 (tcp:127.0.0.1:"), "\(doctor.stdout)")
    }

    @Test func aBadProfileIsAUsageError() throws {
        let home = try temporaryDirectory("scan-power-bad")
        defer { try? FileManager.default.removeItem(at: home) }
        let flag = try loyalty.run(["scan", "--hci", "tcp:127.0.0.1:9", "--power", "medium"], timeout: 20)
        #expect(flag.status == 64 && flag.stderr.contains("high, balanced or low"), "\(flag.stderr)")
        let config = try loyalty.run(["config", "set", "scan_power", "max"], environment: ["LOYALTY_HOME": home.path])
        #expect(config.status == 64 && config.stderr.contains("high, balanced or low"), "\(config.stderr)")
        let unit = try loyalty.run(
            ["scan", "--hci", "tcp:127.0.0.1:9"], environment: ["LOYALTY_HOME": home.path, "LOYALTY_SCAN_POWER_DEFAULT": "eco"],
            timeout: 20)
        #expect(unit.status == 64 && unit.stderr.contains("LOYALTY_SCAN_POWER_DEFAULT"), "\(unit.stderr)")
    }

    /// With nothing in range, the scan blocks until its next tick, once a second: its threads' voluntary context
    /// switches (each a wait that ended) over a quiet spell. The quarter-second ticks it had woke it 4 times a second.
    @Test func aQuietScanWakesAtMostOnceASecond() throws {
        let directory = try temporaryDirectory("scan-power-quiet")
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let canal = rootCanal(sniffingInto: directory) else { return }
        let scanner = try Started(loyalty, ["scan", "--hci", "tcp:127.0.0.1:\(canal.legacyPort)", "--json", "--power", "low"])
        #expect(scanner.waitFor { $0.stdout.contains("\"event\":\"range\"") })
        let pid = scanner.process.processIdentifier
        let quiet = 5.0
        let before = voluntarySwitches(of: pid)
        usleep(UInt32(quiet * 1_000_000))
        let after = voluntarySwitches(of: pid)
        let scan = scanner.terminate()
        #expect(scan.status == 0, "\(scan.stderr)")
        #expect(after - before <= Int(quiet) + 1, "\(after - before) wake-ups in \(quiet) s")
    }

    private func voluntarySwitches(of pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { total, task in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
            return total + (line.flatMap { Int($0.split(separator: "\t").last ?? "") } ?? 0)
        }
    }
}
