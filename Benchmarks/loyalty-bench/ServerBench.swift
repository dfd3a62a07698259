// Speed figures: the real server under wrk on loopback, each write endpoint against pgbench
// running the same SQL statements with the same concurrency on the same cluster, in the same run.
import Foundation
import Postgres

#if canImport(Glibc)
    import Glibc
#endif

private let connections = 16
private let loadSeconds = 8
private let catalogSize = 100_000

@MainActor func benchServer() throws {
    print(
        "\n== server: loyalty-server's service over loopback, its own PostgreSQL, \(connections) connections")
    let server = try BenchSite()
    defer { server.stop() }
    try server.seedCatalog(offers: catalogSize)
    let tokens = try (0..<connections).map { _ in try server.createDevice() }
    // pgbench's client n acts as wrk's connection n: the same device, hence the same account.
    let connection = try server.connect()
    try connection.execute(
        script: "CREATE TABLE bench_clients (client_id int PRIMARY KEY, account_id uuid NOT NULL, token_hash bytea NOT NULL)")
    for (index, token) in tokens.enumerated() {
        // The account the token names (DeviceToken), as the server reads it from the token.
        try connection.query(
            """
            INSERT INTO bench_clients SELECT \(index), account_id, token_hash FROM devices
            WHERE token_hash = sha256(convert_to(\(token), 'UTF8'))
            """)
    }
    let load = Load(server: server, tokens: tokens)

    // The server's statements for a device request: the token lookup, then the endpoint's own.
    let authenticate = """
        SELECT id, account_id AS acct, token_hash FROM devices
        WHERE account_id = (SELECT account_id FROM bench_clients WHERE client_id = :client_id)
            AND token_hash = (SELECT token_hash FROM bench_clients WHERE client_id = :client_id)
            AND revoked_at IS NULL \\gset
        """

    // GET /v1/catalog with a current ETag.
    let etag = try wholeCatalog(server, token: tokens[0]).etag
    let notModified = try load.wrk("catalog-304", notModifiedScript(etag: etag))
    let headReference = try load.pgbench(
        "catalog-304", authenticate + "\nSELECT generation, version FROM catalog_feed WHERE singleton;\n")
    record(
        "GET /v1/catalog, current ETag (304)",
        String(
            format: "%.0f req/s, p99 %.1f ms (%.0f%% of pgbench's %.0f tps)", notModified.rate,
            notModified.p99Milliseconds, 100 * notModified.rate / headReference, headReference),
        target: ">= 8,000 req/s", met: notModified.rate >= 8_000 && notModified.clean)

    // POST /v1/seen, 10 random offers per push.
    let seen = try load.wrk("seen", seenScript(offers: catalogSize))
    let seenReference = try load.pgbench(
        "seen",
        """
        \\set b random(1, \(catalogSize - 9))
        \(authenticate)
        WITH bump AS (
            UPDATE accounts SET seen_version = seen_version + 1 WHERE id = :acct RETURNING seen_version)
        INSERT INTO seen (account_id, offer_id, seen_at, version)
        SELECT :acct, item.offer_id, item.seen_at, bump.seen_version
        FROM bump, jsonb_to_recordset((
            SELECT jsonb_agg(jsonb_build_object('offer_id', \(BenchSite.offerIDSQL("n")), 'seen_at', '2025-06-01T12:00:00Z'))
            FROM generate_series(:b, :b + 9) AS n)) AS item (offer_id uuid, seen_at timestamptz)
        WHERE EXISTS (SELECT 1 FROM offers WHERE offers.id = item.offer_id)
        ON CONFLICT DO NOTHING;

        """)
    recordWrite("POST /v1/seen (10 items)", seen, reference: seenReference)

    // POST /v1/redemptions of random offers, each with its own Idempotency-Key. The server redeems only offers in
    // the account's seen set: every bench account has seen every offer, as after a walk through each shop.
    try connection.execute(
        script: """
            INSERT INTO seen (account_id, offer_id, seen_at, version)
            SELECT c.account_id, o.id, now(), 0 FROM bench_clients c CROSS JOIN offers o ON CONFLICT DO NOTHING
            """)
    let run = UUID().uuidString.prefix(8)
    let redemptions = try load.wrk(
        "redemptions",
        """
        local count = 0
        function request()
            count = count + 1
            return wrk.format("POST", "/v1/redemptions",
                {["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json",
                 ["Idempotency-Key"] = "\(run)-" .. connection .. "-" .. count},
                string.format('{"offer_id":"00000000-0000-4000-8000-%012x"}', math.random(1, \(catalogSize))))
        end
        """)
    let offer = BenchSite.offerIDSQL(":o")
    let redemptionReference = try load.pgbench(
        "redemptions",
        """
        \\set o random(1, \(catalogSize))
        \\set k random(1, 1000000000000)
        \(authenticate)
        BEGIN;
        INSERT INTO redemption_totals AS t (offer_id, redeemed_count) VALUES (\(offer), 1)
        ON CONFLICT (offer_id) DO UPDATE SET redeemed_count = t.redeemed_count + 1 RETURNING redeemed_count;
        SELECT o.deleted_at, o.starts_at, o.ends_at, o.per_shopper_limit, o.total_limit,
            (SELECT count(*) FROM redemptions WHERE account_id = :acct AND offer_id = o.id) AS mine,
            first.id, first.offer_id, first.code, first.created_at
        FROM offers o LEFT JOIN redemptions first ON first.account_id = :acct AND first.idempotency_key = 'pg' || :k
        WHERE o.id = \(offer);
        INSERT INTO redemptions (account_id, offer_id, code, idempotency_key, created_at)
        VALUES (:acct, \(offer), 'ABCDE12345', 'pg' || :k, now())
        RETURNING id, offer_id, code, created_at;
        COMMIT;

        """)
    recordWrite("POST /v1/redemptions", redemptions, reference: redemptionReference)

    // Catalog delta of one changed offer, and the whole catalog (all its pages, one after the other).
    var cursor = try wholeCatalog(server, token: tokens[0]).cursor
    var deltaSeconds: [Double] = []
    var deltaBytes = 0
    for round in 1...5 {
        try server.touchOffer(round * 977)
        var body: [UInt8] = []
        deltaSeconds.append(
            try seconds {
                body = try server.request("GET", "/v1/catalog?since=\(cursor)", token: tokens[0])
            })
        deltaBytes = max(deltaBytes, body.count)
        guard let page = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            (page["offers"] as? [Any])?.count == 1, let next = page["cursor"] as? String
        else { throw BenchFailure("a one-offer delta did not hold one offer") }
        cursor = next
    }
    let delta = median(deltaSeconds)
    record(
        "catalog delta, 1 of \(catalogSize) offers changed",
        String(format: "%.2f ms, %d bytes (median of 5)", delta * 1e3, deltaBytes),
        target: "< 5 ms and < 2 KB", met: delta < 0.005 && deltaBytes < 2048)

    var fullBytes = 0
    let full = median(
        try (0..<3).map { _ in try seconds { fullBytes = try wholeCatalog(server, token: tokens[0]).bytes } })
    record(
        "full catalog of \(catalogSize) offers",
        String(format: "%.3f s, %.1f MB (median of 3)", full, Double(fullBytes) / 1e6), target: "< 1 s",
        met: full < 1)
}

