import Foundation
import HTTPClient
import Postgres
import SystemCalls

/// A PostgreSQL high-availability cluster on this machine, as a deployment runs one: etcd (Debian's etcd-server
/// 3.4, v2 API on), three PostgreSQL 15 members under Patroni (Debian's 3.0) configured from the shipped
/// `deploy/patroni/patroni.yml`, and HAProxy on the shipped `deploy/haproxy.cfg`, routing a primary port and a
/// replica port by Patroni's REST checks.
///
/// Everything lives in a private temporary directory and listens on free loopback ports. As root, Patroni (and so
/// PostgreSQL) runs as `postgres` through setpriv, which execs: the pid kept is Patroni's own. `stop()` ends every
/// process it started, stopped ones included, and removes the directory.
public final class PatroniCluster: @unchecked Sendable {  // members' pids are only changed by the test's thread
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Timings of Patroni's leader lease (`bootstrap.dcs`): the failover takes about ttl + loopWait.
    public struct Timings: Sendable {
        public var ttl: Int
        public var loopWait: Int
        public var retryTimeout: Int
        public init(ttl: Int = 10, loopWait: Int = 1, retryTimeout: Int = 4) {
            self.ttl = ttl
            self.loopWait = loopWait
            self.retryTimeout = retryTimeout
        }
    }

    public final class Member: @unchecked Sendable {
        public let name: String
        public let postgresPort: UInt16
        public let restPort: UInt16
        let directory: URL
        var patroniPID: pid_t = 0

        init(name: String, postgresPort: UInt16, restPort: UInt16, directory: URL) {
            self.name = name
            self.postgresPort = postgresPort
            self.restPort = restPort
            self.directory = directory
        }

        var dataDirectory: URL { directory.appendingPathComponent("data") }
        public var log: URL { directory.appendingPathComponent("patroni.log") }

        /// The postmaster's pid, from its pid file (absent while PostgreSQL is down).
        public var postmasterPID: pid_t? {
            guard
                let text = try? String(
                    contentsOf: dataDirectory.appendingPathComponent("postmaster.pid"), encoding: .utf8),
                let first = text.split(separator: "\n").first, let pid = pid_t(first), pid > 1,
                kill(pid, 0) == 0
            else { return nil }
            return pid
        }
    }

    public let members: [Member]
    public let directory: URL
    /// HAProxy's port that reaches the member Patroni's `/primary` check passes on.
    public let primaryPort: UInt16
    /// HAProxy's port balancing over the members Patroni's `/replica` check passes on.
    public let replicaPort: UInt16
    public let password: String
    public let timings: Timings
    private let etcdPort: UInt16
    private var etcdPID: pid_t = 0
    private var haproxyPID: pid_t = 0
    private let user: String?

