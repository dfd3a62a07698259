import Foundation
import LoyaltyAPI
import Postgres

// A retailer's stores and their geofences.

extension Database {
    // MARK: Stores

    /// Creates or replaces the retailer's live store `storeID`; `created` tells which.
    func putStore(retailerID: UUID, storeID: String, draft: StoreDraft) throws -> (
        store: RetailStore, created: Bool
    ) {
        let row = try pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO stores (retailer_id, store_id, name, latitude, longitude, radius_m, updated_at)
                VALUES (\(retailerID), \(storeID), \(draft.name), \(draft.latitude), \(draft.longitude),
                    \(draft.radiusMetres), \(clock()))
                ON CONFLICT (retailer_id, store_id) WHERE deleted_at IS NULL DO UPDATE SET
                    name = excluded.name, latitude = excluded.latitude, longitude = excluded.longitude,
                    radius_m = excluded.radius_m, updated_at = excluded.updated_at
                RETURNING *, (xmax = 0) AS created
                """
            )[0]
        }
        return (try RetailStore(row: row), try row.decode("created"))
    }

    /// Turns the retailer's live store `storeID` into a tombstone; false when there is none.
    func deleteStore(retailerID: UUID, storeID: String) throws -> Bool {
        try pool.withConnection { connection in
            try connection.query(
                """
                UPDATE stores SET deleted_at = \(clock()), updated_at = \(clock())
                WHERE retailer_id = \(retailerID) AND store_id = \(storeID) AND deleted_at IS NULL
                """
            ).rowsAffected > 0
        }
    }

    func stores(retailerID: UUID) throws -> [RetailStore] {
        try pool.withConnection { connection in
            try connection.query(
                "SELECT * FROM stores WHERE retailer_id = \(retailerID) AND deleted_at IS NULL ORDER BY store_id"
            ).map { row throws(PostgresError) in try RetailStore(row: row) }
        }
    }
}
