import Foundation
import HTTPClient
import HTTPServer
import LoyaltyAPI
import LoyaltyServer
import Postgres

/// How a test reaches the server. The same test body runs either way (`@Test(arguments: Transport.allCases)`).
public enum Transport: String, CaseIterable, Sendable, CustomStringConvertible {
    /// The request value goes straight to the service's handler: no socket, no HTTP framing. Fast.
    case inProcess
    /// libmicrohttpd on an ephemeral loopback port, reached with libcurl: what depends on real HTTP (framing,
    /// limits enforced by the HTTP layer, headers as sent on the wire) needs this.
    case socket

    public var description: String { rawValue }
}

/// The real service on a real PostgreSQL database of its own (in the shared throwaway cluster, or in `cluster`),
/// reached in process or over a socket; with `standby` (the conninfo of the database, given its name), shoppers'
/// reads go to that streaming standby of `cluster`. Through PgBouncer when `bouncer` is given or, for the shared
/// cluster, when LOYALTY_TEST_PGBOUNCER=1 (make check's pgbouncer part): then the pool reaches PostgreSQL through it, in
/// transaction pooling mode.
public final class TestServer: @unchecked Sendable {  // `idleClients` is guarded by `clientsLock`
    public let transport: Transport
    public let clock: TestClock
    public let database: Database
    public let pool: PostgresPool
    /// What the pool connects with: straight to PostgreSQL, or through PgBouncer.
    public let conninfo: String
    /// The same database, straight to PostgreSQL (CREATE DATABASE and pgbench cannot go through PgBouncer).
    public let directConninfo: String
    /// The test's database on the cluster.
    public let databaseName: String
    public let operatorToken = "operator-token-for-tests"
    /// Seals the secure beacons' identity keys.
    public let beaconKeyring: BeaconKeyring
    /// The service's log lines, unless `logLines` took them.
    public let log = LogRecorder()
    /// What the server's start did to the database's schema.
    public let schemaChange: SchemaChange
    public let service: LoyaltyService
    /// The server, assembled as `loyalty-server` assembles it.
    private let server: Server
    private let clientsLock = NSLock()
    /// Clients whose connection stays open between requests; one per request in flight.
    private var idleClients: [HTTPClient] = []

