import Foundation
import JSONCoding
import LoyaltyAPI
import Postgres

/// Many offers in one statement, and the retailer's offers a page at a time.
extension Database {
    /// Creates or replaces every row's offer in one statement: all of them or, on any error, none. The feed row
    /// is locked first and held until commit, as by any catalog write, so this write's versions commit in
    /// order with every other's; row N of the file is offered version head + N (each row its own version, so
    /// feed pages still end between rows), and the head then moves to the highest version written. A row equal
    /// to its offer is left alone (ON CONFLICT ... WHERE), its version unused: a file exported and imported
    /// again moves neither a row nor the head, so no device's catalog. No join of the rows with the offers:
    /// right after a bulk write the planner's statistics are stale, and its plans for one were quadratic.
    func importOffers(retailerID: UUID, rows: [OfferImportRow]) throws -> OfferImportResult {
        guard !rows.isEmpty else { return OfferImportResult(created: 0, updated: 0, unchanged: 0) }
        // Column arrays bound as single parameters and unnested: one statement whatever the row count.
        let drafts = rows.map(\.draft)
        let row = try pool.withConnection { connection in
            try connection.transaction { connection in
                let head: Int64 = try connection.query(
                    "SELECT version FROM catalog_feed WHERE singleton FOR UPDATE")[0].decode("version")
                return try connection.query(
                    """
                    WITH written AS (
                        INSERT INTO offers AS o (retailer_id, major, minor, title, description, category, image_url,
                            starts_at, ends_at, per_shopper_limit, total_limit, reshow_after_s, updated_at, version,
                            created_at)
                        SELECT \(retailerID), i.major, i.minor, i.title, i.description, i.category, i.image_url,
                            i.starts_at, i.ends_at, i.per_shopper_limit, i.total_limit, i.reshow_after_s, \(clock()),
                            \(head) + i.position, \(clock())
                        FROM unnest(\(textArray(rows.map { String($0.major) }))::int[],
                            \(textArray(rows.map { String($0.minor) }))::int[], \(textArray(drafts.map(\.title)))::text[],
                            \(textArray(drafts.map(\.description)))::text[], \(textArray(drafts.map(\.category)))::text[],
                            \(textArray(drafts.map(\.imageURL)))::text[],
                            \(textArray(drafts.map { $0.startsAt.map(LoyaltyJSON.formatTimestamp) }))::timestamptz[],
                            \(textArray(drafts.map { $0.endsAt.map(LoyaltyJSON.formatTimestamp) }))::timestamptz[],
                            \(textArray(drafts.map { String($0.perShopperLimit ?? 1) }))::int[],
                            \(textArray(drafts.map { $0.totalLimit.map(String.init) }))::int[],
                            \(textArray(drafts.map { $0.reshowAfterSeconds.map(String.init) }))::int[])
                            WITH ORDINALITY AS i (major, minor, title, description, category, image_url, starts_at,
                                ends_at, per_shopper_limit, total_limit, reshow_after_s, position)
                        ON CONFLICT (retailer_id, major, minor) WHERE deleted_at IS NULL DO UPDATE SET
                            title = excluded.title, description = excluded.description, category = excluded.category,
                            image_url = excluded.image_url, starts_at = excluded.starts_at, ends_at = excluded.ends_at,
                            per_shopper_limit = excluded.per_shopper_limit, total_limit = excluded.total_limit,
                            reshow_after_s = excluded.reshow_after_s, updated_at = excluded.updated_at,
                            version = excluded.version
                        WHERE (o.title, o.description, o.category, o.image_url, o.starts_at, o.ends_at,
                                o.per_shopper_limit, o.total_limit, o.reshow_after_s)
                            IS DISTINCT FROM (excluded.title, excluded.description, excluded.category,
                                excluded.image_url, excluded.starts_at, excluded.ends_at, excluded.per_shopper_limit,
                                excluded.total_limit, excluded.reshow_after_s)
                        RETURNING o.version, (xmax = 0) AS created),
                    moved AS (
                        UPDATE catalog_feed SET version = (SELECT max(version) FROM written)
                        WHERE singleton AND EXISTS (SELECT 1 FROM written))
                    SELECT count(*) FILTER (WHERE created) AS created, count(*) FILTER (WHERE NOT created) AS updated
                    FROM written
                    """
                )[0]
            }
        }
        let created: Int = try row.decode("created")
        let updated: Int = try row.decode("updated")
        return OfferImportResult(created: created, updated: updated, unchanged: rows.count - created - updated)
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
