import Foundation
import LoyaltyAPI
import Postgres

// A retailer's account and API key, its offers and their statistics.

extension Database {
    // MARK: Retailers

    /// Registers under the folded name (`RetailerName`), refusing one that reads as another retailer's.
    func registerRetailer(_ registration: RetailerRegistration) throws -> RetailerCredentials {
        let apiKey = Secrets.token(prefix: retailerKeyPrefix)
        let proximityUUID = registration.uuid ?? UUID()
        let name = RetailerName.folded(registration.name)
        try Validation.text(name, field: "name", length: Validation.nameLength)
        do {
            let row = try pool.withConnection { connection in
                try connection.query(
                    """
                    INSERT INTO retailers (name, name_key, uuid, api_key_hash, created_at)
                    VALUES (\(name), \(RetailerName.readingKey(name)), \(proximityUUID), \(Secrets.digest(of: apiKey)),
                        \(clock()))
                    RETURNING id, name, uuid
                    """
                )[0]
            }
            return RetailerCredentials(
                id: try row.decode("id"), name: try row.decode("name"), uuid: try row.decode("uuid"),
                apiKey: apiKey)
        } catch let error as PostgresError where error.isUniqueViolation {
            throw error.constraintName == "retailers_name_key" ? Refusal.nameTaken : Refusal.uuidTaken
        }
    }

    /// The retailer whose API key this is, looked up by the key's digest: its current key, or the one before
    /// while that is in its grace period (see `rotateKey`). The new key's first use ends the grace period.
    func retailer(apiKey: String) throws -> RetailerAccess? {
        let digest = Secrets.digest(of: apiKey)
        let now = clock()
        return try pool.withConnection { connection in
            let rows = try connection.query(
                """
                SELECT id, name, uuid, created_at, api_key_hash, previous_api_key_hash FROM retailers
                WHERE api_key_hash = \(digest) OR (previous_api_key_hash = \(digest) AND previous_key_expires_at > \(now))
                """
            )
            guard let row = rows.first else { return nil }
            let current = try row.decode("api_key_hash", as: [UInt8].self)
            let previous = try row.decode("previous_api_key_hash", as: [UInt8]?.self)
            let isCurrent = Secrets.constantTimeEqual(current, digest)
            if isCurrent {
                if previous != nil {
                    try connection.query(
                        """
                        UPDATE retailers SET previous_api_key_hash = NULL, previous_key_expires_at = NULL
                        WHERE id = \(try row.decode("id", as: UUID.self)) AND api_key_hash = \(digest)
                        """)
                }
            } else if !Secrets.constantTimeEqual(previous ?? [], digest) {
                return nil
            }
            return RetailerAccess(
                retailer: Retailer(
                    id: try row.decode("id"), name: try row.decode("name"), uuid: try row.decode("uuid"),
                    createdAt: try row.decode("created_at")),
                keyDigest: digest, isRotatedOut: !isCurrent)
        }
    }

    /// A new key. The key that asked for it (its digest `replacing`) keeps reading and syncing for
    /// `keyRotationGrace` or until the new key is first used, whichever comes first: a client that could not
    /// save the new key keeps working while its user puts the printed key in place. It can no longer rotate,
    /// sign in or make keys (`RetailerAccess.isRotatedOut`). Any other key stops at once.
    func rotateKey(retailerID: UUID, replacing oldKeyDigest: [UInt8]) throws -> APIKey {
        let apiKey = Secrets.token(prefix: retailerKeyPrefix)
        let expires = clock().addingTimeInterval(keyRotationGrace)
        _ = try pool.withConnection { connection in
            try connection.query(
                """
                UPDATE retailers SET previous_api_key_hash = \(oldKeyDigest),
                    previous_key_expires_at = \(expires), api_key_hash = \(Secrets.digest(of: apiKey))
                WHERE id = \(retailerID)
                """
            )
        }
        return APIKey(apiKey: apiKey, previousKeyExpiresAt: expires)
    }

    // MARK: Offers

