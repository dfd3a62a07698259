// The catalog a shopper carries (issue 45): a new device's first sync (the default, a working set) beside a whole one,
// the cache after a day of visits, the fetch of a retailer heard for the first time, the whole catalog gzipped.
import Foundation
import JSONCoding
import LoyaltyAPI
import Postgres

/// `BENCH_CARRY_RETAILERS` scales the run down (the issue's figure is 10,000 retailers of 100 offers each).
private let retailerCount = Int(ProcessInfo.processInfo.environment["BENCH_CARRY_RETAILERS"] ?? "") ?? 10_000
private let offersPerRetailer = 100

@MainActor func benchCarry() throws {
    print("\n== carry: \(retailerCount) retailers, \(retailerCount * offersPerRetailer) offers")
    let site = try BenchSite()
    defer { site.stop() }
    let generated = try seconds { try seedRetailers(site) }
    print(String(format: "generated in %.1f s", generated))
    let token = try site.createDevice()

    // The whole catalog as `sync --all` takes it, page by page, plain and gzipped (the wire's bytes are the
    // Content-Length; the client decodes).
    var (plain, gzipped, cursor) = (0, 0, nil as String?)
    repeat {
        let target = "/v1/catalog" + (cursor.map { "?since=\($0)" } ?? "")
        let identity = try site.server.request("GET", target, token: token, headers: ["Accept-Encoding": "identity"])
        let packed = try site.server.request("GET", target, token: token)
        plain += identity.body.count
        gzipped += Int(packed.headers["content-length"] ?? "") ?? packed.body.count
        let page = try CatalogPage(json: identity.body)
        cursor = page.more ? page.cursor : nil
    } while cursor != nil
    let ratio = Double(plain) / Double(gzipped)
    record(
        "whole catalog gzipped", String(format: "%.1f MB", Double(gzipped) / 1e6),
        reference: String(format: "%.1f MB plain", Double(plain) / 1e6), ratio: String(format: "%.1fx", ratio),
        target: ">= 5x", met: ratio >= 5)

    // A new device: a whole sync (`--all`), and the default `loyalty sync`, a working set at home (one retailer's
    // store near).
    let home = try firstStore(site)
    func device(_ name: String) -> [String: String] {
        ["LOYALTY_HOME": site.work.appendingPathComponent(name).path, "LOYALTY_SERVER": site.url]
    }
    func loyalty(_ environment: [String: String], _ arguments: [String]) throws -> Double {
        let run = try runMeasured("loyalty", arguments, environment: environment)
        guard run.status == 0 else { throw BenchFailure("loyalty \(arguments.joined(separator: " ")) exited \(run.status)") }
        return run.seconds
    }
    let (whole, carrying) = (device("whole"), device("carrying"))
    for environment in [whole, carrying] { _ = try loyalty(environment, ["account", "create"]) }
    let wholeSync = try loyalty(whole, ["sync", "--all"])
    let firstSync = try loyalty(carrying, ["sync", "--near", "\(home.latitude),\(home.longitude)", "--radius-km", "2"])
    let directory = try site.server.request("GET", "/v1/directory", token: token)
    let homePart = try site.server.request("GET", "/v1/catalog?retailers=\(home.id.uuidString)", token: token)
    let firstBytes = [directory, homePart].reduce(0) { $0 + (Int($1.headers["content-length"] ?? "") ?? 0) }
    record(
        "a new device's first sync, working set: bytes", String(format: "%.2f MB", Double(firstBytes) / 1e6),
        reference: String(format: "whole sync %.1f MB plain, %.1f MB gzipped", Double(plain) / 1e6, Double(gzipped) / 1e6),
        target: "< 1 MB", met: firstBytes < 1_000_000)
    record(
        "a new device's first sync, working set: time", String(format: "%.2f s", firstSync),
        reference: String(format: "whole sync %.2f s", wholeSync), ratio: String(format: "%.2f", firstSync / wholeSync),
        target: "< 2 s", met: firstSync < 2)

    // A day visiting 20 retailers: their beacons heard (offline), then a sync fetches them by bucket.
    let visited = try site.connect().query(
        "SELECT uuid FROM retailers ORDER BY name OFFSET 100 LIMIT 20"
    ).map { row throws(PostgresError) -> UUID in try row.decode("uuid") }
    let walk = site.work.appendingPathComponent("day.btsnoop")
    let beacons = visited.enumerated().flatMap { index, uuid in
        ["--walk", "\(uuid.uuidString):1:1@0=20,\(10 * index + 2)=1,\(10 * index + 6)=1,\(10 * index + 8)=20,\(10 * visited.count + 10)=20"]
    }
    _ = try loyalty(carrying, ["beacon", "simulate", "--write", walk.path] + beacons)
    _ = try loyalty(carrying, ["scan", "--replay", walk.path, "--offline"])
    _ = try loyalty(carrying, ["sync"])
    let carried = cacheBytes(carrying), everything = cacheBytes(whole)
    record(
        "cache after a day visiting 20 retailers", String(format: "%.1f MB", Double(carried) / 1e6),
        reference: String(format: "whole catalog's cache %.1f MB", Double(everything) / 1e6),
        ratio: String(format: "%.3f", Double(carried) / Double(everything)), target: "< 20 MB", met: carried < 20_000_000)

    // Entering a never-seen retailer's region online: the scan's one request, a bucket.
    let pair = try site.connect().query("SELECT name, uuid FROM retailers ORDER BY name OFFSET 500 LIMIT 2")
    let (followed, fresh) = (try pair[0].decode("uuid", as: UUID.self), try pair[1].decode("uuid", as: UUID.self))
    let buckets = try bucketCount(directory.body)
    let bucket = try bucketOf(fresh, directory.body)
    var fetched: TestResponseSize = (0, 0)
    let fetch = try seconds {
        let answer = try site.server.request("GET", "/v1/catalog?bucket=\(bucket)&buckets=\(buckets)", token: token)
        fetched = (Int(answer.headers["content-length"] ?? "") ?? 0, answer.body.count)
    }
    record(
        "a heard retailer's bucket fetched", String(format: "%.0f ms", fetch * 1e3),
        reference: String(format: "%.0f KB gzipped, %.0f KB plain", Double(fetched.wire) / 1e3, Double(fetched.plain) / 1e3),
        target: "< 1 s", met: fetch < 1)

    // The same, end to end: a scan paced in real time walks up to the beacon of a retailer the device has never
    // carried, and beside it (same device, same walk) one it carries because the shopper follows it. The carried
    // one's offer comes with the first ranging snapshot that says near (once a second, as Core Location ranges); the
    // never-seen one's waits for the fetch too: the difference in wall time is the delay the fetch adds.
    _ = try loyalty(carrying, ["follow", try pair[0].decode("name", as: String.self)])
    _ = try loyalty(carrying, ["sync"])
    func firstOffer(_ uuid: UUID) throws -> (enteredAt: Double?, shownAt: Double, wall: Double) {
        let walk = site.work.appendingPathComponent("walk-\(uuid.uuidString).btsnoop")
        _ = try loyalty(carrying, ["beacon", "simulate", "--write", walk.path, "--walk", "\(uuid.uuidString):1:1@0=1,6=1"])
        var enteredAt: Double?
        for (line, wall) in try linesAsTheyCome(
            "loyalty", ["scan", "--replay", walk.path, "--realtime", "--json"], environment: carrying)
        {
            guard let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let time = event["t"] as? Double
            else { continue }
            switch event["event"] as? String {
            case "enter": enteredAt = enteredAt ?? time
            case "offer": return (enteredAt, time, wall)
            default: continue
            }
        }
        throw BenchFailure("no offer shown walking up to \(uuid)")
    }
    let known = try firstOffer(followed), heard = try firstOffer(fresh)
    guard let entered = known.enteredAt else { throw BenchFailure("the walk to a carried retailer entered no region") }
    let delay = max(0, heard.wall - known.wall)
    record(
        "a never-seen retailer's first offer: the delay its fetch adds", String(format: "%.0f ms", delay * 1e3),
        reference: String(
            format: "shown %.2f s after its beacon is first heard; a carried retailer's %.2f s",
            known.shownAt - entered + delay, known.shownAt - entered),
        target: "< 1 s", met: delay < 1)
}

