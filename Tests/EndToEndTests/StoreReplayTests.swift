import Beacons
import BeaconsTesting
import Foundation
import LoyaltyTesting
import Testing

/// `loyalty scan --replay --json` on a department store's capture: 40 beacons always in range,
/// one range line a second. The lines are written as bytes now; they must stay the same bytes run after run.
@Suite struct StoreReplayTests {
    let loyalty = Binary("loyalty")

    @Test func theSameCaptureGivesTheSameBytesAndWellFormedLines() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(getpid()).btsnoop")
        defer { try? FileManager.default.removeItem(at: file) }
        let writer = try BTSnoopWriter(path: file.path)
        let capture = BulkCapture(
            reports: 20_000, beacons: 40, maximumReportsPerEvent: 2, advertisingInterval: 0.5, seed: 15)
        let summary = try capture.write(to: writer)
        try writer.close()

        let first = try loyalty.run(["scan", "--replay", file.path, "--json"])
        let second = try loyalty.run(["scan", "--replay", file.path, "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == second.stdout)

        let lines = first.stdout.split(separator: "\n")
        let ranges = lines.filter { $0.hasPrefix("{\"event\":\"range\"") }
        // 20,000 reports at 40 beacons twice a second: 250 s, a line a second and the last one.
        #expect((249...252).contains(ranges.count), "\(ranges.count) range lines")
        let fields = try Regex(
            #"\{"uuid":"[0-9A-F-]{36}","major":\d+,"minor":\d+,"rssi":-?\d+\.\d,"distance_m":(\d+\.\d\d|null),"proximity":"(immediate|near|far|unknown)"\}"#
        )
        for line in ranges {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let beacons = try #require(object["beacons"] as? [[String: Any]])
            #expect(beacons.count <= 40)
            // Each beacon's fields in their order and precision: `[{..},{..}]}` closes the line.
            let list = String(line.drop { $0 != "[" }.dropFirst().dropLast(2))
            for entry in list.split(separator: "},{") {
                let object = (entry.hasPrefix("{") ? "" : "{") + entry + (entry.hasSuffix("}") ? "" : "}")
                #expect(object.wholeMatch(of: fields) != nil, "\(object)")
            }
        }
        let summaryLine = try #require(first.jsonLines.last)
        #expect(summaryLine["event"] as? String == "summary")
        #expect(summaryLine["advertising_reports"] as? Int == summary.reports)
        #expect(summaryLine["beacon_frames"] as? Int == summary.beaconReports)
    }

    @Test func theLinesGoOutInLargeWrites() throws {
        // Megabytes of range lines reach standard output in writes of 64 KiB, not one per line: strace
        // counts the process's write(2) calls on descriptor 1.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("replay-writes-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("store.btsnoop")
        let writer = try BTSnoopWriter(path: file.path)
        _ = try BulkCapture(reports: 20_000, beacons: 40, maximumReportsPerEvent: 2, advertisingInterval: 0.5, seed: 15)
            .write(to: writer)
        try writer.close()
        let trace = directory.appendingPathComponent("writes.trace")
        let replay = try Binary(at: "strace").run(
            ["-f", "-e", "trace=write", "-o", trace.path, loyalty.url.path, "scan", "--replay", file.path, "--json"])
        #expect(replay.status == 0, "\(replay.stderr)")
        let writes = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("write(1, ") }.count
        let bytes = replay.stdout.utf8.count
        #expect(bytes > 1_000_000, "\(bytes) bytes")
        // 250 range lines of 40 beacons: about 20 writes of 64 KiB (one per line would be 250).
        #expect(writes >= 1 && writes <= bytes / 65_536 + 2, "\(writes) writes for \(bytes) bytes")
    }

    @Test func standardOutputAndErrorInterleaveAsWritten() throws {
        // One pipe for both, as `2>&1` gives: the events (standard output) come before the summary
        // (standard error) that follows them, not after it because a buffer held them.
        let capture = fixturesDirectory.appendingPathComponent("pongbot-extended-ibeacon.btsnoop").path
        let replay = try Binary(at: "sh").run(
            ["-c", "exec \"$0\" scan --replay \"$1\" 2>&1", loyalty.url.path, capture])
        #expect(replay.status == 0, "\(replay.stdout)")
        let lines = replay.stdout.split(separator: "\n")
        let lastEvent = try #require(lines.lastIndex { $0.contains("entered 74278BDA") })
        let summary = try #require(lines.firstIndex { $0.hasPrefix("replayed 8018 records") })
        #expect(lastEvent < summary, "\(replay.stdout)")
    }

    @Test func aReplayLoadsNoHTTPLibraryAndARequestLoadsIt() throws {
        // libcurl and what it needs cost a process 6.6 MiB to load: only a command that sends a request
        // loads it. The dynamic loader names every library it loads (LD_DEBUG=files).
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("replay-libraries-\(getpid())")
        defer { try? FileManager.default.removeItem(at: home) }
        let file = home.appendingPathComponent("store.btsnoop")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let writer = try BTSnoopWriter(path: file.path)
        _ = try BulkCapture(reports: 2_000, beacons: 40, maximumReportsPerEvent: 2, advertisingInterval: 0.5, seed: 15)
            .write(to: writer)
        try writer.close()
        let environment = ["LOYALTY_HOME": home.path, "LD_DEBUG": "files"]
        let replay = try loyalty.run(["scan", "--replay", file.path, "--json"], environment: environment)
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stderr.contains("file=libc.so.6"), "LD_DEBUG had no effect: \(replay.stderr.prefix(500))")
        #expect(!replay.stderr.contains("file=libcurl"))
        let request = try loyalty.run(["account", "create", "--server", "http://127.0.0.1:9"], environment: environment)
        #expect(request.status == 75, "\(request.stderr)")
        #expect(request.stderr.contains("file=libcurl.so.4"))
    }
}
