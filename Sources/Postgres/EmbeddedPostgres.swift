import Foundation
import SystemCalls

/// A private PostgreSQL cluster run with the machine's PostgreSQL binaries, reachable only through an owner-only
/// Unix socket, created on first start and reused after; as root it runs as the `postgres` user. Its layout,
/// the socket's place and why connections are trusted: docs/DEVELOPING.md, "The embedded PostgreSQL cluster".
public final class EmbeddedPostgres: @unchecked Sendable {  // mutable state is guarded by `lock`
    /// The directory asked for; `clusterDirectory` says where the cluster actually lives.
    public let directory: URL
    private let durable: Bool
    private let log: @Sendable (String) -> Void
    private let lock = NSLock()
    private var cluster: Cluster?

    /// The socket file is `.s.PGSQL.<port>` in the cluster's own socket directory, so one port fits all.
    private static let port = 5432

    /// Where the cluster runs and who runs it, settled by the first `start()`.
    private struct Cluster {
        var binaries: URL
        var directory: URL
        var socketDirectory: URL
        /// The user PostgreSQL runs as when this process is root; nil runs it as this process's user.
        var serverUser: String?
        var data: URL { directory.appendingPathComponent("data") }
        var logFile: URL { directory.appendingPathComponent("postgresql.log") }
    }