/// Runs a product with its standard output piped: each line and the seconds since the start when it came.
private func linesAsTheyCome(_ product: String, _ arguments: [String], environment: [String: String]) throws
    -> [(line: String, seconds: Double)]
{
    let process = Process()
    process.executableURL = buildDirectory.appendingPathComponent(product)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let output = Pipe()
    process.standardOutput = output
    let start = DispatchTime.now().uptimeNanoseconds
    try process.run()
    var (lines, partial) = ([(line: String, seconds: Double)](), [UInt8]())
    while case let chunk = output.fileHandleForReading.availableData, !chunk.isEmpty {
        let arrived = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        partial += chunk
        while let end = partial.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append((String(decoding: partial[..<end], as: UTF8.self), arrived))
            partial.removeSubrange(...end)
        }
    }
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchFailure("\(product) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
    }
    return lines
}

private typealias TestResponseSize = (wire: Int, plain: Int)

/// The directory's bucket count.
private func bucketCount(_ directory: [UInt8]) throws -> Int {
    try LoyaltyJSON.decoder().decode(RetailerDirectory.self, from: Data(directory)).buckets
}

/// The bucket the directory gives `uuid`.
private func bucketOf(_ uuid: UUID, _ directory: [UInt8]) throws -> Int {
    let decoded = try LoyaltyJSON.decoder().decode(RetailerDirectory.self, from: Data(directory))
    guard let retailer = decoded.retailers.first(where: { $0.uuid == uuid }) else {
        throw BenchFailure("the directory lacks \(uuid)")
    }
    return retailer.bucket
}