    /// Creates or replaces the live offer at (major, minor) of this retailer; `created` tells which.
    func putOffer(retailerID: UUID, major: UInt16, minor: UInt16, draft: OfferDraft) throws -> (
        offer: Offer, created: Bool
    ) {
        let row = try pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO offers (retailer_id, major, minor, title, description, category, image_url,
                    starts_at, ends_at, per_shopper_limit, total_limit, reshow_after_s, schedule, shows_per_day,
                    updated_at, created_at)
                VALUES (\(retailerID), \(Int(major)), \(Int(minor)), \(draft.title), \(draft.description),
                    \(draft.category), \(draft.imageURL), \(draft.startsAt), \(draft.endsAt),
                    \(draft.perShopperLimit ?? 1), \(draft.totalLimit), \(draft.reshowAfterSeconds), \(draft.schedule),
                    \(draft.showsPerDay), \(clock()), \(clock()))
                ON CONFLICT (retailer_id, major, minor) WHERE deleted_at IS NULL DO UPDATE SET
                    title = excluded.title, description = excluded.description, category = excluded.category,
                    image_url = excluded.image_url, starts_at = excluded.starts_at, ends_at = excluded.ends_at,
                    per_shopper_limit = excluded.per_shopper_limit, total_limit = excluded.total_limit,
                    reshow_after_s = excluded.reshow_after_s, schedule = excluded.schedule,
                    shows_per_day = excluded.shows_per_day, updated_at = excluded.updated_at
                RETURNING *, (xmax = 0) AS created
                """
            )[0]
        }
        return (try Offer(row: row), try row.decode("created"))
    }

    /// Turns the live offer at (major, minor) into a tombstone; false when there is none.
    func deleteOffer(retailerID: UUID, major: UInt16, minor: UInt16) throws -> Bool {
        try pool.withConnection { connection in
            try connection.query(
                """
                UPDATE offers SET deleted_at = \(clock()), updated_at = \(clock())
                WHERE retailer_id = \(retailerID) AND major = \(Int(major)) AND minor = \(Int(minor))
                    AND deleted_at IS NULL
                """
            ).rowsAffected > 0
        }
    }

    func offers(retailerID: UUID) throws -> [Offer] {
        try pool.withConnection { connection in
            try connection.query(
                """
                SELECT * FROM offers WHERE retailer_id = \(retailerID) AND deleted_at IS NULL
                ORDER BY major, minor
                """
            ).map { row throws(PostgresError) in try Offer(row: row) }
        }
    }


    func statistics(retailerID: UUID) throws -> RetailerStatistics {
        // A seen push is verified when a verified sighting of its beacon by the same account is within a visit's
        // length of it, either side (a shopper may push before the sighting's batch is answered).
        let presenceWindow = "\(Int(SecureBeacon.presenceWindow)) seconds"
        let rows = try pool.withConnection { connection in
            // The counters and the seen set are shopper-side (distributed) tables: each is read for the
            // retailer's offers on its own, then joined to the offers (a reference table).
            try connection.query(
                """
                WITH live AS (
                    SELECT id, major, minor, title, total_limit FROM offers
                    WHERE retailer_id = \(retailerID) AND deleted_at IS NULL),
                redeemed AS (
                    SELECT offer_id, redeemed_count FROM redemption_totals WHERE offer_id IN (SELECT id FROM live)),
                seen_by AS (
                    SELECT offer_id, sum(seen_by)::bigint AS seen_by, sum(verified_by)::bigint AS verified_by FROM (
                        SELECT s.offer_id, count(*) AS seen_by,
                            count(*) FILTER (WHERE EXISTS (
                                SELECT 1 FROM verified_sightings v
                                WHERE v.account_id = s.account_id AND v.retailer_id = \(retailerID)
                                    AND v.major = live.major AND v.minor = live.minor
                                    AND v.heard_at BETWEEN s.seen_at - \(presenceWindow)::interval
                                        AND s.seen_at + \(presenceWindow)::interval
                            )) AS verified_by
                        FROM seen s JOIN live ON live.id = s.offer_id
                        GROUP BY s.offer_id
                        -- Folded records (retention, deleted accounts) count as seen, no longer as verified.
                        UNION ALL SELECT offer_id, sum(shown), 0 FROM seen_folds WHERE offer_id IN (SELECT id FROM live)
                        GROUP BY offer_id) AS parts
                    GROUP BY offer_id),
                accepted AS (
                    SELECT offer_id, count(*) AS accepted FROM redemptions
                    WHERE offer_id IN (SELECT id FROM live) AND accepted_at IS NOT NULL GROUP BY offer_id)
                SELECT live.*, coalesce(redeemed.redeemed_count, 0) AS redeemed_count,
                    coalesce(seen_by.seen_by, 0) AS seen_by, coalesce(seen_by.verified_by, 0) AS verified_by,
                    coalesce(accepted.accepted, 0) AS accepted
                FROM live LEFT JOIN redeemed ON redeemed.offer_id = live.id
                    LEFT JOIN seen_by ON seen_by.offer_id = live.id LEFT JOIN accepted ON accepted.offer_id = live.id
                ORDER BY live.major, live.minor
                """
            )
        }
        return RetailerStatistics(
            offers: try rows.map { row throws(PostgresError) in
                let redeemed: Int = try row.decode("redeemed_count")
                return OfferStatistics(
                    offerID: try row.decode("id"), major: try row.decode("major"),
                    minor: try row.decode("minor"),
                    title: try row.decode("title"), seenBy: try row.decode("seen_by"),
                    verifiedBy: try row.decode("verified_by"), redemptions: redeemed,
                    accepted: try row.decode("accepted"),
                    remaining: try row.decode("total_limit", as: Int?.self).map { max(0, $0 - redeemed) })
            })
    }
}

let retailerKeyPrefix = "lk_"

/// A retailer as the key of a request let it in (an API key, or the one a console session was made with).
struct RetailerAccess {
    var retailer: Retailer
    /// SHA-256 of the key.
    var keyDigest: [UInt8]
    /// The key was rotated out and is in its grace period: it reads and syncs (offers, stores, imports), but
    /// cannot rotate, sign in to the console or manage till keys, so a leaked key cannot outlive its rotation.
    var isRotatedOut: Bool
}
