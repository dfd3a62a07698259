import Foundation
import Geofencing
import LoyaltyAPI
import SQLite

// The working set (a cache's default scope): the directory of every retailer, and the offers of only the retailers
// this device carries: those with a store near it, those its scan heard, those its shopper follows.

extension OfferCache {
    /// Whether the cache carries a working set rather than the whole catalog: true but after `sync --all`. A cache
    /// from before the working set was the default (no scope) carries the whole catalog until its next sync turns it
    /// to a working set (`startWorkingSet`).
    public var carriesWorkingSet: Bool {
        get throws(ClientError) { try state(.catalogScope) != "all" }
    }

    public var directoryETag: String? { get throws(ClientError) { try state(.directoryETag) } }

    /// The directory's bucket count (1 before the first directory).
    public var directoryBuckets: Int {
        get throws(ClientError) { try state(.directoryBuckets).flatMap { Int($0) } ?? 1 }
    }

    /// Where the working set's retailers are near: the last `sync --near` with the working set.
    public var homeArea: CatalogArea? { get throws(ClientError) { try area(.homeArea) } }

    /// Turns the cache to a working set (`home`, if given, its home area from now on): what it holds of the whole
    /// catalog goes, but for the offers that wait to be shown or redeemed; the whole feed's cursors go with it. The
    /// seen set, outbox and redemptions stay.
    public func startWorkingSet(home: CatalogArea? = nil) throws(ClientError) {
        if let home { try write { db in try Self.setState(db, .homeArea, Self.areaText(home)) } }
        guard try state(.catalogScope) != "working-set" else { return }
        try write { db in
            try Self.dropRetailers(nil, db)
            for key in [StateKey.catalogCursor, .catalogETag, .catalogArea, .catalogPartial] {
                try Self.setState(db, key, nil)
            }
            try Self.setState(db, .catalogScope, "working-set")
        }
    }

    /// Carries the whole catalog from now on (`sync --all`, kept for later syncs until `sync --working-set`): the
    /// working set's bookkeeping goes but for the home area and the followed, kept for its return; the next page
    /// replaces the rest.
    public func stopWorkingSet() throws(ClientError) {
        let scope = try state(.catalogScope)
        guard scope != "all" else { return }
        // A cache from before holds the whole catalog already, its cursors good.
        guard scope == "working-set" else { return try write { db in try Self.setState(db, .catalogScope, "all") } }
        try write { db in
            try db.execute("DELETE FROM carried; DELETE FROM heard; DELETE FROM directory; DELETE FROM directory_stores;")
            for key in [StateKey.directoryETag, .directoryBuckets, .catalogCursor, .catalogETag] {
                try Self.setState(db, key, nil)
            }
            try Self.setState(db, .catalogScope, "all")
        }
    }

    /// Makes the next sync fetch every carried retailer whole again (`sync --full`), and the directory.
    public func forgetWorkingSetCursors() throws(ClientError) {
        try write { db in
            try db.run("UPDATE carried SET cursor = NULL, head = -1")
            try Self.setState(db, .directoryETag, nil)
        }
    }

    /// Replaces the directory.
    public func store(_ directory: RetailerDirectory, etag: String?) throws(ClientError) {
        try write { db in
            try db.execute("DELETE FROM directory; DELETE FROM directory_stores;")
            for retailer in directory.retailers {
                try db.run(
                    "INSERT INTO directory (id, name, uuid, bucket, head) VALUES (?, ?, ?, ?, ?)",
                    [
                        .text(retailer.id.uuidString), .text(retailer.name), .text(retailer.uuid.uuidString),
                        .integer(Int64(retailer.bucket)), .integer(retailer.head),
                    ])
                for store in retailer.stores {
                    try db.run(
                        "INSERT INTO directory_stores (retailer_id, latitude, longitude, radius_m) VALUES (?, ?, ?, ?)",
                        [
                            .text(retailer.id.uuidString), .real(store.latitude), .real(store.longitude),
                            .integer(Int64(store.radiusMetres)),
                        ])
                }
            }
            try Self.setState(db, .directoryETag, etag)
            try Self.setState(db, .directoryBuckets, String(directory.buckets))
        }
    }

    /// The directory's retailers: id, name, UUID, bucket and head.
    public func directoryRetailers() throws(ClientError) -> [DirectoryRetailer] {
        try read { db in
            try db.query("SELECT id, name, uuid, bucket, head FROM directory ORDER BY name, id").map { row in
                DirectoryRetailer(
                    id: try row.uuid(0), name: try row.text(1), uuid: try row.uuid(2), bucket: Int(try row.integer(3)),
                    head: try row.integer(4), stores: [])
            }
        }
    }

