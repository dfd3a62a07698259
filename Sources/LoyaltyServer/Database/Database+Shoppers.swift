import Foundation
import JSONCoding
import LoyaltyAPI
import Postgres

// Shoppers' accounts, their devices and link codes, and their seen sets.

extension Database {
    // MARK: Accounts and devices

    func createAccount(deviceName: String?) throws -> DeviceCredentials {
        // The id is drawn here, not by the database: the token names it.
        let accountID = UUID()
        let token = DeviceToken.issue(accountID: accountID)
        let now = clock()
        let row = try pool.withConnection { connection in
            try connection.query(
                """
                WITH account AS (INSERT INTO accounts (id, created_at) VALUES (\(accountID), \(now)))
                INSERT INTO devices (account_id, name, token_hash, created_at)
                VALUES (\(accountID), \(deviceName), \(Secrets.digest(of: token)), \(now))
                RETURNING id, account_id
                """
            )[0]
        }
        return DeviceCredentials(
            accountID: try row.decode("account_id"), deviceID: try row.decode("id"), deviceToken: token)
    }

    /// The live (not revoked) device whose token this is, looked up by the token's digest within the
    /// account the token names (by the digest alone for a token from before tokens named it).
    /// `onStandby`: for a read, a standby may answer (one that does not know the token yet defers to the
    /// primary; one that has not replayed a revocation yet still knows the device, for at most the replica lag
    /// allowed).
    func device(token: String, onStandby: Bool = false) throws -> DeviceSession? {
        let lookUp = { (connection: PostgresConnection) in
            try Self.liveDevice(token, withFeedHead: false, in: connection)?.session
        }
        return try onStandby ? read(acceptable: { $0 != nil }, lookUp) : pool.withConnection(lookUp)
    }

    /// Where the catalog feed is now, or nil when `token` is not a live device's. From memory when the catalog
    /// check vouches for both (no round trip: all that a catalog request answered 304 costs); else the device lookup
    /// and the feed's head in one statement. A token the cache does not hold is looked up on the primary, which alone
    /// says a token it remembers was not revoked; while the cache vouches for nothing, a standby answers unless it
    /// does not know the token or its feed is older than `atLeast` (the client's cursor).
    func catalogHead(deviceToken token: String, atLeast version: Int64?) throws -> FeedCursor? {
        guard let catalogCheck else { return try catalogHeadInDatabase(deviceToken: token, atLeast: version) }
        let digest = Secrets.digest(of: token)
        if let (head, _) = catalogCheck.check(digest: digest, atLeast: version) { return head }
        guard let epoch = catalogCheck.currentEpoch else {
            return try catalogHeadInDatabase(deviceToken: token, atLeast: version)
        }
        do {
            return try pool.withConnection { connection -> FeedCursor? in
                guard let (session, row) = try Self.liveDevice(token, withFeedHead: true, in: connection) else {
                    return nil
                }
                catalogCheck.remember(digest: digest, session, since: epoch)
                return try FeedCursor(feedRow: row)
            }
        } catch let error as PostgresError where error.kind == .unavailable && standbyReads != nil {
            // The primary is gone (a failover under way): a standby answers, as it does while the cache vouches for
            // nothing, and what it says is not remembered.
            return try catalogHeadInDatabase(deviceToken: token, atLeast: version)
        }
    }

    private func catalogHeadInDatabase(deviceToken token: String, atLeast version: Int64?) throws -> FeedCursor? {
        try read(acceptable: { head in head.map { $0.version >= version ?? 0 } ?? false }) { connection in
            guard let row = try Self.liveDevice(token, withFeedHead: true, in: connection)?.row else { return nil }
            return try FeedCursor(feedRow: row)
        }
    }

    /// The live device `token` belongs to, and its row (with the feed's head when `withFeedHead`). A token that
    /// names its account is looked up within that account (one shard, docs/SCALING.md), an older one by its
    /// digest alone.
    private static func liveDevice(
        _ token: String, withFeedHead: Bool, in connection: PostgresConnection
    ) throws -> (session: DeviceSession, row: PostgresRow)? {
        let digest = Secrets.digest(of: token)
        let accountID = DeviceToken.accountID(in: token)
        let query = PostgresQuery(
            unsafeSQL: deviceLookup[withFeedHead ? 1 : 0][accountID == nil ? 0 : 1],
            parameters: accountID.map { [digest.postgresText, $0.postgresText] } ?? [digest.postgresText])
        guard let row = try connection.query(query).first,
            Secrets.constantTimeEqual(try row.decode("token_hash", as: [UInt8].self), digest)
        else { return nil }
        return (DeviceSession(deviceID: try row.decode("id"), accountID: try row.decode("account_id")), row)
    }

    /// `liveDevice`'s statements, made once: by whether they read the feed's head, then by whether the token names
    /// its account.
    private static let deviceLookup = [false, true].map { withFeedHead in
        let select =
            withFeedHead
            ? """
            SELECT d.id, d.account_id, d.token_hash, f.generation, f.version
            FROM devices d JOIN catalog_feed f ON f.singleton
            WHERE d.token_hash = $1 AND d.revoked_at IS NULL
            """
            : "SELECT d.id, d.account_id, d.token_hash FROM devices d WHERE d.token_hash = $1 AND d.revoked_at IS NULL"
        return [select, select + " AND d.account_id = $2"]
    }

