import Foundation
import HTTPClient
import HTTPServer
import LoyaltyAPI
import Postgres
import Synchronization
import Testing

@testable import LoyaltyServer

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))

    var read: @Sendable () -> Date { { self.now.withLock { $0 } } }

    func advance(by seconds: TimeInterval) {
        now.withLock { $0 += seconds }
    }
}

/// The service's log lines, kept to be read by the test.
final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])

    var record: @Sendable (String) -> Void { { line in self.lines.withLock { $0.append(line) } } }
    var recorded: [String] { lines.withLock { $0 } }
}

/// What came back over the socket.
struct Reply {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]

    func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try LoyaltyJSON.decoder().decode(T.self, from: Data(body))
    }

    var errorCode: APIErrorCode? { (try? decode(APIErrorBody.self))?.error.code }
    var errorField: String? { (try? decode(APIErrorBody.self))?.error.field }
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// The real service on a real PostgreSQL database of its own (in the shared throwaway cluster, or in
/// `cluster`), served by the real HTTP server on an ephemeral loopback port. With `throughPgBouncer` (by default
/// when LOYALTY_TEST_PGBOUNCER=1: make check's pgbouncer part), its pool reaches the shared cluster through the
/// shared PgBouncer in transaction pooling mode.
final class TestServer: @unchecked Sendable {
    let clock = TestClock()
    let store: Store
    let pool: PostgresPool
    /// What the pool connects with: straight to PostgreSQL, or through PgBouncer.
    let conninfo: String
    let operatorToken = "operator-token-for-tests"
    let log = LogRecorder()
    private var server: HTTPServer!
    var port: UInt16 { server.port }
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// What the server's start did to the database's schema.
    let schemaChange: SchemaChange

    /// `setUp` runs on the new, empty database before the server migrates it (an older schema and its rows).
    init(
        cluster: EmbeddedPostgres? = nil,
        throughPgBouncer: Bool = ProcessInfo.processInfo.environment["LOYALTY_TEST_PGBOUNCER"] == "1",
        rateLimits: RateLimits = .unlimited,
        setUp: (PostgresPool) throws -> Void = { _ in }
    ) throws {
        let database = "loyalty_\(UUID().uuidString.prefix(8).lowercased())"
        // CREATE DATABASE goes straight to PostgreSQL: it cannot run in a pooled transaction.
        let direct = try (cluster ?? EmbeddedPostgres.shared()).createDatabase(database)
        conninfo = cluster == nil && throughPgBouncer ? try PgBouncer.shared().conninfo(database: database) : direct
        pool = PostgresPool(conninfo: conninfo, size: 8)
        try setUp(pool)
        store = Store(pool: pool, clock: clock.read)
        schemaChange = try store.migrate(to: Documents.schema)
        let log = log
        let service = LoyaltyService(
            store: store, operatorToken: operatorToken, openAPIDocument: Documents.openAPI, rateLimits: rateLimits,
            log: log.record)
        server = try HTTPServer(
            host: "127.0.0.1", port: 0, reject: service.reject, handler: service.handle)
    }

    deinit { server.shutdown() }

    func request(
        _ method: String, _ path: String, token: String? = nil, body: [UInt8]? = nil,
        headers: [String: String] = [:]
    ) throws -> Reply {
        var headers = headers
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if body != nil { headers["Content-Type"] = "application/json" }
        let response = try HTTPClient().send(
            HTTPClientRequest(method: method, url: baseURL + path, headers: headers, body: body))
        return Reply(status: response.status, headers: response.headers, body: response.body)
    }

    func request<Body: Encodable>(
        _ method: String, _ path: String, token: String? = nil, json: Body, headers: [String: String] = [:]
    ) throws -> Reply {
        try request(method, path, token: token, body: Array(try LoyaltyJSON.encoder().encode(json)), headers: headers)
    }

    func request(
        _ method: String, _ path: String, token: String? = nil, rawJSON: String, headers: [String: String] = [:]
    ) throws -> Reply {
        try request(method, path, token: token, body: Array(rawJSON.utf8), headers: headers)
    }

    // MARK: Fixtures

    func registerRetailer(_ name: String = "Matey's", uuid: UUID? = nil) throws -> RetailerCredentials {
        let reply = try request(
            "POST", "/v1/retailers", token: operatorToken, json: RetailerRegistration(name: name, uuid: uuid))
        try #require(reply.status == 201, "\(reply.text)")
        return try reply.decode()
    }

    @discardableResult
    func putOffer(
        _ retailer: RetailerCredentials, major: Int, minor: Int, _ draft: OfferDraft
    ) throws -> Offer {
        let reply = try request(
            "PUT", "/v1/retailer/offers/\(major)/\(minor)", token: retailer.apiKey, json: draft)
        try #require(reply.status == 201 || reply.status == 200, "\(reply.text)")
        return try reply.decode()
    }

    func createAccount() throws -> DeviceCredentials {
        let reply = try request("POST", "/v1/accounts")
        try #require(reply.status == 201, "\(reply.text)")
        return try reply.decode()
    }

    func linkDevice(to device: DeviceCredentials, name: String = "second") throws -> DeviceCredentials {
        let code: LinkCode = try request("POST", "/v1/link-codes", token: device.deviceToken).decode()
        let reply = try request("POST", "/v1/devices", json: DeviceRegistration(code: code.code, name: name))
        try #require(reply.status == 201, "\(reply.text)")
        return try reply.decode()
    }

    func catalog(_ device: DeviceCredentials, since: String? = nil, limit: Int? = nil, etag: String? = nil)
        throws -> Reply
    {
        let parameters = [since.map { "since=\($0)" }, limit.map { "limit=\($0)" }].compactMap { $0 }
        let query = parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&")
        return try request(
            "GET", "/v1/catalog\(query)", token: device.deviceToken,
            headers: etag.map { ["If-None-Match": $0] } ?? [:])
    }

    func redeem(_ device: DeviceCredentials, _ offerID: UUID, key: String? = nil) throws -> Reply {
        try request(
            "POST", "/v1/redemptions", token: device.deviceToken, json: RedemptionRequest(offerID: offerID),
            headers: key.map { ["Idempotency-Key": $0] } ?? [:])
    }
}
