import Arguments
import Dispatch
import Foundation
import HTTPServer
import LoyaltyAPI
import LoyaltyServer
import Postgres

/// The server's settings: the environment's (DATABASE_URL, LOYALTY_LISTEN, LOYALTY_ADMIN_TOKEN), under
/// the arguments' (`loyalty-server [migrate] [--listen HOST:PORT] [--data-dir DIR]`).
struct ServerOptions: Equatable, Sendable {
    var host = "127.0.0.1"
    var port: UInt16 = 8080
    var dataDirectory: URL
    /// libpq conninfo or URL; nil runs the embedded cluster in `dataDirectory/pg`.
    var databaseURL: String?
    /// DATABASE_REPLICA_URL: libpq conninfo of the streaming standbys that serve shoppers' reads (multi-host allowed).
    var replicaURL: String?
    /// DATABASE_NOTIFY_URL: libpq conninfo of the primary itself for the catalog check's LISTEN (not through
    /// PgBouncer's transaction pooling); nil: `databaseURL`.
    var notifyURL: String?
    /// DATABASE_REPLICA_MAX_LAG: seconds a standby's replay may be behind before reads go to the primary.
    var replicaMaxLag: Double = 30
    var operatorToken: String?
    /// `--beacon-key-file` or LOYALTY_BEACON_KEY_FILE: the server keys sealing secure beacons' identity keys; nil
    /// uses DIR/beacon-key, generated on first start.
    var beaconKeyFile: URL?
    /// `loyalty-server migrate`: bring the database's schema up to date, say what was done, and exit.
    var migrateOnly = false
    /// False with `--no-rate-limits`: for load tests, whose clients all share one address.
    var rateLimited = true
    /// `--trusted-proxy` (repeated) and `--proxy-protocol`: the balancers that may name the client.
    var clientAddresses = ClientAddressPolicy()
    /// `--retention-days` or LOYALTY_RETENTION_DAYS: how long seen records and verified sightings are kept.
    var retentionDays = ServerConfiguration.defaultRetentionDays

    /// The settings `arguments` ask for: nil when they ask for help, the version or a completion script.
    static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> ServerOptions?
    {
        guard case .run(let command, let parsed) = try ServerCommand.command(environment: environment).parse(arguments)
        else { return nil }
        return try ServerOptions(parsed, migrateOnly: command.name == "migrate", environment: environment)
    }

