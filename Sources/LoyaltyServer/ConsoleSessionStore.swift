import Foundation
import LoyaltyAPI
import Postgres

let consoleSessionPrefix = "ls_"
/// A console session lasts a working day from sign-in, however busy.
let consoleSessionLifetime: TimeInterval = 8 * 60 * 60

/// Console sessions: the cookie's digest, its retailer and its expiry. Signing out deletes the row, so a
/// cookie replayed after it is unknown.
extension Store {
    func createConsoleSession(retailerID: UUID) throws -> (token: String, expiresAt: Date) {
        let token = Secrets.token(prefix: consoleSessionPrefix)
        let now = clock()
        let expiresAt = now.addingTimeInterval(consoleSessionLifetime)
        _ = try pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO console_sessions (token_hash, retailer_id, created_at, expires_at)
                VALUES (\(Secrets.digest(of: token)), \(retailerID), \(now), \(expiresAt))
                """
            )
        }
        return (token, expiresAt)
    }

    /// The retailer of a live session, and when the session ends.
    func consoleSession(token: String) throws -> (retailer: Retailer, expiresAt: Date)? {
        let digest = Secrets.digest(of: token)
        return try pool.withConnection { connection in
            guard
                let row = try connection.query(
                    """
                    SELECT r.id, r.name, r.uuid, r.created_at, s.token_hash, s.expires_at
                    FROM console_sessions s JOIN retailers r ON r.id = s.retailer_id
                    WHERE s.token_hash = \(digest) AND s.expires_at > \(clock())
                    """
                ).first,
                Secrets.constantTimeEqual(try row.decode("token_hash", as: [UInt8].self), digest)
            else { return nil }
            return (
                Retailer(
                    id: try row.decode("id"), name: try row.decode("name"), uuid: try row.decode("uuid"),
                    createdAt: try row.decode("created_at")),
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
