import Foundation
import LoyaltyAPI
import Postgres

/// Who a till key belongs to: the key's row and its retailer.
struct TillSession: Equatable {
    var keyID: UUID
    var retailerID: UUID
    var name: String
}

let tillKeyPrefix = "lt_"

/// Till keys, and checking and accepting redemption codes. Every statement is scoped by the retailer, so
/// another retailer's code reads as unknown.
extension Database {
    func createTillKey(retailerID: UUID, name: String) throws -> TillKeyCredentials {
        let key = Secrets.token(prefix: tillKeyPrefix)
        let row = try pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO till_keys (retailer_id, name, key_hash, created_at)
                VALUES (\(retailerID), \(name), \(Secrets.digest(of: key)), \(clock()))
                RETURNING id, name, created_at
                """
            )[0]
        }
        return TillKeyCredentials(
            id: try row.decode("id"), name: try row.decode("name"), createdAt: try row.decode("created_at"),
            tillKey: key)
    }

    func tillKeys(retailerID: UUID) throws -> TillKeyList {
        let rows = try pool.withConnection { connection in
            try connection.query(
                """
                SELECT id, name, created_at, revoked_at FROM till_keys
                WHERE retailer_id = \(retailerID) ORDER BY created_at, id
                """
            )
        }
        return TillKeyList(
            tillKeys: try rows.map { row throws(PostgresError) in
                TillKey(
                    id: try row.decode("id"), name: try row.decode("name"), createdAt: try row.decode("created_at"),
                    revokedAt: try row.decode("revoked_at", as: Date?.self))
            })
    }

    /// Revokes one of the retailer's till keys (idempotent); false when it has no such key.
    func revokeTillKey(_ keyID: UUID, retailerID: UUID) throws -> Bool {
        try pool.withConnection { connection in
            try connection.query(
                """
                UPDATE till_keys SET revoked_at = coalesce(revoked_at, \(clock()))
                WHERE id = \(keyID) AND retailer_id = \(retailerID)
                """
            ).rowsAffected > 0
        }
    }

    /// The live till key this is, looked up by its digest.
    func till(key: String) throws -> TillSession? {
        let digest = Secrets.digest(of: key)
        return try pool.withConnection { connection in
            guard
                let row = try connection.query(
                    """
                    SELECT id, retailer_id, name, key_hash FROM till_keys
                    WHERE key_hash = \(digest) AND revoked_at IS NULL
                    """
                ).first,
                Secrets.constantTimeEqual(try row.decode("key_hash", as: [UInt8].self), digest)
            else { return nil }
            return TillSession(
                keyID: try row.decode("id"), retailerID: try row.decode("retailer_id"), name: try row.decode("name"))
        }
    }

    /// What the till may know of `code` (already normalised): its offer and whether it was accepted. Throws
    /// why it cannot be accepted when it is unknown to this retailer, its offer was removed or has ended, or its
    /// shopper deleted their account.
    func checkCode(_ code: String, retailerID: UUID) throws -> TillCode {
        let now = clock()
        return try pool.withConnection { connection in
            try Self.codeState(code, retailerID: retailerID, now: now, in: connection)
        }
    }

    /// Marks `code` accepted by `till` (a till key's id and name; no id for the console). One conditional
    /// UPDATE: of many tills accepting at once, the first takes the row lock and the others, re-reading the row
    /// after it commits, find it accepted and change nothing. Those get `codeAlreadyAccepted` with when and
    /// where, except the till whose accept took it with the same `idempotencyKey`: a retry after a lost answer
    /// gets the first answer again (`replayed`).
    func acceptCode(_ code: String, retailerID: UUID, tillKeyID: UUID?, tillName: String, idempotencyKey: String?)
        throws -> (code: TillCode, replayed: Bool)
    {
        let now = clock()
        return try pool.withConnection { connection in
            if let row = try connection.query(
                """
                UPDATE redemptions r
                SET accepted_at = \(now), accepted_by = \(tillKeyID), accepted_till = \(tillName),
                    accepted_key = \(idempotencyKey)
                FROM offers o
                WHERE r.code = \(code) AND o.id = r.offer_id AND o.retailer_id = \(retailerID)
                    AND r.accepted_at IS NULL AND o.deleted_at IS NULL AND (o.ends_at IS NULL OR o.ends_at > \(now))
                    AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = r.account_id AND a.erased_at IS NOT NULL)
                RETURNING r.code, r.offer_id, r.created_at, r.accepted_at, r.accepted_till, o.major, o.minor, o.title
                """
            ).first {
                return (try TillCode(row: row), false)
            }
            if let idempotencyKey,
                let row = try connection.query(
                    """
                    SELECT r.code, r.offer_id, r.created_at, r.accepted_at, r.accepted_till, o.major, o.minor, o.title
                    FROM redemptions r JOIN offers o ON o.id = r.offer_id
                    WHERE r.code = \(code) AND o.retailer_id = \(retailerID) AND r.accepted_key = \(idempotencyKey)
                        AND r.accepted_by IS NOT DISTINCT FROM \(tillKeyID)
                    """
                ).first
            {
                return (try TillCode(row: row), true)
            }
            // Not changed: unknown, removed or ended (codeState throws which), or accepted before.
            let state = try Self.codeState(code, retailerID: retailerID, now: now, in: connection)
            throw Refusal.codeAlreadyAccepted(at: state.acceptedAt ?? now, till: state.acceptedTill ?? "")
        }
    }

    private static func codeState(_ code: String, retailerID: UUID, now: Date, in connection: PostgresConnection)
        throws -> TillCode
    {
        guard
            let row = try connection.query(
                """
                SELECT r.code, r.offer_id, r.created_at, r.accepted_at, r.accepted_till, o.major, o.minor, o.title,
                    o.deleted_at, o.ends_at, a.erased_at
                FROM redemptions r JOIN offers o ON o.id = r.offer_id JOIN accounts a ON a.id = r.account_id
                WHERE r.code = \(code) AND o.retailer_id = \(retailerID)
                ORDER BY r.created_at LIMIT 1
                """
            ).first
        else { throw Refusal.codeUnknown }
        let state = try TillCode(row: row)
        if state.status == .accepted { return state }
        if try row.decode("erased_at", as: Date?.self) != nil { throw Refusal.codeAccountDeleted }
        if try row.decode("deleted_at", as: Date?.self) != nil { throw Refusal.codeOfferRemoved }
        if let endsAt = try row.decode("ends_at", as: Date?.self), endsAt <= now {
            throw Refusal.codeExpired(endedAt: endsAt)
        }
        return state
    }
}

extension TillCode {
    init(row: PostgresRow) throws(PostgresError) {
        let acceptedAt = try row.decode("accepted_at", as: Date?.self)
        self.init(
            code: try row.decode("code"), status: acceptedAt == nil ? .valid : .accepted,
            offerID: try row.decode("offer_id"), major: try row.decode("major"), minor: try row.decode("minor"),
            title: try row.decode("title"), redeemedAt: try row.decode("created_at"), acceptedAt: acceptedAt,
            acceptedTill: try row.decode("accepted_till", as: String?.self))
    }
}