    /// `log` receives the launcher's few notices (such as the cluster moving); by default they go to stderr.
    public convenience init(
        directory: URL,
        log: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data("\($0)\n".utf8)) }
    ) {
        self.init(directory: directory, durable: true, log: log)
    }

    /// `durable: false` trades crash safety for speed (no fsync): only for throwaway test clusters.
    package init(directory: URL, durable: Bool, log: @escaping @Sendable (String) -> Void) {
        self.directory = directory.standardizedFileURL
        self.durable = durable
        self.log = log
    }

    /// Where the cluster lives once started: `directory`, or the fallback a root-run server could reach.
    public var clusterDirectory: URL? {
        lock.lock()
        defer { lock.unlock() }
        return cluster?.directory
    }

    /// Creates the cluster if needed and starts it (or adopts one already running in it).
    /// Returns the conninfo of its `postgres` database.
    public func start() throws(PostgresError) -> String {
        Self.conninfo(try startedCluster(), database: "postgres")
    }

    /// Creates database `name` unless it exists (a server restarting on its cluster keeps its data) and returns
    /// its conninfo. Starts the cluster first if needed.
    public func createDatabase(_ name: String) throws(PostgresError) -> String {
        guard !name.isEmpty, name.utf8.count <= 63, !name.utf8.contains(0) else {
            throw PostgresError(kind: .launcher, message: "a database name is 1 to 63 bytes, without NUL")
        }
        let cluster = try startedCluster()
        let administration = try PostgresConnection(conninfo: Self.conninfo(cluster, database: "postgres"))
        let quotedName = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        do {
            try administration.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(quotedName)"))
        } catch where error.sqlState == PostgresError.SQLState.duplicateDatabase {
            // duplicate_database: keep it
        }
        return Self.conninfo(cluster, database: name)
    }

    /// The conninfo of database `name` (which must exist, or come by replication on a standby). Starts the
    /// cluster first if needed.
    package func conninfo(database name: String) throws(PostgresError) -> String {
        Self.conninfo(try startedCluster(), database: name)
    }

    /// The socket directory and port of the running cluster, and the user it runs as (nil: this process's),
    /// for a pooler in front of it. Starts the cluster first if needed.
    package func socket() throws(PostgresError)
        -> (directory: URL, port: Int, serverUser: String?, clusterDirectory: URL)
    {
        let cluster = try startedCluster()
        return (cluster.socketDirectory, Self.port, cluster.serverUser, cluster.directory)
    }

    private func startedCluster() throws(PostgresError) -> Cluster {
        lock.lock()
        defer { lock.unlock() }
        let cluster: Cluster
        if let prepared = self.cluster {
            cluster = prepared
        } else {
            cluster = try prepare()
            self.cluster = cluster
        }
        if try !isRunning(cluster) {
            try startServer(cluster)
        }
        return cluster
    }

    /// Stops the server (pg_ctl stop -m fast; a throwaway test cluster, -m immediate): connections are closed,
    /// the data is kept. Idempotent.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard let cluster, (try? isRunning(cluster)) == true else { return }
        _ = try? run(
            cluster, "pg_ctl",
            ["stop", "-w", "-t", "60", "-m", durable ? "fast" : "immediate", "-D", cluster.data.path])
    }

    // MARK: - Creating and starting

    private func prepare() throws(PostgresError) -> Cluster {
        let binaries = try Self.findBinaries()
        var serverUser: String?
        var ownerID: (uid_t, gid_t)?
        if geteuid() == 0 {
            guard let account = getpwnam("postgres") else {
                throw PostgresError(
                    kind: .launcher,
                    message: "PostgreSQL refuses to run as root and there is no `postgres` user to run it as: "
                        + "create one (useradd --system postgres) or run as another user")
            }
            serverUser = "postgres"
            ownerID = (account.pointee.pw_uid, account.pointee.pw_gid)
        }

        var clusterDirectory = directory
        try Self.makeDirectory(clusterDirectory)
        if let serverUser, let ownerID {
            let parent = clusterDirectory.deletingLastPathComponent().path
            if try Self.spawn(
                ["/usr/bin/test", "-x", parent], as: serverUser, in: URL(fileURLWithPath: "/"), output: nil) != 0
            {
                clusterDirectory = URL(fileURLWithPath: "/var/lib/embedded-postgres", isDirectory: true)
                    .appendingPathComponent("\(directory.lastPathComponent)-\(Self.hash(directory.path))")
                log(
                    "embedded-postgres: user \(serverUser) cannot reach \(directory.path); "
                        + "the cluster lives in \(clusterDirectory.path) instead")
                try Self.makeDirectory(clusterDirectory)
            }
            try Self.own(clusterDirectory, by: ownerID)
        }
        guard chmod(clusterDirectory.path, 0o700) == 0 else {
            throw PostgresError(kind: .launcher, message: "cannot restrict \(clusterDirectory.path): \(errorText())")
        }
        // pg_ctl, running as the server's user, appends the server's output to the log.
        let logFile = clusterDirectory.appendingPathComponent("postgresql.log")
        let descriptor = open(logFile.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw PostgresError(kind: .launcher, message: "cannot create \(logFile.path): \(errorText())")
        }
        close(descriptor)
        if let ownerID { try Self.own(logFile, by: ownerID) }

        var socketDirectory = clusterDirectory.appendingPathComponent("run")
        if socketDirectory.path.utf8.count + ".s.PGSQL.\(Self.port)".utf8.count + 1 >= 108 {
            socketDirectory = URL(fileURLWithPath: "/tmp/embedded-postgres-\(Self.hash(clusterDirectory.path))")
        }
        try Self.makePrivateDirectory(socketDirectory, ownedBy: ownerID ?? (geteuid(), getegid()))

        let cluster = Cluster(
            binaries: binaries, directory: clusterDirectory, socketDirectory: socketDirectory, serverUser: serverUser)
        try initializeIfNeeded(cluster)
        return cluster
    }

    /// initdb into `data.partial`, renamed to `data` only once complete: a half-made cluster is never started.
    private func initializeIfNeeded(_ cluster: Cluster) throws(PostgresError) {
        let files = FileManager.default
        guard !files.fileExists(atPath: cluster.data.appendingPathComponent("PG_VERSION").path) else { return }
        let partial = cluster.directory.appendingPathComponent("data.partial")
        try? files.removeItem(at: partial)
        var arguments = [
            "-D", partial.path, "-U", "postgres", "--auth-local=trust", "--auth-host=reject", "-E", "UTF8",
            "--no-locale",
        ]
        if !durable { arguments.append("--no-sync") }
        guard try run(cluster, "initdb", arguments) == 0 else {
            throw PostgresError(kind: .launcher, message: "initdb failed: \(Self.tail(of: cluster.logFile))")
        }
        do {
            try files.moveItem(at: partial, to: cluster.data)
        } catch {
            throw PostgresError(kind: .launcher, message: "cannot move the new cluster into place: \(error)")
        }
    }

    private func startServer(_ cluster: Cluster) throws(PostgresError) {
        var settings = [
            "-c listen_addresses=''",
            "-p \(Self.port)",
            "-k \(Self.shellQuoted(cluster.socketDirectory.path))",
            "-c unix_socket_permissions=0700",
            "-c max_connections=200",
        ]
        if !durable {
            settings += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        }
        let arguments = [
            "start", "-w", "-t", "60", "-D", cluster.data.path, "-l", cluster.logFile.path,
            "-o", settings.joined(separator: " "),  // pg_ctl hands this to a shell: hence the quoting above
        ]
        guard try run(cluster, "pg_ctl", arguments) == 0 else {
            throw PostgresError(kind: .launcher, message: "pg_ctl start failed: \(Self.tail(of: cluster.logFile))")
        }
    }

    /// pg_ctl status: 0 running, 3 not running, 4 no cluster.
    private func isRunning(_ cluster: Cluster) throws(PostgresError) -> Bool {
        try run(cluster, "pg_ctl", ["status", "-D", cluster.data.path]) == 0
    }

    private func run(_ cluster: Cluster, _ program: String, _ arguments: [String]) throws(PostgresError) -> Int32 {
        let output = open(cluster.logFile.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard output >= 0 else {
            throw PostgresError(kind: .launcher, message: "cannot open \(cluster.logFile.path): \(errorText())")
        }
        defer { close(output) }
        let command = [cluster.binaries.appendingPathComponent(program).path] + arguments
        return try Self.spawn(command, as: cluster.serverUser, in: cluster.directory, output: output)
    }

    /// Runs `command` to completion, stdout and stderr to `output` (or /dev/null), and returns its exit status.
    /// With `user`, it runs as that user through runuser(1), in `directory` (the caller's may be unreachable for
    /// that user, such as /root). posix_spawn and waitpid, not Foundation's Process, whose reaping of children
    /// hangs inside test runners.
    package static func spawn(
        _ command: [String], as user: String?, in directory: URL, output: Int32?
    ) throws(PostgresError) -> Int32 {
        let argv =
            user.map { ["/usr/sbin/runuser", "-u", $0, "--", "/usr/bin/env", "-C", directory.path] + command }
            ?? command
        let pid = try launch(argv, output: output)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else {
                throw PostgresError(kind: .launcher, message: "lost track of \(argv[0]): \(errorText())")
            }
        }
        // WIFEXITED/WEXITSTATUS are macros Swift does not import: the low 7 bits are the terminating signal.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Starts `argv` without waiting for it: standard input from /dev/null, stdout and stderr to `output` (or
    /// /dev/null), this process's environment less its PG* variables (PGDATA, PGPORT... would override what the
    /// launcher decides) with `environment` on top, and no signal blocked.
    package static func launch(
        _ argv: [String], environment: [String: String] = [:], output: Int32?
    ) throws(PostgresError) -> pid_t {
        let variables = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PG") }
            .merging(environment) { $1 }.map { "\($0)=\($1)" }
        let arguments = argv.map { strdup($0) } + [nil]
        let environment = variables.map { strdup($0) } + [nil]
        defer {
            for pointer in arguments + environment { free(pointer) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let output {
            posix_spawn_file_actions_adddup2(&actions, output, 1)
            posix_spawn_file_actions_adddup2(&actions, output, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // Nothing else of ours goes with it: a daemon holding the write end of another thread's pipe keeps that
        // reader from its end of file for as long as the daemon runs; one holding a listening socket, the port.
        addCloseDescriptors(from: 3, to: &actions)
        // The caller's thread may block signals (dispatch's threads do) and a child inherits the mask: a daemon
        // started with SIGTERM blocked could never be stopped.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var pid = pid_t()
        let failure = posix_spawn(&pid, argv[0], &actions, &attributes, arguments, environment)
        guard failure == 0 else {
            throw PostgresError(
                kind: .launcher, message: "cannot run \(argv[0]): \(errorText(failure))")
        }
        return pid
    }

    // MARK: - Finding things, files, text

    /// The highest /usr/lib/postgresql/<version>/bin holding initdb and pg_ctl, else the first such PATH entry.
    package static func findBinaries() throws(PostgresError) -> URL {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .map { ($0, $0.split(separator: ".").compactMap { Int($0) }) }
            .filter { !$0.1.isEmpty }
            .sorted { $0.1.lexicographicallyPrecedes($1.1) }
            .reversed()
            .map { "\(root)/\($0.0)/bin" }
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(
            String.init)
        for candidate in versions + path
        where FileManager.default.isExecutableFile(atPath: "\(candidate)/initdb")
            && FileManager.default.isExecutableFile(atPath: "\(candidate)/pg_ctl")
        {
            return URL(fileURLWithPath: candidate, isDirectory: true)
        }
        throw PostgresError(
            kind: .launcher,
            message: "PostgreSQL's initdb and pg_ctl were not found in /usr/lib/postgresql/*/bin or PATH: "
                + "install the server (apt-get install postgresql)")
    }

    private static func makeDirectory(_ directory: URL) throws(PostgresError) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw PostgresError(kind: .launcher, message: "cannot create \(directory.path): \(error)")
        }
    }

    package static func own(_ file: URL, by owner: (uid_t, gid_t)) throws(PostgresError) {
        guard chown(file.path, owner.0, owner.1) == 0 else {
            throw PostgresError(kind: .launcher, message: "cannot hand \(file.path) to the server: \(errorText())")
        }
    }

    /// A directory only `owner` may enter. An existing one must already be exactly that (not a symlink, not
    /// someone else's): a predictable name in /tmp could otherwise be planted by another user.
    private static func makePrivateDirectory(_ directory: URL, ownedBy owner: (uid_t, gid_t)) throws(PostgresError) {
        if mkdir(directory.path, 0o700) == 0 {
            try own(directory, by: owner)
            return
        }
        guard errno == EEXIST else {
            throw PostgresError(kind: .launcher, message: "cannot create \(directory.path): \(errorText())")
        }
        var status = stat()
        guard lstat(directory.path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == owner.0,
            status.st_mode & 0o077 == 0
        else {
            throw PostgresError(
                kind: .launcher, message: "\(directory.path) exists but is not a private directory of the server's user"
            )
        }
    }

    private static func conninfo(_ cluster: Cluster, database: String) -> String {
        "host=\(conninfoQuoted(cluster.socketDirectory.path)) port=\(port) dbname=\(conninfoQuoted(database)) user=postgres"
    }

    /// A value quoted for a libpq (or PgBouncer) connection string.
    package static func conninfoQuoted(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    private static func shellQuoted(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// FNV-1a, 64 bits, in hex: a stable short name for a path.
    private static func hash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    /// The last lines of a log, for an error message.
    package static func tail(of file: URL) -> String {
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n").suffix(5).joined(separator: " | ")
        return lines.isEmpty ? "see \(file.path)" : "\(lines) (log: \(file.path))"
    }
}
