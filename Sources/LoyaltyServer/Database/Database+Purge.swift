import Foundation
import LoyaltyAPI
import Postgres

// Deleting old tombstones for good.

extension Database {
    /// Deletes for good the tombstones removed before `date` that no redemption refers to, and
    /// records the highest version deleted: cursors older than that can no longer be served (410).
    /// Returns how many it deleted. Two statements, so that the delete from the catalog (reference
    /// tables) reads no shopper table. Instances purging at once: one purges, the others find the
    /// lock taken and return 0 (without it their deletes would wait on each other's rows, and, visiting
    /// them in different orders, could deadlock); `greatest` keeps `purged_through` from moving back.
    @discardableResult
    public func purgeTombstones(deletedBefore date: Date) throws -> Int {
        try pool.withConnection { connection in
            try connection.transaction { connection in
                guard
                    try connection.query("SELECT pg_try_advisory_xact_lock(\(tombstonePurgeLock)) AS locked")[0]
                        .decode("locked", as: Bool.self)
                else { return 0 }
                let redeemed = try connection.query(
                    """
                    SELECT t.offer_id FROM redemption_totals t JOIN offers o ON o.id = t.offer_id
                    WHERE o.deleted_at < \(date)
                    """
                ).map { row throws(PostgresError) in try row.decode("offer_id", as: UUID.self) }
                return try connection.query(
                    """
                    WITH gone_offers AS (
                        DELETE FROM offers WHERE deleted_at < \(date) AND id <> ALL(\(uuidArray(redeemed))::uuid[])
                        RETURNING version),
                    gone_stores AS (DELETE FROM stores WHERE deleted_at < \(date) RETURNING version),
                    gone AS (SELECT version FROM gone_offers UNION ALL SELECT version FROM gone_stores)
                    UPDATE catalog_feed
                    SET purged_through = greatest(purged_through, (SELECT coalesce(max(version), 0) FROM gone))
                    WHERE singleton AND (SELECT count(*) FROM gone) > 0
                    RETURNING (SELECT count(*) FROM gone) AS removed
                    """
                ).first?.decode("removed", as: Int.self) ?? 0
            }
        }
    }
}

/// The transaction-level advisory lock a tombstone purge holds (the schema migration's is 4207333101).
let tombstonePurgeLock: Int64 = 4_207_333_102
