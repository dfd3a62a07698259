// Secure beacons (issue 43): the real server resolving batches of 100 sightings against 100,000 secure beacons under
// wrk, beside pgbench running the equivalent indexed lookups on the same cluster in the same rounds; and the
// resolver's table of those beacons: its memory, its turn to a new window and its load from the database.
import Digest
import Foundation
import LoyaltyAPI
import LoyaltyServer
import Postgres

#if canImport(Glibc)
    import Glibc
#endif

private let secureBeaconCount = 100_000
private let retailerCount = 10
private let batchSize = 100
/// Every bench beacon's: a window of 1,024 s, the provisioning default.
private let exponent: UInt8 = 10
/// Request bodies made before the load; each thread of wrk sends them in turn.
private let bodyCount = 500

@MainActor func benchSecure() throws {
    print(
        "\n== secure: POST /v1/sightings, batches of \(batchSize) against \(secureBeaconCount) secure beacons, "
            + "\(connections) clients (wrk and pgbench)")
    let site = try BenchSite()
    defer { site.stop() }
    let fleet = try SecureFleet(site: site)
    try benchSecureBeaconTable(site, fleet)

    let bodies = site.work.appendingPathComponent("sightings.jsonl")
    try fleet.sightingBodies(count: bodyCount).joined(separator: "\n")
        .write(to: bodies, atomically: true, encoding: .utf8)
    let tokens = try (0..<connections).map { _ in try site.createDevice() }
    // The server's own table loads at its first resolution: before the rounds, and checked to resolve.
    let first = try String(contentsOf: bodies, encoding: .utf8).prefix { $0 != "\n" }
    let answer = try site.server.request(
        "POST", "/v1/sightings", token: tokens[0], rawJSON: String(first))
    guard answer.status == 200,
        let object = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any],
        let resolved = (object["beacons"] as? [Any])?.count, resolved >= batchSize * 9 / 10
    else {
        throw BenchFailure("POST /v1/sightings resolved too little of a bench batch: \(answer.status) \(answer.text)")
    }

    // pgbench's table: an indexed bigint per beacon's identity and what the answer names, looked up 100 times a
    // transaction; 1 in 20 lookups finds nothing, as about 1 in 20 of wrk's sightings is unknown.
    let connection = try site.connect()
    try connection.execute(
        script: """
            CREATE TABLE bench_eids (eid bigint PRIMARY KEY, retailer_id uuid NOT NULL, major int NOT NULL,
                minor int NOT NULL, window_counter bigint NOT NULL);
            INSERT INTO bench_eids SELECT n * 1000003, b.retailer_id, b.major, b.minor, 65536
            FROM (SELECT row_number() OVER () AS n, * FROM secure_beacons) b
            """)
    try connection.execute(script: "VACUUM ANALYZE")
    try connection.execute(script: "CHECKPOINT")
    let lookups = (0..<batchSize).map { _ in
        """
        \\set e random(1, \(secureBeaconCount * 20 / 19)) * 1000003
        SELECT retailer_id, major, minor, window_counter FROM bench_eids WHERE eid = :e;
        """
    }
    let comparison = try Load(server: site, tokens: tokens).compare(
        "sightings", share: 1,
        wrk: { _ in
            """
            local bodies = {}
            for line in io.lines("\(bodies.path)") do bodies[#bodies + 1] = line end
            local sent = 0
            function clientRequest()
                sent = sent % #bodies + 1
                return wrk.format("POST", "/v1/sightings",
                    {["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json"}, bodies[sent])
            end
            """
        },
        pgbench: (["BEGIN;"] + lookups + ["COMMIT;", ""]).joined(separator: "\n"))
    let served = comparison.served
    record(
        "POST /v1/sightings, \(batchSize) a batch, \(secureBeaconCount) secure beacons",
        String(
            format: "%.0f sightings/s (%.0f requests/s, p99 %.1f ms); paced at pgbench's rate: %.0f requests/s, "
                + "p99 %.1f ms", served.rate * Double(batchSize), served.rate, served.p99Milliseconds,
            comparison.paced.rate, comparison.paced.p99Milliseconds),
        reference: String(
            format: "pgbench %.0f lookups/s (`SELECT ... WHERE eid = $1`, %d a transaction: %.0f tps)",
            comparison.reference.tps * Double(batchSize), batchSize, comparison.reference.tps),
        ratio: String(
            format: "%.2f (median of %d rounds); CPU µs per request: server %.0f, postgres %.0f, wrk %.0f; per "
                + "transaction: postgres %.0f, pgbench %.0f", comparison.ratio, Load.rounds, served.cpu.server,
            served.cpu.postgres, served.cpu.tool, comparison.reference.cpu.postgres, comparison.reference.cpu.tool),
        target: ">= 1.0 of pgbench's lookups/s", met: comparison.ratio >= 1 && served.clean)
}

