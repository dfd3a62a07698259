import Foundation
import LoyaltyAPI
import Postgres

// Redeeming offers, within their limits, once per idempotency key.

extension Database {
    // MARK: Redemptions

    /// Redeems under the row lock of the offer's counter (`redemption_totals`), so the limit checks and the
    /// insert are one step for every concurrent request for the offer. The counter goes up first and the
    /// checks follow in a snapshot taken after the lock, which counts every redemption committed before it;
    /// a failed check rolls the step back. The counter and the redemption are written by two
    /// single-row statements on their own keys (the offer's, the account's): see docs/SCALING.md. With an
    /// idempotency key already used by this account, answers the first redemption (`created` false) instead.
    /// Only an offer in the account's seen set is redeemed: codes are for shoppers who came near the beacon, not
    /// for fresh accounts draining a rival's limited offer.
    func redeem(offerID: UUID, accountID: UUID, idempotencyKey: String?) throws -> (
        redemption: Redemption, created: Bool
    ) {
        let now = clock()
        let presentSince = now.addingTimeInterval(-SecureBeacon.presenceWindow)
        do {
            return try pool.withConnection { connection in
                try connection.transaction { connection in
                    let redeemed: Int
                    do {
                        redeemed = try connection.query(
                            """
                            INSERT INTO redemption_totals AS t (offer_id, redeemed_count) VALUES (\(offerID), 1)
                            ON CONFLICT (offer_id) DO UPDATE SET redeemed_count = t.redeemed_count + 1
                            RETURNING redeemed_count
                            """
                        )[0].decode("redeemed_count")
                    } catch let error as PostgresError where error.isForeignKeyViolation {
                        throw Refusal.notFound  // the counter's foreign key: there is no such offer
                    }
                    guard
                        let offer = try connection.query(
                            """
                            SELECT o.deleted_at, o.starts_at, o.ends_at, o.schedule, o.per_shopper_limit, o.total_limit,
                                (SELECT count(*) FROM redemptions
                                    WHERE account_id = \(accountID) AND offer_id = o.id) AS mine,
                                EXISTS (SELECT 1 FROM seen WHERE account_id = \(accountID) AND offer_id = o.id) AS seen,
                                o.major, o.minor,
                                EXISTS (
                                    SELECT 1 FROM secure_beacons b
                                    WHERE b.retailer_id = o.retailer_id AND b.major = o.major AND b.minor = o.minor)
                                AND NOT EXISTS (
                                    SELECT 1 FROM verified_sightings v
                                    WHERE v.account_id = \(accountID) AND v.retailer_id = o.retailer_id
                                        AND v.major = o.major AND v.minor = o.minor
                                        AND v.heard_at >= \(presentSince)) AS unverified,
                                first.id, first.offer_id, first.code, first.created_at
                            FROM offers o
                                LEFT JOIN redemptions first
                                    ON first.account_id = \(accountID) AND first.idempotency_key = \(idempotencyKey)
                            WHERE o.id = \(offerID)
                            """
                        ).first
                    else { throw Refusal.notFound }
                    if try offer.decode("id", as: UUID?.self) != nil {
                        throw Replayed(redemption: try Redemption(row: offer))
                    }
                    if try offer.decode("deleted_at", as: Date?.self) != nil {
                        throw Refusal.offerUnavailable("the offer was removed")
                    }
                    if let startsAt = try offer.decode("starts_at", as: Date?.self), now < startsAt {
                        throw Refusal.offerUnavailable("the offer has not started yet")
                    }
                    if let endsAt = try offer.decode("ends_at", as: Date?.self), now >= endsAt {
                        throw Refusal.offerUnavailable("the offer has ended")
                    }
                    if let text = try offer.decode("schedule", as: String?.self),
                        let schedule = try? OfferSchedule(parsing: text), !schedule.contains(now)
                    {
                        throw Refusal.outOfHours(schedule.description)
                    }
                    if let totalLimit = try offer.decode("total_limit", as: Int?.self), redeemed > totalLimit {
                        throw Refusal.limitReached("the offer is sold out")
                    }
                    if try offer.decode("mine", as: Int.self) >= (try offer.decode("per_shopper_limit", as: Int.self)) {
                        throw Refusal.limitReached("this account has redeemed the offer as often as it may")
                    }
                    if try offer.decode("unverified", as: Bool.self) {
                        throw Refusal.presenceNotVerified(
                            beacon: "\(try offer.decode("major", as: Int.self)):\(try offer.decode("minor", as: Int.self))")
                    }
                    guard try offer.decode("seen", as: Bool.self) else { throw Refusal.offerNotSeen }
                    let row = try connection.query(
                        """
                        INSERT INTO redemptions (account_id, offer_id, code, idempotency_key, created_at)
                        VALUES (\(accountID), \(offerID), \(Secrets.humanCode(length: 10)), \(idempotencyKey), \(now))
                        RETURNING id, offer_id, code, created_at
                        """
                    )[0]
                    return (try Redemption(row: row), true)
                }
            }
        } catch let replay as Replayed {
            guard replay.redemption.offerID == offerID else { throw Refusal.idempotencyKeyReused }
            return (replay.redemption, false)
        } catch let error as PostgresError where error.isUniqueViolation {
            // The same key raced in at another offer and committed first: answer as a replay would.
            guard let idempotencyKey,
                let first = try pool.withConnection({ connection in
                    try previousRedemption(connection, accountID: accountID, key: idempotencyKey)
                })
            else { throw error }
            guard first.offerID == offerID else { throw Refusal.idempotencyKeyReused }
            return (first, false)
        }
    }

    /// The redemption an idempotency key already made: thrown out of the transaction, so that the counter
    /// it raised is rolled back.
    private struct Replayed: Error {
        var redemption: Redemption
    }

    /// On a standby when one is fit: clients keep their own redemptions and read this list for the tills'
    /// acceptances, which a later sync brings if the standby had not replayed them yet.
    func redemptions(accountID: UUID) throws -> RedemptionList {
        let rows = try read { connection in
            try connection.query(
                """
                SELECT id, offer_id, code, created_at, accepted_at FROM redemptions
                WHERE account_id = \(accountID) ORDER BY created_at DESC, id
                """
            )
        }
        return RedemptionList(
            redemptions: try rows.map { row throws(PostgresError) in try Redemption(row: row) })
    }

    private func previousRedemption(_ connection: PostgresConnection, accountID: UUID, key: String)
        throws
        -> Redemption?
    {
        try connection.query(
            """
            SELECT id, offer_id, code, created_at FROM redemptions
            WHERE account_id = \(accountID) AND idempotency_key = \(key)
            """
        ).first.map { row throws(PostgresError) in try Redemption(row: row) }
    }
}

extension Redemption {
    init(row: PostgresRow) throws(PostgresError) {
        self.init(
            id: try row.decode("id"), offerID: try row.decode("offer_id"), code: try row.decode("code"),
            redeemedAt: try row.decode("created_at"),
            // Only the account's list reads it: a new redemption has not been accepted.
            acceptedAt: row["accepted_at"] == nil ? nil : try row.decode("accepted_at", as: Date?.self))
    }
}
