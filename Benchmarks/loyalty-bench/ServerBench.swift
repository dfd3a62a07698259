// Speed figures: the real server under wrk on loopback, each endpoint against pgbench running the same SQL
// statements with the same concurrency on the same cluster, in the same run.
import Foundation
import LoyaltyAPI
import Postgres

#if canImport(Glibc)
    import Glibc
#endif

/// Clients of wrk and of pgbench: each one device (a token of its own), pgbench's client n acting as wrk's n.
let connections = 16
/// wrk's threads, as pgbench's `-j 2`: both load generators get the same means on the two cores.
let loadThreads = 2
private let catalogSize = 100_000

@MainActor func benchServer() throws {
    print(
        "\n== server: loyalty-server's service over loopback, its own PostgreSQL, \(connections) clients on "
            + "\(loadThreads) threads (wrk and pgbench)")
    let server = try BenchSite()
    defer { server.stop() }
    let retailers = try server.seedCatalog(offers: catalogSize)
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

    // pgbench runs the server's own statements (Database) with their parameters bound, as the server binds them: first
    // the device lookup, which on the catalog also reads the feed's head. A client reads its device's digest and
    // account from its row of bench_clients in its first transaction only (`clientParameters`).
    func device(withFeedHead: Bool) -> String {
        """
        \(clientParameters("SELECT token_hash, account_id FROM bench_clients"))
        SELECT d.id, d.account_id AS acct, d.token_hash\(withFeedHead ? ", f.generation, f.version" : "")
        FROM devices d\(withFeedHead ? " JOIN catalog_feed f ON f.singleton" : "")
        WHERE d.token_hash = :token_hash AND d.revoked_at IS NULL AND d.account_id = :account_id \\gset

        """
    }

    // GET /v1/catalog with a current ETag; and the same from floor-server in each design, in the same rounds. The
    // server answers it from memory (CatalogCheck, docs/SCALING.md), the references run the statement it replaced:
    // at least twice pgbench's rate and 1.5 times floor-server's, with a p99 under 5 ms at 16 connections.
    let whole = try wholeCatalog(server, token: tokens[0])
    let floors = try FloorServer.Design.allCases.compactMap { try FloorServer(site: server, tokens: tokens, design: $0) }
    defer { floors.forEach { $0.stop() } }
    let notModified = try load.compare(
        "catalog-304", share: 2, wrk: { _ in notModifiedScript(whole) }, pgbench: device(withFeedHead: true),
        floors: floors)
    recordLoad("GET /v1/catalog, current ETag (304)", notModified, overFloor: 1.5, closedLoopP99: 5)

    // The writes also go to a second server on the same database without the catalog check, in the same rounds: their
    // rate beside it says whether the check costs them anything (it adds no statement to them, and migration 0018's
    // triggers fire on catalog_feed and devices, which they do not write).
    let withoutCheck = try server.withoutCatalogCheck().baseURL

    // POST /v1/seen, 10 random offers per push (pgbench's drawn as wrk's are: offers side by side would share the
    // index pages, and their rows the WAL's page images, that random ones do not).
    let seen = try load.compare(
        "seen", share: 0.85, wrk: { _ in seenScript(offers: catalogSize) },
        pgbench: """
        \(device(withFeedHead: false))
        WITH bump AS (
            UPDATE accounts SET seen_version = seen_version + 1 WHERE id = :acct RETURNING seen_version)
        INSERT INTO seen (account_id, offer_id, seen_at, version)
        SELECT :acct, item.offer_id, item.seen_at, bump.seen_version
        FROM bump, (
            SELECT i.offer_id, greatest(least(i.seen_at, now()), o.created_at) AS seen_at, o.starts_at, o.ends_at
            FROM unnest(
                (SELECT array_agg(\(BenchSite.offerIDSQL("1 + floor(random() * \(catalogSize))")))
                    FROM generate_series(1, 10)),
                array_fill('2025-06-01T12:00:00Z'::timestamptz, ARRAY[10])) AS i (offer_id, seen_at)
                JOIN offers o ON o.id = i.offer_id) AS item
        WHERE (item.starts_at IS NULL OR item.starts_at <= item.seen_at)
            AND (item.ends_at IS NULL OR item.seen_at < item.ends_at)
        ON CONFLICT DO NOTHING;

        """, withoutCatalogCheck: withoutCheck)
    recordLoad("POST /v1/seen (10 items)", seen)

    // POST /v1/redemptions of random offers, each with its own Idempotency-Key. The server redeems only offers in
    // the account's seen set: every bench account has seen every offer, as after a walk through each shop.
    try connection.execute(
        script: """
            INSERT INTO seen (account_id, offer_id, seen_at, version)
            SELECT c.account_id, o.id, now(), 0 FROM bench_clients c CROSS JOIN offers o ON CONFLICT DO NOTHING
            """)
    let run = UUID().uuidString.prefix(8)
    let offer = BenchSite.offerIDSQL(":o")
    let redemptions = try load.compare(
        "redemptions", share: 0.85,
        wrk: { round in
            """
        local count = 0
        function clientRequest()
            count = count + 1
            return wrk.format("POST", "/v1/redemptions",
                {["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json",
                 ["Idempotency-Key"] = "\(run)-\(round)-" .. connection .. "-" .. count},
                string.format('{"offer_id":"00000000-0000-4000-8000-%012x"}', math.random(1, \(catalogSize))))
        end
        """
        },
        pgbench: """
        \\set o random(1, \(catalogSize))
        \\set k random(1, 1000000000000)
        \(device(withFeedHead: false))
        BEGIN;
        INSERT INTO redemption_totals AS t (offer_id, redeemed_count) VALUES (\(offer), 1)
        ON CONFLICT (offer_id) DO UPDATE SET redeemed_count = t.redeemed_count + 1 RETURNING redeemed_count;
        SELECT o.deleted_at, o.starts_at, o.ends_at, o.per_shopper_limit, o.total_limit,
            (SELECT count(*) FROM redemptions WHERE account_id = :acct AND offer_id = o.id) AS mine,
            EXISTS (SELECT 1 FROM seen WHERE account_id = :acct AND offer_id = o.id) AS seen,
            first.id, first.offer_id, first.code, first.created_at
        FROM offers o LEFT JOIN redemptions first ON first.account_id = :acct AND first.idempotency_key = 'pg' || :k
        WHERE o.id = \(offer);
        INSERT INTO redemptions (account_id, offer_id, code, idempotency_key, created_at)
        VALUES (:acct, \(offer), 'ABCDE12345', 'pg' || :k, now())
        RETURNING id, offer_id, code, created_at;
        COMMIT;

        """, withoutCatalogCheck: withoutCheck)
    recordLoad("POST /v1/redemptions", redemptions)

    // POST /v1/till/accept: each connection a till of the first retailer with a key of its own, accepting codes
    // of its own in turn (wrk codes 1 to tillCodes, pgbench's above them, so no code is accepted twice).
    let tillCodes = 200_000
    let till = retailers[0]
    let tillKeys = try (0..<connections).map { index in
        let response = try server.server.request(
            "POST", "/v1/retailer/till-keys", token: till.apiKey, rawJSON: "{\"name\":\"Till \(index + 1)\"}")
        guard response.status == 201, let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
            let key = object["till_key"] as? String
        else { throw BenchFailure("POST /v1/retailer/till-keys answered \(response.status)") }
        return key
    }
    let shopper = try server.createDevice()
    try connection.execute(
        script: """
            CREATE TABLE bench_tills (client_id int PRIMARY KEY, key_hash bytea NOT NULL);
            INSERT INTO bench_tills SELECT row_number() OVER (ORDER BY created_at, id) - 1, key_hash FROM till_keys
            WHERE retailer_id = '\(till.id)';
            """)
    try connection.query(
        PostgresQuery(
            unsafeSQL: """
                INSERT INTO redemptions (account_id, offer_id, code, created_at)
                SELECT d.account_id, o.id, \(BenchSite.tillCodeSQL("n")), now()
                FROM devices d, (SELECT id FROM offers WHERE retailer_id = $1::uuid LIMIT 1) o,
                    generate_series(1, \(2 * tillCodes)) AS n
                WHERE d.token_hash = sha256(convert_to($2, 'UTF8'))
                """, parameters: [till.id.uuidString, shopper]))
    try connection.execute(script: "VACUUM ANALYZE redemptions")
    // wrk counts any answer but 2xx and 3xx as an error: a till that cannot accept would only show as errors.
    let check = try server.server.request(
        "POST", "/v1/till/accept", token: tillKeys[0], rawJSON: "{\"code\":\"\(tillCode(2 * tillCodes))\"}")
    guard check.status == 200 else { throw BenchFailure("POST /v1/till/accept answered \(check.status): \(check.text)") }
    // Each round (the paced one and the server's without the catalog check too) accepts codes of its own: a client's
    // count starts at 1,500 times the round (6,000 accepts a second; the last round's codes end under tillCodes).
    let accepts = try Load(server: server, tokens: tillKeys).compare(
        "till-accept", share: 0.85,
        wrk: { round in
            """
        local counts = {}
        function clientRequest()
            local count = counts[connection] or \(1_500 * round)
            counts[connection] = count + 1
            local code = string.format("%010d", connection + \(connections) * count):gsub("0", "A"):gsub("1", "B")
            return wrk.format("POST", "/v1/till/accept",
                {["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json"},
                '{"code":"' .. code .. '"}')
        end
        """
        },
        pgbench: """
        \\set n \(tillCodes + 1) + :client_id + \(connections) * :accepted
        \\set accepted :accepted + 1
        \(clientParameters("SELECT key_hash AS till_key_hash FROM bench_tills"))
        SELECT id AS till, retailer_id AS retailer, name AS till_name, key_hash FROM till_keys
        WHERE key_hash = :till_key_hash AND revoked_at IS NULL \\gset
        UPDATE redemptions r
        SET accepted_at = now(), accepted_by = :till, accepted_till = :till_name
        FROM offers o
        WHERE r.code = \(BenchSite.tillCodeSQL(":n")) AND o.id = r.offer_id AND o.retailer_id = :retailer
            AND r.accepted_at IS NULL AND o.deleted_at IS NULL AND (o.ends_at IS NULL OR o.ends_at > now())
        RETURNING r.code, r.offer_id, r.created_at, r.accepted_at, r.accepted_till, o.major, o.minor, o.title;

        """, defining: { round in ["accepted": "\(3_000 * round)"] }, withoutCatalogCheck: withoutCheck)
    recordLoad("POST /v1/till/accept", accepts)

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

    // The same delta under load: every request asks for the change of one offer since `cursor`.
    let before: Int64 = try connection.query("SELECT version FROM catalog_feed")[0].decode("version")
    try server.touchOffer(6 * 977)
    let changes = { (table: String) in
        """
        SELECT \(table == "retailers" ? "id, name, uuid, version" : "*") FROM \(table)
        WHERE version > :after AND version <= (SELECT version FROM catalog_feed WHERE singleton)\(
            table == "retailers" ? "" : " AND (deleted_at IS NULL OR true)")
        ORDER BY version LIMIT \(CatalogPage.maximumRows + 1);
        """
    }
    // The server sends the snapshot's statements together (libpq's pipeline mode): so does pgbench.
    let deltas = try load.compare(
        "catalog-delta", share: 0.75,
        wrk: { _ in
            """
        function clientRequest()
            return wrk.format("GET", "/v1/catalog?since=\(cursor)", {["Authorization"] = "Bearer " .. token})
        end
        """
        },
        pgbench: """
        \\set after \(before)
        \(device(withFeedHead: true))
        \\startpipeline
        BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY;
        SELECT generation, version, purged_through FROM catalog_feed WHERE singleton;
        \(changes("retailers"))
        \(changes("offers"))
        \(changes("stores"))
        COMMIT;
        \\endpipeline

        """)
    recordLoad("GET /v1/catalog?since=, one offer changed", deltas)

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
        let whole = try wholeCatalog(server, token: load.tokens[0])
        let notModified = try load.wrk("catalog-304", notModifiedScript(whole), seconds: 8)
        let seen = try load.wrk("seen", seenScript(offers: 1_000), seconds: 8)
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

/// The bench's redemption code number `n`, as `BenchSite.tillCodeSQL` writes it.
private func tillCode(_ n: Int) -> String {
    String(String(format: "%010d", n).map { $0 == "0" ? "A" : $0 == "1" ? "B" : $0 })
}

/// pgbench lines that set a client's own parameters from its row (`client_id`) of the table `select` reads, in its
/// first transaction only: each transaction after binds them, as the server binds its own. With a subquery of that
/// row in each statement instead, the device lookup ran at 16.5-17k transactions per second here, against 23-24.5k
/// with its parameters bound: the reference was a slower statement than the server's.
private func clientParameters(_ select: String) -> String {
    """
    \\if :looked_up = 0
    \(select) WHERE client_id = :client_id \\gset
    \\set looked_up 1
    \\endif
    """
}

/// wrk's request: GET /v1/catalog with the current cursor and ETag, as `loyalty sync` asks. A client's request is the
/// same bytes every time: made once and kept, as wrk's documentation advises, so wrk's formatting of each request
/// (about 2 µs of CPU) does not count against the server.
private func notModifiedScript(_ whole: (cursor: String, etag: String, bytes: Int)) -> String {
    """
    local made = {}
    function clientRequest()
        local request = made[token]
        if not request then
            request = wrk.format("GET", "/v1/catalog?since=\(whole.cursor)", {["Authorization"] = "Bearer " .. token, ["If-None-Match"] = '\(whole.etag)'})
            made[token] = request
        end
        return request
    end
    """
}

/// wrk's request: POST /v1/seen of 10 random offers among the first `offers`.
private func seenScript(offers: Int) -> String {
    """
    function clientRequest()
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

/// A route under wrk against pgbench running its statements: at least `share` of pgbench's rate closed-loop, and a
/// p99 under 20 ms when paced at that share of pgbench's rate. With 16 clients in a closed loop the mean latency is
/// 16 / rate whatever the server does (pgbench's own is as long), so the p99 is taken from the paced run.
/// `overFloor`: a route that no longer runs the statement (the 304) must also beat floor-server's threads design
/// (which still does) by that factor, with a closed-loop p99 under `closedLoopP99` ms.
@MainActor private func recordLoad(
    _ name: String, _ comparison: Load.Comparison, overFloor: Double? = nil, closedLoopP99: Double? = nil
) {
    let served = comparison.served
    let paced = comparison.paced
    let reference = comparison.reference
    let pacedInFull = paced.rate >= 0.95 * comparison.pacedTarget
    func floorFigures(_ figure: (Load.Floor) -> String) -> String {
        comparison.floors.map { "\($0.design.rawValue) \(figure($0))" }.joined(separator: ", ")
    }
    let floorReference =
        comparison.floors.isEmpty
        ? "" : "; floor-server (the same exchange and statement in C, nothing else): "
            + floorFigures { String(format: "%.0f req/s", $0.rate) }
    let floorRatio =
        comparison.floors.isEmpty ? "" : "; floor-server " + floorFigures { String(format: "%.0f%%", 100 * $0.ratio) }
    let threadsFloor = comparison.floors.first(where: { $0.design == .threads })
    // Below the floor's own ratio the target is out of reach for a server of this design on this machine (not for
    // one that skips the statement the floor runs).
    let unreachable = threadsFloor.flatMap { floor in
        overFloor == nil && floor.ratio < comparison.share
            ? String(
                format: "floor-server, the same libraries and threads with nothing but the statement, reached %.0f%% "
                    + "of pgbench in the same rounds: under the %.0f%% target", 100 * floor.ratio,
                100 * comparison.share) : nil
    }
    record(
        name,
        String(
            format: "%.0f req/s closed-loop (p99 %.1f ms); paced at %.0f req/s: %.0f req/s, p99 %.1f ms", served.rate,
            served.p99Milliseconds, comparison.pacedTarget, paced.rate, paced.p99Milliseconds),
        reference: String(
            format: "pgbench %.0f tps, mean latency %.1f ms; paced at the same rate: p99 %.1f ms", reference.tps,
            reference.meanMilliseconds, comparison.pacedReferenceP99Milliseconds) + floorReference,
        ratio: String(
            format: "%.0f%% (median of %d rounds); CPU µs per request: server %.0f, postgres %.0f, wrk %.0f; "
                + "per transaction: postgres %.0f, pgbench %.0f", 100 * comparison.ratio, Load.rounds,
            served.cpu.server, served.cpu.postgres, served.cpu.tool, reference.cpu.postgres, reference.cpu.tool)
            + floorRatio,
        target: String(format: ">= %.0f%% of pgbench; p99 < 20 ms at that rate", 100 * comparison.share)
            + (overFloor.map { String(format: "; >= %.1fx floor-server (threads)", $0) } ?? "")
            + (closedLoopP99.map { String(format: "; p99 < %.0f ms at %d connections", $0, connections) } ?? ""),
        met: comparison.ratio >= comparison.share && pacedInFull && paced.p99Milliseconds < 20 && served.clean
            && paced.clean && overFloor.map { served.rate >= $0 * (threadsFloor?.rate ?? 0) } ?? true
            && closedLoopP99.map { served.p99Milliseconds < $0 } ?? true,
        knownMiss: unreachable)
    if let baseline = comparison.withoutCatalogCheck {
        record(
            name + ", beside the server without the catalog check",
            String(format: "%.0f req/s; server CPU %.0f µs per request", served.rate, served.cpu.server),
            reference: String(
                format: "the same requests to a second server on the same database without the catalog check (no "
                    + "listener, no token cache), in the same rounds: %.0f req/s; server CPU %.0f µs per request",
                baseline.served.rate, baseline.served.cpu.server),
            ratio: String(format: "%.0f%% (median of %d rounds)", 100 * baseline.ratio, Load.rounds),
            target: String(format: ">= %.0f%% (no slower)", 100 * writesWithCheckShare),
            met: baseline.ratio >= writesWithCheckShare && baseline.served.clean)
    }
}

/// The writes with the catalog check against the same server without it: no slower. Two identical servers taking
/// turns on this shared machine differ by a few per cent from round to round, so the target allows that much.
private let writesWithCheckShare = 0.95

/// Benchmarks/floor-server, built by `make bench` beside this program, serving the 304 from the site's database to
/// the bench's devices. Nil, said for each design, when it was not built (the bench run without the Makefile).
final class FloorServer {
    /// How it serves: loyalty-server's way (a thread per connection, each waiting on PostgreSQL); event loops that
    /// suspend a request while its statement runs; or those loops sending their turn's statements together in one
    /// pipeline (floor.c says more).
    enum Design: String, CaseIterable {
        case threads, loops, pipelined
    }

    let design: Design
    let url: String
    private let process: Process

    init?(site: BenchSite, tokens: [String], design: Design) throws {
        self.design = design
        let program = buildDirectory.appendingPathComponent("floor-server")
        guard FileManager.default.isExecutableFile(atPath: program.path) else {
            print("  no \(program.path) (make bench builds it): the 304 is measured without its \(design) floor")
            return nil
        }
        // Each token's digest and account as the server binds them (pgbench's bench_clients rows).
        let rows = try site.connect().query(
            "SELECT client_id, token_hash, account_id FROM bench_clients ORDER BY client_id")
        let clients = site.work.appendingPathComponent("floor-clients.txt")
        try rows.map { row in
            let token = tokens[try row.decode("client_id", as: Int.self)]
            let digest: String = try row.decode("token_hash")
            let account: String = try row.decode("account_id")
            return "\(token)\t\(digest)\t\(account)\n"
        }.joined().write(to: clients, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = program
        process.arguments = (design == .threads ? [] : ["--\(design.rawValue)"]) + [site.conninfo, clients.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = UInt16(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw BenchFailure("floor-server did not say its port: \(line)")
        }
        url = "http://127.0.0.1:\(port)"
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

