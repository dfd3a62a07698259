import Foundation
import LoyaltyTesting
import Postgres
import Testing

/// The short, always-run versions of `make check`'s fault part: the real server (with its own embedded
/// PostgreSQL) and the real client, one fault each. `scripts/check-faults.py` runs them under load.
@Suite(.serialized) struct FaultToleranceTests {
    let loyalty = Binary("loyalty")
    let uuid = "8F0C1DDC-11E5-4A07-8910-425941B072F9"

    /// The network to the server is cut: scan still shows the cached offers, sync fails saying so and keeps the
    /// outbox, and once the server is reachable the next sync delivers everything that was seen.
    @Test func aClientCutOffFromTheServerWorksOfflineAndSyncsLater() throws {
        let server = try LoyaltyServerProcess()
        defer { server.stop() }
        let phone = try server.shopperWithCatalog(retailerUUID: uuid, offers: 3)
        let walk = try server.walk(uuid: uuid, minors: [1, 2, 3])
        let unreachable = ["LOYALTY_SERVER": "http://127.0.0.1:\(try LoopbackSocket.freePort())"]

        let scan = try loyalty.run(
            ["scan", "--replay", walk, "--json"], environment: phone.merging(unreachable) { $1 })
        #expect(scan.status == 0, "\(scan.stderr)")
        #expect(offerIDs(scan).count == 3)
        let offline = try loyalty.run(["sync", "--json"], environment: phone.merging(unreachable) { $1 })
        #expect(offline.status == 75 && offline.stderr.contains("could not connect"), "\(offline.stderr)")

        let online = try loyalty.run(["sync", "--json"], environment: phone)
        #expect(online.jsonLines.first?["pushed"] as? Int == 3, "\(online.stdout) \(online.stderr)")
        let again = try loyalty.run(["sync", "--json"], environment: phone)
        #expect(again.jsonLines.first?["pushed"] as? Int == 0)
    }

    /// `loyalty scan` SIGKILLed part-way, then run again: every offer of the walk is shown over the runs, none
    /// twice unless the kill fell between its line and the scan's record of it (then its line is the last the
    /// killed scan printed), and the next sync sends each once.
    @Test func aScanKilledPartWayLosesNothingAndRepeatsOnlyWhatTheKillCut() throws {
        let server = try LoyaltyServerProcess()
        defer { server.stop() }
        let phone = try server.shopperWithCatalog(retailerUUID: uuid, offers: 20)
        let walk = try server.walk(uuid: uuid, minors: Array(1...20))
        var shown: [String] = []
        var cutAfter: [String] = []
        var killed = 0
        // Each kill lands mid-way: right after the scan printed that many more offers, while it goes on.
        for offers in [1, 4, 2] {
            let (output, wasRunning) = try loyalty.runKilled(
                after: { self.offerIDs($0).count >= offers }, ["scan", "--replay", walk, "--json", "--offline"],
                environment: phone)
            shown += offerIDs(output)
            killed += wasRunning ? 1 : 0
            if wasRunning, let last = offerIDs(output).last { cutAfter.append(last) }
        }
        let last = try loyalty.run(["scan", "--replay", walk, "--json", "--offline"], environment: phone)
        shown += offerIDs(last)
        #expect(killed == 3, "a scan ended before its kill: the walk is too short to test this")
        let again = Set(shown.filter { offer in shown.count { $0 == offer } > 1 })
        let unexplained = again.filter { offer in shown.count { $0 == offer } - 1 > cutAfter.count { $0 == offer } }
        #expect(Set(shown).count == 20 && unexplained.isEmpty, "\(shown.count) shown, \(Set(shown).count) distinct: \(shown)")
        let sync = try loyalty.run(["sync", "--json"], environment: phone)
        #expect(sync.jsonLines.first?["pushed"] as? Int == 20, "\(sync.stdout) \(sync.stderr)")
    }

    /// A kill between an offer's claim (recorded as seen, in the outbox) and its line: strace SIGKILLs the scan
    /// as it enters its first write(2) to standard output (a file, which `-P` traces alone), the one that comes
    /// with the first offer (the range lines before it wait in the output buffer). The next scan shows that
    /// offer, and the outbox holds each offer once.
    @Test func anOfferClaimedButKilledBeforeItsLineShowsInTheNextScan() throws {
        let server = try LoyaltyServerProcess()
        defer { server.stop() }
        let phone = try server.shopperWithCatalog(retailerUUID: uuid, offers: 3)
        let walk = try server.walk(uuid: uuid, minors: [1, 2, 3])
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("claimed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        _ = try Binary(at: "sh").run(
            [
                "-c", "exec strace -f -qq -o /dev/null -P \"$0\" -e trace=write -e inject=write:signal=KILL:when=1 "
                    + "\"$1\" scan --replay \"$2\" --json --offline > \"$0\"", output.path, loyalty.url.path, walk,
            ], environment: phone)
        let killed = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        #expect(offerIDs(killed).isEmpty && killed.isEmpty, "the kill came after a write: \(killed.suffix(500))")
        let next = try loyalty.run(["scan", "--replay", walk, "--json", "--offline"], environment: phone)
        #expect(offerIDs(next) == ["1/1", "1/2", "1/3"], "\(next.stdout.suffix(2000)) \(next.stderr)")
        let sync = try loyalty.run(["sync", "--json"], environment: phone)
        #expect(sync.jsonLines.first?["pushed"] as? Int == 3, "\(sync.stdout) \(sync.stderr)")
    }