    /// Starts etcd, three members and HAProxy, and waits (up to `timeout` seconds) until a leader runs and the
    /// other members stream from it. `synchronous` is Patroni's synchronous_mode.
    public init(synchronous: Bool = true, timings: Timings = Timings(), timeout: Double = 120) throws {
        for program in ["/usr/bin/etcd", "/usr/bin/patroni", "/usr/sbin/haproxy"]
        where !FileManager.default.isExecutableFile(atPath: program) {
            throw Failure(
                "\(program) is missing: apt-get install etcd-server patroni haproxy (make test-deps installs them)"
            )
        }
        self.timings = timings
        user = geteuid() == 0 ? "postgres" : nil
        let directory = try ThrowawayDirectory.make("patroni", postgresMayEnter: true)
        self.directory = directory
        var generator = SystemRandomNumberGenerator()
        password = (0..<2).map { _ in String(generator.next() as UInt64, radix: 16) }.joined()
        etcdPort = try LoopbackSocket.freePort()
        primaryPort = try LoopbackSocket.freePort()
        replicaPort = try LoopbackSocket.freePort()
        members = try (1...3).map { index in
            Member(
                name: "pg\(index)", postgresPort: try LoopbackSocket.freePort(),
                restPort: try LoopbackSocket.freePort(),
                directory: directory.appendingPathComponent("pg\(index)"))
        }
        do {
            try startEtcd()
            let configuration = try Self.configuration(
                template: try String(contentsOf: Self.template, encoding: .utf8), synchronous: synchronous,
                timings: timings, socketDirectory: directory.appendingPathComponent("run"))
            try makeOwnedDirectory(directory.appendingPathComponent("run"), mode: 0o700)
            try write(configuration, to: directory.appendingPathComponent("patroni.yml"))
            for member in members {
                try makeOwnedDirectory(member.directory, mode: 0o700)
                try start(member)
                // The first member bootstraps the cluster alone, so it (not a race of three) becomes the leader.
                if member === members[0] { _ = try waitForLeader(timeout: timeout) }
            }
            try startHAProxy()
            try waitUntilReplicating(timeout: timeout)
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// The shipped example this cluster is configured from.
    public static let template = Repository.root.appendingPathComponent("deploy/patroni/patroni.yml")

    /// `deploy/patroni/patroni.yml` with the test's timings, synchronous mode, loopback network and a private socket
    /// directory; per-member settings (name, addresses, data directory, passwords, etcd) come from PATRONI_*
    /// variables, which Patroni lets override the file.
    static func configuration(template: String, synchronous: Bool, timings: Timings, socketDirectory: URL) throws
        -> String
    {
        var text = template
        let settings: [(key: String, value: String)] = [
            ("ttl", "\(timings.ttl)"), ("loop_wait", "\(timings.loopWait)"),
            ("retry_timeout", "\(timings.retryTimeout)"), ("synchronous_mode", "\(synchronous)"),
        ]
        for (key, value) in settings {
            guard let range = text.range(of: "(?m)^(\\s*)\(key): .*$", options: .regularExpression) else {
                throw Failure("deploy/patroni/patroni.yml has no \(key): line")
            }
            let indent = text[range].prefix { $0 == " " }
            text.replaceSubrange(range, with: "\(indent)\(key): \(value)")
        }
        // The members' network is loopback here, and each member's socket goes to the cluster's own directory.
        let network = "10.0.0.0/24"
        let binaries = "  bin_dir: /usr/lib/postgresql/15/bin\n"
        guard text.contains(network), text.contains(binaries) else {
            throw Failure("deploy/patroni/patroni.yml no longer names \(network) or \(binaries)")
        }
        text = text.replacingOccurrences(of: network, with: "127.0.0.1/32")
        return text.replacingOccurrences(
            of: binaries, with: binaries + "  parameters:\n    unix_socket_directories: \(socketDirectory.path)\n")
    }

    // MARK: - Connection strings

    /// libpq's multi-host string naming every member; `sessionAttributes` is target_session_attrs (read-write
    /// finds the primary, prefer-standby a standby).
    public func membersConninfo(
        database: String = "postgres", sessionAttributes: String = "read-write"
    ) -> String {
        "host=\(members.map { _ in "127.0.0.1" }.joined(separator: ",")) "
            + "port=\(members.map { "\($0.postgresPort)" }.joined(separator: ",")) dbname=\(database) user=postgres "
            + "password=\(password) target_session_attrs=\(sessionAttributes) connect_timeout=2"
    }

    /// Through HAProxy: the primary port, or with `replica` the standbys' port.
    public func haproxyConninfo(database: String = "postgres", replica: Bool = false) -> String {
        "host=127.0.0.1 port=\(replica ? replicaPort : primaryPort) dbname=\(database) user=postgres "
            + "password=\(password) connect_timeout=2"
    }

    /// Creates `name` on the primary, returns the members' read-write string for it.
    public func createDatabase(_ name: String) throws -> String {
        // A test's own name, not input: an identifier cannot be a bound parameter.
        _ = try primaryConnection().query(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name)\""))
        return membersConninfo(database: name)
    }