/// A table of the fleet's beacons of its own (the server's, in this process, loads at its first resolution): its
/// memory by its own accounting and as the process's resident set grew over its load, the load's time, and the
/// time of a turn to a new window of every beacon.
@MainActor private func benchSecureBeaconTable(_ site: BenchSite, _ fleet: SecureFleet) throws {
    let table = SecureBeaconTable(database: site.server.database, keyring: site.server.beaconKeyring)
    // A load 10 s before every beacon's window turns, then the turn.
    let turn = fleet.windowStart(fleet.currentWindow + 1)
    let before = residentBytes()
    var occupancy: SecureBeaconTable.Occupancy?
    let load = try seconds { occupancy = try table.refresh(at: turn.addingTimeInterval(-10)) }
    let grown = residentBytes() - before
    var turned: SecureBeaconTable.Occupancy?
    let turning = try seconds { turned = try table.refresh(at: turn) }
    guard let occupancy, let turned, occupancy.beacons == secureBeaconCount, turned.beacons == secureBeaconCount,
        occupancy.identities == 3 * secureBeaconCount, turned.identities == 3 * secureBeaconCount
    else { throw BenchFailure("the table holds \(String(describing: occupancy)), then \(String(describing: turned))") }
    let mebibyte = Double(1 << 20)
    record(
        "secure beacon table, \(secureBeaconCount) beacons: memory",
        String(
            format: "%.1f MiB by its own accounting (%d identities); the process's RSS grew %.1f MiB over its load",
            Double(occupancy.bytes) / mebibyte, occupancy.identities, Double(grown) / mebibyte),
        target: "< 64 MiB", met: Double(max(occupancy.bytes, grown)) < 64 * mebibyte)
    record(
        "secure beacon table, \(secureBeaconCount) beacons: turn to a new window",
        String(format: "%.3f s (a new EID for each beacon; the one 2 windows old dropped)", turning),
        target: "< 2 s", met: turning < 2)
    record(
        "secure beacon table, \(secureBeaconCount) beacons: load from the database",
        String(format: "%.3f s (every row read, its key opened, 3 EIDs computed)", load),
        target: "< 2 s", met: load < 2,
        knownMiss: "a load is at the start, after a provisioning here, and at a turn a minute after the last one; "
            + "issue 43's 2 s is the turn's (above). Reading and opening 100,000 rows takes longer: docs/BENCHMARKS.md")
}

/// The process's resident set, after giving freed memory back to the system (glibc's malloc_trim, which Swift's Glibc
/// module does not declare): what a load left behind is then only what it keeps.
private func residentBytes() -> Int {
    if let trim = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
        _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
    }
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
    let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return pages * sysconf(Int32(_SC_PAGESIZE))
}

/// 100,000 secure beacons of 10 retailers, 1 in 5 of the rotating iBeacon form, written to `secure_beacons` in one
/// statement with their keys sealed as provisioning seals them; every clock at 65,280 five minutes ago, so each
/// beacon's window turns at the same moment (the turn that costs most), 980 s after the bench started.
private struct SecureFleet {
    struct Beacon {
        let uuid: UUID
        let major: UInt16
        let minor: UInt16
        let form: SecureBeaconForm
        let identityKey: [UInt8]
    }

    let beacons: [Beacon]
    let counterAt: Date
    let counterOrigin: Int64 = 65_280

