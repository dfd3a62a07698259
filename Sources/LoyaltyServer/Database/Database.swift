import Foundation
import LoyaltyAPI
import Postgres

/// Every SQL statement of the service, one file per resource (`Database+Catalog.swift`, ...). Values travel
/// only as bound parameters; every query of a retailer's data names its retailer id; times come from the
/// injected clock.
public final class Database: Sendable {
    /// The primary: every write, and every read that must see its own writes.
    let pool: PostgresPool
    /// Streaming standbys for the shoppers' reads (catalog, 304 checks, seen sets, redemption lists, device tokens
    /// for those); nil: the primary.
    let standbyReads: StandbyReads?
    let clock: @Sendable () -> Date
    /// The feed's head and device tokens in memory, for catalog checks without a round trip; nil: none.
    let catalogCheck: CatalogCheck?

    public convenience init(
        pool: PostgresPool, standbyReads: StandbyReads? = nil, clock: @escaping @Sendable () -> Date
    ) {
        self.init(pool: pool, standbyReads: standbyReads, clock: clock, catalogCheck: nil)
    }

    init(
        pool: PostgresPool, standbyReads: StandbyReads?, clock: @escaping @Sendable () -> Date,
        catalogCheck: CatalogCheck?
    ) {
        self.pool = pool
        self.standbyReads = standbyReads
        self.clock = clock
        self.catalogCheck = catalogCheck
    }

    /// Runs a read on a standby when one is fit for it (`acceptable` refuses an answer the standby is too old
    /// for, as `StandbyBehind` does from inside), else on the primary.
    func read<T>(acceptable: (T) -> Bool = { _ in true }, _ body: (PostgresConnection) throws -> T) throws -> T {
        guard let standbyReads else { return try pool.withConnection(body) }
        return try standbyReads.read(acceptable: acceptable, body)
    }

    /// Brings the catalog check's head up to the primary's after this server wrote (one statement; nothing without
    /// the cache, or while it vouches for nothing): a write's notification comes a moment later.
    func catchUpCatalogCheck() {
        guard let catalogCheck, catalogCheck.currentEpoch != nil,
            let head = try? pool.withConnection({ try FeedCursor(feedRow: $0.query(FeedCursor.headQuery)[0]) })
        else { return }
        catalogCheck.advance(to: head)
    }

    /// Whether the database answers a trivial query now.
    public func isReady() -> Bool {
        (try? pool.withConnection { try $0.query("SELECT 1") }) != nil
    }

    /// Whether a standby fit for reads answers now (false without standbys): with the primary gone, as in a
    /// failover, the server still answers the shoppers' reads.
    func standbyIsFit() -> Bool {
        standbyReads?.standbyIsFit() ?? false
    }

    public var connectionPoolUsage: PostgresPool.Usage { pool.usage }
    public var connectionPoolSize: Int { pool.size }

    /// The catalog's size for /metrics, counted when scraped: one statement, and no cost on the write path.
    func catalogSize() throws -> CatalogSize {
        let row = try pool.withConnection { connection in
            try connection.query(
                """
                SELECT (SELECT count(*) FROM offers WHERE deleted_at IS NULL) AS offers,
                    (SELECT count(*) FROM stores WHERE deleted_at IS NULL) AS stores,
                    (SELECT count(*) FROM retailers) AS retailers,
                    (SELECT version FROM catalog_feed WHERE singleton) AS feed_version
                """
            )[0]
        }
        return CatalogSize(
            liveOffers: try row.decode("offers"), liveStores: try row.decode("stores"),
            retailers: try row.decode("retailers"), feedVersion: try row.decode("feed_version"))
    }
}

/// A PostgreSQL array literal of uuids, bound as one parameter and cast with `::uuid[]`.
func uuidArray(_ ids: [UUID]) -> String {
    "{" + ids.map { $0.postgresText! }.joined(separator: ",") + "}"
}

/// A PostgreSQL array literal of texts (NULL for nil), each quoted, bound as one parameter and cast to its type.
/// Built in one pass over each value's bytes (a quote or backslash is never part of a longer UTF-8 sequence):
/// Foundation's `replacingOccurrences`, twice per value, was an eighth of a seen push's handler.
func textArray(_ values: [String?]) -> String {
    var literal: [UInt8] = [UInt8(ascii: "{")]
    literal.reserveCapacity(values.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
    for (index, value) in values.enumerated() {
        if index > 0 { literal.append(UInt8(ascii: ",")) }
        guard let value else {
            literal.append(contentsOf: "NULL".utf8)
            continue
        }
        literal.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { literal.append(UInt8(ascii: "\\")) }
            literal.append(byte)
        }
        literal.append(UInt8(ascii: "\""))
    }
    literal.append(UInt8(ascii: "}"))
    return String(decoding: literal, as: UTF8.self)
}