    /// A code that links a new device to the account of `session`'s device, which it dies with (`revokeDevice`).
    func createLinkCode(for session: DeviceSession) throws -> LinkCode {
        let expiresAt = clock().addingTimeInterval(linkCodeLifetime)
        while true {
            let code = LinkCode.random()
            do {
                _ = try pool.withConnection { connection in
                    try connection.query(
                        """
                        INSERT INTO link_codes (code_hash, account_id, expires_at, device_id)
                        VALUES (\(LinkCode.digest(of: code)), \(session.accountID), \(expiresAt), \(session.deviceID))
                        """
                    )
                }
                return LinkCode(code: code, expiresAt: expiresAt)
            } catch let error as PostgresError where error.isUniqueViolation {
                continue  // The same 59-bit code was drawn before: draw again.
            }
        }
    }

    /// Spends a link code (once, before it expires) on a new device of the code's account.
    func linkDevice(code: String, name: String?) throws -> DeviceCredentials {
        let now = clock()
        // Two statements: the token names the account, which only the spent code tells.
        return try pool.withConnection { connection in
            try connection.transaction { connection in
                guard
                    let spent = try connection.query(
                        """
                        UPDATE link_codes SET used_at = \(now)
                        WHERE code_hash = \(LinkCode.digest(of: code)) AND used_at IS NULL AND expires_at > \(now)
                        RETURNING account_id
                        """
                    ).first
                else { throw Refusal.linkCodeInvalid }
                let accountID: UUID = try spent.decode("account_id")
                let token = DeviceToken.issue(accountID: accountID)
                let device = try connection.query(
                    """
                    INSERT INTO devices (account_id, name, token_hash, created_at)
                    VALUES (\(accountID), \(name), \(Secrets.digest(of: token)), \(now))
                    RETURNING id
                    """
                )[0]
                return DeviceCredentials(accountID: accountID, deviceID: try device.decode("id"), deviceToken: token)
            }
        }
    }

    func devices(of session: DeviceSession) throws -> DeviceList {
        let rows = try pool.withConnection { connection in
            try connection.query(
                """
                SELECT id, name, created_at, revoked_at FROM devices
                WHERE account_id = \(session.accountID) ORDER BY created_at, id
                """
            )
        }
        return DeviceList(
            devices: try rows.map { row throws(PostgresError) in
                let id: UUID = try row.decode("id")
                return Device(
                    id: id, name: try row.decode("name", as: String?.self),
                    createdAt: try row.decode("created_at"),
                    revokedAt: try row.decode("revoked_at", as: Date?.self), current: id == session.deviceID)
            })
    }

    /// Revokes one of the account's devices (idempotent), and the link codes it made and nobody spent: a stolen
    /// phone's code must not link the thief's next device. False when the account has no such device.
    func revokeDevice(_ deviceID: UUID, of accountID: UUID) throws -> Bool {
        let now = clock()
        defer { catalogCheck?.forget(account: accountID) }
        return try pool.withConnection { connection in
            try connection.transaction { connection in
                guard
                    try connection.query(
                        """
                        UPDATE devices SET revoked_at = coalesce(revoked_at, \(now))
                        WHERE id = \(deviceID) AND account_id = \(accountID)
                        """
                    ).rowsAffected > 0
                else { return false }
                try connection.query(
                    """
                    UPDATE link_codes SET expires_at = \(now)
                    WHERE device_id = \(deviceID) AND account_id = \(accountID) AND used_at IS NULL AND expires_at > \(now)
                    """)
                return true
            }
        }
    }

    // MARK: Seen

