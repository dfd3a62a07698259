import Foundation
import LoyaltyAPI
import Postgres

// The shopper's own data: all of it exported, or the account deleted (docs/PRIVACY.md).

extension Database {
    /// Every table that holds something of an account, a device or a redemption, and where its rows go in the
    /// export (`AccountDataTests` walks PostgreSQL's catalog and fails on a table missing here).
    static let accountDataTables: [String: String] = [
        "accounts": "account_id, created_at",
        "devices": "devices",
        "link_codes": "link_codes",
        "seen": "seen (GET /v1/account/export/seen)",
        "verified_sightings": "verified_sightings (GET /v1/account/export/sightings)",
        "redemptions": "redemptions, with their till acceptances",
        "account_preferences": "preferences (quiet hours, caps)",
        "muted_retailers": "preferences (muted retailers)",
        "offer_day_shows": "day_shows",
    ]

    /// The export's head: the account, its devices, link codes and redemptions, and how many rows the two long
    /// lists hold. One snapshot, so the counts and the lists agree.
    func accountExport(of session: DeviceSession) throws -> AccountExport {
        let accountID = session.accountID
        return try pool.withConnection { connection in
            try connection.transaction(readOnlySnapshot: true) { connection in
                guard
                    let account = try connection.query(
                        """
                        SELECT created_at, (SELECT count(*) FROM seen WHERE account_id = \(accountID)) AS seen,
                            (SELECT count(*) FROM verified_sightings WHERE account_id = \(accountID)) AS sightings
                        FROM accounts WHERE id = \(accountID) AND erased_at IS NULL
                        """
                    ).first
                else { throw Refusal.accountDeleted }
                let devices = try connection.query(
                    """
                    SELECT id, name, created_at, revoked_at FROM devices
                    WHERE account_id = \(accountID) ORDER BY created_at, id
                    """
                ).map { row throws(PostgresError) in
                    let id: UUID = try row.decode("id")
                    return Device(
                        id: id, name: try row.decode("name", as: String?.self), createdAt: try row.decode("created_at"),
                        revokedAt: try row.decode("revoked_at", as: Date?.self), current: id == session.deviceID)
                }
                let linkCodes = try connection.query(
                    """
                    SELECT device_id, expires_at, used_at FROM link_codes
                    WHERE account_id = \(accountID) ORDER BY expires_at
                    """
                ).map { row throws(PostgresError) in
                    ExportedLinkCode(
                        deviceID: try row.decode("device_id", as: UUID?.self), expiresAt: try row.decode("expires_at"),
                        usedAt: try row.decode("used_at", as: Date?.self))
                }
                let redemptions = try connection.query(
                    """
                    SELECT r.id, r.code, r.created_at, r.accepted_at, r.accepted_till, r.offer_id, o.major, o.minor,
                        o.title, retailers.name AS retailer
                    FROM redemptions r JOIN offers o ON o.id = r.offer_id JOIN retailers ON retailers.id = o.retailer_id
                    WHERE r.account_id = \(accountID) ORDER BY r.created_at, r.id
                    """
                ).map { row throws(PostgresError) in
                    ExportedRedemption(
                        id: try row.decode("id"), offer: try ExportedOffer(row: row), code: try row.decode("code"),
                        redeemedAt: try row.decode("created_at"), acceptedAt: try row.decode("accepted_at", as: Date?.self),
                        acceptedTill: try row.decode("accepted_till", as: String?.self))
                }
                let dayShows = try connection.query(
                    """
                    SELECT offer_id, day, shows, last_shown_at FROM offer_day_shows
                    WHERE account_id = \(accountID) ORDER BY day, offer_id
                    """
                ).map { row throws(PostgresError) in
                    DayShows(
                        offerID: try row.decode("offer_id"), day: try row.decode("day"), shows: try row.decode("shows"),
                        lastShownAt: try row.decode("last_shown_at"))
                }
                return AccountExport(
                    exportedAt: clock(), accountID: accountID, createdAt: try account.decode("created_at"),
                    devices: devices, linkCodes: linkCodes, redemptions: redemptions,
                    preferences: try Self.preferences(accountID, in: connection), seenCount: try account.decode("seen"), verifiedSightingCount: try account.decode("sightings"),
                    dayShows: dayShows)
            }
        }
    }