    init(site: BenchSite) throws {
        let retailers = try (0..<retailerCount).map { try site.server.registerRetailer("Secure store \($0 + 1)") }
        counterAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 300).rounded(.down))
        var random = SystemRandomNumberGenerator()
        var beacons: [Beacon] = []
        var rows: [String] = []
        beacons.reserveCapacity(secureBeaconCount)
        rows.reserveCapacity(secureBeaconCount)
        for n in 0..<secureBeaconCount {
            let retailer = retailers[n % retailerCount]
            let slot = n / retailerCount
            let beacon = Beacon(
                uuid: retailer.uuid, major: UInt16(1 + slot / 1000), minor: UInt16(slot % 1000),
                form: n % 5 == 4 ? .ibeacon : .eddystone, identityKey: (0..<16).map { _ in random.next() })
            let (keyID, sealed) = try site.server.beaconKeyring.sealIdentityKey(
                beacon.identityKey, retailerID: retailer.id, major: beacon.major, minor: beacon.minor)
            beacons.append(beacon)
            rows.append(
                "{\"r\":\"\(retailer.id)\",\"major\":\(beacon.major),\"minor\":\(beacon.minor),"
                    + "\"form\":\"\(beacon.form.rawValue)\","
                    + "\"key_id\":\"\(keyID)\",\"sealed\":\"\(Hex.text(sealed))\"}")
        }
        self.beacons = beacons
        try site.connect().query(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO secure_beacons (retailer_id, major, minor, exponent, form, key_id, sealed_key,
                        counter_origin, counter_at)
                    SELECT b.r, b.major, b.minor, \(exponent), b.form, b.key_id, decode(b.sealed, 'hex'), $2::bigint,
                        to_timestamp($3::double precision)
                    FROM jsonb_to_recordset($1::jsonb) AS b (r uuid, major int, minor int, form text, key_id text,
                        sealed text)
                    """,
                parameters: [
                    "[" + rows.joined(separator: ",") + "]", "\(counterOrigin)", "\(counterAt.timeIntervalSince1970)",
                ]))
        try site.connect().execute(script: "VACUUM ANALYZE secure_beacons")
    }

    /// The window every beacon is in now.
    var currentWindow: Int64 {
        (counterOrigin + Int64(Date().timeIntervalSince(counterAt).rounded(.down))) >> exponent
    }

    func windowStart(_ window: Int64) -> Date {
        counterAt.addingTimeInterval(Double((window << exponent) - counterOrigin))
    }

    /// `count` bodies of `batchSize` sightings of random beacons, heard now: 17 in 20 of the current window, 1 in 20 of
    /// the window before and 1 in 20 of the window after (drifting clocks), 1 in 20 an identity no beacon has.
    func sightingBodies(count: Int) throws -> [String] {
        let heardAt = ISO8601DateFormatter().string(from: Date())
        let current = currentWindow
        var random = SystemRandomNumberGenerator()
        return try (0..<count).map { _ in
            let sightings = try (0..<batchSize).map { _ in
                let kind = Int.random(in: 0..<20, using: &random)
                let beacon = beacons.randomElement(using: &random)!
                let window = kind == 0 ? current - 1 : kind == 1 ? current + 1 : current
                let eid =
                    kind == 2
                    ? (0..<8).map { _ in UInt8.random(in: 0...255, using: &random) }
                    : try EddystoneEID.ephemeralID(
                        identityKey: beacon.identityKey, exponent: exponent, counter: UInt32(window << exponent))
                guard beacon.form == .ibeacon else {
                    return "{\"eid\":\"\(Hex.text(eid))\",\"heard_at\":\"\(heardAt)\",\"rssi\":-70}"
                }
                let major = UInt16(eid[0]) << 8 | UInt16(eid[1])
                let minor = UInt16(eid[2]) << 8 | UInt16(eid[3])
                return "{\"uuid\":\"\(beacon.uuid)\",\"major\":\(major),\"minor\":\(minor),\"heard_at\":\"\(heardAt)\","
                    + "\"rssi\":-70}"
            }
            return "{\"sightings\":[" + sightings.joined(separator: ",") + "]}"
        }
    }
}
