// The server the server and client figures measure: loyalty-server's service with its HTTP limits and pool,
// served over loopback by LoyaltyTesting's harness, on a durable PostgreSQL cluster of its own (as the embedded
// one of loyalty-server), seeded with a catalog of generated offers.
import Beacons
import BeaconsTesting
import Foundation
import LoyaltyAPI
import LoyaltyServer
import LoyaltyTesting
import Postgres

#if canImport(Glibc)
    import Glibc
#endif

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A temporary directory with the cluster, the server's log and the bench's scripts, and the server.
final class BenchSite {
    let server: TestServer
    var url: String { server.baseURL }
    /// The server's database, straight to PostgreSQL: for seeding and for pgbench.
    var conninfo: String { server.directConninfo }
    let work: URL
    /// The cluster's postmaster, whose processes' CPU time the server bench reads.
    let postmasterPID: Int32
    private let cluster: EmbeddedPostgres
    private let bouncer: PgBouncer?
    /// Open while the server writes its log lines to it (by its descriptor).
    private let serverLog: FileHandle
    private let writeLine: @Sendable (String) -> Void
    private var secondServer: TestServer?

    /// With `throughPgBouncer`, the server's pool reaches the cluster through PgBouncer (transaction pooling,
    /// one server connection per server thread).
    init(throughPgBouncer: Bool = false) throws {
        work = try ThrowawayDirectory.make("loyalty-bench", postgresMayEnter: true)
        cluster = EmbeddedPostgres(directory: work.appendingPathComponent("pg"))
        bouncer = throughPgBouncer ? try PgBouncer(frontOf: cluster, poolSize: Server.databaseConnections) : nil
        // One log line per request, and libmicrohttpd's diagnostics: kept in a file, out of the way of the figures,
        // each written as the server writes its standard error (one write(2) a line).
        let logFile = work.appendingPathComponent("server.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        serverLog = try FileHandle(forWritingTo: logFile)
        let writeLine = ServerLog.writer(to: serverLog.fileDescriptor)
        self.writeLine = writeLine
        server = try TestServer(
            .socket, cluster: cluster, bouncer: bouncer, clock: .machine(), poolSize: Server.databaseConnections,
            logLines: writeLine, diagnostics: { writeLine("libmicrohttpd: " + $0) })
        let directory: String = try PostgresConnection(conninfo: server.directConninfo)
            .query("SELECT current_setting('data_directory') AS directory")[0].decode("directory")
        guard
            let pidFile = try? String(contentsOfFile: directory + "/postmaster.pid", encoding: .utf8),
            let pid = pidFile.split(separator: "\n").first.flatMap({ Int32($0) })
        else { throw BenchFailure("no postmaster.pid in \(directory)") }
        postmasterPID = pid
    }

    /// A second server on the same database as `server`, without the catalog check (no listener connection, no
    /// token cache): the service as it was before issue 46, for the writes' rates beside it in the same rounds.
    func withoutCatalogCheck() throws -> TestServer {
        if let secondServer { return secondServer }
        let second = try TestServer(
            .socket, clock: .machine(), poolSize: Server.databaseConnections, logLines: writeLine,
            diagnostics: { [writeLine] in writeLine("libmicrohttpd: " + $0) }, sharingDatabaseOf: server,
            deviceTokenCacheSize: 0)
        secondServer = second
        return second
    }

    func stop() {
        secondServer = nil
        bouncer?.stop()
        cluster.stop()
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

    /// The bench's redemption code number `n` (digits 0 and 1 written A and B, which no code holds), in SQL.
    static func tillCodeSQL(_ n: String) -> String {
        "translate(lpad((\(n))::text, 10, '0'), '01', 'AB')"
    }

    /// Retailers for the bulk capture's proximity UUIDs and `count` offers: first one at each beacon of
    /// the capture (so a replay resolves offers), then fillers at beacons the capture does not use.
    /// Offers carry no redemption limit that a bench could reach.
    @discardableResult
    func seedCatalog(offers count: Int) throws -> [RetailerCredentials] {
        let beacons = BulkCapture().beaconFrames().map(\.identity)
        let uuids = Array(Set(beacons.map(\.uuid))).sorted { $0.uuidString < $1.uuidString }
        let retailers = try uuids.enumerated().map { index, uuid in
            try server.registerRetailer("Bench store \(index + 1)", uuid: uuid)
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
        // Each row carries its feed version and the feed's head moves once, as an import does: left to the per-row
        // trigger, each of the rows would update the feed row past the dead versions the earlier ones left.
        try connection.query(
            PostgresQuery(
                unsafeSQL: """
                    WITH written AS (
                        INSERT INTO offers (id, retailer_id, major, minor, title, description, category,
                            per_shopper_limit, updated_at, version)
                        SELECT \(Self.offerIDSQL("b.n")), r.id, b.major, b.minor,
                            'Offer ' || b.n || ': ' || (b.n % 50 + 5) || '% off at counter ' || b.major,
                            'Show this at the till before paying.', CASE WHEN b.n % 2 = 0 THEN 'food' ELSE 'clothing' END,
                            2147483647, now(), (SELECT version FROM catalog_feed) + b.n
                        FROM jsonb_to_recordset($1::jsonb) AS b (n int, uuid uuid, major int, minor int)
                        JOIN retailers r ON r.uuid = b.uuid
                        RETURNING version)
                    UPDATE catalog_feed SET version = (SELECT max(version) FROM written) WHERE singleton
                    """, parameters: [json]))
        // The load starts from a settled database: the bulk insert's dead tuples, statistics and dirty pages
        // are dealt with now, not by autovacuum and the checkpointer during a measurement.
        try connection.execute(script: "VACUUM ANALYZE")
        try connection.execute(script: "CHECKPOINT")
        return retailers
    }

    /// A new shopper account; returns its device token.
    func createDevice() throws -> String {
        try server.createAccount(name: "bench").deviceToken
    }

    /// Changes one offer's title: one catalog change.
    func touchOffer(_ n: Int) throws {
        try connect().query(
            "UPDATE offers SET title = title || '.' WHERE id = \(UUID(uuidString: Self.offerID(n))!)")
    }

    /// The body of a 2xx answer to `method` `target`.
    @discardableResult
    func request(_ method: String, _ target: String, token: String? = nil) throws -> [UInt8] {
        let response = try server.request(method, target, token: token)
        guard (200..<300).contains(response.status) else {
            throw BenchFailure("\(method) \(target) answered \(response.status)")
        }
        return response.body
    }
}

/// The median of a few wall-clock measurements, in seconds.
func median(_ samples: [Double]) -> Double {
    let sorted = samples.sorted()
    return sorted[sorted.count / 2]
}
