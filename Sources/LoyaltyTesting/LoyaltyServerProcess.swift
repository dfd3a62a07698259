import Foundation
import Postgres
import SystemCalls

#if canImport(Glibc)
    import Glibc
#endif

/// A `loyalty-server` on loopback with its own embedded PostgreSQL in a scratch directory, or on `databaseURL`.
public final class LoyaltyServerProcess {
    public let directory: URL
    public let port: UInt16
    public let adminToken: String
    private let databaseURL: String?
    private let environment: [String: String]
    /// Children are spawned and reaped here rather than through Foundation's Process, whose waitUntilExit never
    /// returned for them under the test runner (the child stayed a zombie).
    private var pid: pid_t = 0
    private let loyalty = Binary("loyalty")

    /// `environment`: more of the server's settings (DATABASE_REPLICA_URL...).
    public init(
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

    public var url: String { "http://127.0.0.1:\(port)" }

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
    public var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
    }

    /// Starts `arguments` with standard output and error appended to `output` and no standard input, as
    /// EmbeddedPostgres.launch starts its daemons (none of this process's descriptors go with it).
    public static func spawn(
        _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment, output: String
    ) throws -> pid_t {
        let descriptor = open(output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ServerFailed(log: "cannot open \(output): \(errorText())")
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

    public func killAndRestart() throws {
        end(with: SIGKILL)
        // The next start must wait for the new process's own line, not the old one's.
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("server.log"))
        try start()
    }

    public var isRunning: Bool { pid > 0 && kill(pid, 0) == 0 }

    /// pg_ctl on the server's embedded cluster, as the user it runs as (`postgres` when we are root).
    public func postgres(_ action: String, _ options: String...) throws {
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
    public func stop() {
        end(with: SIGTERM)
        try? FileManager.default.removeItem(at: directory)
    }

    /// A retailer with `offers` offers at major 1, minors 1..., and a shopper that has synced them: the
    /// shopper's environment for `Binary.run`.
    public func shopperWithCatalog(retailerUUID: String, offers: Int) throws -> [String: String] {
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
    public var retailer: [String: String] {
        [
            "LOYALTY_HOME": directory.appendingPathComponent("retailer").path, "LOYALTY_SERVER": url,
            "LOYALTY_ADMIN_TOKEN": adminToken,
        ]
    }

    /// A capture passing each minor's beacon in turn, near (1 m) for 4 seconds.
    public func walk(uuid: String, minors: [Int]) throws -> String {
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
