import Foundation
import LoyaltyAPI
import Postgres

// Seen records and verified sightings kept no longer than the operator's retention period, folded into the
// retailers' counts first (docs/PRIVACY.md).

extension Database {
    /// Rows a purge deletes per transaction: each holds its row locks for milliseconds, not for the whole purge.
    static let shopperDataBatch = 1000

    /// Which seen records a fold deletes: an account's (when it is deleted), or everyone's older than a date.
    enum SeenSelection {
        case ofAccount(UUID)
        case before(Date)
    }

    /// Deletes seen records older than `cutoff` (folded into `seen_folds` and `seen_day_folds` first, so the
    /// figures keep them), verified sightings heard before it, link codes expired before it and day show counts
    /// (`offer_day_shows`) last added to before it, `batch` rows per
    /// transaction, until none is left. Instances purging at once take turns per batch (an advisory lock).
    /// Returns how many of each it deleted.
    func purgeShopperData(before cutoff: Date, batch: Int = shopperDataBatch) throws -> (
        seen: Int, sightings: Int, linkCodes: Int
    ) {
        var (seen, sightings, linkCodes) = (0, 0, 0)
        while true {
            let removed = try pool.withConnection { connection in
                try connection.transaction { connection in
                    try connection.query("SELECT pg_advisory_xact_lock(\(shopperDataPurgeLock))")
                    let seen = try Self.foldAndDeleteSeen(.before(cutoff), connection, batch: batch)
                    let others = try connection.query(
                        """
                        WITH sightings AS (
                            DELETE FROM verified_sightings
                            WHERE (account_id, retailer_id, major, minor, window_counter) IN (
                                SELECT account_id, retailer_id, major, minor, window_counter FROM verified_sightings
                                WHERE heard_at < \(cutoff) ORDER BY heard_at LIMIT \(batch))
                            RETURNING 1),
                        codes AS (
                            DELETE FROM link_codes WHERE code_hash IN (
                                SELECT code_hash FROM link_codes WHERE expires_at < \(cutoff) LIMIT \(batch))
                            RETURNING 1),
                        shows AS (
                            DELETE FROM offer_day_shows WHERE (account_id, offer_id, day) IN (
                                SELECT account_id, offer_id, day FROM offer_day_shows
                                WHERE last_shown_at < \(cutoff) LIMIT \(batch))
                            RETURNING 1)
                        SELECT (SELECT count(*) FROM sightings) AS sightings, (SELECT count(*) FROM codes) AS codes,
                            (SELECT count(*) FROM shows) AS shows
                        """
                    )[0]
                    return (
                        seen, try others.decode("sightings", as: Int.self), try others.decode("codes", as: Int.self),
                        try others.decode("shows", as: Int.self))
                }
            }
            (seen, sightings, linkCodes) = (seen + removed.0, sightings + removed.1, linkCodes + removed.2)
            if max(removed.0, removed.1, removed.2, removed.3) < batch { return (seen, sightings, linkCodes) }
        }
    }

    /// Deletes up to `batch` seen records of `selection` and adds what they counted in the retailers' figures to the
    /// folds: per offer and UTC day, the records (shown), their shoppers not counted by a redemption of the offer
    /// that day, the last sighting; per retailer and day, the shoppers no remaining record or redemption of the
    /// retailer's live offers counts that day (so a shopper whose records go in several batches counts once).
    /// Returns how many it deleted. Runs inside the caller's transaction, under `shopperDataPurgeLock`.
    static func foldAndDeleteSeen(
        _ selection: SeenSelection, _ connection: PostgresConnection, batch: Int = shopperDataBatch
    ) throws -> Int {
        let deleted: PostgresResult
        switch selection {
        case .ofAccount(let accountID):
            deleted = try connection.query(
                """
                DELETE FROM seen WHERE account_id = \(accountID) AND offer_id IN (
                    SELECT offer_id FROM seen WHERE account_id = \(accountID) LIMIT \(batch))
                RETURNING account_id, offer_id, seen_at
                """
            )
        case .before(let cutoff):
            deleted = try connection.query(
                """
                DELETE FROM seen WHERE (account_id, offer_id) IN (
                    SELECT account_id, offer_id FROM seen WHERE seen_at < \(cutoff) ORDER BY seen_at LIMIT \(batch))
                RETURNING account_id, offer_id, seen_at
                """
            )
        }
        guard !deleted.isEmpty else { return 0 }
        var (accounts, offers, times) = ([UUID](), [UUID](), [String]())
        for row in deleted {
            accounts.append(try row.decode("account_id"))
            offers.append(try row.decode("offer_id"))
            // PostgreSQL's own text of the time: it reads back the same to the microsecond.
            times.append(try row.decode("seen_at", as: String.self))
        }
        // The deleted rows are gone from this statement's snapshot: "remaining" is what the figures still read.
        try connection.query(
            """
            WITH gone AS (
                SELECT g.account_id, g.offer_id, g.seen_at, o.retailer_id, o.deleted_at IS NULL AS live,
                    floor(extract(epoch FROM g.seen_at) / 86400)::bigint AS day
                FROM unnest(\(uuidArray(accounts))::uuid[], \(uuidArray(offers))::uuid[],
                    \(textArray(times))::timestamptz[]) AS g (account_id, offer_id, seen_at)
                    JOIN offers o ON o.id = g.offer_id),
            dated AS (
                SELECT gone.*, to_timestamp(day * 86400) AS day_start, to_timestamp((day + 1) * 86400) AS day_end
                FROM gone),
            per_offer AS (
                INSERT INTO seen_folds AS f (offer_id, day, shown, shoppers, last_seen_at)
                SELECT offer_id, day, count(*),
                    count(*) FILTER (WHERE NOT EXISTS (
                        SELECT 1 FROM redemptions r
                        WHERE r.account_id = dated.account_id AND r.offer_id = dated.offer_id
                            AND r.created_at >= dated.day_start AND r.created_at < dated.day_end)),
                    max(seen_at)
                FROM dated GROUP BY offer_id, day
                ON CONFLICT (offer_id, day) DO UPDATE SET shown = f.shown + excluded.shown,
                    shoppers = f.shoppers + excluded.shoppers,
                    last_seen_at = greatest(f.last_seen_at, excluded.last_seen_at)
                RETURNING 1),
            per_day AS (
                INSERT INTO seen_day_folds AS f (retailer_id, day, shoppers)
                SELECT retailer_id, day, count(DISTINCT account_id) FROM dated
                WHERE live
                    AND NOT EXISTS (
                        SELECT 1 FROM seen s JOIN offers o ON o.id = s.offer_id
                        WHERE s.account_id = dated.account_id AND o.retailer_id = dated.retailer_id
                            AND o.deleted_at IS NULL AND s.seen_at >= dated.day_start AND s.seen_at < dated.day_end)
                    AND NOT EXISTS (
                        SELECT 1 FROM redemptions r JOIN offers o ON o.id = r.offer_id
                        WHERE r.account_id = dated.account_id AND o.retailer_id = dated.retailer_id
                            AND o.deleted_at IS NULL AND r.created_at >= dated.day_start AND r.created_at < dated.day_end)
                GROUP BY retailer_id, day
                ON CONFLICT (retailer_id, day) DO UPDATE SET shoppers = f.shoppers + excluded.shoppers
                RETURNING 1)
            SELECT (SELECT count(*) FROM per_offer) + (SELECT count(*) FROM per_day) AS folds
            """
        )
        return deleted.count
    }
}

/// The transaction-level advisory lock a retention purge batch and an account's deletion hold.
let shopperDataPurgeLock: Int64 = 4_207_333_103
