import Foundation
import LoyaltyAPI
import Postgres

let consoleSessionPrefix = "ls_"
/// A console session lasts a working day from sign-in, however busy.
let consoleSessionLifetime: TimeInterval = 8 * 60 * 60

/// Console sessions: the cookie's digest, its retailer, the digest of the key it was made with, and its expiry.
/// Signing out deletes the row, so a cookie replayed after it is unknown; a session lives only as long as its
/// key (the current one, or the one before in its grace period).
extension Database {
    func createConsoleSession(retailerID: UUID, keyDigest: [UInt8]) throws -> (token: String, expiresAt: Date) {
        let token = Secrets.token(prefix: consoleSessionPrefix)
        let now = clock()
        let expiresAt = now.addingTimeInterval(consoleSessionLifetime)
        _ = try pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO console_sessions (token_hash, retailer_id, api_key_hash, created_at, expires_at)
                VALUES (\(Secrets.digest(of: token)), \(retailerID), \(keyDigest), \(now), \(expiresAt))
                """
            )
        }
        return (token, expiresAt)
    }

    /// The retailer of a live session whose key still works, and when the session ends.
    func consoleSession(token: String) throws -> (access: RetailerAccess, expiresAt: Date)? {
        let digest = Secrets.digest(of: token)
        let now = clock()
        return try pool.withConnection { connection in
            guard
                let row = try connection.query(
                    """
                    SELECT r.id, r.name, r.uuid, r.created_at, s.token_hash, s.api_key_hash, s.expires_at,
                        s.api_key_hash <> r.api_key_hash AS rotated_out
                    FROM console_sessions s JOIN retailers r ON r.id = s.retailer_id
                    WHERE s.token_hash = \(digest) AND s.expires_at > \(now)
                        AND (s.api_key_hash = r.api_key_hash
                            OR (s.api_key_hash = r.previous_api_key_hash AND r.previous_key_expires_at > \(now)))
                    """
                ).first,
                Secrets.constantTimeEqual(try row.decode("token_hash", as: [UInt8].self), digest)
            else { return nil }
            let retailer = Retailer(
                id: try row.decode("id"), name: try row.decode("name"), uuid: try row.decode("uuid"),
                createdAt: try row.decode("created_at"))
            return (
                RetailerAccess(
                    retailer: retailer, keyDigest: try row.decode("api_key_hash"),
                    isRotatedOut: try row.decode("rotated_out")),
                try row.decode("expires_at")
            )
        }
    }

    func endConsoleSession(token: String) throws {
        _ = try pool.withConnection { connection in
            try connection.query(
                "DELETE FROM console_sessions WHERE token_hash = \(Secrets.digest(of: token)) OR expires_at <= \(clock())")
        }
    }

    /// Ends the retailer's sessions but `keeping` (the one that rotated the key, if any): a new API key locks
    /// out whoever signed in with the old one.
    func endConsoleSessions(retailerID: UUID, keeping token: String?) throws {
        _ = try pool.withConnection { connection in
            try connection.query(
                """
                DELETE FROM console_sessions
                WHERE retailer_id = \(retailerID) AND token_hash <> \(Secrets.digest(of: token ?? ""))
                """
            )
        }
    }
}
