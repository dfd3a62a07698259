import Foundation
import Geofencing
import LoyaltyAPI
import Postgres

/// Every SQL statement of the service. Values travel only as bound parameters; every query of a
/// retailer's data names its retailer id; times come from the injected clock.
public final class Store: Sendable {
    let pool: PostgresPool
    let clock: @Sendable () -> Date

    public init(pool: PostgresPool, clock: @escaping @Sendable () -> Date) {
        self.pool = pool
        self.clock = clock
    }

    /// Whether the database answers a trivial query now.
    public func isReady() -> Bool {
        (try? pool.withConnection { try $0.query("SELECT 1") }) != nil
    }

    public var connectionPoolUsage: PostgresPool.Usage { pool.usage }
    public var connectionPoolSize: Int { pool.size }

    /// The catalog's size for /metrics, counted when scraped: one statement, and no cost on the write path.
    func catalogSize() throws -> CatalogSize {
        let row = try pool.withConnection { connection in
            try connection.query(
                """
                SELECT (SELECT count(*) FROM offers WHERE deleted_at IS NULL) AS offers,
                    (SELECT count(*) FROM stores WHERE deleted_at IS NULL) AS stores,
                    (SELECT count(*) FROM retailers) AS retailers,
                    (SELECT version FROM catalog_feed WHERE singleton) AS feed_version
                """
            )[0]
        }
        return CatalogSize(
            liveOffers: try row.decode("offers"), liveStores: try row.decode("stores"),
            retailers: try row.decode("retailers"), feedVersion: try row.decode("feed_version"))
    }

    // MARK: Retailers

    func registerRetailer(_ registration: RetailerRegistration) throws -> RetailerCredentials {
        let apiKey = Secrets.token(prefix: retailerKeyPrefix)
        let proximityUUID = registration.uuid ?? UUID()
        do {
            let row = try pool.withConnection { connection in
                try connection.query(
                    """
                    INSERT INTO retailers (name, uuid, api_key_hash, created_at)
                    VALUES (\(registration.name), \(proximityUUID), \(Secrets.digest(of: apiKey)), \(clock()))
                    RETURNING id, name, uuid
                    """
                )[0]
            }
            return RetailerCredentials(
                id: try row.decode("id"), name: try row.decode("name"), uuid: try row.decode("uuid"),
                apiKey: apiKey)
        } catch let error as PostgresError where error.isUniqueViolation {
            throw StoreError.uuidTaken
        }
    }

    /// The retailer whose API key this is, looked up by the key's digest.
    /// The retailer whose key this is: its current key, or the one before while that is in its grace period
    /// (see `rotateKey`). The new key's first use ends the grace period.
    func retailer(apiKey: String) throws -> Retailer? {
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
            if Secrets.constantTimeEqual(current, digest) {
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
            return Retailer(
                id: try row.decode("id"), name: try row.decode("name"), uuid: try row.decode("uuid"),
                createdAt: try row.decode("created_at"))
        }
    }

    /// A new key. The key that asked for it (`replacing`) keeps working for `keyRotationGrace` or until the new
    /// key is first used, whichever comes first: a client that could not save the new key keeps working while
    /// its user puts the printed key in place, and can rotate again with the same key. Any other stops at once.
    func rotateKey(retailerID: UUID, replacing oldKey: String) throws -> APIKey {
        let apiKey = Secrets.token(prefix: retailerKeyPrefix)
        let expires = clock().addingTimeInterval(keyRotationGrace)
        _ = try pool.withConnection { connection in
            try connection.query(
                """
                UPDATE retailers SET previous_api_key_hash = \(Secrets.digest(of: oldKey)),
                    previous_key_expires_at = \(expires),
                    api_key_hash = \(Secrets.digest(of: apiKey))
                WHERE id = \(retailerID)
                """
            )
        }
        return APIKey(apiKey: apiKey)
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
                    starts_at, ends_at, per_shopper_limit, total_limit, reshow_after_s, updated_at)
                VALUES (\(retailerID), \(Int(major)), \(Int(minor)), \(draft.title), \(draft.description),
                    \(draft.category), \(draft.imageURL), \(draft.startsAt), \(draft.endsAt),
                    \(draft.perShopperLimit ?? 1), \(draft.totalLimit), \(draft.reshowAfterSeconds), \(clock()))
                ON CONFLICT (retailer_id, major, minor) WHERE deleted_at IS NULL DO UPDATE SET
                    title = excluded.title, description = excluded.description, category = excluded.category,
                    image_url = excluded.image_url, starts_at = excluded.starts_at, ends_at = excluded.ends_at,
                    per_shopper_limit = excluded.per_shopper_limit, total_limit = excluded.total_limit,
                    reshow_after_s = excluded.reshow_after_s, updated_at = excluded.updated_at
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