    /// The directory's retailers with a store whose geofence comes within `area`.
    public func directoryRetailers(near area: CatalogArea) throws(ClientError) -> Set<UUID> {
        let center = GeoCoordinate(latitude: area.latitude, longitude: area.longitude)
        return try read { db in
            var near = Set<UUID>()
            for row in try db.query("SELECT retailer_id, latitude, longitude, radius_m FROM directory_stores") {
                let store = GeoCoordinate(latitude: try row.real(1), longitude: try row.real(2))
                if GreatCircle.distance(center, store) <= area.radiusKilometres * 1000 + Double(try row.integer(3)) {
                    near.insert(try row.uuid(0))
                }
            }
            return near
        }
    }

    // MARK: following

    /// Follows the directory's retailer named `name` (case-insensitive); nil when the directory has no such name.
    public func follow(named name: String) throws(ClientError) -> DirectoryRetailer? {
        guard let retailer = try directoryRetailers().first(where: { $0.name.lowercased() == name.lowercased() })
        else { return nil }
        try write { db in
            try db.run("INSERT OR IGNORE INTO followed (retailer_id) VALUES (?)", [.text(retailer.id.uuidString)])
        }
        return retailer
    }

    /// Stops following the retailer named `name`; false when it was not followed.
    public func unfollow(named name: String) throws(ClientError) -> Bool {
        try write { db in
            try db.run(
                """
                DELETE FROM followed WHERE retailer_id IN (
                    SELECT f.retailer_id FROM followed f JOIN directory d ON d.id = f.retailer_id
                    WHERE d.name = ? COLLATE NOCASE)
                """, [.text(name)]) > 0
        }
    }

    /// The followed retailers, by name.
    public func followed() throws(ClientError) -> [DirectoryRetailer] {
        let ids = try read { db in try Set(db.query("SELECT retailer_id FROM followed").map { try $0.uuid(0) }) }
        return try directoryRetailers().filter { ids.contains($0.id) }
    }

    // MARK: heard

    /// Notes that a scan heard `uuid`, a retailer's this device does not carry: the next sync fetches it.
    public func noteHeard(_ uuid: UUID, at date: Date) throws(ClientError) {
        try write { db in
            try db.run(
                "INSERT INTO heard (uuid, heard_at) VALUES (?, ?) ON CONFLICT (uuid) DO UPDATE SET heard_at = excluded.heard_at",
                [.text(uuid.uuidString), .real(date.timeIntervalSince1970)])
        }
    }

    /// Notes that a scan heard `uuid`, a carried retailer's: it is wanted again from `date`, so it stays.
    public func noteHeardCarried(_ uuid: UUID, at date: Date) throws(ClientError) {
        try write { db in
            try db.run(
                "UPDATE carried SET wanted_at = max(wanted_at, ?) WHERE retailer_id IN (SELECT id FROM directory WHERE uuid = ?)",
                [.real(date.timeIntervalSince1970), .text(uuid.uuidString)])
        }
    }

    /// The directory's retailers whose UUID a scan heard and this device does not carry yet.
    public func heardRetailers() throws(ClientError) -> [DirectoryRetailer] {
        let uuids = try read { db in try Set(db.query("SELECT uuid FROM heard").map { try $0.uuid(0) }) }
        return try directoryRetailers().filter { uuids.contains($0.uuid) }
    }

    /// The UUID of the directory's retailer `id`; nil when the directory does not know it.
    public func directoryUUID(of id: UUID) throws(ClientError) -> UUID? {
        try read { db in try db.query("SELECT uuid FROM directory WHERE id = ?", [.text(id.uuidString)]).first?.uuid(0) }
    }

    /// Whether `uuid` is a directory retailer's.
    public func directoryKnows(_ uuid: UUID) throws(ClientError) -> Bool {
        try read { db in !(try db.query("SELECT 1 FROM directory WHERE uuid = ?", [.text(uuid.uuidString)]).isEmpty) }
    }

    // MARK: carried

    /// The retailers this device carries, with the cursor and head of its copy (nil, -1: not fetched yet).
    public func carried() throws(ClientError) -> [UUID: (cursor: String?, head: Int64)] {
        try read { db in
            var carried: [UUID: (cursor: String?, head: Int64)] = [:]
            for row in try db.query("SELECT retailer_id, cursor, head FROM carried") {
                carried[try row.uuid(0)] = (row.optionalText(1), try row.integer(2))
            }
            return carried
        }
    }

