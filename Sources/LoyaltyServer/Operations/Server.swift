import Foundation
import HTTPServer
import LoyaltyAPI
import Postgres

/// What a server is made of, as plain values: `loyalty-server` reads them from its flags and environment, the
/// tests and the bench set them.
public struct ServerConfiguration: Sendable {
    /// The primary PostgreSQL.
    public enum DatabaseLocation: Sendable {
        /// libpq conninfo or URL.
        case conninfo(String)
        /// A private cluster in this directory, made and started with the server and stopped with it.
        case embedded(directory: URL)
    }

    public var database: DatabaseLocation
    /// libpq conninfo of the streaming standbys that serve shoppers' reads (multi-host allowed).
    public var standbys: String?
    /// Seconds a standby's replay may be behind before reads go to the primary.
    public var standbyMaxLag: Double = 30
    /// What the catalog check's listener connects with (LISTEN/NOTIFY): the primary itself, never through PgBouncer's
    /// transaction pooling. nil: the primary's conninfo.
    public var notificationsConninfo: String?
    /// The device tokens each server holds in memory for catalog checks; 0 holds none, and every check reads the
    /// database.
    public var deviceTokenCacheSize = ServerConfiguration.defaultDeviceTokenCacheSize
    public static let defaultDeviceTokenCacheSize = 100_000
    /// Connections of the pool to the primary, and of the one to the standbys.
    public var poolSize = Server.databaseConnections
    public var operatorToken: String
    /// Seals secure beacons' identity keys at rest; `loyalty-server` reads it from its key file, a server in process
    /// makes one of its own.
    public var beaconKeyring = BeaconKeyring.random()
    public var rateLimits: RateLimits = .standard
    /// Where to serve HTTP; nil serves none, and requests go to `Server.service` in process.
    public var listen: ListenAddress?
    /// The balancers that may name the client.
    public var clientAddresses = ClientAddressPolicy()
    /// The HTTP server's limits; the routes that take larger bodies keep theirs.
    public var limits = HTTPServerLimits()
    /// What the service takes for now: the machine's clock, or a test's.
    public var clock: @Sendable () -> Date = { Date() }
    /// One `ServerLog` line per request and event.
    public var log: @Sendable (String) -> Void = ServerLog.standardError
    /// libmicrohttpd's own messages; nil: logged as warnings.
    public var diagnostics: (@Sendable (String) -> Void)?
    public var openAPIDocument = Documents.openAPI
    public var schema = Documents.schema
    /// Whether tombstones and shopper data past its retention are purged at start and every
    /// `ScheduledPurge.interval`.
    public var purges = true
    /// How long seen records and verified sightings are kept (docs/PRIVACY.md): `--retention-days`.
    public var shopperDataRetentionDays = ServerConfiguration.defaultRetentionDays
    public static let defaultRetentionDays = 180
    /// What `--retention-days` accepts: a day at least, ten years at most.
    public static let retentionDaysRange = 1...3650

    public init(database: DatabaseLocation, operatorToken: String) {
        (self.database, self.operatorToken) = (database, operatorToken)
    }
}

/// A running server: its database (embedded or not) migrated, the service, and its HTTP listener. The one
/// assembly of `loyalty-server`, the tests' servers and the bench.
public final class Server: Sendable {
    public let database: Database
    public let service: LoyaltyService
    /// The pool to the primary.
    public let pool: PostgresPool
    /// What the start did to the database's schema.
    public let schemaChange: SchemaChange
    /// The limits the HTTP server applies, the routes' larger bodies included.
    public let limits: HTTPServerLimits
    private let http: HTTPServer?
    private let embedded: EmbeddedPostgres?
    private let purge: ScheduledPurge?

