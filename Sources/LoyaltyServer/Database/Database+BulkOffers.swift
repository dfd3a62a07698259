import Foundation
import JSONCoding
import LoyaltyAPI
import Postgres

/// Many offers in batches of bounded transactions, and the retailer's offers a page at a time.
extension Database {
    /// The rows an import applies in one transaction, holding the feed row's lock: the most another retailer's
    /// catalog write waits for an import (OPERATIONS.md says how long that is).
    static let importBatchRows = 1_000

    /// Creates or replaces every row's offer: all of them or, on any error, none. The rows are staged first, in
    /// one statement (column arrays bound as single parameters and unnested) that holds no lock another retailer's
    /// write waits for: a row offers would refuse is refused there, before any is applied. Then they are applied
    /// in batches of `importBatchRows`, in the file's order (see `applyImportBatch`), so another retailer's
    /// catalog write waits for one batch, not the whole file; a shopper syncing meanwhile may get the first
    /// batches before the rest. Once staged, the file is applied whole: what a request that ended midway left
    /// is applied before the retailer's next import and at the server's start (`finishImports`).
    func importOffers(retailerID: UUID, rows: [OfferImportRow]) throws -> OfferImportResult {
        guard !rows.isEmpty else { return OfferImportResult(created: 0, updated: 0, unchanged: 0) }
        try finishImports(retailerID: retailerID)
        let importID = UUID()
        let drafts = rows.map(\.draft)
        try pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO offer_import_rows (import_id, position, retailer_id, major, minor, title, description,
                    category, image_url, starts_at, ends_at, per_shopper_limit, total_limit, reshow_after_s, schedule,
                    shows_per_day)
                SELECT \(importID), i.position, \(retailerID), i.major, i.minor, i.title, i.description, i.category,
                    i.image_url, i.starts_at, i.ends_at, i.per_shopper_limit, i.total_limit, i.reshow_after_s,
                    i.schedule, i.shows_per_day
                FROM unnest(\(textArray(rows.map { String($0.major) }))::int[],
                    \(textArray(rows.map { String($0.minor) }))::int[], \(textArray(drafts.map(\.title)))::text[],
                    \(textArray(drafts.map(\.description)))::text[], \(textArray(drafts.map(\.category)))::text[],
                    \(textArray(drafts.map(\.imageURL)))::text[],
                    \(textArray(drafts.map { $0.startsAt.map(LoyaltyJSON.formatTimestamp) }))::timestamptz[],
                    \(textArray(drafts.map { $0.endsAt.map(LoyaltyJSON.formatTimestamp) }))::timestamptz[],
                    \(textArray(drafts.map { String($0.perShopperLimit ?? 1) }))::int[],
                    \(textArray(drafts.map { $0.totalLimit.map(String.init) }))::int[],
                    \(textArray(drafts.map { $0.reshowAfterSeconds.map(String.init) }))::int[],
                    \(textArray(drafts.map(\.schedule)))::text[],
                    \(textArray(drafts.map { $0.showsPerDay.map(String.init) }))::int[])
                    WITH ORDINALITY AS i (major, minor, title, description, category, image_url, starts_at,
                        ends_at, per_shopper_limit, total_limit, reshow_after_s, schedule, shows_per_day, position)
                """
            )
        }
        var (created, updated) = (0, 0)
        while let batch = try applyImportBatch(importID) {
            created += batch.created
            updated += batch.updated
        }
        return OfferImportResult(created: created, updated: updated, unchanged: rows.count - created - updated)
    }

    /// Applies what imports left staged (all retailers', or `retailerID`'s), each whole, oldest rows first.
    func finishImports(retailerID: UUID? = nil) throws {
        let pending = try pool.withConnection { connection in
            try connection.query(
                """
                SELECT import_id FROM offer_import_rows
                WHERE retailer_id = \(retailerID) OR \(retailerID == nil)
                GROUP BY import_id
                """
            ).map { row throws(PostgresError) in try row.decode("import_id", as: UUID.self) }
        }
        for importID in pending {
            while try applyImportBatch(importID) != nil {}
        }
    }

    /// Applies the next `importBatchRows` staged rows of an import and deletes them, in one transaction; nil
    /// when none was left. The feed row is locked first and held until commit, as by any catalog write, so this
    /// batch's versions commit in order with every other's; the batch's row N is offered version head + N (each
    /// row its own version, so feed pages still end between rows), and the head then moves to the highest
    /// version written. A row equal to its offer is left alone (ON CONFLICT ... WHERE), its version unused: a file
    /// exported and imported again moves neither a row nor the head, so no device's catalog. No join of the rows
    /// with the offers: right after a bulk write the planner's statistics are stale, and its plans for one were
    /// quadratic.
    private func applyImportBatch(_ importID: UUID) throws -> (created: Int, updated: Int)? {
        try pool.withConnection { connection in
            try connection.transaction { connection in
                let head: Int64 = try connection.query(
                    "SELECT version FROM catalog_feed WHERE singleton FOR UPDATE")[0].decode("version")
                let row = try connection.query(
                    """
                    WITH batch AS (
                        DELETE FROM offer_import_rows
                        WHERE import_id = \(importID) AND position IN (
                            SELECT position FROM offer_import_rows WHERE import_id = \(importID)
                            ORDER BY position LIMIT \(Self.importBatchRows))
                        RETURNING *),
                    written AS (
                        INSERT INTO offers AS o (retailer_id, major, minor, title, description, category, image_url,
                            starts_at, ends_at, per_shopper_limit, total_limit, reshow_after_s, schedule, shows_per_day,
                            updated_at, version, created_at)
                        SELECT b.retailer_id, b.major, b.minor, b.title, b.description, b.category, b.image_url,
                            b.starts_at, b.ends_at, b.per_shopper_limit, b.total_limit, b.reshow_after_s, b.schedule,
                            b.shows_per_day, \(clock()),
                            \(head) + row_number() OVER (ORDER BY b.position), \(clock())
                        FROM batch b
                        ON CONFLICT (retailer_id, major, minor) WHERE deleted_at IS NULL DO UPDATE SET
                            title = excluded.title, description = excluded.description, category = excluded.category,
                            image_url = excluded.image_url, starts_at = excluded.starts_at, ends_at = excluded.ends_at,
                            per_shopper_limit = excluded.per_shopper_limit, total_limit = excluded.total_limit,
                            reshow_after_s = excluded.reshow_after_s, schedule = excluded.schedule,
                            shows_per_day = excluded.shows_per_day, updated_at = excluded.updated_at,
                            version = excluded.version
                        WHERE (o.title, o.description, o.category, o.image_url, o.starts_at, o.ends_at,
                                o.per_shopper_limit, o.total_limit, o.reshow_after_s, o.schedule, o.shows_per_day)
                            IS DISTINCT FROM (excluded.title, excluded.description, excluded.category,
                                excluded.image_url, excluded.starts_at, excluded.ends_at, excluded.per_shopper_limit,
                                excluded.total_limit, excluded.reshow_after_s, excluded.schedule,
                                excluded.shows_per_day)
                        RETURNING o.version, (xmax = 0) AS created),
                    moved AS (
                        UPDATE catalog_feed SET version = (SELECT max(version) FROM written)
                        WHERE singleton AND EXISTS (SELECT 1 FROM written))
                    SELECT (SELECT count(*) FROM batch) AS applied, count(*) FILTER (WHERE created) AS created,
                        count(*) FILTER (WHERE NOT created) AS updated
                    FROM written
                    """
                )[0]
                guard try row.decode("applied", as: Int.self) > 0 else { return nil }
                return (try row.decode("created"), try row.decode("updated"))
            }
        }
    }

    /// Up to `limit` live offers after the beacon `after`, by major then minor: a page of the offers_live_beacon
    /// index, however many the retailer has.
    func offerPage(retailerID: UUID, after: (major: UInt16, minor: UInt16)?, limit: Int) throws
        -> OfferList
    {
        let start = after.map { Int($0.major) << 16 | Int($0.minor) } ?? -1
        let offers = try pool.withConnection { connection in
            try connection.query(
                """
                SELECT * FROM offers
                WHERE retailer_id = \(retailerID) AND deleted_at IS NULL
                    AND (major, minor) > (\(start >> 16)::int, \(start & 0xFFFF)::int)
                ORDER BY major, minor LIMIT \(limit + 1)
                """
            ).map { row throws(PostgresError) in try Offer(row: row) }
        }
        var list = OfferList(offers: Array(offers.prefix(limit)))
        if offers.count > limit, let last = list.offers.last {
            list.next = "\(last.major).\(last.minor)"
        }
        return list
    }
}