    /// The account's seen set from after the offer `after`, by offer id (the primary key's order: each page is an
    /// index range, so the last page costs what the first does).
    func exportedSeen(accountID: UUID, after: UUID?, limit: Int) throws -> AccountExportPage<ExportedSeen> {
        let after = after ?? Self.smallestUUID
        let rows = try pool.withConnection { connection in
            try connection.query(
                """
                WITH page AS (
                    SELECT offer_id, seen_at FROM seen
                    WHERE account_id = \(accountID) AND offer_id > \(after)
                    ORDER BY offer_id LIMIT \(limit + 1))
                SELECT page.offer_id, page.seen_at, o.major, o.minor, o.title, retailers.name AS retailer
                FROM page JOIN offers o ON o.id = page.offer_id JOIN retailers ON retailers.id = o.retailer_id
                ORDER BY page.offer_id
                """
            )
        }
        let items = try rows.prefix(limit).map { row throws(PostgresError) in
            ExportedSeen(offer: try ExportedOffer(row: row), seenAt: try row.decode("seen_at"))
        }
        return AccountExportPage(
            items: items, next: rows.count > limit ? items.last.map { $0.offer.id.uuidString.lowercased() } : nil)
    }

    /// The account's verified sightings from after `after` (`SightingKey.text`), in the primary key's order.
    func exportedSightings(accountID: UUID, after: SightingKey?, limit: Int) throws
        -> AccountExportPage<ExportedSighting>
    {
        let after = after ?? SightingKey(retailerID: Self.smallestUUID, major: -1, minor: -1, windowCounter: -1)
        let rows = try pool.withConnection { connection in
            try connection.query(
                """
                WITH page AS (
                    SELECT retailer_id, major, minor, window_counter, heard_at FROM verified_sightings
                    WHERE account_id = \(accountID)
                        AND (retailer_id, major, minor, window_counter)
                            > (\(after.retailerID)::uuid, \(after.major)::int, \(after.minor)::int,
                                \(after.windowCounter)::bigint)
                    ORDER BY retailer_id, major, minor, window_counter LIMIT \(limit + 1))
                SELECT page.*, retailers.name AS retailer FROM page JOIN retailers ON retailers.id = page.retailer_id
                ORDER BY page.retailer_id, page.major, page.minor, page.window_counter
                """
            )
        }
        var next: SightingKey?
        let items = try rows.prefix(limit).map { row throws(PostgresError) in
            next = SightingKey(
                retailerID: try row.decode("retailer_id"), major: try row.decode("major"), minor: try row.decode("minor"),
                windowCounter: try row.decode("window_counter"))
            return ExportedSighting(
                retailer: try row.decode("retailer"), major: try row.decode("major"), minor: try row.decode("minor"),
                heardAt: try row.decode("heard_at"))
        }
        return AccountExportPage(items: items, next: rows.count > limit ? next?.text : nil)
    }