/// The cache file and its write-ahead log.
private func cacheBytes(_ environment: [String: String]) -> Int {
    let cache = environment["LOYALTY_HOME"]! + "/cache.sqlite"
    return ["", "-wal"].reduce(0) { total, suffix in
        total + ((try? FileManager.default.attributesOfItem(atPath: cache + suffix)[.size] as? Int) ?? 0)
    }
}

/// The first retailer by name and its store: the working set's home.
private func firstStore(_ site: BenchSite) throws -> (id: UUID, latitude: Double, longitude: Double) {
    let row = try site.connect().query(
        "SELECT r.id, s.latitude, s.longitude FROM retailers r JOIN stores s ON s.retailer_id = r.id ORDER BY r.name LIMIT 1"
    )[0]
    return (try row.decode("id"), try row.decode("latitude"), try row.decode("longitude"))
}

/// `retailerCount` retailers, each with a store on a grid half a degree apart and `offersPerRetailer` offers of
/// generated words (titles of 4 to 8, descriptions of 10 to 24), every row at a version of its own.
private func seedRetailers(_ site: BenchSite) throws {
    let words = """
        'fresh','organic','sushi','pizza','coffee','latte','croissant','shoes','jacket','dress','denim','shirt',\
        'scarf','books','toys','games','phone','case','headphones','cable','charger','garden','plant','seeds','soap',\
        'shampoo','lotion','bread','cheese','wine','beer','juice','weekend','members','today','only','free','half'
        """
    let connection = try site.connect()
    try connection.execute(
        script: """
            CREATE FUNCTION pg_temp.words(n int, seed bigint) RETURNS text LANGUAGE sql AS $$
                SELECT string_agg((ARRAY[\(words)])[1 + ((hashint8(seed * 31 + i)::bigint % 38 + 38) % 38)::int], ' ')
                FROM generate_series(1, n) i $$;
            INSERT INTO retailers (id, name, uuid, api_key_hash, created_at, version, name_key)
            SELECT ('00000000-0000-4000-a000-' || lpad(to_hex(n), 12, '0'))::uuid, 'Shop ' || lpad(n::text, 6, '0'),
                gen_random_uuid(), sha256(('bench-' || n)::bytea), now(), (SELECT version FROM catalog_feed) + n,
                'shop ' || n
            FROM generate_series(1, \(retailerCount)) n;
            INSERT INTO stores (retailer_id, store_id, name, latitude, longitude, radius_m, updated_at, version)
            SELECT ('00000000-0000-4000-a000-' || lpad(to_hex(n), 12, '0'))::uuid, 'main', 'Main street',
                -50 + (n / 200) * 0.5, -170 + (n % 200) * 1.5, 100, now(),
                (SELECT version FROM catalog_feed) + \(retailerCount) + n
            FROM generate_series(1, \(retailerCount)) n;
            INSERT INTO offers (retailer_id, major, minor, title, description, category, per_shopper_limit, updated_at,
                version)
            SELECT ('00000000-0000-4000-a000-' || lpad(to_hex(n), 12, '0'))::uuid, 1 + m / 50, m % 50,
                (5 + (n + m) % 60) || '% off ' || pg_temp.words(4 + (n + m) % 5, n * 1000 + m),
                initcap(pg_temp.words(10 + (n * m) % 15, n * 7919 + m)) || '.',
                CASE WHEN m % 2 = 0 THEN 'food' ELSE 'clothing' END, 1, now(),
                (SELECT version FROM catalog_feed) + \(2 * retailerCount) + (n - 1) * \(offersPerRetailer) + m + 1
            FROM generate_series(1, \(retailerCount)) n, generate_series(0, \(offersPerRetailer - 1)) m;
            UPDATE catalog_feed SET version = version + \(2 * retailerCount + retailerCount * offersPerRetailer) WHERE singleton;
            """)
    // Apart: a script of several statements runs as one transaction, which VACUUM refuses.
    try connection.execute(script: "VACUUM ANALYZE")
    try connection.execute(script: "CHECKPOINT")
}
