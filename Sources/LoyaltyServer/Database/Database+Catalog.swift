import Foundation
import Geofencing
import LoyaltyAPI
import Postgres

// The catalog feed every shopper syncs: pages of changes, and the part around a point.

extension Database {
    // MARK: Catalog

    /// Everything changed after `since` (the whole live catalog when nil), read in one snapshot, up to
    /// `limit` rows (retailers, offers, stores and tombstones together). A page ends at a version
    /// boundary: the rows it holds are every change in (since, cursor], so the next page, asked with
    /// the page's cursor, starts where it stopped, and rows changed in between come in a later page at
    /// their new version (a page after the first of a full sync is a delta). With `area`, the whole
    /// live catalog around a point instead, cut as any page (see `nearPage`: `since` only resumes an area's
    /// pages).
    /// With `part`, only those retailers' rows (a working set's or a bucket's), as a delta from `since` like the
    /// whole feed's; a full page of a part replaces only those retailers in the client's copy.
    /// `through` is where the page brings the client: its ETag. Read on a standby unless it is older than `since`.
    func catalog(
        since: FeedCursor?, limit: Int = catalogPageLimit, area: CatalogArea? = nil, part: [UUID]? = nil
    ) throws -> (page: CatalogPage, through: FeedCursor) {
        let now = clock()
        if let area {
            // A later page of an area goes on where the one before stopped; any other cursor starts it over.
            let resumed = since?.nearPosition == nil ? nil : since
            return try read { connection in
                try connection.transaction(readOnlySnapshot: true) { connection in
                    let head = try FeedCursor(feedRow: connection.query(FeedCursor.headQuery)[0], near: true)
                    if let resumed, resumed.generation != head.generation || resumed.version > head.version {
                        if connection.isKnownStandby { throw StandbyBehind() }
                        throw Refusal.cursorExpired
                    }
                    var (page, position) = try nearPage(
                        connection, area: area, head: head, from: resumed?.nearPosition, limit: limit, now: now)
                    // Every page of an area names the version its first page was read at: a change made while
                    // the client pages (which a later page may or may not hold) makes its next sync a full one.
                    let through = FeedCursor(
                        generation: head.generation, version: resumed?.version ?? head.version, near: true,
                        nearPosition: position)
                    page.cursor = through.encoded()
                    return (page, through)
                }
            }
        }
        let after = since?.version ?? 0
        // NULL: the whole feed. Planned with its value (an unnamed statement), so the test costs the whole feed nothing.
        let retailerIDs = part.map(uuidArray)
        // A full page needs no tombstones: it replaces the client's copy.
        let delta = since != nil
        // One snapshot and one round trip: the feed's head, and the first changes after the cursor up to the
        // head in each table, no more than a page and one row of each (each reads no more than that of its
        // version index). Every row takes a version of its own (schema.sql), so the page's cut, at the first
        // change that does not fit, is found among them.
        return try read { connection in
            let results = try connection.snapshot([
                "SELECT generation, version, purged_through FROM catalog_feed WHERE singleton",
                """
                SELECT id, name, uuid, version FROM retailers
                WHERE version > \(after) AND version <= (SELECT version FROM catalog_feed WHERE singleton)
                    AND (\(retailerIDs)::uuid[] IS NULL OR id = ANY(\(retailerIDs)::uuid[]))
                ORDER BY version LIMIT \(limit + 1)
                """,
                """
                -- presence_required: the offer is on a secure beacon (making a beacon secure moves its offers'
                -- versions, so devices learn it at their next sync).
                SELECT o.*, EXISTS (SELECT 1 FROM secure_beacons b
                        WHERE b.retailer_id = o.retailer_id AND b.major = o.major AND b.minor = o.minor)
                    AS presence_required
                FROM offers o
                WHERE o.version > \(after) AND o.version <= (SELECT version FROM catalog_feed WHERE singleton)
                    AND (o.deleted_at IS NULL OR \(delta))
                    AND (\(retailerIDs)::uuid[] IS NULL OR o.retailer_id = ANY(\(retailerIDs)::uuid[]))
                ORDER BY o.version LIMIT \(limit + 1)
                """,
                """
                SELECT * FROM stores
                WHERE version > \(after) AND version <= (SELECT version FROM catalog_feed WHERE singleton)
                    AND (deleted_at IS NULL OR \(delta))
                    AND (\(retailerIDs)::uuid[] IS NULL OR retailer_id = ANY(\(retailerIDs)::uuid[]))
                ORDER BY version LIMIT \(limit + 1)
                """,
            ])
            let feed = results[0][0]
            let head = try FeedCursor(feedRow: feed)
            if let since {
                let purgedThrough: Int64 = try feed.decode("purged_through")
                guard since.generation == head.generation, since.version >= purgedThrough,
                    since.version <= head.version
                else {
                    // A standby older than the cursor (another server's, or a primary's answer) defers to
                    // the primary, which alone can say the cursor is gone.
                    if connection.isKnownStandby { throw StandbyBehind() }
                    throw Refusal.cursorExpired
                }
            }
            let (retailers, offers, stores) = (results[1], results[2], results[3])
            var through = head
            through.part = part != nil
            let versions = try [retailers, offers, stores].flatMap { rows in
                try rows.map { row throws(PostgresError) -> Int64 in try row.decode("version") }
            }.sorted()
            if versions.count > limit {
                // The page ends just before the first change that does not fit.
                through.version = versions[limit] - 1
            }
            func inPage(_ rows: PostgresResult) throws -> [PostgresRow] {
                Array(try rows.prefix { row in try row.decode("version", as: Int64.self) <= through.version })
            }
            var page = CatalogPage(
                cursor: through.encoded(), full: !delta, more: through.version < head.version,
                serverTime: now, retailers: [], offers: [], removed: [])
            page.retailers = try inPage(retailers).map(CatalogRetailer.init(row:))
            (page.offers, page.removed) = try liveAndRemoved(inPage(offers), Offer.init(row:))
            (page.stores, page.removedStores) = try liveAndRemoved(inPage(stores), RetailStore.init(row:))
            return (page, through)
        }
    }