    // MARK: Stores

    /// Creates or replaces the retailer's live store `storeID`; `created` tells which.
    func putStore(retailerID: UUID, storeID: String, draft: StoreDraft) throws -> (
        store: RetailStore, created: Bool
    ) {
        let row = try pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO stores (retailer_id, store_id, name, latitude, longitude, radius_m, updated_at)
                VALUES (\(retailerID), \(storeID), \(draft.name), \(draft.latitude), \(draft.longitude),
                    \(draft.radiusMetres), \(clock()))
                ON CONFLICT (retailer_id, store_id) WHERE deleted_at IS NULL DO UPDATE SET
                    name = excluded.name, latitude = excluded.latitude, longitude = excluded.longitude,
                    radius_m = excluded.radius_m, updated_at = excluded.updated_at
                RETURNING *, (xmax = 0) AS created
                """
            )[0]
        }
        return (try RetailStore(row: row), try row.decode("created"))
    }

    /// Turns the retailer's live store `storeID` into a tombstone; false when there is none.
    func deleteStore(retailerID: UUID, storeID: String) throws -> Bool {
        try pool.withConnection { connection in
            try connection.query(
                """
                UPDATE stores SET deleted_at = \(clock()), updated_at = \(clock())
                WHERE retailer_id = \(retailerID) AND store_id = \(storeID) AND deleted_at IS NULL
                """
            ).rowsAffected > 0
        }
    }

    func stores(retailerID: UUID) throws -> [RetailStore] {
        try pool.withConnection { connection in
            try connection.query(
                "SELECT * FROM stores WHERE retailer_id = \(retailerID) AND deleted_at IS NULL ORDER BY store_id"
            ).map { row throws(PostgresError) in try RetailStore(row: row) }
        }
    }

    func statistics(retailerID: UUID) throws -> RetailerStatistics {
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
                    SELECT offer_id, count(*) AS seen_by FROM seen WHERE offer_id IN (SELECT id FROM live)
                    GROUP BY offer_id)
                SELECT live.*, coalesce(redeemed.redeemed_count, 0) AS redeemed_count,
                    coalesce(seen_by.seen_by, 0) AS seen_by
                FROM live LEFT JOIN redeemed ON redeemed.offer_id = live.id
                    LEFT JOIN seen_by ON seen_by.offer_id = live.id
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
                    title: try row.decode("title"), seenBy: try row.decode("seen_by"), redemptions: redeemed,
                    remaining: try row.decode("total_limit", as: Int?.self).map { max(0, $0 - redeemed) })
            })
    }

    /// Deletes for good the tombstones removed before `date` that no redemption refers to, and
    /// records the highest version deleted: cursors older than that can no longer be served (410).
    /// Returns how many it deleted. Two statements, so that the delete from the catalog (reference
    /// tables) reads no shopper table. Instances purging at once: one purges, the others find the
    /// lock taken and return 0 (without it their deletes would wait on each other's rows, and, visiting
    /// them in different orders, could deadlock); `greatest` keeps `purged_through` from moving back.
    @discardableResult
    public func purgeTombstones(deletedBefore date: Date) throws -> Int {
        try pool.withConnection { connection in
            try connection.transaction { connection in
                guard
                    try connection.query("SELECT pg_try_advisory_xact_lock(\(tombstonePurgeLock)) AS locked")[0]
                        .decode("locked", as: Bool.self)
                else { return 0 }
                let redeemed = try connection.query(
                    """
                    SELECT t.offer_id FROM redemption_totals t JOIN offers o ON o.id = t.offer_id
                    WHERE o.deleted_at < \(date)
                    """
                ).map { row throws(PostgresError) in try row.decode("offer_id", as: UUID.self) }
                return try connection.query(
                    """
                    WITH gone_offers AS (
                        DELETE FROM offers WHERE deleted_at < \(date) AND id <> ALL(\(uuidArray(redeemed))::uuid[])
                        RETURNING version),
                    gone_stores AS (DELETE FROM stores WHERE deleted_at < \(date) RETURNING version),
                    gone AS (SELECT version FROM gone_offers UNION ALL SELECT version FROM gone_stores)
                    UPDATE catalog_feed
                    SET purged_through = greatest(purged_through, (SELECT coalesce(max(version), 0) FROM gone))
                    WHERE singleton AND (SELECT count(*) FROM gone) > 0
                    RETURNING (SELECT count(*) FROM gone) AS removed
                    """
                ).first?.decode("removed", as: Int.self) ?? 0
            }
        }
    }

    // MARK: Catalog

    /// Everything changed after `since` (the whole live catalog when nil), read in one snapshot, up to
    /// `limit` rows (retailers, offers, stores and tombstones together). A page ends at a version
    /// boundary: the rows it holds are every change in (since, cursor], so the next page, asked with
    /// the page's cursor, starts where it stopped, and rows changed in between come in a later page at
    /// their new version (a page after the first of a full sync is a delta). With `area`, the whole
    /// live catalog around a point instead, never cut (`since` is not used: see `nearPage`).
    /// `through` is where the page brings the client: its ETag.
    func catalog(since: FeedCursor?, limit: Int = catalogPageLimit, area: CatalogArea? = nil) throws -> (
        page: CatalogPage, through: FeedCursor
    ) {
        let now = clock()
        return try pool.withConnection { connection in
            try connection.transaction { connection in
                try connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                let feed = try connection.query(
                    "SELECT generation, version, purged_through FROM catalog_feed WHERE singleton")[0]
                let head = FeedCursor(
                    generation: try feed.decode("generation"), version: try feed.decode("version"),
                    near: area != nil)
                if let area {
                    return (try nearPage(connection, area: area, head: head, now: now), head)
                }
                let after: Int64
                if let since {
                    let purgedThrough: Int64 = try feed.decode("purged_through")
                    guard since.generation == head.generation, since.version >= purgedThrough,
                        since.version <= head.version
                    else { throw StoreError.cursorExpired }
                    after = since.version
                } else {
                    after = 0
                }
                // A full page needs no tombstones: it replaces the client's copy.
                let delta = since != nil
                var through = head
                if after < head.version,
                    let next = try connection.query(
                        """
                        SELECT version FROM (
                            (SELECT version FROM retailers WHERE version > \(after) AND version <= \(head.version)
                                ORDER BY version LIMIT \(limit + 1))
                            UNION ALL
                            (SELECT version FROM offers WHERE version > \(after) AND version <= \(head.version)
                                AND (deleted_at IS NULL OR \(delta)) ORDER BY version LIMIT \(limit + 1))
                            UNION ALL
                            (SELECT version FROM stores WHERE version > \(after) AND version <= \(head.version)
                                AND (deleted_at IS NULL OR \(delta)) ORDER BY version LIMIT \(limit + 1))
                        ) AS changes
                        ORDER BY version OFFSET \(limit) LIMIT 1
                        """
                    ).first
                {
                    // The first change that does not fit (each branch reads no more than a page's worth of
                    // its version index); every write takes a version of its own, so the
                    // page ends just before it (were one version ever shared, it would stay whole).
                    let version: Int64 = try next.decode("version")
                    through.version = version - 1 > after ? version - 1 : version
                }
                var page = CatalogPage(
                    cursor: through.encoded(), full: !delta, more: through.version < head.version,
                    serverTime: now, retailers: [], offers: [], removed: [])
                guard after < through.version else { return (page, through) }
                page.retailers = try connection.query(
                    """
                    SELECT id, name, uuid FROM retailers
                    WHERE version > \(after) AND version <= \(through.version) ORDER BY version
                    """
                ).map(CatalogRetailer.init(row:))
                let offers = try connection.query(
                    """
                    SELECT * FROM offers
                    WHERE version > \(after) AND version <= \(through.version) AND (deleted_at IS NULL OR \(delta))
                    ORDER BY version
                    """
                )
                for row in offers {
                    if try row.decode("deleted_at", as: Date?.self) == nil {
                        page.offers.append(try Offer(row: row))
                    } else {
                        page.removed.append(try CatalogTombstone(row: row))
                    }
                }
                let stores = try connection.query(
                    """
                    SELECT * FROM stores
                    WHERE version > \(after) AND version <= \(through.version) AND (deleted_at IS NULL OR \(delta))
                    ORDER BY version
                    """
                )
                for row in stores {
                    if try row.decode("deleted_at", as: Date?.self) == nil {
                        page.stores.append(try RetailStore(row: row))
                    } else {
                        page.removedStores.append(try CatalogTombstone(row: row))
                    }
                }
                return (page, through)
            }
        }
    }

    /// The catalog around a point: the live stores within the radius (a bounding-box range scan of
    /// `stores_location`, then the exact great-circle distance), their retailers, and every live
    /// offer of those retailers.
    ///
    /// The page is always full. A delta cannot be computed for an area: a retailer enters it when a
    /// store is added or moved into it, and then the client needs that retailer's older, unchanged
    /// offers too; it leaves it when its last store there moves away, which no tombstone records. The
    /// area's part of the catalog is small, and the ETag (the feed version plus the area) still
    /// answers 304 while nothing changed. The `n1` cursor keeps the client from asking for a delta
    /// of the whole feed on top of an area's copy.
    private func nearPage(
        _ connection: PostgresConnection, area: CatalogArea, head: FeedCursor, now: Date
    ) throws
        -> CatalogPage
    {
        let center = GeoCoordinate(latitude: area.latitude, longitude: area.longitude)
        let radius = area.radiusKilometres * 1000
        let box = BoundingBox(center: center, radius: radius)
        let stores = try connection.query(
            """
            SELECT * FROM stores
            WHERE deleted_at IS NULL AND version <= \(head.version)
                AND latitude BETWEEN \(box.minLatitude)::float8 AND \(box.maxLatitude)::float8
                AND (longitude BETWEEN \(box.minLongitude)::float8 AND \(box.maxLongitude)::float8
                    OR (\(box.wrapsLongitude)::boolean
                        AND (longitude >= \(box.minLongitude)::float8 OR longitude <= \(box.maxLongitude)::float8)))
                AND great_circle_m(\(area.latitude)::float8, \(area.longitude)::float8, latitude, longitude)
                    <= \(radius)::float8
            ORDER BY version
            """
        ).map { row throws(PostgresError) in try RetailStore(row: row) }
        let retailerIDs = uuidArray(Set(stores.map(\.retailerID)).sorted { $0.uuidString < $1.uuidString })
        let retailers = try connection.query(
            "SELECT id, name, uuid FROM retailers WHERE id = ANY(\(retailerIDs)::uuid[]) ORDER BY version"
        ).map(CatalogRetailer.init(row:))
        let offers = try connection.query(
            """
            SELECT * FROM offers
            WHERE retailer_id = ANY(\(retailerIDs)::uuid[]) AND deleted_at IS NULL AND version <= \(head.version)
            ORDER BY version
            """
        ).map { row throws(PostgresError) in try Offer(row: row) }
        return CatalogPage(
            cursor: head.encoded(), full: true, more: false, serverTime: now, retailers: retailers, offers: offers,
            removed: [],
            stores: stores, removedStores: [])
    }

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
    func device(token: String) throws -> DeviceSession? {
        try pool.withConnection { connection in try Self.liveDevice(token, withFeedHead: false, in: connection)?.session }
    }

    /// Where the catalog feed is now, or nil when `token` is not a live device's: the device lookup and the
    /// feed's head in one statement, all that a catalog request answered 304 costs.
    func catalogHead(deviceToken token: String) throws -> FeedCursor? {
        try pool.withConnection { connection in
            guard let row = try Self.liveDevice(token, withFeedHead: true, in: connection)?.row else { return nil }
            return FeedCursor(generation: try row.decode("generation"), version: try row.decode("version"))
        }
    }

    /// The live device `token` belongs to, and its row (with the feed's head when `withFeedHead`). A token that
    /// names its account is looked up within that account (one shard, docs/SCALING.md), an older one by its
    /// digest alone.
    private static func liveDevice(
        _ token: String, withFeedHead: Bool, in connection: PostgresConnection
    ) throws -> (session: DeviceSession, row: PostgresRow)? {
        let digest = Secrets.digest(of: token)
        var query = PostgresQuery(
            unsafeSQL: withFeedHead
                ? """
                SELECT d.id, d.account_id, d.token_hash, f.generation, f.version
                FROM devices d JOIN catalog_feed f ON f.singleton
                WHERE d.token_hash = $1 AND d.revoked_at IS NULL
                """
                : "SELECT d.id, d.account_id, d.token_hash FROM devices d WHERE d.token_hash = $1 AND d.revoked_at IS NULL",
            parameters: [digest.postgresText])
        if let accountID = DeviceToken.accountID(in: token) {
            query.sql += " AND d.account_id = $2"
            query.parameters.append(accountID.postgresText)
        }
        guard let row = try connection.query(query).first,
            Secrets.constantTimeEqual(try row.decode("token_hash", as: [UInt8].self), digest)
        else { return nil }
        return (DeviceSession(deviceID: try row.decode("id"), accountID: try row.decode("account_id")), row)
    }

    func createLinkCode(accountID: UUID) throws -> LinkCode {
        let expiresAt = clock().addingTimeInterval(linkCodeLifetime)
        while true {
            let code = LinkCode.random()
            do {
                _ = try pool.withConnection { connection in
                    try connection.query(
                        """
                        INSERT INTO link_codes (code_hash, account_id, expires_at)
                        VALUES (\(LinkCode.digest(of: code)), \(accountID), \(expiresAt))
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
                else { throw StoreError.linkCodeInvalid }
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

    /// Revokes one of the account's devices (idempotent); false when the account has no such device.
    func revokeDevice(_ deviceID: UUID, of accountID: UUID) throws -> Bool {
        try pool.withConnection { connection in
            try connection.query(
                """
                UPDATE devices SET revoked_at = coalesce(revoked_at, \(clock()))
                WHERE id = \(deviceID) AND account_id = \(accountID)
                """
            ).rowsAffected > 0
        }
    }

    // MARK: Seen

    /// Adds items to the account's seen set; returns how many were new. The account row's
    /// `seen_version` is bumped under its row lock, so versions commit in order (see schema.sql). A time
    /// after the server's clock is taken as now, and an item outside its offer's window is skipped: no
    /// device can report a sighting that has not happened yet or of an offer it could not have been shown.
    func addSeen(_ items: [SeenItem], accountID: UUID) throws -> Int {
        let now = clock()
        let json = String(decoding: try LoyaltyJSON.encoder().encode(items), as: UTF8.self)
        return try pool.withConnection { connection in
            try connection.query(
                """
                WITH bump AS (
                    UPDATE accounts SET seen_version = seen_version + 1 WHERE id = \(accountID)
                    RETURNING seen_version)
                INSERT INTO seen (account_id, offer_id, seen_at, version)
                SELECT \(accountID), item.offer_id, least(item.seen_at, \(now)), bump.seen_version
                FROM bump, jsonb_to_recordset(\(json)::jsonb) AS item (offer_id uuid, seen_at timestamptz)
                WHERE EXISTS (
                    SELECT 1 FROM offers WHERE offers.id = item.offer_id
                        AND (starts_at IS NULL OR starts_at <= least(item.seen_at, \(now)))
                        AND (ends_at IS NULL OR least(item.seen_at, \(now)) < ends_at))
                ON CONFLICT DO NOTHING
                """
            ).rowsAffected
        }
    }

    /// The items added to the account's set after `since` (all when nil), in one snapshot.
    func seen(accountID: UUID, since: FeedCursor?) throws -> SeenPage {
        if let since, since.generation != accountID { throw StoreError.cursorExpired }
        return try pool.withConnection { connection in
            try connection.transaction { connection in
                try connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                let head: Int64 = try connection.query(
                    "SELECT seen_version FROM accounts WHERE id = \(accountID)")[0].decode("seen_version")
                let after = since?.version ?? 0
                guard after <= head else { throw StoreError.cursorExpired }
                let items = try connection.query(
                    """
                    SELECT offer_id, seen_at FROM seen
                    WHERE account_id = \(accountID) AND version > \(after) AND version <= \(head)
                    ORDER BY version, offer_id
                    """
                ).map { row throws(PostgresError) in
                    SeenItem(offerID: try row.decode("offer_id"), seenAt: try row.decode("seen_at"))
                }
                return SeenPage(
                    cursor: FeedCursor(generation: accountID, version: head).encoded(), items: items)
            }
        }
    }

    // MARK: Redemptions

    /// Redeems under the row lock of the offer's counter (`redemption_totals`), so the limit checks and the
    /// insert are one step for every concurrent request for the offer. The counter goes up first and the
    /// checks follow in a snapshot taken after the lock, which counts every redemption committed before it;
    /// a failed check rolls the step back. The counter and the redemption are written by two
    /// single-row statements on their own keys (the offer's, the account's): see docs/SCALING.md. With an
    /// idempotency key already used by this account, answers the first redemption (`created` false) instead.
    func redeem(offerID: UUID, accountID: UUID, idempotencyKey: String?) throws -> (
        redemption: Redemption, created: Bool
    ) {
        let now = clock()
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
                    } catch let error as PostgresError where error.sqlState == "23503" {
                        throw StoreError.notFound  // the counter's foreign key: there is no such offer
                    }
                    guard
                        let offer = try connection.query(
                            """
                            SELECT o.deleted_at, o.starts_at, o.ends_at, o.per_shopper_limit, o.total_limit,
                                (SELECT count(*) FROM redemptions
                                    WHERE account_id = \(accountID) AND offer_id = o.id) AS mine,
                                first.id, first.offer_id, first.code, first.created_at
                            FROM offers o
                                LEFT JOIN redemptions first
                                    ON first.account_id = \(accountID) AND first.idempotency_key = \(idempotencyKey)
                            WHERE o.id = \(offerID)
                            """
                        ).first
                    else { throw StoreError.notFound }
                    if try offer.decode("id", as: UUID?.self) != nil {
                        throw Replayed(redemption: try Redemption(row: offer))
                    }
                    if try offer.decode("deleted_at", as: Date?.self) != nil {
                        throw StoreError.offerUnavailable("the offer was removed")
                    }
                    if let startsAt = try offer.decode("starts_at", as: Date?.self), now < startsAt {
                        throw StoreError.offerUnavailable("the offer has not started yet")
                    }
                    if let endsAt = try offer.decode("ends_at", as: Date?.self), now >= endsAt {
                        throw StoreError.offerUnavailable("the offer has ended")
                    }
                    if let totalLimit = try offer.decode("total_limit", as: Int?.self), redeemed > totalLimit {
                        throw StoreError.limitReached("the offer is sold out")
                    }
                    if try offer.decode("mine", as: Int.self) >= (try offer.decode("per_shopper_limit", as: Int.self)) {
                        throw StoreError.limitReached("this account has redeemed the offer as often as it may")
                    }
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
            guard replay.redemption.offerID == offerID else { throw StoreError.idempotencyKeyReused }
            return (replay.redemption, false)
        } catch let error as PostgresError where error.isUniqueViolation {
            // The same key raced in at another offer and committed first: answer as a replay would.
            guard let idempotencyKey,
                let first = try pool.withConnection({ connection in
                    try previousRedemption(connection, accountID: accountID, key: idempotencyKey)
                })
            else { throw error }
            guard first.offerID == offerID else { throw StoreError.idempotencyKeyReused }
            return (first, false)
        }
    }

    /// The redemption an idempotency key already made: thrown out of the transaction, so that the counter
    /// it raised is rolled back.
    private struct Replayed: Error {
        var redemption: Redemption
    }

    func redemptions(accountID: UUID) throws -> RedemptionList {
        let rows = try pool.withConnection { connection in
            try connection.query(
                """
                SELECT id, offer_id, code, created_at FROM redemptions
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

/// Who a device token belongs to.
struct DeviceSession: Equatable {
    var deviceID: UUID
    var accountID: UUID
}

let retailerKeyPrefix = "lk_"
let deviceTokenPrefix = "ld_"
let linkCodeLifetime: TimeInterval = 10 * 60
/// How long a rotated-out retailer key keeps working if the new one is not used first.
let keyRotationGrace: TimeInterval = 24 * 60 * 60
/// The transaction-level advisory lock a tombstone purge holds (the schema migration's is 4207333101).
let tombstonePurgeLock: Int64 = 4_207_333_102
/// The most rows a catalog page holds, and the size of a page asked without `limit`: a 100,000-offer
/// catalog comes in ten pages, so the server builds one while the client stores the one before.
let catalogPageLimit = 10_000

/// A PostgreSQL array literal of uuids, bound as one parameter and cast with `::uuid[]`.
private func uuidArray(_ ids: [UUID]) -> String {
    "{" + ids.map(\.uuidString).joined(separator: ",") + "}"
}

extension Offer {
    init(row: PostgresRow) throws(PostgresError) {
        self.init(
            id: try row.decode("id"), retailerID: try row.decode("retailer_id"),
            major: try row.decode("major"),
            minor: try row.decode("minor"), title: try row.decode("title"),
            description: try row.decode("description", as: String?.self),
            category: try row.decode("category", as: String?.self),
            imageURL: try row.decode("image_url", as: String?.self),
            startsAt: try row.decode("starts_at", as: Date?.self),
            endsAt: try row.decode("ends_at", as: Date?.self),
            perShopperLimit: try row.decode("per_shopper_limit"),
            totalLimit: try row.decode("total_limit", as: Int?.self),
            reshowAfterSeconds: try row.decode("reshow_after_s", as: Int?.self),
            updatedAt: try row.decode("updated_at"))
    }
}

extension CatalogRetailer {
    init(row: PostgresRow) throws(PostgresError) {
        self.init(id: try row.decode("id"), name: try row.decode("name"), uuid: try row.decode("uuid"))
    }
}

extension CatalogTombstone {
    init(row: PostgresRow) throws(PostgresError) {
        self.init(id: try row.decode("id"), retailerID: try row.decode("retailer_id"))
    }
}

extension RetailStore {
    init(row: PostgresRow) throws(PostgresError) {
        self.init(
            id: try row.decode("id"), retailerID: try row.decode("retailer_id"),
            storeID: try row.decode("store_id"),
            name: try row.decode("name"), latitude: try row.decode("latitude"),
            longitude: try row.decode("longitude"), radiusMetres: try row.decode("radius_m"),
            updatedAt: try row.decode("updated_at"))
    }
}

extension Redemption {
    init(row: PostgresRow) throws(PostgresError) {
        self.init(
            id: try row.decode("id"), offerID: try row.decode("offer_id"), code: try row.decode("code"),
            redeemedAt: try row.decode("created_at"))
    }
}