    /// Starts everything `configuration` names; what was started before a failure is stopped again.
    public init(_ configuration: ServerConfiguration) throws {
        let log = configuration.log
        // Before the embedded cluster's initdb and start, which take seconds and would end in a bind error.
        if let listen = configuration.listen { try HTTPServer.checkAvailable(host: listen.host, port: listen.port) }
        let (conninfo, embedded) = try Self.connect(configuration.database, log: log)
        var started = false
        defer { if !started { embedded?.stop() } }

        pool = PostgresPool(conninfo: conninfo, size: configuration.poolSize)
        let standbyReads = configuration.standbys.map { [pool] standbys in
            StandbyReads(
                primary: pool, standbys: PostgresPool(conninfo: standbys, size: configuration.poolSize),
                maxLag: configuration.standbyMaxLag, log: { log(ServerLog.line(standbyEvent: $0)) })
        }
        let catalogCheck =
            configuration.deviceTokenCacheSize > 0
            ? CatalogCheck(
                conninfo: configuration.notificationsConninfo ?? conninfo,
                heartbeatConninfo: conninfo, capacity: configuration.deviceTokenCacheSize, log: log)
            : nil
        defer { if !started { catalogCheck?.stop() } }
        database = Database(
            pool: pool, standbyReads: standbyReads, clock: configuration.clock, catalogCheck: catalogCheck)
        schemaChange = try database.migrate(to: configuration.schema)
        catalogCheck?.start()
        if schemaChange != .current(version: configuration.schema.version) {
            log(ServerLog.line(.info, "schema_migrated", ["change": .string(schemaChange.description)]))
        }
        let resealed = try database.resealBeaconKeys(keyring: configuration.beaconKeyring)
        if resealed > 0 {
            log(ServerLog.line(.info, "beacon_keys_resealed", ["beacons": .int(resealed)]))
        }
        let shopperDataRetention = TimeInterval(configuration.shopperDataRetentionDays) * 86_400
        if configuration.purges {
            try ScheduledPurge.purge(database: database, shopperDataRetention: shopperDataRetention, log: log)
        }
        // What imports left staged when their request ended midway is applied: a staged file is applied whole.
        try database.finishImports()
        service = LoyaltyService(
            database: database, operatorToken: configuration.operatorToken,
            openAPIDocument: configuration.openAPIDocument, beaconKeyring: configuration.beaconKeyring, rateLimits: configuration.rateLimits, log: log)
        var limits = configuration.limits
        limits.maxBodyBytesByPath.merge(service.maxBodyBytesByPath) { chosen, _ in chosen }
        self.limits = limits
        http = try configuration.listen.map { [service] listen in
            try HTTPServer(
                host: listen.host, port: listen.port, limits: limits, clientAddresses: configuration.clientAddresses,
                reject: service.reject, admit: service.admit, handler: service.handle,
                diagnostics: configuration.diagnostics ?? { message in
                    log(ServerLog.line(.warning, "libmicrohttpd", ["message": .string(message)]))
                })
        }
        purge =
            configuration.purges
            ? ScheduledPurge(
                database: database, shopperDataRetention: shopperDataRetention, interval: ScheduledPurge.interval,
                log: log)
            : nil
        self.embedded = embedded
        started = true
    }

    /// Brings the database's schema up to date and stops: `loyalty-server migrate`.
    public static func migrate(_ configuration: ServerConfiguration) throws -> SchemaChange {
        let (conninfo, embedded) = try connect(configuration.database, log: configuration.log)
        defer { embedded?.stop() }
        let pool = PostgresPool(conninfo: conninfo, size: 1)
        return try Database(pool: pool, clock: configuration.clock).migrate(to: configuration.schema)
    }

    /// The conninfo of `location`, and the embedded cluster started for it.
    private static func connect(
        _ location: ServerConfiguration.DatabaseLocation, log: @escaping @Sendable (String) -> Void
    ) throws -> (conninfo: String, embedded: EmbeddedPostgres?) {
        switch location {
        case .conninfo(let conninfo):
            return (conninfo, nil)
        case .embedded(let directory):
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let cluster = EmbeddedPostgres(directory: directory) { notice in
                log(ServerLog.line(.warning, "embedded_postgres", ["message": .string(notice)]))
            }
            return (try cluster.start(), cluster)
        }
    }

    /// The port served on (an ephemeral one when 0 was asked); nil when no HTTP is served.
    public var port: UInt16? { http?.port }

    /// Stops accepting, answers the requests in flight (for up to `gracePeriod`), stops purging and the embedded
    /// cluster.
    public func shutdown(gracePeriod: Duration = .seconds(30)) {
        http?.shutdown(gracePeriod: gracePeriod)
        purge?.stop()
        database.catalogCheck?.stop()
        embedded?.stop()
    }

    /// The database pool's connections (each of the primary and the standbys): as many handlers (one per HTTP
    /// connection) run statements at once, the rest wait for one. Each handler waits on PostgreSQL for most of its
    /// time: with a connection per core or two, the database sees too few commits at once to group them, and
    /// requests queue behind round trips while the CPUs idle.
    public static let databaseConnections = max(16, 2 * ProcessInfo.processInfo.activeProcessorCount)
}

/// `HOST:PORT`, from `--listen` or LOYALTY_LISTEN.
public struct ListenAddress: Sendable, Equatable {
    public static let expected = "HOST:PORT, e.g. 127.0.0.1:8080"
    public let host: String
    public let port: UInt16

    public init(host: String, port: UInt16) { (self.host, self.port) = (host, port) }

    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]),
            colon != text.startIndex
        else { return nil }
        (host, self.port) = (String(text[..<colon]), port)
    }
}
