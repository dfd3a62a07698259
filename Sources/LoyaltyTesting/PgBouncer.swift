import Foundation
import Postgres
import SystemCalls

/// PgBouncer (the machine's `pgbouncer`; Debian ships 1.18) in transaction pooling mode in front of an
/// `EmbeddedPostgres` cluster, on a free loopback TCP port: what a deployment puts between many server threads
/// (or instances) and PostgreSQL, run here so the tests and the bench go through it too.
///
/// Its files live in a private directory inside the cluster's (`pgbouncer-XXXXXX/`: `pgbouncer.ini`, the auth
/// file, the log and the pid file), removed by `stop()`. One wildcard entry (`* = host=<cluster socket>`) serves
/// every database of the cluster, so a per-test database needs no configuration; create databases on the cluster
/// itself (CREATE DATABASE cannot run inside the transaction a pooled connection lives in). Clients log in as
/// `postgres` with a random password (SCRAM); PgBouncer reaches the cluster through its owner-only socket. As
/// root, PgBouncer runs as the cluster's user (`postgres`), like the cluster.
public final class PgBouncer: @unchecked Sendable {  // immutable after init
    /// Server connections per database (`default_pool_size`): small, because each test has a database of its own.
    public static let defaultPoolSize = 5
    /// Server connections over all databases (`max_user_connections`, everyone logs in as `postgres`); below
    /// `EmbeddedPostgres`'s max_connections (200), which direct connections (CREATE DATABASE) share.
    public static let defaultMaxServerConnections = 120

    public let port: Int
    /// Where the ini, auth file, log and pid file are.
    public let directory: URL
    private let password: String
    private let serverUser: String?

    /// Starts PgBouncer in front of `cluster` (starting the cluster if needed) and waits until it accepts logins.
    /// `poolSize` is `default_pool_size`; `maxServerConnections` caps the server connections of all pools.
    /// Idle server connections close after `serverIdleTimeout` seconds, so the pools of databases no longer in
    /// use give their connections back to the ones in use. A client waits at most `queryWaitTimeout` seconds
    /// for a server connection, then is disconnected: PgBouncer's default (120 s) would hold every request for
    /// two minutes while PostgreSQL is down, where the service should answer 503 at once. After a failed server
    /// login PgBouncer retries after 1 s (not 15), so the service recovers as soon as PostgreSQL is back.
    public init(
        frontOf cluster: EmbeddedPostgres, poolSize: Int = PgBouncer.defaultPoolSize,
        maxServerConnections: Int = PgBouncer.defaultMaxServerConnections, serverIdleTimeout: Int = 2,
        queryWaitTimeout: Int = 5
    ) throws(PostgresError) {
        let socket = try cluster.socket()
        let binary = try Self.findBinary()
        serverUser = socket.serverUser
        directory = try ThrowawayDirectory.make("pgbouncer", in: socket.clusterDirectory)
        // The system generator is getrandom(2) on Linux.
        var generator = SystemRandomNumberGenerator()
        password = (0..<2).map { _ in String(generator.next() as UInt64, radix: 16) }.joined()
        var owner: (uid_t, gid_t)?
        if let serverUser {
            guard let account = getpwnam(serverUser) else {
                throw PostgresError(kind: .launcher, message: "there is no user \(serverUser) to run PgBouncer as")
            }
            owner = (account.pointee.pw_uid, account.pointee.pw_gid)
        }

        let authFile = directory.appendingPathComponent("userlist.txt")
        let logFile = directory.appendingPathComponent("pgbouncer.log")
        // A port found free may be taken before PgBouncer binds it: then try another.
        var lastFailure = ""
        for _ in 0..<3 {
            let port = try Self.freeLoopbackPort()
            let settings = """
                [databases]
                * = host=\(EmbeddedPostgres.conninfoQuoted(socket.directory.path)) port=\(socket.port)

                [pgbouncer]
                listen_addr = 127.0.0.1
                listen_port = \(port)
                unix_socket_dir =
                auth_type = scram-sha-256
                auth_file = \(authFile.path)
                pool_mode = transaction
                max_client_conn = 500
                default_pool_size = \(poolSize)
                max_user_connections = \(maxServerConnections)
                server_idle_timeout = \(serverIdleTimeout)
                query_wait_timeout = \(queryWaitTimeout)
                server_login_retry = 1
                autodb_idle_timeout = 60
                logfile = \(logFile.path)
                pidfile = \(directory.appendingPathComponent("pgbouncer.pid").path)
                """
            try Self.write(settings, to: directory.appendingPathComponent("pgbouncer.ini"), owner: owner)
            try Self.write("\"postgres\" \"\(password)\"\n", to: authFile, owner: owner)
            if let owner { try EmbeddedPostgres.own(directory, by: owner) }

            // -d: PgBouncer detaches once its configuration loaded and its port is bound, or exits non-zero.
            let status = try EmbeddedPostgres.spawn(
                [binary, "-d", "-q", directory.appendingPathComponent("pgbouncer.ini").path], as: serverUser,
                in: directory, output: nil)
            if status == 0, Self.acceptsLogins(Self.conninfo(port: port, password: password, database: "postgres")) {
                self.port = port
                let pidFile = OrphanWatch.quoted(directory.appendingPathComponent("pgbouncer.pid").path)
                OrphanWatch.whenThisProcessEnds(
                    run: "kill -TERM \"$(cat \(pidFile) 2>/dev/null)\" 2>/dev/null; sleep 1; "
                        + "rm -rf \(OrphanWatch.quoted(directory.path))")
                return
            }
            lastFailure = EmbeddedPostgres.tail(of: logFile)
            Self.terminate(pidFile: directory.appendingPathComponent("pgbouncer.pid"))
        }
        try? FileManager.default.removeItem(at: directory)
        throw PostgresError(kind: .launcher, message: "PgBouncer did not start: \(lastFailure)")
    }