    /// The catalog around a point: the live stores within the radius (a bounding-box range scan of
    /// `stores_location`, then the exact great-circle distance), their retailers, and every live
    /// offer of those retailers; up to `limit` rows from `position` on, and where the next page starts.
    ///
    /// The first page is full (it replaces the client's copy) and holds the area's retailers; then come its
    /// stores, then its offers, each in id order, so an area of any size comes in pages of a bounded size. A
    /// delta cannot be computed for an area: a retailer enters it when a store is added or moved into it, and
    /// then the client needs that retailer's older, unchanged offers too; it leaves it when its last store there
    /// moves away, which no tombstone records. The ETag (the feed version plus the area) still answers 304 while
    /// nothing changed. The `n1` cursor keeps the client from asking for a delta of the whole feed on top of an
    /// area's copy.
    private func nearPage(
        _ connection: PostgresConnection, area: CatalogArea, head: FeedCursor, from position: NearPosition?,
        limit: Int, now: Date
    ) throws -> (page: CatalogPage, next: NearPosition?) {
        let center = GeoCoordinate(latitude: area.latitude, longitude: area.longitude)
        let radius = area.radiusKilometres * 1000
        let box = BoundingBox(center: center, radius: radius)
        // The lowest and highest UUIDs: before and after every row.
        let first = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let last = UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))
        var (storesAfter, offersAfter) = (first, first)
        switch position {
        case .stores(let after): storesAfter = after
        case .offers(let after): (storesAfter, offersAfter) = (last, after)
        case nil: break
        }
        // Every store of the area by its keys alone (the page's rows are read next): its retailers, and the
        // stores still to send.
        let keys = try connection.query(
            """
            SELECT id, retailer_id, id > \(storesAfter) AS pending FROM stores
            WHERE deleted_at IS NULL AND version <= \(head.version)
                AND latitude BETWEEN \(box.minLatitude)::float8 AND \(box.maxLatitude)::float8
                AND (longitude BETWEEN \(box.minLongitude)::float8 AND \(box.maxLongitude)::float8
                    OR (\(box.wrapsLongitude)::boolean
                        AND (longitude >= \(box.minLongitude)::float8 OR longitude <= \(box.maxLongitude)::float8)))
                AND great_circle_m(\(area.latitude)::float8, \(area.longitude)::float8, latitude, longitude)
                    <= \(radius)::float8
            ORDER BY id
            """)
        var retailerIDSet = Set<UUID>()
        var pendingStores: [UUID] = []
        for row in keys {
            retailerIDSet.insert(try row.decode("retailer_id"))
            if try row.decode("pending", as: Bool.self) { pendingStores.append(try row.decode("id")) }
        }
        let retailerIDs = uuidArray(retailerIDSet.sorted { $0.uuidString < $1.uuidString })
        var page = CatalogPage(
            cursor: "", full: position == nil, more: false, serverTime: now, retailers: [], offers: [],
            removed: [], stores: [], removedStores: [])
        if position == nil {
            page.retailers = try connection.query(
                "SELECT id, name, uuid FROM retailers WHERE id = ANY(\(retailerIDs)::uuid[]) ORDER BY version"
            ).map(CatalogRetailer.init(row:))
        }
        var room = max(1, limit - page.retailers.count)
        let pageStores = uuidArray(Array(pendingStores.prefix(room)))
        page.stores = try connection.query(
            "SELECT * FROM stores WHERE id = ANY(\(pageStores)::uuid[]) ORDER BY id"
        ).map { row throws(PostgresError) in try RetailStore(row: row) }
        if pendingStores.count > room, let last = page.stores.last {
            page.more = true
            return (page, .stores(after: last.id))
        }
        room -= page.stores.count
        // One more than fits, to know whether another page follows.
        let offers = try connection.query(
            """
            SELECT o.*, EXISTS (SELECT 1 FROM secure_beacons b
                    WHERE b.retailer_id = o.retailer_id AND b.major = o.major AND b.minor = o.minor)
                AS presence_required
            FROM offers o
            WHERE o.retailer_id = ANY(\(retailerIDs)::uuid[]) AND o.deleted_at IS NULL AND o.version <= \(head.version)
                AND o.id > \(offersAfter)
            ORDER BY o.id LIMIT \(room + 1)
            """
        ).map { row throws(PostgresError) in try Offer(row: row) }
        page.offers = Array(offers.prefix(room))
        guard offers.count > room else { return (page, nil) }
        page.more = true
        return (page, .offers(after: page.offers.last?.id ?? offersAfter))
    }
}

/// The most rows a catalog page holds, and the size of a page asked without `limit`: a 100,000-offer
/// catalog comes in ten pages, so the server builds one while the client stores the one before.
let catalogPageLimit = CatalogPage.maximumRows

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
            schedule: try row.decode("schedule", as: String?.self),
            showsPerDay: try row.decode("shows_per_day", as: Int?.self),
            updatedAt: try row.decode("updated_at"),
            // Only the catalog's reads have the column; true or absent.
            presenceRequired: row["presence_required"] == "t" ? true : nil)
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

/// Catalog rows in version order: the live ones as `T`, the deleted ones (only a delta page asks for them)
/// as tombstones.
private func liveAndRemoved<T>(
    _ rows: [PostgresRow], _ live: (PostgresRow) throws -> T
) throws -> (live: [T], removed: [CatalogTombstone]) {
    var result: (live: [T], removed: [CatalogTombstone]) = ([], [])
    for row in rows {
        if try row.decode("deleted_at", as: Date?.self) == nil {
            result.live.append(try live(row))
        } else {
            result.removed.append(try CatalogTombstone(row: row))
        }
    }
    return result
}