    /// Adds items to the account's seen set; returns how many were new. The account row's
    /// `seen_version` is bumped under its row lock, so versions commit in order (see schema.sql). A time
    /// after the server's clock is taken as now, and an item outside its offer's window is skipped: no
    /// device can report a sighting that has not happened yet or of an offer it could not have been shown. A time
    /// before the offer was made is taken as its making: figures and beacon health cannot be backdated. Every item
    /// of an offer with `shows_per_day` is a show, counted in `offer_day_shows` (even one already in the set).
    func addSeen(_ items: [SeenItem], accountID: UUID) throws -> Int {
        let now = clock()
        let presentSince = now.addingTimeInterval(-SecureBeacon.presenceWindow)
        // Two arrays bound as parameters: writing them costs a fraction of encoding the items as JSON.
        let offerIDs = uuidArray(items.map(\.offerID))
        let seenAts = textArray(items.map { LoyaltyJSON.formatTimestamp($0.seenAt) })
        // An offer on a secure beacon without a recent verified sighting refuses the whole push, in the same
        // statement: the account's version is not bumped and nothing is added.
        let row = try pool.withConnection { connection in
            try connection.query(
                """
                WITH item AS (
                    SELECT i.offer_id, greatest(least(i.seen_at, \(now)), o.created_at) AS seen_at, o.starts_at,
                        o.ends_at, o.retailer_id, o.major, o.minor, o.shows_per_day
                    FROM unnest(\(offerIDs)::uuid[], \(seenAts)::timestamptz[]) AS i (offer_id, seen_at)
                        JOIN offers o ON o.id = i.offer_id),
                unverified AS (
                    SELECT item.major, item.minor FROM item
                        JOIN secure_beacons b ON b.retailer_id = item.retailer_id AND b.major = item.major
                            AND b.minor = item.minor
                    WHERE NOT EXISTS (
                        SELECT 1 FROM verified_sightings v
                        WHERE v.account_id = \(accountID) AND v.retailer_id = item.retailer_id
                            AND v.major = item.major AND v.minor = item.minor AND v.heard_at >= \(presentSince))
                    LIMIT 1),
                bump AS (
                    UPDATE accounts SET seen_version = seen_version + 1
                    WHERE id = \(accountID) AND NOT EXISTS (SELECT 1 FROM unverified)
                    RETURNING seen_version),
                added AS (
                    INSERT INTO seen (account_id, offer_id, seen_at, version)
                    SELECT \(accountID), item.offer_id, item.seen_at, bump.seen_version
                    FROM bump, item
                    WHERE (item.starts_at IS NULL OR item.starts_at <= item.seen_at)
                        AND (item.ends_at IS NULL OR item.seen_at < item.ends_at)
                    ON CONFLICT DO NOTHING
                    RETURNING 1),
                counted AS (
                    INSERT INTO offer_day_shows (account_id, offer_id, day, shows, last_shown_at)
                    SELECT \(accountID)::uuid, shown.offer_id, shown.day, shown.shows, shown.last_shown_at
                    FROM (
                        SELECT item.offer_id, floor(extract(epoch FROM item.seen_at) / 86400)::bigint AS day,
                            count(*)::integer AS shows, max(item.seen_at) AS last_shown_at
                        FROM bump, item
                        WHERE item.shows_per_day IS NOT NULL
                            AND (item.starts_at IS NULL OR item.starts_at <= item.seen_at)
                            AND (item.ends_at IS NULL OR item.seen_at < item.ends_at)
                        GROUP BY item.offer_id, 2) AS shown
                    ON CONFLICT (account_id, offer_id, day) DO UPDATE SET
                        shows = offer_day_shows.shows + excluded.shows,
                        last_shown_at = greatest(offer_day_shows.last_shown_at, excluded.last_shown_at))
                SELECT (SELECT count(*) FROM added) AS added, (SELECT major FROM unverified) AS major,
                    (SELECT minor FROM unverified) AS minor
                """
            )[0]
        }
        if let major = try row.decode("major", as: Int?.self) {
            throw Refusal.presenceNotVerified(beacon: "\(major):\(try row.decode("minor", as: Int.self))")
        }
        return try row.decode("added")
    }

    /// The items added to the account's set after `since` (all when nil), in one snapshot; on a standby unless
    /// it is older than `since`.
    func seen(accountID: UUID, since: FeedCursor?) throws -> SeenPage {
        if let since, since.generation != accountID { throw Refusal.cursorExpired }
        return try read { connection in
            try connection.transaction(readOnlySnapshot: true) { connection in
                // A standby may not have the account yet; the primary has it, as it has the device's token.
                let account = try connection.query("SELECT seen_version FROM accounts WHERE id = \(accountID)").first
                guard let account else {
                    throw connection.isKnownStandby ? StandbyBehind() as any Error : Refusal.notFound
                }
                let head: Int64 = try account.decode("seen_version")
                let after = since?.version ?? 0
                guard after <= head else {
                    if connection.isKnownStandby { throw StandbyBehind() }
                    throw Refusal.cursorExpired
                }
                let items = try connection.query(
                    """
                    SELECT offer_id, seen_at FROM seen
                    WHERE account_id = \(accountID) AND version > \(after) AND version <= \(head)
                    ORDER BY version, offer_id
                    """
                ).map { row throws(PostgresError) in
                    SeenItem(offerID: try row.decode("offer_id"), seenAt: try row.decode("seen_at"))
                }
                let dayShows = try connection.query(
                    """
                    SELECT offer_id, day, shows FROM offer_day_shows
                    WHERE account_id = \(accountID) AND day >= \(Offer.showDay(clock()) - 1)
                    ORDER BY day, offer_id
                    """
                ).map { row throws(PostgresError) in
                    DayShows(offerID: try row.decode("offer_id"), day: try row.decode("day"), shows: try row.decode("shows"))
                }
                return SeenPage(
                    cursor: FeedCursor(generation: accountID, version: head).encoded(), items: items,
                    dayShows: dayShows)
            }
        }
    }
}

/// Who a device token belongs to.
struct DeviceSession: Equatable {
    var deviceID: UUID
    var accountID: UUID
}

let deviceTokenPrefix = "ld_"
let linkCodeLifetime: TimeInterval = 10 * 60
/// How long a rotated-out retailer key keeps working if the new one is not used first.
let keyRotationGrace: TimeInterval = 24 * 60 * 60