    /// The conninfo of `database` (a database of the cluster) through PgBouncer.
    public func conninfo(database: String) -> String {
        Self.conninfo(port: port, password: password, database: database)
    }

    /// Stops PgBouncer at once (SIGTERM: open client connections are closed) and removes its directory.
    public func stop() {
        Self.terminate(pidFile: directory.appendingPathComponent("pgbouncer.pid"))
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: - The PgBouncer shared by a test process

    private static let sharedBouncer: Result<PgBouncer, PostgresError> = {
        do throws(PostgresError) {
            let bouncer = try PgBouncer(frontOf: try EmbeddedPostgres.shared())
            // Registered after the shared cluster's handler, so it runs before it: PgBouncer stops first.
            atexit { PgBouncer.stopShared() }
            return .success(bouncer)
        } catch {
            return .failure(error)
        }
    }()

    /// PgBouncer in front of `EmbeddedPostgres.shared()`, started once per process, stopped at exit.
    public static func shared() throws(PostgresError) -> PgBouncer {
        try sharedBouncer.get()
    }

    private static func stopShared() {
        if case .success(let bouncer) = sharedBouncer { bouncer.stop() }
    }

    // MARK: - Processes and files

    private static func conninfo(port: Int, password: String, database: String) -> String {
        "host=127.0.0.1 port=\(port) dbname=\(EmbeddedPostgres.conninfoQuoted(database)) user=postgres "
            + "password=\(password)"
    }

    /// PgBouncer answers before its listener is up only with a refusal: retry for a few seconds.
    private static func acceptsLogins(_ conninfo: String) -> Bool {
        for _ in 0..<100 {
            if let connection = try? PostgresConnection(conninfo: conninfo), (try? connection.query("SELECT 1")) != nil
            {
                return true
            }
            usleep(50_000)
        }
        return false
    }

    /// SIGTERM to the pid in `pidFile`, then waits (up to 10 s) for PgBouncer to remove the file on its way out.
    private static func terminate(pidFile: URL) {
        guard let text = try? String(contentsOf: pidFile, encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 1
        else { return }
        guard kill(pid, SIGTERM) == 0 else { return }
        for _ in 0..<200 where FileManager.default.fileExists(atPath: pidFile.path) {
            usleep(50_000)
        }
    }

    private static func write(_ text: String, to file: URL, owner: (uid_t, gid_t)?) throws(PostgresError) {
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw PostgresError(kind: .launcher, message: "cannot create \(file.path): \(errorText())")
        }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
            throw PostgresError(kind: .launcher, message: "cannot write \(file.path): \(errorText())")
        }
        if let owner { try EmbeddedPostgres.own(file, by: owner) }
    }

    /// A loopback TCP port nobody listens on now (bind to port 0, read it back, release it).
    private static func freeLoopbackPort() throws(PostgresError) -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw PostgresError(kind: .launcher, message: "socket: \(errorText())") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7f00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw PostgresError(kind: .launcher, message: "no free loopback port: \(errorText())") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func findBinary() throws(PostgresError) -> String {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for directory in ["/usr/sbin", "/usr/bin"] + path
        where FileManager.default.isExecutableFile(atPath: "\(directory)/pgbouncer") {
            return "\(directory)/pgbouncer"
        }
        throw PostgresError(
            kind: .launcher,
            message: "pgbouncer was not found in /usr/sbin, /usr/bin or PATH: apt-get install pgbouncer")
    }
}
