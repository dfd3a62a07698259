// A real `loyalty-server` (this build's binary) on its own embedded PostgreSQL cluster, seeded with a
// catalog of generated offers, for the server and client figures.
import Beacons
import Foundation
import HTTPClient
import Postgres

#if canImport(Glibc)
    import Glibc
#endif

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

final class BenchServer {
    let url: String
    /// The same database the server uses, for seeding and for pgbench.
    let conninfo: String
    let work: URL
    private let process: Process
    private let operatorToken: String
    /// With `throughPgBouncer`: the cluster this bench started, and PgBouncer in front of it.
    private var cluster: EmbeddedPostgres?
    private var bouncer: PgBouncer?
    private let http = HTTPClient()

    /// Starts the server with its data in a new temporary directory and waits for its URL. With
    /// `throughPgBouncer`, the bench starts the cluster and PgBouncer (transaction pooling, one server
    /// connection per server thread) in front of it, and the server reaches it through PgBouncer.
    init(throughPgBouncer: Bool = false) throws {
        var template = Array(
            FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-bench-XXXXXX")
                .path.utf8CString)
        guard let path = mkdtemp(&template) else {
            throw BenchFailure("cannot create a temporary directory")
        }
        work = URL(fileURLWithPath: String(cString: path), isDirectory: true)
        // As root the embedded PostgreSQL runs as `postgres`, which must be able to traverse this directory.
        chmod(work.path, 0o711)
        operatorToken = "bench-" + UUID().uuidString
        process = Process()
        process.executableURL = buildDirectory.appendingPathComponent("loyalty-server")
        process.arguments = [
            "--listen", "127.0.0.1:0", "--data-dir", work.appendingPathComponent("server").path, "--no-rate-limits",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging([
            "LOYALTY_ADMIN_TOKEN": operatorToken
        ]) {
            $1
        }
        if throughPgBouncer {
            let cluster = EmbeddedPostgres(directory: work.appendingPathComponent("server/pg"))
            _ = try cluster.start()
            let bouncer = try PgBouncer(frontOf: cluster, poolSize: 16)
            process.environment?["DATABASE_URL"] = bouncer.conninfo(database: "postgres")
            self.cluster = cluster
            self.bouncer = bouncer
        }
        let out = Pipe()
        process.standardOutput = out
        // One log line per request: kept in a file, out of the way of the figures.
        _ = FileManager.default.createFile(
            atPath: work.appendingPathComponent("server.log").path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: work.appendingPathComponent("server.log"))
        try process.run()
        var announced = ""
        while !announced.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else {
                throw BenchFailure("loyalty-server exited: see \(work.path)/server.log")
            }
            announced += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = announced.range(of: "http://[^\\s]+", options: .regularExpression) else {
            throw BenchFailure("loyalty-server said: \(announced)")
        }
        url = String(announced[range])
        // Adopts the cluster the server started and answers its conninfo.
        conninfo = try EmbeddedPostgres(directory: work.appendingPathComponent("server/pg")).start()
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        bouncer?.stop()
        cluster?.stop()
        try? FileManager.default.removeItem(at: work)
    }

    func connect() throws -> PostgresConnection { try PostgresConnection(conninfo: conninfo) }

    /// The bench's offer number `n` has this id, so wrk scripts and pgbench can name offers without a list.
    static func offerID(_ n: Int) -> String {
        String(format: "00000000-0000-4000-8000-%012x", n)
    }
    /// `offerID` in SQL, of an integer expression.
    static func offerIDSQL(_ n: String) -> String {
        "('00000000-0000-4000-8000-' || lpad(to_hex((\(n))::int), 12, '0'))::uuid"
    }

    /// Retailers for the bulk capture's proximity UUIDs and `count` offers: first one at each beacon of
    /// the capture (so a replay resolves offers), then fillers at beacons the capture does not use.
    /// Offers carry no redemption limit that a bench could reach.
    func seedCatalog(offers count: Int) throws {
        let beacons = BulkCapture().beaconFrames().map(\.identity)
        let uuids = Array(Set(beacons.map(\.uuid))).sorted { $0.uuidString < $1.uuidString }
        for (index, uuid) in uuids.enumerated() {
            _ = try request(
                "POST", "/v1/retailers", token: operatorToken,
                json: ["name": "Bench store \(index + 1)", "uuid": uuid.uuidString])
        }
        var rows: [String] = []
        rows.reserveCapacity(count)
        for identity in beacons.prefix(count) {
            rows.append(
                "{\"n\":\(rows.count + 1),\"uuid\":\"\(identity.uuid)\",\"major\":\(identity.major),\"minor\":\(identity.minor)}"
            )
        }
        var filler = 0
        while rows.count < count {
            // Majors from 1000 up are free: the capture's run from 1 to 20.
            let uuid = uuids[filler % uuids.count]
            let slot = filler / uuids.count
            rows.append(
                "{\"n\":\(rows.count + 1),\"uuid\":\"\(uuid)\",\"major\":\(1000 + slot / 1000),\"minor\":\(slot % 1000)}"
            )
            filler += 1
        }
        let json = "[" + rows.joined(separator: ",") + "]"
        let connection = try connect()
        try connection.query(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO offers (id, retailer_id, major, minor, title, description, category,
                        per_shopper_limit, updated_at)
                    SELECT \(Self.offerIDSQL("b.n")), r.id, b.major, b.minor,
                        'Offer ' || b.n || ': ' || (b.n % 50 + 5) || '% off at counter ' || b.major,
                        'Show this at the till before paying.', CASE WHEN b.n % 2 = 0 THEN 'food' ELSE 'clothing' END,
                        2147483647, now()
                    FROM jsonb_to_recordset($1::jsonb) AS b (n int, uuid uuid, major int, minor int)
                    JOIN retailers r ON r.uuid = b.uuid
                    """, parameters: [json]))
        // The load starts from a settled database: the bulk insert's dead tuples, statistics and dirty pages
        // are dealt with now, not by autovacuum and the checkpointer during a measurement.
        try connection.execute(script: "VACUUM ANALYZE")
        try connection.execute(script: "CHECKPOINT")
    }

    /// A new shopper account; returns its device token.
    func createDevice() throws -> String {
        let body = try request("POST", "/v1/accounts", json: ["name": "bench"])
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let token = object["device_token"] as? String
        else {
            throw BenchFailure("POST /v1/accounts answered \(String(decoding: body, as: UTF8.self))")
        }
        return token
    }

    /// Changes one offer's title: one catalog change.
    func touchOffer(_ n: Int) throws {
        try connect().query(
            "UPDATE offers SET title = title || '.' WHERE id = \(UUID(uuidString: Self.offerID(n))!)")
    }

    @discardableResult
    func request(
        _ method: String, _ path: String, token: String? = nil, json: [String: String]? = nil,
        headers: [String: String] = [:]
    ) throws -> [UInt8] {
        let response = try send(method, path, token: token, json: json, headers: headers)
        guard (200..<300).contains(response.status) else {
            throw BenchFailure("\(method) \(path) answered \(response.status)")
        }
        return response.body
    }

    func send(
        _ method: String, _ path: String, token: String? = nil, json: [String: String]? = nil,
        headers: [String: String] = [:]
    ) throws -> HTTPClientResponse {
        var headers = headers
        if let token { headers["Authorization"] = "Bearer \(token)" }
        var body: [UInt8]?
        if let json {
            headers["Content-Type"] = "application/json"
            body = Array(try JSONSerialization.data(withJSONObject: json))
        }
        return try http.send(
            HTTPClientRequest(method: method, url: url + path, headers: headers, body: body))
    }
}

/// The median of a few wall-clock measurements, in seconds.
func median(_ samples: [Double]) -> Double {
    let sorted = samples.sorted()
    return sorted[sorted.count / 2]
}