    /// Deletes the account in one transaction: its seen set (folded into the retailers' counts first), verified
    /// sightings, link codes, devices and the account itself. Its redemptions move to a new erased account that
    /// names nobody (no idempotency keys, no devices), so figures and limits count them and the till refuses the
    /// unspent codes. The account's row is locked first: a push of another device waits and then finds no account,
    /// or commits first and is deleted with the rest. False when the account was deleted already.
    func deleteAccount(_ accountID: UUID) throws -> AccountDeletion? {
        let now = clock()
        defer { catalogCheck?.forget(account: accountID) }
        return try pool.withConnection { connection in
            try connection.transaction { connection in
                // The retention purge's lock: its folds and this one's must not count the same shopper twice.
                try connection.query("SELECT pg_advisory_xact_lock(\(shopperDataPurgeLock))")
                guard
                    try connection.query(
                        "SELECT 1 FROM accounts WHERE id = \(accountID) AND erased_at IS NULL FOR UPDATE"
                    ).first != nil
                else { return nil }
                var seen = 0
                while true {
                    let removed = try Self.foldAndDeleteSeen(.ofAccount(accountID), connection)
                    seen += removed
                    if removed < Self.shopperDataBatch { break }
                }
                let counts = try connection.query(
                    """
                    WITH sightings AS (DELETE FROM verified_sightings WHERE account_id = \(accountID) RETURNING 1),
                    codes AS (DELETE FROM link_codes WHERE account_id = \(accountID) RETURNING 1)
                    SELECT (SELECT count(*) FROM sightings) AS sightings, (SELECT count(*) FROM codes) AS codes,
                        (SELECT count(*) FROM redemptions WHERE account_id = \(accountID)) AS redemptions
                    """
                )[0]
                let redemptions: Int = try counts.decode("redemptions")
                if redemptions > 0 {
                    let erased: UUID = try connection.query(
                        "INSERT INTO accounts (created_at, erased_at) VALUES (\(now), \(now)) RETURNING id"
                    )[0].decode("id")
                    // INSERT and DELETE, not an UPDATE of the distribution column (docs/SCALING.md).
                    try connection.query(
                        """
                        WITH moved AS (
                            DELETE FROM redemptions WHERE account_id = \(accountID)
                            RETURNING id, offer_id, code, created_at, accepted_at, accepted_by, accepted_till, accepted_key)
                        INSERT INTO redemptions (account_id, id, offer_id, code, created_at, accepted_at, accepted_by,
                            accepted_till, accepted_key)
                        SELECT \(erased), id, offer_id, code, created_at, accepted_at, accepted_by, accepted_till,
                            accepted_key
                        FROM moved
                        """
                    )
                }
                let devices: Int = try connection.query(
                    """
                    WITH gone AS (DELETE FROM devices WHERE account_id = \(accountID) RETURNING 1),
                    account AS (DELETE FROM accounts WHERE id = \(accountID) RETURNING 1)
                    SELECT (SELECT count(*) FROM gone) AS devices, (SELECT count(*) FROM account) AS accounts
                    """
                )[0].decode("devices")
                return AccountDeletion(
                    devices: devices, seen: seen, verifiedSightings: try counts.decode("sightings"),
                    linkCodes: try counts.decode("codes"), redemptionsKeptAnonymously: redemptions)
            }
        }
    }
}

extension Database {
    /// Below every other uuid in PostgreSQL's order: where the first page starts.
    static let smallestUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}

/// Where a page of verified sightings ends: `RETAILER_ID.MAJOR.MINOR.WINDOW`, the `after` of the next page.
struct SightingKey: Equatable {
    var retailerID: UUID
    var major: Int
    var minor: Int
    var windowCounter: Int64

    var text: String { "\(retailerID.uuidString.lowercased()).\(major).\(minor).\(windowCounter)" }

    init(retailerID: UUID, major: Int, minor: Int, windowCounter: Int64) {
        (self.retailerID, self.major, self.minor, self.windowCounter) = (retailerID, major, minor, windowCounter)
    }

    init?(text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, let retailerID = UUID(uuidString: String(parts[0])),
            let major = Int(parts[1]), let minor = Int(parts[2]), let windowCounter = Int64(parts[3]),
            (0...65535).contains(major), (0...65535).contains(minor), windowCounter >= 0
        else { return nil }
        self.init(retailerID: retailerID, major: major, minor: minor, windowCounter: windowCounter)
    }
}

extension ExportedOffer {
    /// From a row with `offer_id`, `retailer`, `major`, `minor` and `title`.
    init(row: PostgresRow) throws(PostgresError) {
        self.init(
            id: try row.decode("offer_id"), retailer: try row.decode("retailer"), major: try row.decode("major"),
            minor: try row.decode("minor"), title: try row.decode("title"))
    }
}