    /// The server SIGKILLed after answering a redemption: restarted on the same data, it still has it (a
    /// second redemption of a once-per-shopper offer is refused), and it serves again at once.
    @Test func aRedemptionAnsweredBeforeTheServerIsKilledIsStillThere() throws {
        let server = try LoyaltyServerProcess()
        defer { server.stop() }
        let phone = try server.shopperWithCatalog(retailerUUID: uuid, offers: 1)
        let visit = try loyalty.run(["scan", "--replay", try server.walk(uuid: uuid, minors: [1])], environment: phone)
        #expect(visit.status == 0, "\(visit.stderr)")
        let first = try loyalty.run(["redeem", "\(uuid):1:1", "--json"], environment: phone)
        #expect(first.status == 0, "\(first.stderr)")
        let code = first.jsonLines.first?["code"] as? String
        #expect(code != nil)

        try server.killAndRestart()
        let history = try loyalty.run(["history", "--json"], environment: phone)
        #expect(history.stdout.contains(code ?? "-"))
        let second = try loyalty.run(["redeem", "\(uuid):1:1"], environment: phone)
        #expect(second.status != 0 && second.stderr.contains("limit"), "\(second.stdout) \(second.stderr)")
    }

    /// PostgreSQL stopped under the running server: a sync is refused with the server's 503 (the client says
    /// so and keeps its outbox), the server keeps running, and once PostgreSQL is back the same server
    /// delivers everything without a restart.
    @Test func aServerWhoseDatabaseStopsAnswers503AndRecoversByItself() throws {
        let server = try LoyaltyServerProcess()
        defer { server.stop() }
        let phone = try server.shopperWithCatalog(retailerUUID: uuid, offers: 2)
        let walk = try server.walk(uuid: uuid, minors: [1, 2])
        #expect(try loyalty.run(["scan", "--replay", walk, "--json", "--offline"], environment: phone).status == 0)

        try server.postgres("stop", "-m", "fast")
        let refused = try loyalty.run(["sync", "--json"], environment: phone)
        #expect(refused.status != 0 && refused.stderr.contains("database"), "\(refused.stderr)")
        #expect(server.isRunning)

        try server.postgres("start")
        let delivered = try loyalty.run(["sync", "--json"], environment: phone)
        #expect(delivered.jsonLines.first?["pushed"] as? Int == 2, "\(delivered.stdout) \(delivered.stderr)")
    }

    private func offerIDs(_ result: Binary.Result) -> [String] { offerIDs(result.stdout) }

    private func offerIDs(_ output: String) -> [String] {
        output.split(separator: "\n").compactMap { line in
            guard let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                event["event"] as? String == "offer", let offer = event["offer"] as? [String: Any]
            else { return nil }
            return "\(offer["major"] ?? "")/\(offer["minor"] ?? "")"
        }
    }
}

/// A `loyalty-server` on loopback with its own embedded PostgreSQL in a scratch directory, or on `databaseURL`.
final class LoyaltyServerProcess {
    let directory: URL
    let port: UInt16
    let adminToken: String
    private let databaseURL: String?
    private let environment: [String: String]
    /// Children are spawned and reaped here rather than through Foundation's Process, whose waitUntilExit never
    /// returned for them under the test runner (the child stayed a zombie).
    private var pid: pid_t = 0
    private let loyalty = Binary("loyalty")

