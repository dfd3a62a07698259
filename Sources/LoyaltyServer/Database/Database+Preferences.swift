import Foundation
import LoyaltyAPI
import Postgres

// The shopper's attention (issue 44): the account's quiet hours, caps and muted retailers, which every device of
// the account fetches at sync.

extension Database {
    /// The account's preferences; the defaults of `AccountPreferences` until it sets its own. Read on a standby when
    /// one is fit, as every sync asks for them: a sync must go on while no primary is elected.
    func preferences(accountID: UUID) throws -> AccountPreferences {
        try read { connection in try Self.preferences(accountID, in: connection) }
    }

    static func preferences(_ accountID: UUID, in connection: PostgresConnection) throws -> AccountPreferences {
        var preferences = AccountPreferences()
        if let row = try connection.query(
            """
            SELECT quiet_start_minute::integer AS quiet_start, quiet_end_minute::integer AS quiet_end, offers_per_hour,
                offers_per_day
            FROM account_preferences WHERE account_id = \(accountID)
            """
        ).first {
            if let start = try row.decode("quiet_start", as: Int?.self), let end = try row.decode("quiet_end", as: Int?.self) {
                preferences.quietHours = QuietHours(start: start, end: end).description
            }
            preferences.offersPerHour = try row.decode("offers_per_hour")
            preferences.offersPerDay = try row.decode("offers_per_day")
        }
        preferences.mutedRetailers = try connection.query(
            """
            SELECT r.id, r.name FROM muted_retailers m JOIN retailers r ON r.id = m.retailer_id
            WHERE m.account_id = \(accountID) ORDER BY r.name, r.id
            """
        ).map { row throws(PostgresError) in MutedRetailer(id: try row.decode("id"), name: try row.decode("name")) }
        return preferences
    }

    /// Replaces the account's quiet hours and caps (validated by `PreferenceSettings.validate`).
    func setPreferences(_ settings: PreferenceSettings, accountID: UUID) throws -> AccountPreferences {
        let quiet = try settings.quietHours.map { text throws(ValidationError) in try QuietHours(parsing: text) }
        let now = clock()
        return try pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO account_preferences
                    (account_id, quiet_start_minute, quiet_end_minute, offers_per_hour, offers_per_day, updated_at)
                VALUES (\(accountID), \(quiet?.start), \(quiet?.end), \(settings.offersPerHour), \(settings.offersPerDay),
                    \(now))
                ON CONFLICT (account_id) DO UPDATE SET quiet_start_minute = excluded.quiet_start_minute,
                    quiet_end_minute = excluded.quiet_end_minute, offers_per_hour = excluded.offers_per_hour,
                    offers_per_day = excluded.offers_per_day, updated_at = excluded.updated_at
                """)
            return try Self.preferences(accountID, in: connection)
        }
    }

    /// Mutes (or with `muted` false, unmutes) a retailer for the account; idempotent. Nil when there is no such
    /// retailer.
    func setMuted(_ muted: Bool, retailerID: UUID, accountID: UUID) throws -> AccountPreferences? {
        let now = clock()
        return try pool.withConnection { connection in
            guard try connection.query("SELECT 1 FROM retailers WHERE id = \(retailerID)").first != nil else { return nil }
            if muted {
                try connection.query(
                    """
                    INSERT INTO muted_retailers (account_id, retailer_id, muted_at) VALUES (\(accountID), \(retailerID), \(now))
                    ON CONFLICT DO NOTHING
                    """)
            } else {
                try connection.query(
                    "DELETE FROM muted_retailers WHERE account_id = \(accountID) AND retailer_id = \(retailerID)")
            }
            return try Self.preferences(accountID, in: connection)
        }
    }
}
