// The `near` catalog query over 100,000 stores, and the geographic region monitor's CPU cost.
import Foundation
import Geofencing
import HTTPServer
import LoyaltyServer
import Postgres

#if canImport(Glibc)
    import Glibc
#endif

/// This process's CPU time in seconds.
private func cpuSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Greater London, where a tenth of the stores are; the rest are spread over Great Britain.
private let london = (latitude: 51.3...51.7, longitude: -0.5...0.3)

@MainActor func geoBench() throws {
    var generator = SystemRandomNumberGenerator()

    // GeoRegionMonitor: 10,000 store fences in London, a shopper walking across it at 10 fixes/s.
    var monitor = try GeoRegionMonitor()
    for index in 0..<10_000 {
        try monitor.add(
            GeoRegion(
                identifier: "store-\(index)",
                center: GeoCoordinate(
                    latitude: Double.random(in: london.latitude, using: &generator),
                    longitude: Double.random(in: london.longitude, using: &generator)),
                radius: Double.random(in: 30...500, using: &generator)))
    }
    let fixes = 200_000
    var events = 0
    let start = cpuSeconds()
    for step in 0..<fixes {
        // About 1.4 m per fix (5 km/h at 10 fixes/s) along a diagonal of the city, with 5 m of noise.
        let progress = Double(step) * 0.000_013
        let point = GeoCoordinate(
            latitude: 51.35 + progress.truncatingRemainder(dividingBy: 0.3)
                + Double.random(in: -0.00005...0.00005, using: &generator),
            longitude: -0.45 + progress.truncatingRemainder(dividingBy: 0.7))
        events += monitor.observe(GeoFix(time: Double(step) / 10, coordinate: point)).count
    }
    let perFix = (cpuSeconds() - start) / Double(fixes)
    let share = perFix * 10 * 100
    record(
        "GeoRegionMonitor, 10,000 regions at 10 fixes/s",
        String(format: "%.4f%% of a core (%.1f us/fix, %d events)", share, perFix * 1e6, events),
        target: "< 5% of a core", met: share < 5)

    // The near catalog query through the real route, on an embedded PostgreSQL with 100,000 stores.
    let cluster = try EmbeddedPostgres.shared()
    var configuration = ServerConfiguration(
        database: .conninfo(try cluster.createDatabase("geo_bench_\(getpid())")), operatorToken: "bench-operator")
    (configuration.poolSize, configuration.openAPIDocument, configuration.log) = (2, [], { _ in })
    configuration.rateLimits = .unlimited
    let server = try Server(configuration)
    let pool = server.pool
    print("inserting 10,000 retailers, 20,000 offers and 100,000 stores ...")
    // Each row carries its feed version, and the feed's head moves once at the end: left to the per-row trigger,
    // the 130,000 rows of one transaction would each update the feed row past every dead version the earlier
    // ones left (quadratic: it took about 15 minutes on a loaded machine). Each store's retailer is found by
    // number in a hash join, not by an OFFSET into the retailers per store.
    try pool.withConnection { connection in
        try connection.execute(
            script: """
                INSERT INTO retailers (name, uuid, api_key_hash, created_at, version)
                SELECT 'Retailer ' || i, gen_random_uuid(), sha256(('bench-' || i)::bytea), now(),
                    (SELECT version FROM catalog_feed) + i
                FROM generate_series(1, 10000) AS i;
                CREATE TEMPORARY TABLE numbered AS
                    SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM retailers;
                INSERT INTO offers (retailer_id, major, minor, title, updated_at, version)
                SELECT r.id, 1, m, 'Offer ' || m, now(), (SELECT version FROM catalog_feed) + 10000 + 2 * r.n + m
                FROM numbered r, generate_series(1, 2) AS m;
                INSERT INTO stores (retailer_id, store_id, name, latitude, longitude, radius_m, updated_at, version)
                SELECT r.id, 'store-' || s, 'Store ' || s,
                    CASE WHEN s % 10 = 0 THEN 51.3 + random() * 0.4 ELSE 50 + random() * 8 END,
                    CASE WHEN s % 10 = 0 THEN -0.5 + random() * 0.8 ELSE -6 + random() * 8 END,
                    50 + (s % 200), now(), (SELECT version FROM catalog_feed) + 30000 + s
                FROM generate_series(1, 100000) AS s JOIN numbered r ON r.n = s % 10000;
                UPDATE catalog_feed SET version = version + 130000 WHERE singleton;
                ANALYZE;
                """)
    }
    let service = server.service
    let account = service.handle(HTTPRequest(method: "POST", path: "/v1/accounts"))
    guard let credentials = try? JSONSerialization.jsonObject(with: Data(account.body)) as? [String: Any],
        let token = credentials["device_token"] as? String
    else { throw NSError(domain: "bench", code: 2, userInfo: [NSLocalizedDescriptionKey: "no device token"]) }
    var durations: [Double] = []
    var storesReturned = 0
    for _ in 0..<200 {
        let near =
            "\(Double.random(in: 51.4...51.6, using: &generator)),\(Double.random(in: -0.3...0.1, using: &generator))"
        let request = HTTPRequest(
            method: "GET", path: "/v1/catalog", query: ["near": near, "radius_km": "2"],
            headers: ["authorization": "Bearer \(token)"])
        var response = HTTPResponse(status: 0)
        durations.append(seconds { response = service.handle(request) })
        guard response.status == 200 else {
            throw NSError(
                domain: "bench", code: 3, userInfo: [NSLocalizedDescriptionKey: "near answered \(response.status)"])
        }
        let page = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        storesReturned += (page?["stores"] as? [Any])?.count ?? 0
    }
    durations.sort()
    let median = durations[durations.count / 2] * 1000
    let p95 = durations[durations.count * 95 / 100] * 1000
    record(
        "GET /v1/catalog?near (100,000 stores, 2 km)",
        String(
            format: "median %.2f ms, p95 %.2f ms (%d stores per page on average)", median, p95, storesReturned / 200),
        target: "< 10 ms", met: median < 10)
}