    init(_ arguments: ParsedArguments, migrateOnly: Bool, environment: [String: String]) throws(UsageError) {
        let home =
            environment["HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser
        let dataHome =
            environment["XDG_DATA_HOME"].map { URL(fileURLWithPath: $0) }
            ?? home.appendingPathComponent(".local/share")
        dataDirectory = dataHome.appendingPathComponent("loyalty-server")
        self.migrateOnly = migrateOnly
        databaseURL = environment["DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
        operatorToken = environment["LOYALTY_ADMIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        replicaURL = environment["DATABASE_REPLICA_URL"].flatMap { $0.isEmpty ? nil : $0 }
        if let replicaURL, !PostgresConnection.isWellFormed(conninfo: replicaURL) {
            throw arguments.usageError("DATABASE_REPLICA_URL: expected a libpq connection string or postgresql:// URL")
        }
        notifyURL = environment["DATABASE_NOTIFY_URL"].flatMap { $0.isEmpty ? nil : $0 }
        if let notifyURL, !PostgresConnection.isWellFormed(conninfo: notifyURL) {
            throw arguments.usageError("DATABASE_NOTIFY_URL: expected a libpq connection string or postgresql:// URL")
        }
        if let text = environment["DATABASE_REPLICA_MAX_LAG"], !text.isEmpty {
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else {
                throw arguments.usageError("DATABASE_REPLICA_MAX_LAG: expected seconds, e.g. 30")
            }
            replicaMaxLag = seconds
        }
        if let listen = environment["LOYALTY_LISTEN"], !listen.isEmpty {
            guard let address = ListenAddress(listen) else {
                throw arguments.usageError("LOYALTY_LISTEN: expected \(ListenAddress.expected)")
            }
            (host, port) = (address.host, address.port)
        }
        if !migrateOnly, let address = arguments.value(ServerCommand.listen) {
            (host, port) = (address.host, address.port)
        }
        // `migrate` serves nothing and has no such flag.
        rateLimited = migrateOnly || !arguments.flag(ServerCommand.noRateLimits)
        if !migrateOnly {
            var trustedProxies = arguments.values(ServerCommand.trustedProxy)
            if trustedProxies.isEmpty, let listed = environment["LOYALTY_TRUSTED_PROXIES"] {
                for entry in listed.split(whereSeparator: { $0 == "," || $0 == " " }) {
                    guard let range = IPAddressRange(String(entry)) else {
                        throw arguments.usageError("LOYALTY_TRUSTED_PROXIES: '\(entry)': expected \(IPAddressRange.expected)")
                    }
                    trustedProxies.append(range)
                }
            }
            let proxyProtocol = environment["LOYALTY_PROXY_PROTOCOL"] ?? ""
            guard ["", "0", "1"].contains(proxyProtocol) else {
                throw arguments.usageError("LOYALTY_PROXY_PROTOCOL: expected 1 (on) or 0 (off)")
            }
            clientAddresses = ClientAddressPolicy(
                trustedProxies: trustedProxies,
                requiresProxyProtocol: arguments.flag(ServerCommand.proxyProtocol) || proxyProtocol == "1")
            if clientAddresses.requiresProxyProtocol && clientAddresses.trustedProxies.isEmpty {
                throw arguments.usageError(
                    "--proxy-protocol: give the balancer's address with --trusted-proxy CIDR; only it may send "
                        + "the PROXY header")
            }
        }
        if let directory = arguments.value(ServerCommand.dataDirectory) {
            dataDirectory = URL(fileURLWithPath: directory)
        }
        if let text = environment["LOYALTY_RETENTION_DAYS"], !text.isEmpty {
            guard let days = ServerCommand.retentionDays(text) else {
                throw arguments.usageError("LOYALTY_RETENTION_DAYS: expected \(ServerCommand.retentionDaysExpected)")
            }
            retentionDays = days
        }
        if !migrateOnly, let days = arguments.value(ServerCommand.retention) { retentionDays = days }
        if !migrateOnly {
            let keyFile = arguments.value(ServerCommand.beaconKeyFile)
                ?? environment["LOYALTY_BEACON_KEY_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            beaconKeyFile = keyFile.map { URL(fileURLWithPath: $0) }
        }
    }
}

/// Runs the server until SIGTERM or SIGINT: then it stops accepting, answers the requests in flight,
/// stops the embedded cluster and returns.
enum ServerCommand {
    static let listen = Option<ListenAddress>(
        "listen", value: "HOST:PORT",
        help: "Address to serve HTTP on (default 127.0.0.1:8080; port 0 picks a free one).",
        expected: ListenAddress.expected, parse: ListenAddress.init)
    static let dataDirectory = Option<String>(
        "data-dir", value: "DIR",
        help: "State directory (default ~/.local/share/loyalty-server): the embedded PostgreSQL cluster in "
            + "DIR/pg and the generated operator token in DIR/admin-token.",
        expected: "a directory"
    ) { $0.isEmpty ? nil : $0 }

    static let beaconKeyFile = Option<String>(
        "beacon-key-file", value: "FILE",
        help: "The server keys sealing secure beacons' identity keys (one key a line, 64 hex digits; the first "
            + "seals, all open: docs/SECURE-BEACONS.md says how to rotate). Default DIR/beacon-key, generated "
            + "(mode 0600) on first start.",
        expected: "a file"
    ) { $0.isEmpty ? nil : $0 }

    static let noRateLimits = Flag(
        "no-rate-limits",
        help: "Do not slow down account creation, link codes and failed authentications per client address and "
            + "account (for load tests, whose clients all come from one address).")

    static let trustedProxy = Option<IPAddressRange>(
        "trusted-proxy", value: "CIDR",
        help: "A balancer (an address or CIDR block; repeat for more) whose X-Forwarded-For names the client, and "
            + "the only peers --proxy-protocol accepts. The rate limits and request log then see the client, not the "
            + "balancer (with --proxy-protocol the per-address connection cap too). X-Forwarded-For from anyone else "
            + "is ignored and logged.",
        repeatable: true, expected: IPAddressRange.expected, parse: IPAddressRange.init)
    static let proxyProtocol = Flag(
        "proxy-protocol",
        help: "Every connection comes from a --trusted-proxy and begins with a PROXY protocol v2 header "
            + "(HAProxy's send-proxy-v2) naming the client; any other connection is closed and logged.")

    static let retentionDaysExpected =
        "a whole number of days, \(ServerConfiguration.retentionDaysRange.lowerBound) to \(ServerConfiguration.retentionDaysRange.upperBound)"
    static func retentionDays(_ text: String) -> Int? {
        Int(text).flatMap { ServerConfiguration.retentionDaysRange.contains($0) ? $0 : nil }
    }
    static let retention = Option<Int>(
        "retention-days", value: "N",
        help: "Delete seen records and verified sightings older than N days (default "
            + "\(ServerConfiguration.defaultRetentionDays); the retailers' figures keep their counts), at start and "
            + "every 6 hours, in small batches (docs/PRIVACY.md).",
        expected: retentionDaysExpected, parse: retentionDays)

    /// `loyalty-server`, which serves, and `loyalty-server migrate`, with `environment`'s settings.
    static func command(environment: [String: String]) -> Command {
        let migrate = Command(
            name: "migrate",
            summary: "Apply the pending schema migrations, print what was done and exit.",
            discussion: """
                The migrations (migrations/) are applied in one transaction. The server also does this at every
                start, and refuses to start on a schema newer than it knows.
                """,
            options: [dataDirectory],
            run: { arguments in
                let options = try ServerOptions(arguments, migrateOnly: true, environment: environment)
                try logFailure { try run(options) }
            })
        return Command(
            name: "loyalty-server", summary: "The HTTP API of the loyalty system: retailers, offers, stores, shoppers.",
            discussion: """
                ENVIRONMENT:
                  DATABASE_URL         use this PostgreSQL instead of the embedded cluster (multi-host with
                                       target_session_attrs=read-write follows a failover)
                  DATABASE_REPLICA_URL streaming standbys for the shoppers' reads (catalog, seen sets)
                  DATABASE_REPLICA_MAX_LAG  seconds of replay lag after which reads go to the primary (30)
                  DATABASE_NOTIFY_URL  the primary itself, not through PgBouncer, for the catalog check's LISTEN
                                       (default: DATABASE_URL)
                  LOYALTY_LISTEN       HOST:PORT to serve on when --listen is not given
                  LOYALTY_ADMIN_TOKEN  the operator token (POST /v1/retailers); generated into DIR/admin-token when unset
                  LOYALTY_BEACON_KEY_FILE  the beacon key file when --beacon-key-file is not given
                  LOYALTY_TRUSTED_PROXIES  CIDR blocks, separated by commas or spaces, when --trusted-proxy is not given
                  LOYALTY_PROXY_PROTOCOL   1 for --proxy-protocol
                  LOYALTY_RETENTION_DAYS   days seen records and sightings are kept, when --retention-days is not given (180)
                """,
            options: [listen, dataDirectory, beaconKeyFile, noRateLimits, trustedProxy, proxyProtocol, retention],
            globalOptions: [dataDirectory], subcommands: [migrate],
            version: Release.version,
            run: { arguments in
                let options = try ServerOptions(arguments, migrateOnly: false, environment: environment)
                try logFailure { try run(options) }
            })
    }

    /// A failure to start or serve is the log's last line, in its shape, and exit code 1.
    private static func logFailure(_ body: () throws -> Void) throws(SilentExit) {
        do {
            try body()
        } catch {
            ServerLog.standardError(ServerLog.line(.error, "failed", ["error": .string("\(error)")]))
            throw SilentExit(code: ExitCode.failure)
        }
    }

    static func run(_ options: ServerOptions) throws {
        try FileManager.default.createDirectory(at: options.dataDirectory, withIntermediateDirectories: true)
        var configuration = ServerConfiguration(
            database: options.databaseURL.map { .conninfo($0) }
                ?? .embedded(directory: options.dataDirectory.appendingPathComponent("pg")),
            operatorToken: "")
        if options.migrateOnly {
            announce(try Server.migrate(configuration).description)
            return
        }
        configuration.operatorToken = try options.operatorToken ?? generatedOperatorToken(in: options.dataDirectory)
        configuration.beaconKeyring = try beaconKeyring(options)
        configuration.standbys = options.replicaURL
        configuration.standbyMaxLag = options.replicaMaxLag
        configuration.notificationsConninfo = options.notifyURL
        configuration.rateLimits = options.rateLimited ? .standard : .unlimited
        configuration.listen = ListenAddress(host: options.host, port: options.port)
        configuration.clientAddresses = options.clientAddresses
        configuration.shopperDataRetentionDays = options.retentionDays

        // Signals are delivered to a dispatch source, not a handler, so shutting down may take locks.
        for signalNumber in [SIGTERM, SIGINT] { signal(signalNumber, SIG_IGN) }
        let stop = DispatchSemaphore(value: 0)
        let sources = [SIGTERM, SIGINT].map { signalNumber in
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }

        let server = try Server(configuration)
        let shownHost = options.host.contains(":") && !options.host.hasPrefix("[") ? "[\(options.host)]" : options.host
        // On standard output, unbuffered: scripts and tests wait for this line; the log goes to standard error.
        let url = "http://\(shownHost):\(server.port ?? options.port)"
        announce("loyalty-server listening on \(url)")
        ServerLog.standardError(
            ServerLog.line(.info, "started", ["url": .string(url), "version": .string(Release.version)]))
        stop.wait()
        ServerLog.standardError(ServerLog.line(.info, "stopping"))
        server.shutdown()
        sources.forEach { $0.cancel() }
    }

    /// Unbuffered, so whoever waits for the line (tests, the demo) sees it at once.
    static func announce(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// The operator token in `directory/admin-token`, created (mode 0600) on first start.
    static func generatedOperatorToken(in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("admin-token")
        let (text, created) = try generatedSecretFile(file) { Secrets.token(prefix: "la_") + "\n" }
        announce(created ? "operator token written to \(file.path) (mode 0600)" : "operator token: \(file.path)")
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The keyring of the operator's beacon key file, or of `DIR/beacon-key`, created (mode 0600) on first start:
    /// logged, not announced, since scripts read standard output's first line for the address.
    static func beaconKeyring(_ options: ServerOptions) throws -> BeaconKeyring {
        if let file = options.beaconKeyFile { return try BeaconKeyring(file: file) }
        let file = options.dataDirectory.appendingPathComponent("beacon-key")
        let (text, created) = try generatedSecretFile(file, make: BeaconKeyring.newFileText)
        if created {
            ServerLog.standardError(
                ServerLog.line(.info, "beacon_key_generated", ["file": .string(file.path), "mode": .string("0600")]))
        }
        return try BeaconKeyring(fileText: text)
    }

    /// The text of `file`, or `make()`'s written there (mode 0600) when it is missing or empty, and which.
    private static func generatedSecretFile(_ file: URL, make: () -> String) throws -> (text: String, created: Bool) {
        if let existing = try? String(contentsOf: file, encoding: .utf8),
            !existing.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        {
            return (existing, false)
        }
        let text = make()
        // Mode 0600 from the file's creation on, not set after the secret is in it.
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0, fchmod(descriptor, 0o600) == 0 else {
            if descriptor >= 0 { close(descriptor) }
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: Data(text.utf8))
        try handle.synchronize()
        return (text, true)
    }
}
