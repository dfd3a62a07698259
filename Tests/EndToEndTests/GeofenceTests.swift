import Foundation
import LoyaltyTesting
import Geofencing
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Whether a socket listens on the port, read from /proc/net/tcp{,6} without connecting (a connection
/// would count as gpsfake's client and start the log).
private func listening(_ port: UInt16) -> Bool {
    let suffix = ":" + String(format: "%04X", port)
    return ["/proc/net/tcp", "/proc/net/tcp6"].contains { file in
        let table = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        return table.split(separator: "\n").contains { row in
            let columns = row.split(separator: " ")
            return columns.count > 3 && columns[1].hasSuffix(suffix) && columns[3] == "0A"
        }
    }
}

/// The processes whose parent is `pid`, from /proc.
private func children(of pid: Int32) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> Int32? in
        guard let child = Int32(entry),
            let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After "pid (comm) ": the state, then the parent's id.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 && Int32(fields[1]) == pid ? child : nil
    }
}

private func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(100_000)
    }
    return false
}

/// A real loyalty-server with its own embedded PostgreSQL in a temporary directory.
private final class ServerProcess {
    let process = Process()
    let directory: URL
    let url: String
    let adminToken = "e2e-\(UUID().uuidString)"

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-geo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // As root the embedded PostgreSQL runs as `postgres`, which must reach its data directory.
        chmod(directory.path, 0o711)
        let port = try LoopbackSocket.freePort()
        url = "http://127.0.0.1:\(port)"
        process.executableURL = Binary("loyalty-server").url
        process.arguments = [
            "--listen", "127.0.0.1:\(port)", "--data-dir", directory.appendingPathComponent("server").path,
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["LOYALTY_ADMIN_TOKEN": adminToken]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try #require(waitUntil(60) { listening(port) }, "loyalty-server did not start")
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}

private let gpsfake = "/usr/bin/gpsfake"

/// A shopper walks up to a store, lingers at its edge, shops, lingers again and leaves, with GPS
/// noise at the boundary; a real gpsd serves the walk to `loyalty scan --location gpsd`.
@Suite(.serialized) struct GeofenceTests {
    let loyalty = Binary("loyalty")
    static let beaconUUID = "8F0C1DDC-11E5-4A07-8910-425941B072F9"
    let store = GeoCoordinate(latitude: 51.5136, longitude: -0.1365)

    /// The point `metres` north of the store.
    private func north(_ metres: Double) -> GeoCoordinate {
        GeoCoordinate(
            latitude: store.latitude + metres / GreatCircle.earthRadius * 180 / .pi, longitude: store.longitude)
    }

    /// Distances from the store, one fix a second: far, +-30 m around the 100 m edge, inside, the
    /// edge again (never beyond radius + margin), then away.
    private var walk: [Double] {
        (0..<30).map { 700 - Double($0) * 20 }
            + (0..<20).map { 100 + ($0 % 2 == 0 ? -25 : 30) }
            + Array(repeating: 20, count: 20)
            + (0..<20).map { 100 + ($0 % 2 == 0 ? 40 : -10) }
            + (0..<30).map { 160 + Double($0) * 20 }
    }

    /// The walk as a NMEA log, by default from 2026-01-01T10:00:00Z.
    private func writeWalk(to file: URL, start: Double = 1_767_261_600) throws {
        let lines = walk.enumerated().flatMap { second, distance in
            let fix = GeoFix(time: start + Double(second), coordinate: north(distance))
            return [NMEAWriter.rmc(fix), NMEAWriter.gga(fix)]
        }
        try (lines.joined(separator: "\r\n") + "\r\n").write(to: file, atomically: true, encoding: .utf8)
    }

