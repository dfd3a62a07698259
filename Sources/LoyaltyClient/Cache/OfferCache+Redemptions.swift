import Foundation
import LoyaltyAPI
import SQLite

// Redemptions with their idempotency keys, written before the request is sent.

extension OfferCache {
    // MARK: redemptions

    /// A redemption as the cache knows it: pending until the server's answer is stored.
    public struct RedemptionRecord: Sendable, Equatable {
        public var idempotencyKey: String
        public var offerID: UUID
        public var requestedAt: Date
        public var redemption: Redemption?
    }

    /// The key of the unanswered redemption of `offerID`, or a new one stored before it is used.
    public func idempotencyKey(forRedeeming offerID: UUID, now: Date, newKey: () -> String)
        throws(ClientError)
        -> String
    {
        try write { db in
            if let pending = try db.query(
                "SELECT idempotency_key FROM redemptions WHERE offer_id = ? AND redemption_id IS NULL",
                [.text(offerID.uuidString)]
            ).first {
                return try pending.text(0)
            }
            let key = newKey()
            try db.run(
                "INSERT INTO redemptions (idempotency_key, offer_id, requested_at) VALUES (?, ?, ?)",
                [.text(key), .text(offerID.uuidString), .real(now.timeIntervalSince1970)])
            return key
        }
    }

    public func completeRedemption(key: String, _ redemption: Redemption) throws(ClientError) {
        try write { db in
            try db.run(
                "UPDATE redemptions SET redemption_id = ?, code = ?, redeemed_at = ? WHERE idempotency_key = ?",
                [
                    .text(redemption.id.uuidString), .text(redemption.code),
                    .real(redemption.redeemedAt.timeIntervalSince1970), .text(key),
                ])
        }
    }

    /// The server refused for good (limit reached, offer gone): a new attempt gets a new key.
    public func abandonRedemption(key: String) throws(ClientError) {
        try write { db in
            try db.run(
                "DELETE FROM redemptions WHERE idempotency_key = ? AND redemption_id IS NULL", [.text(key)])
        }
    }

    /// Every redemption this device made or is still trying to make, newest first.
    public func redemptions() throws(ClientError) -> [RedemptionRecord] {
        try read { db in
            try db.query(
                "SELECT idempotency_key, offer_id, requested_at, redemption_id, code, redeemed_at, accepted_at FROM redemptions ORDER BY requested_at DESC"
            ).map { row in
                var redemption: Redemption? = nil
                if let id = row.optionalText(3), let id = UUID(uuidString: id),
                    let code = row.optionalText(4),
                    let redeemedAt = row.optionalDate(5)
                {
                    redemption = Redemption(
                        id: id, offerID: try row.uuid(1), code: code, redeemedAt: redeemedAt,
                        acceptedAt: row.optionalDate(6))
                }
                return RedemptionRecord(
                    idempotencyKey: try row.text(0), offerID: try row.uuid(1),
                    requestedAt: Date(timeIntervalSince1970: try row.real(2)), redemption: redemption)
            }
        }
    }
}