/// The same server on the same kind of cluster, straight and through PgBouncer in transaction pooling mode:
/// the price of the extra hop on the cheapest read (a 304) and on a write (POST /v1/seen).
@MainActor func benchPgBouncer() throws {
    print("\n== pgbouncer: the server straight to PostgreSQL and through PgBouncer, \(connections) connections")
    var rates: [String: [Load.Result]] = [:]
    for variant in ["direct", "pgbouncer"] {
        let server = try BenchSite(throughPgBouncer: variant == "pgbouncer")
        defer { server.stop() }
        try server.seedCatalog(offers: 1_000)
        let load = Load(server: server, tokens: try (0..<connections).map { _ in try server.createDevice() })
        let etag = try wholeCatalog(server, token: load.tokens[0]).etag
        let notModified = try load.wrk("catalog-304", notModifiedScript(etag: etag))
        let seen = try load.wrk("seen", seenScript(offers: 1_000))
        rates[variant] = [notModified, seen]
    }
    for (index, name) in ["GET /v1/catalog 304 through PgBouncer", "POST /v1/seen through PgBouncer"].enumerated() {
        let direct = rates["direct"]![index]
        let pooled = rates["pgbouncer"]![index]
        record(
            name,
            String(
                format: "%.0f req/s, p99 %.1f ms = %.0f%% of direct's %.0f req/s, p99 %.1f ms", pooled.rate,
                pooled.p99Milliseconds, 100 * pooled.rate / direct.rate, direct.rate, direct.p99Milliseconds),
            target: ">= 50% of direct", met: pooled.rate >= 0.5 * direct.rate && pooled.clean && direct.clean)
    }
}

/// wrk's request: GET /v1/catalog with a current ETag (answered 304).
private func notModifiedScript(etag: String) -> String {
    """
    function request()
        return wrk.format("GET", "/v1/catalog", {["Authorization"] = "Bearer " .. token, ["If-None-Match"] = '\(etag)'})
    end
    """
}