    /// A registered retailer with a store, and a shopper device, against a fresh server.
    private func setUp(_ server: ServerProcess, _ directory: URL) throws -> [String: String] {
        let retailer = [
            "LOYALTY_HOME": directory.appendingPathComponent("retailer").path, "LOYALTY_SERVER": server.url,
            "LOYALTY_ADMIN_TOKEN": server.adminToken,
        ]
        let registered = try loyalty.run(
            ["retailer", "register", "--name", "Matey's", "--uuid", Self.beaconUUID], environment: retailer)
        try #require(registered.status == 0, "\(registered.stderr)")
        let offer = try loyalty.run(
            ["retailer", "offer", "set", "1", "1", "--title", "Free coffee"], environment: retailer)
        try #require(offer.status == 0, "\(offer.stderr)")
        let set = try loyalty.run(
            [
                "retailer", "store", "set", "carnaby", "--name", "Carnaby Street", "--lat", "51.5136", "--lon",
                "-0.1365",
                "--radius-m", "100", "--json",
            ], environment: retailer)
        try #require(set.status == 0, "\(set.stderr)")
        #expect(set.jsonLines.first?["radius_m"] as? Int == 100)
        let listed = try loyalty.run(["retailer", "store", "list", "--json"], environment: retailer)
        #expect(listed.jsonLines.map { $0["store_id"] as? String } == ["carnaby"])

        let phone = ["LOYALTY_HOME": directory.appendingPathComponent("phone").path, "LOYALTY_SERVER": server.url]
        let account = try loyalty.run(["account", "create"], environment: phone)
        try #require(account.status == 0, "\(account.stderr)")
        return phone
    }

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: gpsfake) || runningUnderCI,
            "needs gpsfake (apt-get install gpsd-clients gpsd)"))
    func gpsdWalkEntersAndExitsTheStoreOnce() throws {
        try #require(FileManager.default.isExecutableFile(atPath: gpsfake), "needs gpsfake (apt-get install gpsd-clients gpsd)")
        let server = try ServerProcess()
        let phone = try setUp(server, server.directory)
        let log = server.directory.appendingPathComponent("walk.nmea")
        try writeWalk(to: log)

        let port = try LoopbackSocket.freePort()
        let fake = Process()
        fake.executableURL = URL(fileURLWithPath: gpsfake)
        fake.arguments = ["-q", "-1", "-P", String(port), "-c", "0.05", log.path]
        fake.standardOutput = FileHandle.nullDevice
        fake.standardError = FileHandle.nullDevice
        try fake.run()
        try #require(waitUntil(20) { listening(port) }, "gpsd did not start")
        // gpsfake stays up after its one pass: stop it and the gpsd it started, by their ids.
        defer {
            for child in children(of: fake.processIdentifier) { kill(child, SIGKILL) }
            kill(fake.processIdentifier, SIGKILL)
            fake.waitUntilExit()
        }
        let scan = try loyalty.run(
            ["scan", "--location", "gpsd:127.0.0.1:\(port)", "--json", "--exit-delay", "5", "--exit-margin", "50"],
            environment: phone, timeout: 90)
        #expect(scan.status == 0, "\(scan.stderr)")
        #expect(scan.stderr.contains("beacons are off"))
        let events = scan.jsonLines.filter { ["enter", "exit"].contains($0["event"] as? String) }
        #expect(events.map { $0["event"] as? String } == ["enter", "exit"], "\(scan.stdout)\n\(scan.stderr)")
        for event in events {
            let region = event["region"] as? [String: Any]
            #expect(region?["store"] as? String == "carnaby")
            #expect(region?["retailer"] as? String == "Matey's")
        }
        // gpsd's TPV times are the log's: the enter falls in the walk's first edge crossing.
        let start = 1_767_261_600.0
        if let enter = events.first?["t"] as? Double { #expect((start + 30...start + 50).contains(enter)) }
    }

    @Test func nmeaReplayAndFixedPositionNeedNoGPSD() throws {
        let server = try ServerProcess()
        let phone = try setUp(server, server.directory)
        let log = server.directory.appendingPathComponent("walk.nmea")
        try writeWalk(to: log)
        // A damaged line in the log is skipped and counted.
        try (String(contentsOf: log, encoding: .utf8) + "$GPGGA,100000,5130.00,N,00008.00,W,1,08,0.9,1,M,1,M,,*00\r\n")
            .write(to: log, atomically: true, encoding: .utf8)

        let replay = try loyalty.run(
            ["scan", "--location", "nmea:\(log.path)", "--json", "--exit-delay", "5"], environment: phone)
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(
            replay.jsonLines.compactMap { $0["event"] as? String } == ["enter", "exit", "summary"], "\(replay.stdout)")
        #expect(replay.jsonLines.last?["malformed_skipped"] as? Int == 1)
        #expect(replay.jsonLines.last?["fixes"] as? Int == walk.count)

        // The area the scan synced is in the cache: an offline scan at the store still knows it.
        let fixed = try loyalty.run(
            ["scan", "--location", "fixed:51.5137,-0.1365", "--json", "--offline"], environment: phone)
        #expect(fixed.jsonLines.compactMap { $0["event"] as? String } == ["enter"], "\(fixed.stdout)\(fixed.stderr)")
        let elsewhere = try loyalty.run(
            ["scan", "--location", "fixed:48.8606,2.3376", "--json", "--offline"], environment: phone)
        #expect(elsewhere.jsonLines.isEmpty)

        let synced = try loyalty.run(
            ["sync", "--all", "--near", "48.8606,2.3376", "--radius-km", "5", "--json"], environment: phone)
        #expect(synced.status == 0 && synced.jsonLines.first?["cached_offers"] as? Int == 0, "\(synced.stderr)")
        let gone = try loyalty.run(
            ["scan", "--location", "fixed:51.5137,-0.1365", "--json", "--offline"], environment: phone)
        #expect(gone.jsonLines.isEmpty, "the Paris area holds no London store")

        let bad = try loyalty.run(["scan", "--location", "gps:somewhere"], environment: phone)
        #expect(bad.status == 64)
        let badNear = try loyalty.run(["sync", "--near", "95,0"], environment: phone)
        #expect(badNear.status == 64)
    }
    /// A capture and a NMEA walk of the same two minutes, replayed together: the store's enter and
    /// exit and the beacon's enter, ranging and offer, on one clock, the same on every run.
    @Test func replayMergesBeaconsAndGeofencesByTime() throws {
        let server = try ServerProcess()
        let phone = try setUp(server, server.directory)
        let log = server.directory.appendingPathComponent("walk.nmea")
        let capture = server.directory.appendingPathComponent("walk.btsnoop")
        // `beacon simulate` starts its captures at 1_700_000_000 (2023-11-14T22:13:20Z).
        try writeWalk(to: log, start: 1_700_000_000)
        let simulated = try loyalty.run(
            ["beacon", "simulate", "--write", capture.path, "--walk", "\(Self.beaconUUID):1:1@0=15,50=1,70=1,90=15,119=15"],
            environment: phone)
        try #require(simulated.status == 0, "\(simulated.stderr)")

        let arguments = [
            "scan", "--replay", capture.path, "--location", "nmea:\(log.path)", "--json", "--exit-delay", "5",
        ]
        // A copy of the phone as it is now replays the same files a second time, from the same state.
        let twin = server.directory.appendingPathComponent("twin")
        try FileManager.default.copyItem(atPath: try #require(phone["LOYALTY_HOME"]), toPath: twin.path)
        let first = try loyalty.run(arguments, environment: phone)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(!first.stderr.contains("beacons are off"))
        let lines = first.jsonLines
        let timed = lines.filter { $0["t"] != nil }
        let times = timed.compactMap { $0["t"] as? Double }
        #expect(times.count == timed.count)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "\(first.stdout)")

        let stores = lines.filter { ($0["region"] as? [String: Any])?["store"] as? String == "carnaby" }
        #expect(stores.map { $0["event"] as? String } == ["enter", "exit"], "\(first.stdout)")
        let beaconEvents = lines.filter { $0["region"] is String }.compactMap { $0["event"] as? String }
        #expect(beaconEvents.first == "enter", "\(first.stdout)")
        #expect(lines.contains { $0["event"] as? String == "range" })
        #expect(lines.contains { $0["event"] as? String == "offer" }, "\(first.stdout)")
        // Beacon lines come both before and after the store's enter: the timelines interleave.
        if let enter = stores.first?["t"] as? Double {
            #expect(times.contains { $0 < enter } && times.contains { $0 > enter })
        }
        let summaries = lines.filter { $0["event"] as? String == "summary" }
        #expect(summaries.contains { $0["beacon_frames"] as? Int ?? 0 > 0 })
        #expect(summaries.contains { $0["fixes"] as? Int == walk.count })

        let second = try loyalty.run(arguments, environment: phone.merging(["LOYALTY_HOME": twin.path]) { $1 })
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout == first.stdout)

        let gpsd = try loyalty.run(["scan", "--replay", capture.path, "--location", "gpsd"], environment: phone)
        #expect(gpsd.status == 64)
    }
}