    /// `setUp` runs on the new, empty database before the server migrates it (an older schema and its rows).
    /// `limits` are the HTTP server's; in process, the body limit is applied the same way. `rateLimits`: none by
    /// default, as tests send many requests from one address. `beaconKeyring`: a random key of the server's own.
    /// `diagnostics`: libmicrohttpd's messages (standard error when nil). `sharingDatabaseOf`: a second server on
    /// that one's database (no `setUp`). `notificationsConninfo`: where the catalog check listens (the database,
    /// straight to PostgreSQL, when nil).
    public init(
        _ transport: Transport = .inProcess,
        cluster: EmbeddedPostgres? = nil,
        bouncer: PgBouncer? = nil,
        clock: TestClock = TestClock(),
        limits: HTTPServerLimits = HTTPServerLimits(),
        poolSize: Int = 8,
        standby: ((_ database: String) throws -> String)? = nil,
        standbyMaxLag: Double = 30,
        rateLimits: RateLimits = .unlimited,
        beaconKeyring: BeaconKeyring = .random(),
        logLines: (@Sendable (String) -> Void)? = nil,
        diagnostics: (@Sendable (String) -> Void)? = nil,
        sharingDatabaseOf other: TestServer? = nil,
        deviceTokenCacheSize: Int = ServerConfiguration.defaultDeviceTokenCacheSize,
        notificationsConninfo: String? = nil,
        setUp: (PostgresPool) throws -> Void = { _ in }
    ) throws {
        self.transport = transport
        self.clock = clock
        let name = other?.databaseName ?? "loyalty_\(UUID().uuidString.prefix(8).lowercased())"
        databaseName = name
        if let other {
            // A second instance of the service on the first one's database, as several servers behind a balancer.
            (directConninfo, conninfo) = (other.directConninfo, other.conninfo)
        } else {
            // CREATE DATABASE goes straight to PostgreSQL: it cannot run in a pooled transaction.
            directConninfo = try (cluster ?? EmbeddedPostgres.shared()).createDatabase(name)
            let bouncer = try bouncer ?? (cluster == nil && Self.throughPgBouncerByDefault ? PgBouncer.shared() : nil)
            conninfo = bouncer?.conninfo(database: name) ?? directConninfo
            try setUp(PostgresPool(conninfo: conninfo, size: 1))
        }
        var configuration = ServerConfiguration(database: .conninfo(conninfo), operatorToken: operatorToken)
        // Reads on `standby`'s conninfo of the test's database (a streaming standby of `cluster`, whose copy of the
        // database comes by replication).
        configuration.standbys = try standby?(name)
        configuration.standbyMaxLag = standbyMaxLag
        configuration.poolSize = poolSize
        // LISTEN cannot go through PgBouncer's transaction pooling.
        configuration.notificationsConninfo = notificationsConninfo ?? directConninfo
        configuration.deviceTokenCacheSize = deviceTokenCacheSize
        configuration.rateLimits = rateLimits
        configuration.beaconKeyring = beaconKeyring
        self.beaconKeyring = beaconKeyring
        configuration.listen = transport == .socket ? ListenAddress(host: "127.0.0.1", port: 0) : nil
        configuration.limits = limits
        configuration.clock = clock.read
        configuration.log = logLines ?? log.record
        // libmicrohttpd's messages on standard error unless the test takes them: the log is the test's to read.
        configuration.diagnostics = diagnostics ?? { FileHandle.standardError.write(Data("libmicrohttpd: \($0)\n".utf8)) }
        // Tests purge tombstones when they mean to, on the test's clock.
        configuration.purges = false
        server = try Server(configuration)
        // The start's lines (the schema migrated): the tests read the lines of their own requests.
        log.removeAll()
        database = server.database
        pool = server.pool
        schemaChange = server.schemaChange
        service = server.service
    }

    deinit { server.shutdown(gracePeriod: .seconds(1)) }

    /// LOYALTY_TEST_PGBOUNCER=1: servers on the shared cluster reach it through the shared PgBouncer.
    public static var throughPgBouncerByDefault: Bool {
        ProcessInfo.processInfo.environment["LOYALTY_TEST_PGBOUNCER"] == "1"
    }

    /// The server's address over the socket; a test that needs one runs `.socket`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    public var port: UInt16 {
        guard let port = server.port else { preconditionFailure("an in-process TestServer has no port: use .socket") }
        return port
    }

    /// Sends `request` by the server's transport and returns the answer, header names lower-cased either way.
    public func execute(_ request: TestRequest) throws -> TestResponse {
        switch transport {
        case .inProcess:
            let handlerRequest = request.handlerRequest
            let limits = server.limits
            let limit = limits.maxBodyBytesByPath[handlerRequest.path] ?? limits.maxBodyBytes
            var head = handlerRequest
            head.body = []
            let response =
                if let body = request.body, body.count > limit {
                    service.reject(.bodyTooLarge(limit: limit))
                } else if let refusal = service.admit(head) {
                    refusal
                } else {
                    service.handle(handlerRequest)
                }
            return TestResponse(handlerResponse: response, to: request)
        case .socket:
            let client = clientsLock.withLock { idleClients.popLast() } ?? HTTPClient()
            // The answers of the server under test, read whole up to what the largest (a catalog page) can be.
            let response = try client.send(
                HTTPClientRequest(
                    method: request.method, url: baseURL + request.target, headers: request.headers,
                    body: request.body,
                    maximumResponseBytes: CatalogPage.maximumJSONBytes(rows: CatalogPage.maximumRows)))
            clientsLock.withLock { idleClients.append(client) }
            return TestResponse(status: response.status, headers: response.headers, body: response.body)
        }
    }
}