    /// Marks `ids` as wanted at `date` (carried from now on, if they were not).
    public func want(_ ids: Set<UUID>, at date: Date) throws(ClientError) {
        try write { db in
            for id in ids {
                try db.run(
                    """
                    INSERT INTO carried (retailer_id, wanted_at) VALUES (?, ?)
                    ON CONFLICT (retailer_id) DO UPDATE SET wanted_at = excluded.wanted_at
                    """, [.text(id.uuidString), .real(date.timeIntervalSince1970)])
            }
        }
    }

    /// Applies one page of a part (some retailers' rows), keeping only the rows of `retailers`: a full page replaces
    /// what the cache held of them (but the offers that wait), a delta patches it. Their cursor becomes the page's,
    /// and, once a page has no more after it, their head `heads`' (the directory's). Heard UUIDs of them are done.
    @discardableResult
    public func applyPart(
        _ page: CatalogPage, retailers: Set<UUID>, heads: [UUID: Int64], serverTimeOffset: Double
    ) throws(ClientError) -> (offers: Int, removed: Int) {
        try write { db in
            if page.full { try Self.dropRetailers(retailers, db) }
            var counts = (offers: 0, removed: 0)
            for store in page.stores where retailers.contains(store.retailerID) { try Self.insert(store, db) }
            for tombstone in page.removedStores where retailers.contains(tombstone.retailerID) {
                try db.run("DELETE FROM stores WHERE id = ?", [.text(tombstone.id.uuidString)])
            }
            for retailer in page.retailers where retailers.contains(retailer.id) { try Self.insert(retailer, db) }
            for offer in page.offers where retailers.contains(offer.retailerID) {
                try Self.insert(offer, db)
                counts.offers += 1
            }
            for tombstone in page.removed where retailers.contains(tombstone.retailerID) {
                try db.run("DELETE FROM offers WHERE id = ?", [.text(tombstone.id.uuidString)])
                counts.removed += 1
            }
            for id in retailers {
                try db.run(
                    "UPDATE carried SET cursor = ?, head = ? WHERE retailer_id = ?",
                    [.text(page.cursor), .integer(page.more ? -1 : heads[id] ?? -1), .text(id.uuidString)])
                try db.run(
                    "DELETE FROM heard WHERE uuid IN (SELECT uuid FROM directory WHERE id = ?)", [.text(id.uuidString)])
            }
            try Self.setState(db, .serverOffset, String(serverTimeOffset))
            return counts
        }
    }

    /// Lets go of the carried retailers not wanted since `before` and not followed: their stores and offers leave
    /// the cache, but for the offers that wait to be shown or redeemed. Returns their ids.
    public func evict(wantedBefore before: Date) throws(ClientError) -> [UUID] {
        try write { db in
            let stale = try db.query(
                """
                SELECT retailer_id FROM carried
                WHERE wanted_at < ? AND retailer_id NOT IN (SELECT retailer_id FROM followed)
                """, [.real(before.timeIntervalSince1970)]
            ).map { try $0.uuid(0) }
            try Self.dropRetailers(Set(stale), db)
            for id in stale { try db.run("DELETE FROM carried WHERE retailer_id = ?", [.text(id.uuidString)]) }
            return stale
        }
    }

    /// Deletes the stores and offers of `retailers` (nil: all) and the retailers themselves, but for the offers that
    /// wait (claimed for showing, seen and not yet sent, or redeemed and not yet used at a till) and their retailers.
    private static func dropRetailers(_ retailers: Set<UUID>?, _ db: SQLiteDatabase) throws {
        let waiting = """
            SELECT offer_id FROM showing UNION SELECT offer_id FROM outbox
            UNION SELECT offer_id FROM redemptions WHERE accepted_at IS NULL
            """
        // The ids as one bound JSON array; NULL: every retailer.
        let ids: SQLiteValue = retailers.map { .text("[" + $0.map { "\"\($0.uuidString)\"" }.joined(separator: ",") + "]") } ?? .null
        let scope = "(?1 IS NULL OR retailer_id IN (SELECT value FROM json_each(?1)))"
        try db.run("DELETE FROM stores WHERE \(scope)", [ids])
        try db.run("DELETE FROM offers WHERE id NOT IN (\(waiting)) AND \(scope)", [ids])
        try db.run(
            """
            DELETE FROM retailers WHERE id NOT IN (SELECT retailer_id FROM offers)
                AND (?1 IS NULL OR id IN (SELECT value FROM json_each(?1)))
            """, [ids])
    }
}