    /// A connection to the primary, waiting up to `timeout` seconds for one to accept writes (a member Patroni
    /// reports as primary may still be finishing its promotion).
    public func primaryConnection(database: String = "postgres", timeout: Double = 30) throws
        -> PostgresConnection
    {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            do {
                return try PostgresConnection(conninfo: membersConninfo(database: database))
            } catch {
                guard Date() < deadline else { throw Failure("no primary accepts connections: \(error)") }
            }
            Thread.sleep(forTimeInterval: 0.3)
        }
    }

    // MARK: - The leader and faults

    /// The member whose Patroni answers 200 on `/primary` (the leader running as primary), if any.
    public func leader() -> Member? {
        members.first { member in rest(member, "/primary")?.status == 200 }
    }

    /// Waits until a member other than `previous` leads, and returns it.
    @discardableResult
    public func waitForLeader(other previous: Member? = nil, timeout: Double = 60) throws -> Member {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let leader = leader(), leader !== previous { return leader }
            Thread.sleep(forTimeInterval: 0.2)
        }
        throw Failure("no new leader within \(Int(timeout)) s: \(logTails())")
    }

    /// Sends `signal` to the member's Patroni and its PostgreSQL: with SIGKILL or SIGSTOP to every process of
    /// PostgreSQL (postmaster and backends), as a machine that dies or freezes takes them all.
    public func signal(_ member: Member, _ signal: Int32) {
        var pids = member.postmasterPID.map { [$0] + Self.children(of: $0) } ?? []
        if member.patroniPID > 0 { pids.insert(member.patroniPID, at: 0) }
        for pid in pids { kill(pid, signal) }
        if signal == SIGKILL, member.patroniPID > 0 {
            var status: Int32 = 0
            waitpid(member.patroniPID, &status, 0)
            member.patroniPID = 0
        }
    }

    /// Sends `signal` to a primary's WAL senders: SIGSTOP holds replication back (as a slow link or a busy standby
    /// does), SIGCONT lets the standbys catch up.
    public func signalWALSenders(_ member: Member, _ signal: Int32) {
        for pid in member.postmasterPID.map(Self.children(of:)) ?? []
        where (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8))?.contains(
            "walsender") == true
        {
            kill(pid, signal)
        }
    }

    /// Starts a member's Patroni again (after SIGKILL): it rejoins as a standby of the current leader.
    public func restart(_ member: Member) throws {
        if member.patroniPID > 0 { signal(member, SIGKILL) }
        if let pid = member.postmasterPID { kill(pid, SIGKILL) }
        try start(member)
    }

    /// Waits until every member runs and the non-leaders stream from the leader (one of them synchronous, in
    /// synchronous mode).
    public func waitUntilReplicating(timeout: Double = 60) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        while Date() < deadline {
            if let leader = leader(), let answer = rest(leader, "/cluster"),
                let object = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any],
                let states = object["members"] as? [[String: Any]]
            {
                last = String(decoding: answer.body, as: UTF8.self)
                let running = states.filter {
                    ["running", "streaming"].contains($0["state"] as? String ?? "")
                }
                if running.count == members.count { return }
            }
            Thread.sleep(forTimeInterval: 0.3)
        }
        throw Failure("the members did not all stream within \(Int(timeout)) s: \(last) \(logTails())")
    }

    /// Stops etcd (the DCS), as its machine going away does.
    public func stopEtcd() { end(&etcdPID) }

    /// Patroni's REST answer at `path` on `member` (nil when it does not answer within 2 s).
    public func rest(_ member: Member, _ path: String, method: String = "GET", body: String? = nil)
        -> HTTPClientResponse?
    {
        try? HTTPClient().send(
            HTTPClientRequest(
                method: method, url: "http://127.0.0.1:\(member.restPort)\(path)",
                headers: body == nil ? [:] : ["Content-Type": "application/json"],
                body: body.map { Array($0.utf8) },
                connectTimeout: 1, totalTimeout: 2))
    }

    /// Ends everything at once (SIGKILL: the cluster is thrown away, nothing needs a clean shutdown): every
    /// member's Patroni and PostgreSQL, HAProxy and etcd; removes the directory.
    public func stop() {
        for member in members { signal(member, SIGKILL) }
        end(&haproxyPID)
        end(&etcdPID)
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: - Processes

    private func startEtcd() throws {
        let data = directory.appendingPathComponent("etcd")
        let peerPort = try LoopbackSocket.freePort()
        let client = "http://127.0.0.1:\(etcdPort)"
        let peer = "http://127.0.0.1:\(peerPort)"
        etcdPID = try spawn(
            [
                "/usr/bin/etcd", "--name", "etcd1", "--data-dir", data.path, "--listen-client-urls", client,
                "--advertise-client-urls", client, "--listen-peer-urls", peer,
                "--initial-advertise-peer-urls", peer,
                "--initial-cluster", "etcd1=\(peer)", "--enable-v2=true",
            ], log: directory.appendingPathComponent("etcd.log"))
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if (try? HTTPClient().send(
                HTTPClientRequest(url: "\(client)/health", connectTimeout: 1, totalTimeout: 2)))?
                .status == 200
            {
                return
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        throw Failure(
            "etcd did not answer within 30 s: \(EmbeddedPostgres.tail(of: directory.appendingPathComponent("etcd.log")))"
        )
    }

    private func start(_ member: Member) throws {
        let address = "127.0.0.1"
        let environment = [
            "PATRONI_NAME": member.name,
            "PATRONI_RESTAPI_LISTEN": "\(address):\(member.restPort)",
            "PATRONI_RESTAPI_CONNECT_ADDRESS": "\(address):\(member.restPort)",
            "PATRONI_POSTGRESQL_LISTEN": "\(address):\(member.postgresPort)",
            "PATRONI_POSTGRESQL_CONNECT_ADDRESS": "\(address):\(member.postgresPort)",
            "PATRONI_POSTGRESQL_DATA_DIR": member.dataDirectory.path,
            "PATRONI_POSTGRESQL_PGPASS": member.directory.appendingPathComponent("pgpass").path,
            "PATRONI_ETCD_HOSTS": "\(address):\(etcdPort)",
            "PATRONI_SUPERUSER_PASSWORD": password,
            "PATRONI_REPLICATION_PASSWORD": password,
            "PATRONI_REWIND_PASSWORD": password,
            "HOME": member.directory.path,
        ]
        let patroni = ["/usr/bin/patroni", directory.appendingPathComponent("patroni.yml").path]
        let command =
            user.map {
                ["/usr/bin/setpriv", "--reuid=\($0)", "--regid=\($0)", "--init-groups"] + patroni
            } ?? patroni
        member.patroniPID = try spawn(
            command, environment: environment, log: member.log, in: member.directory)
    }

    /// The shipped balancer configuration, whose database ports these tests prove.
    public static let balancer = template.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("haproxy.cfg")

    /// HAProxy on the shipped `deploy/haproxy.cfg`, unchanged: its primary and replica ports route by the members'
    /// REST checks. Its API part has no instances here (BalancerTests and TLSTests prove that part), so it points
    /// at a port nothing listens on, with a throwaway certificate.
    private func startHAProxy() throws {
        var environment = [
            "HAPROXY_MAXCONN": "400",
            "POSTGRES_PRIMARY_BIND": "127.0.0.1:\(primaryPort)",
            "POSTGRES_REPLICAS_BIND": "127.0.0.1:\(replicaPort)",
            "LOYALTY_API_BIND": "127.0.0.1:\(try LoopbackSocket.freePort())",
            "LOYALTY_TLS_CERT": try TestCertificates(in: directory.appendingPathComponent("tls")).serverChainAndKey.path,
        ]
        let nowhere = "127.0.0.1:\(try LoopbackSocket.freePort())"
        for instance in 1...2 { environment["LOYALTY_SERVER_\(instance)"] = nowhere }
        for (index, member) in members.enumerated() {
            environment["PATRONI_\(index + 1)_POSTGRES"] = "127.0.0.1:\(member.postgresPort)"
            environment["PATRONI_\(index + 1)_REST_PORT"] = "\(member.restPort)"
        }
        haproxyPID = try spawn(
            ["/usr/sbin/haproxy", "-db", "-f", Self.balancer.path], environment: environment,
            log: directory.appendingPathComponent("haproxy.log"), naming: Self.balancer)
    }

    /// Starts `command` (not waiting for it) with its output appended to `log`. Killed when this process is gone,
    /// if its command line still names `naming` (a file of the cluster's directory, its data or configuration).
    private func spawn(
        _ command: [String], environment: [String: String] = [:], log: URL, in directory: URL? = nil,
        naming: URL? = nil
    )
        throws -> pid_t
    {
        let output = open(log.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw Failure("cannot open \(log.path): \(errorText())") }
        defer { close(output) }
        // env(1) changes directory and execs, as setpriv does: the pid stays the program's own.
        let command = directory.map { ["/usr/bin/env", "-C", $0.path] + command } ?? command
        let pid = try EmbeddedPostgres.launch(command, environment: environment, output: output)
        OrphanWatch.whenThisProcessEnds(
            run: OrphanWatch.signal("KILL", "\(pid)", ifItsCommandNames: naming ?? self.directory))
        return pid
    }

    private func end(_ pid: inout pid_t) {
        guard pid > 0 else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        pid = 0
    }

    /// The processes whose parent is `parent` (PostgreSQL's backends and helpers), from /proc.
    static func children(of parent: pid_t) -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // After "pid (comm)": state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent ? pid : nil
        }
    }

    private func makeOwnedDirectory(_ directory: URL, mode: mode_t) throws {
        guard mkdir(directory.path, mode) == 0 else { throw Failure("cannot create \(directory.path)") }
        try own(directory)
    }

    private func write(_ text: String, to file: URL) throws {
        try text.write(to: file, atomically: true, encoding: .utf8)
        chmod(file.path, 0o600)
        try own(file)
    }

    private func own(_ file: URL) throws {
        guard let user else { return }
        guard let account = getpwnam(user) else {
            throw Failure("there is no user \(user) to run Patroni as")
        }
        guard chown(file.path, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
            throw Failure("cannot hand \(file.path) to \(user)")
        }
    }

    /// The end of each member's Patroni log, for a failure's message.
    public func logTails() -> String {
        members.map { "\($0.name): \(EmbeddedPostgres.tail(of: $0.log))" }.joined(separator: " ;; ")
    }
}