/// wrk's request: POST /v1/seen of 10 random offers among the first `offers`.
private func seenScript(offers: Int) -> String {
    """
    function request()
        local items = {}
        for i = 1, 10 do
            items[i] = string.format('{"offer_id":"00000000-0000-4000-8000-%012x","seen_at":"2025-06-01T12:00:00Z"}',
                math.random(1, \(offers)))
        end
        return wrk.format("POST", "/v1/seen",
            {["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json"},
            '{"items":[' .. table.concat(items, ",") .. ']}')
    end
    """
}

/// Every page of the catalog from the start, in turn, following `Link: rel="next"` (only the last
/// page is parsed, so the time is the server's): the cursor and ETag of the last, and the bytes received.
private func wholeCatalog(_ site: BenchSite, token: String) throws -> (cursor: String, etag: String, bytes: Int) {
    var path = "/v1/catalog"
    var bytes = 0
    while true {
        let response = try site.server.request("GET", path, token: token)
        guard response.status == 200 else { throw BenchFailure("GET \(path) answered \(response.status)") }
        bytes += response.body.count
        if let link = response.headers["link"], let open = link.firstIndex(of: "<"),
            let close = link.firstIndex(of: ">")
        {
            path = String(link[link.index(after: open)..<close])
            continue
        }
        guard let page = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
            let cursor = page["cursor"] as? String, page["more"] as? Bool == false
        else { throw BenchFailure("GET \(path): the last page has no cursor") }
        return (cursor, response.headers["etag"] ?? "", bytes)
    }
}

@MainActor private func recordWrite(_ name: String, _ result: Load.Result, reference: Double) {
    let ratio = result.rate / reference
    record(
        name,
        String(
            format: "%.0f req/s = %.0f%% of pgbench's %.0f tps, p99 %.1f ms", result.rate, 100 * ratio,
            reference,
            result.p99Milliseconds),
        target: ">= 50% of pgbench, p99 < 25 ms",
        met: ratio >= 0.5 && result.p99Milliseconds < 25 && result.clean)
}

/// wrk against the server and pgbench against its database, `connections` each.
private struct Load {
    let server: BenchSite
    let tokens: [String]

    struct Result {
        var rate: Double
        var p99Milliseconds: Double
        var errors: Int
        var clean: Bool { errors == 0 }
    }

    /// One wrk thread per connection, so each connection is one device with its own token.
    func wrk(_ name: String, _ requestScript: String) throws -> Result {
        let script = server.work.appendingPathComponent("\(name).lua")
        let tokenList = tokens.map { "\"\($0)\"" }.joined(separator: ", ")
        try """
        local tokens = {\(tokenList)}
        local created = 0
        function setup(thread)
            created = created + 1
            thread:set("token", tokens[created])
            thread:set("connection", created)
        end
        function init(args)
            math.randomseed(connection * 7919 + os.time())
        end
        \(requestScript)
        function done(summary, latency, requests)
            local e = summary.errors
            io.write(string.format("WRK %d %d %d %d\\n", summary.requests, summary.duration,
                e.connect + e.read + e.write + e.status + e.timeout, latency:percentile(99)))
        end
        """.write(to: script, atomically: true, encoding: .utf8)
        let output = try runTool(
            "/usr/bin/wrk",
            ["-t\(connections)", "-c\(connections)", "-d\(loadSeconds)s", "-s", script.path, server.url])
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("WRK ") }) else {
            throw BenchFailure("wrk said: \(output)")
        }
        let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        let result = Result(
            rate: fields[0] / (fields[1] / 1e6), p99Milliseconds: fields[3] / 1e3, errors: Int(fields[2]))
        if !result.clean { print("  wrk \(name): \(result.errors) errors or non-2xx/3xx answers") }
        return result
    }

    /// Transactions per second (without connection time).
    func pgbench(_ name: String, _ transaction: String) throws -> Double {
        let script = server.work.appendingPathComponent("\(name).pgbench")
        try transaction.write(to: script, atomically: true, encoding: .utf8)
        let output = try runTool(
            "/usr/lib/postgresql/15/bin/pgbench",
            [
                "-n", "-M", "extended", "-c", "\(connections)", "-j", "2", "-T", "\(loadSeconds)", "-f",
                script.path,
                server.conninfo,
            ])
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
            let tps = line.dropFirst(6).split(separator: " ").first.flatMap({ Double($0) })
        else { throw BenchFailure("pgbench said: \(output)") }
        return tps
    }
}

/// Runs a tool to completion; its standard output and error, together.
private func runTool(_ path: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchFailure("\(path) exited with \(process.terminationStatus): \(output)")
    }
    return output
}
