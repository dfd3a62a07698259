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
    public let operatorToken = "operator-token-for-tests"
    /// The service's log lines, unless `logLines` took them.
    public let log = LogRecorder()
    /// What the server's start did to the database's schema.
    public let schemaChange: SchemaChange
    public let service: LoyaltyService
    private let limits: HTTPServerLimits
    private let http: HTTPServer?
    private let clientsLock = NSLock()
    /// Clients whose connection stays open between requests; one per request in flight.
    private var idleClients: [HTTPClient] = []

    /// `setUp` runs on the new, empty database before the server migrates it (an older schema and its rows).
    /// `limits` are the HTTP server's; in process, the body limit is applied the same way. `rateLimits`: none by
    /// default, as tests send many requests from one address. `diagnostics`: libmicrohttpd's messages (standard
    /// error when nil).
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
        logLines: (@Sendable (String) -> Void)? = nil,
        diagnostics: (@Sendable (String) -> Void)? = nil,
        setUp: (PostgresPool) throws -> Void = { _ in }
    ) throws {
        self.transport = transport
        self.clock = clock
        // The routes that take larger bodies (an import) keep their limits, whatever else the test sets.
        var limits = limits
        limits.maxBodyBytesByPath.merge(LoyaltyService.maxBodyBytesByPath) { chosen, _ in chosen }
        self.limits = limits
        let database = "loyalty_\(UUID().uuidString.prefix(8).lowercased())"
        // CREATE DATABASE goes straight to PostgreSQL: it cannot run in a pooled transaction.
        directConninfo = try (cluster ?? EmbeddedPostgres.shared()).createDatabase(database)
        let bouncer = try bouncer ?? (cluster == nil && Self.throughPgBouncerByDefault ? PgBouncer.shared() : nil)
        conninfo = bouncer?.conninfo(database: database) ?? directConninfo
        pool = PostgresPool(conninfo: conninfo, size: poolSize)
        try setUp(pool)
        // Reads on `standby`'s conninfo of the test's database (a streaming standby of `cluster`, whose copy of the
        // database comes by replication).
        let primary = pool
        let record = logLines ?? log.record
        var standbyReads: StandbyReads?
        if let standby {
            standbyReads = StandbyReads(
                primary: primary,
                standbys: PostgresPool(conninfo: try standby(database), size: poolSize),
                maxLag: standbyMaxLag, log: { record(ServerLog.line(standbyEvent: $0)) })
        }
        store = Database(pool: pool, standbyReads: standbyReads, clock: clock.read)
        schemaChange = try database.migrate(to: Documents.schema)
        let service = LoyaltyService(
            database: database, operatorToken: operatorToken, openAPIDocument: Documents.openAPI, rateLimits: rateLimits,
            log: logLines ?? log.record)
        self.service = service
        switch transport {
        case .inProcess:
            http = nil
        case .socket:
            http = try HTTPServer(
                host: "127.0.0.1", port: 0, limits: limits, reject: service.reject, admit: service.admit,
                handler: service.handle, diagnostics: diagnostics)
        }
    }

    deinit { http?.shutdown(gracePeriod: .seconds(1)) }

    /// LOYALTY_TEST_PGBOUNCER=1: servers on the shared cluster reach it through the shared PgBouncer.
    public static var throughPgBouncerByDefault: Bool {
        ProcessInfo.processInfo.environment["LOYALTY_TEST_PGBOUNCER"] == "1"
    }

    /// The server's address over the socket; a test that needs one runs `.socket`.
    public var baseURL: String {
        guard let http else { preconditionFailure("an in-process TestServer has no address: use .socket") }
        return "http://127.0.0.1:\(http.port)"
    }

    public var port: UInt16 {
        guard let http else { preconditionFailure("an in-process TestServer has no port: use .socket") }
        return http.port
    }

    /// Sends `request` by the server's transport and returns the answer, header names lower-cased either way.
    public func execute(_ request: TestRequest) throws -> TestResponse {
        switch transport {
        case .inProcess:
            let handlerRequest = request.handlerRequest
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