    /// `environment`: more of the server's settings (DATABASE_REPLICA_URL...).
    init(
        databaseURL: String? = nil, environment: [String: String] = [:],
        adminToken: String = "fault-test-\(UUID().uuidString)"
    ) throws {
        self.databaseURL = databaseURL
        self.environment = environment
        self.adminToken = adminToken
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-fault-\(UUID().uuidString)")
        // As root the embedded PostgreSQL runs as `postgres`, which must be able to reach its directory.
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o711])
        port = try LoopbackSocket.freePort()
        try start()
    }

    var url: String { "http://127.0.0.1:\(port)" }

    private func start() throws {
        let log = directory.appendingPathComponent("server.log")
        let arguments = [
            Binary("loyalty-server").url.path, "--listen", "127.0.0.1:\(port)", "--data-dir",
            directory.appendingPathComponent("server").path,
        ]
        var environment = ProcessInfo.processInfo.environment.merging(["LOYALTY_ADMIN_TOKEN": adminToken]) { $1 }
            .merging(self.environment) { $1 }
        environment["DATABASE_URL"] = databaseURL
        pid = try Self.spawn(arguments, environment: environment, output: log.path)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                pid = 0
                throw ServerFailed(log: (try? String(contentsOf: log, encoding: .utf8)) ?? "")
            }
            if (try? String(contentsOf: log, encoding: .utf8))?.contains("listening on") == true, isListening() {
                return
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw ServerFailed(log: "did not start within 60 s")
    }

    /// What the server has logged so far (standard output and error).
    var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
    }

    /// Starts `arguments` with standard output and error appended to `output` and no standard input, as
    /// EmbeddedPostgres.launch starts its daemons (none of this process's descriptors go with it).
    static func spawn(
        _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment, output: String
    ) throws -> pid_t {
        let descriptor = open(output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ServerFailed(log: "cannot open \(output): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        return try EmbeddedPostgres.launch(arguments, environment: environment, output: descriptor)
    }

    private func end(with signal: Int32) {
        guard pid > 0 else { return }
        kill(pid, signal)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        pid = 0
    }

    private func isListening() -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    func killAndRestart() throws {
        end(with: SIGKILL)
        // The next start must wait for the new process's own line, not the old one's.
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("server.log"))
        try start()
    }

    var isRunning: Bool { pid > 0 && kill(pid, 0) == 0 }

    /// pg_ctl on the server's embedded cluster, as the user it runs as (`postgres` when we are root).
    func postgres(_ action: String, _ options: String...) throws {
        let cluster = directory.appendingPathComponent("server/pg")
        var arguments = [action, "-D", cluster.appendingPathComponent("data").path, "-w"] + options
        if action == "start" {
            let socket = cluster.appendingPathComponent("run").path
            arguments += [
                "-l", cluster.appendingPathComponent("postgresql.log").path, "-o",
                "-c listen_addresses='' -p 5432 -k \(socket) -c unix_socket_permissions=0700",
            ]
        }
        let pgCtl = "/usr/lib/postgresql/15/bin/pg_ctl"
        let command =
            geteuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--", pgCtl] + arguments : [pgCtl] + arguments
        let child = try Self.spawn(command, output: "/dev/null")
        var status: Int32 = 0
        guard waitpid(child, &status, 0) == child, status == 0 else {
            throw ServerFailed(log: "pg_ctl \(action) failed")
        }
    }

    /// SIGTERM: the server stops its PostgreSQL before it exits.
    func stop() {
        end(with: SIGTERM)
        try? FileManager.default.removeItem(at: directory)
    }

    /// A retailer with `offers` offers at major 1, minors 1..., and a shopper that has synced them: the
    /// shopper's environment for `Binary.run`.
    func shopperWithCatalog(retailerUUID: String, offers: Int) throws -> [String: String] {
        try check(
            loyalty.run(["retailer", "register", "--name", "Matey's", "--uuid", retailerUUID], environment: retailer))
        for minor in 1...offers {
            try check(
                loyalty.run(
                    ["retailer", "offer", "set", "1", "\(minor)", "--title", "Offer \(minor)", "--category", "food"],
                    environment: retailer))
        }
        let phone = ["LOYALTY_HOME": directory.appendingPathComponent("phone").path, "LOYALTY_SERVER": url]
        try check(loyalty.run(["account", "create"], environment: phone))
        try check(loyalty.run(["sync"], environment: phone))
        return phone
    }

    /// The environment of the retailer `shopperWithCatalog` registered.
    var retailer: [String: String] {
        [
            "LOYALTY_HOME": directory.appendingPathComponent("retailer").path, "LOYALTY_SERVER": url,
            "LOYALTY_ADMIN_TOKEN": adminToken,
        ]
    }

    /// A capture passing each minor's beacon in turn, near (1 m) for 4 seconds.
    func walk(uuid: String, minors: [Int]) throws -> String {
        let file = directory.appendingPathComponent("walk-\(minors.count).btsnoop").path
        let end = 8 * minors.count + 8
        // Every 20 ms, the shortest iBeacon allows (not the default 100): five times the reports, so the replay goes
        // on long enough past each offer that a kill due on its line lands while the scan still runs (with the
        // faster JSON output, one scan ended first: 2 of 3 kills landed).
        var arguments = ["beacon", "simulate", "--write", file, "--interval-ms", "20"]
        for (index, minor) in minors.enumerated() {
            let t = 8 * index + 2
            arguments += ["--walk", "\(uuid):1:\(minor)@0=20,\(t)=20,\(t + 1)=1,\(t + 5)=1,\(t + 6)=20,\(end)=20"]
        }
        try check(loyalty.run(arguments))
        return file
    }

    private func check(_ result: Binary.Result) throws {
        guard result.status == 0 else { throw ServerFailed(log: result.stderr) }
    }
}

private struct ServerFailed: Error, CustomStringConvertible {
    let log: String
    var description: String { "loyalty-server or loyalty failed: \(log)" }
}

extension Binary {
    /// Starts the program, SIGKILLs it once its standard output so far satisfies `due` (or it ended); that
    /// output, and whether it was still running when killed.
    func runKilled(after due: (String) -> Bool, _ arguments: [String], environment: [String: String]) throws -> (
        String, Bool
    ) {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("killed-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        while process.isRunning, !due((try? String(contentsOf: output, encoding: .utf8)) ?? "") { usleep(1_000) }
        let wasRunning = process.isRunning
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return ((try? String(contentsOf: output, encoding: .utf8)) ?? "", wasRunning)
    }
}
