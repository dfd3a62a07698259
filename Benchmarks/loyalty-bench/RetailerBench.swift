// Bulk offers and the console's first page, through the real routes in process (the handler's own
// time, no socket), on an embedded PostgreSQL.
import Foundation
import HTTPServer
import LoyaltyServer
import Postgres

#if canImport(Glibc)
    import Glibc
#endif

@MainActor func benchRetailer() throws {
    print("\n== retailer: CSV import and the console's first page")
    let cluster = try EmbeddedPostgres.shared()
    var configuration = ServerConfiguration(
        database: .conninfo(try cluster.createDatabase("retailer_bench_\(getpid())")), operatorToken: "bench-operator")
    (configuration.poolSize, configuration.openAPIDocument, configuration.log) = (2, [], { _ in })
    let server = try Server(configuration)
    let (service, pool) = (server.service, server.pool)
    func retailer(_ name: String) throws -> (key: String, id: String) {
        let reply = service.handle(
            HTTPRequest(
                method: "POST", path: "/v1/retailers", headers: ["authorization": "Bearer bench-operator"],
                body: Array("{\"name\":\"\(name)\"}".utf8)))
        guard let object = try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any],
            let key = object["api_key"] as? String, let id = object["id"] as? String
        else { throw BenchFailure("POST /v1/retailers answered \(reply.status)") }
        return (key, id)
    }
    func csv(_ count: Int) -> [UInt8] {
        var text = "major,minor,title,category,per_shopper_limit\n"
        for n in 0..<count { text += "\(n >> 8),\(n & 0xFF),Offer \(n): \(n % 50 + 5)% off,food,2\n" }
        return Array(text.utf8)
    }
    func importSeconds(_ key: String, _ body: [UInt8]) throws -> Double {
        var response = HTTPResponse(status: 0)
        let elapsed = seconds {
            response = service.handle(
                HTTPRequest(
                    method: "POST", path: "/v1/retailer/offers/import",
                    headers: ["authorization": "Bearer \(key)", "content-type": "text/csv"], body: body))
        }
        guard response.status == 200 else {
            throw BenchFailure("import answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        }
        return elapsed
    }
    /// The reference: the same rows in one INSERT whose versions the per-row trigger takes, one UPDATE of the
    /// feed row each (the write the issue measured at about 50 s for 100,000 rows). Its cost grows with the square
    /// of the rows, so on a loaded machine it is stopped at `referenceLimit`: nil, it took longer than that.
    let referenceLimit = 60
    func perRowTriggerSeconds(_ retailerID: String, _ count: Int) throws -> Double? {
        try pool.withConnection { connection in
            try connection.query(PostgresQuery(unsafeSQL: "SET statement_timeout = '\(referenceLimit)s'"))
            defer { _ = try? connection.query("RESET statement_timeout") }
            do {
                return try seconds {
                    try connection.query(
                        """
                        INSERT INTO offers (retailer_id, major, minor, title, category, per_shopper_limit, updated_at)
                        SELECT \(UUID(uuidString: retailerID)!), n >> 8, n & 255, 'Offer ' || n || ': ' || (n % 50 + 5) || '% off',
                            'food', 2, now()
                        FROM generate_series(0, \(count - 1)) AS n
                        """)
                }
            } catch let error as PostgresError where error.sqlState == PostgresError.SQLState.queryCanceled {
                return nil
            }
        }
    }

    for count in [10_000, 100_000] {
        let chain = try retailer("Chain \(count)")
        let reference = try retailer("Reference \(count)")
        let body = csv(count)
        let imported = try importSeconds(chain.key, body)
        let triggered = try perRowTriggerSeconds(reference.id, count)
        let again = try importSeconds(chain.key, body)
        let referenceText = triggered.map { String(format: "per-row feed trigger %.2f s", $0) }
            ?? "per-row feed trigger stopped after \(referenceLimit) s"
        record(
            "POST /v1/retailer/offers/import, \(count) new offers",
            String(
                format: "%.2f s server time (%.0f rows/s); unchanged again %.2f s", imported,
                Double(count) / imported, again),
            reference: referenceText,
            ratio: String(format: triggered == nil ? "over %.1fx faster" : "%.1fx faster", (triggered ?? Double(referenceLimit)) / imported),
            target: count == 10_000 ? "< 2 s" : "faster than the per-row trigger",
            met: count == 10_000 ? imported < 2 : imported < (triggered ?? Double(referenceLimit)))
        try pool.withConnection { try $0.execute(script: "VACUUM ANALYZE") }
    }

    // The console's offers page: a signed-in session asks for the first 100 of 10,000 offers.
    let key = try retailer("Console").key
    _ = try importSeconds(key, csv(10_000))
    let signIn = service.handle(
        HTTPRequest(
            method: "POST", path: "/v1/console/session", headers: ["content-type": "application/json"],
            body: Array("{\"api_key\":\"\(key)\"}".utf8)))
    guard let cookie = signIn.headers["Set-Cookie"]?.split(separator: ";").first else {
        throw BenchFailure("sign-in answered \(signIn.status)")
    }
    func timed(_ query: [String: String]) throws -> [Double] {
        try (0..<50).map { _ in
            var response = HTTPResponse(status: 0)
            let elapsed = seconds {
                response = service.handle(
                    HTTPRequest(method: "GET", path: "/v1/retailer/offers", query: query, headers: ["cookie": String(cookie)]))
            }
            guard response.status == 200 else { throw BenchFailure("offers answered \(response.status)") }
            return elapsed
        }
    }
    let page = try timed(["limit": "100"])
    let whole = try timed([:])
    let pageMilliseconds = median(page) * 1000
    record(
        "console offers page (first 100 of 10,000, session cookie)",
        String(
            format: "median %.2f ms server time (the whole list: %.1f ms, %.0fx)", pageMilliseconds,
            median(whole) * 1000, median(whole) / median(page)),
        target: "< 200 ms", met: pageMilliseconds < 200)
}
