import Foundation
import JSONCoding
import LoyaltyAPI
import SQLite

// The catalog copy: applying a page, and reading offers, retailers and stores.

extension OfferCache {
    // MARK: catalog

    /// Applies one catalog page: a full page replaces the copy, a delta patches it. One transaction with
    /// the new cursor, so a crash never leaves a cursor ahead of the rows, and the next sync goes on
    /// from the last page stored. A full page with `more` empties the cache first, so a full sync
    /// stopped midway leaves the first pages of the new catalog and nothing of the old one, marked
    /// partial (`catalogIsPartial`) until the page without `more`. `area` is what a near page covers
    /// (nil: the whole catalog).
    public func apply(
        _ page: CatalogPage, etag: String?, serverTimeOffset: Double, area: CatalogArea? = nil
    ) throws(ClientError) {
        try apply(page, etag: etag, serverTimeOffset: serverTimeOffset, area: area) { store in
            for row in page.stores { try store(.store(row)) }
            for row in page.removedStores { try store(.removedStore(row)) }
            for row in page.retailers { try store(.retailer(row)) }
            for row in page.offers { try store(.offer(row)) }
            for row in page.removed { try store(.removed(row)) }
        }
    }

    /// Applies a page whose rows `rows` hands to the function it is given one at a time (read from the answer
    /// as they are stored, so a page is never held whole), `head` being the page's own fields. What each kind
    /// of row stored counts.
    @discardableResult
    public func apply(
        _ head: CatalogPage, etag: String?, serverTimeOffset: Double, area: CatalogArea? = nil,
        rows: (_ store: (CatalogPage.Row) throws -> Void) throws -> Void
    ) throws(ClientError) -> (offers: Int, removed: Int) {
        try write { db in
            if head.full {
                try db.execute("DELETE FROM offers; DELETE FROM retailers; DELETE FROM stores;")
            }
            if head.full || !head.more {
                try Self.setState(db, .catalogPartial, head.more ? "full sync stopped midway" : nil)
            }
            try Self.setState(db, .catalogArea, area.map(Self.areaText))
            var counts = (offers: 0, removed: 0)
            try rows { row in
                switch row {
                case .store(let store): try Self.insert(store, db)
                case .removedStore(let tombstone):
                    try db.run("DELETE FROM stores WHERE id = ?", [.text(tombstone.id.uuidString)])
                case .retailer(let retailer): try Self.insert(retailer, db)
                case .offer(let offer):
                    try Self.insert(offer, db)
                    counts.offers += 1
                case .removed(let tombstone):
                    try db.run("DELETE FROM offers WHERE id = ?", [.text(tombstone.id.uuidString)])
                    counts.removed += 1
                }
            }
            try Self.setState(db, .catalogCursor, head.cursor)
            try Self.setState(db, .catalogETag, etag)
            try Self.setState(db, .serverOffset, String(serverTimeOffset))
            return counts
        }
    }

    static func insert(_ store: RetailStore, _ db: SQLiteDatabase) throws {
        try db.run(
            """
            INSERT OR REPLACE INTO stores (id, retailer_id, store_id, name, latitude, longitude, radius_m, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(store.id.uuidString), .text(store.retailerID.uuidString), .text(store.storeID),
                .text(store.name), .real(store.latitude), .real(store.longitude),
                .integer(Int64(store.radiusMetres)), .real(store.updatedAt.timeIntervalSince1970),
            ])
    }

    static func insert(_ retailer: CatalogRetailer, _ db: SQLiteDatabase) throws {
        try db.run(
            """
            INSERT INTO retailers (id, name, uuid, listing)
            VALUES (?1, ?2, ?3, ',"retailer":' || json_quote(?2) || ',"uuid":"' || ?3 || '"')
            ON CONFLICT (id) DO UPDATE
            SET name = excluded.name, uuid = excluded.uuid, listing = excluded.listing
            """,
            [.text(retailer.id.uuidString), .text(retailer.name), .text(retailer.uuid.uuidString)])
    }

    static func insert(_ offer: Offer, _ db: SQLiteDatabase) throws {
        try db.run(
            """
            INSERT OR REPLACE INTO offers (id, retailer_id, major, minor, title, description, category,
                image_url, starts_at, ends_at, per_shopper_limit, total_limit, reshow_after_s, updated_at,
                presence_required, schedule, shows_per_day, listing)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?17, ?18, ?19,
                '{"id":"' || lower(?1) || '","major":' || ?3 || ',"minor":' || ?4 || ',"title":' || json_quote(?5)
                || ',"description":' || json_quote(?6) || ',"category":' || json_quote(?7)
                || ',"starts_at":' || json_quote(?15) || ',"ends_at":' || json_quote(?16))
            """,
            [
                .text(offer.id.uuidString), .text(offer.retailerID.uuidString),
                .integer(Int64(offer.major)),
                .integer(Int64(offer.minor)), .text(offer.title), .optionalText(offer.description),
                .optionalText(offer.category), .optionalText(offer.imageURL),
                .optionalDate(offer.startsAt),
                .optionalDate(offer.endsAt), .integer(Int64(offer.perShopperLimit)),
                .optionalInteger(offer.totalLimit), .optionalInteger(offer.reshowAfterSeconds),
                .real(offer.updatedAt.timeIntervalSince1970),
                // The listing's dates, as the API writes them.
                .optionalText(offer.startsAt.map(LoyaltyJSON.formatTimestamp)),
                .optionalText(offer.endsAt.map(LoyaltyJSON.formatTimestamp)),
                .integer(offer.presenceRequired == true ? 1 : 0),
                .optionalText(offer.schedule), .optionalInteger(offer.showsPerDay),
            ])
    }

    public func retailers() throws(ClientError) -> [CatalogRetailer] {
        try read { db in
            try db.query("SELECT id, name, uuid FROM retailers ORDER BY name, id").map { row in
                CatalogRetailer(id: try row.uuid(0), name: try row.text(1), uuid: try row.uuid(2))
            }
        }
    }

    /// Every cached store with its retailer, by retailer name then store id.
    public func stores() throws(ClientError) -> [ResolvedStore] {
        try read { db in
            try db.query(
                """
                SELECT s.id, s.retailer_id, s.store_id, s.name, s.latitude, s.longitude, s.radius_m, s.updated_at,
                    r.name, r.uuid
                FROM stores s JOIN retailers r ON r.id = s.retailer_id ORDER BY r.name, s.store_id
                """
            ).map { row in
                let store = RetailStore(
                    id: try row.uuid(0), retailerID: try row.uuid(1), storeID: try row.text(2),
                    name: try row.text(3),
                    latitude: try row.real(4), longitude: try row.real(5),
                    radiusMetres: Int(try row.integer(6)),
                    updatedAt: Date(timeIntervalSince1970: try row.real(7)))
                return ResolvedStore(
                    store: store,
                    retailer: CatalogRetailer(
                        id: store.retailerID, name: try row.text(8), uuid: try row.uuid(9)))
            }
        }
    }

    private static let offerColumns = """
        o.id, o.retailer_id, o.major, o.minor, o.title, o.description, o.category, o.image_url, o.starts_at,
        o.ends_at, o.per_shopper_limit, o.total_limit, o.reshow_after_s, o.updated_at, r.name, r.uuid,
        o.presence_required, o.schedule, o.shows_per_day
        FROM offers o JOIN retailers r ON r.id = o.retailer_id
        """

    private static func resolvedOffer(_ row: SQLiteRow) throws -> ResolvedOffer {
        let offer = Offer(
            id: try row.uuid(0), retailerID: try row.uuid(1), major: UInt16(try row.integer(2)),
            minor: UInt16(try row.integer(3)), title: try row.text(4), description: row.optionalText(5),
            category: row.optionalText(6), imageURL: row.optionalText(7), startsAt: row.optionalDate(8),
            endsAt: row.optionalDate(9), perShopperLimit: Int(try row.integer(10)),
            totalLimit: row.optionalInteger(11).map(Int.init),
            reshowAfterSeconds: row.optionalInteger(12).map(Int.init), schedule: row.optionalText(17),
            showsPerDay: row.optionalInteger(18).map(Int.init), updatedAt: Date(timeIntervalSince1970: try row.real(13)),
            presenceRequired: try row.integer(16) != 0 ? true : nil)
        let retailer = CatalogRetailer(
            id: offer.retailerID, name: try row.text(14), uuid: try row.uuid(15))
        return ResolvedOffer(offer: offer, retailer: retailer)
    }

    /// Every cached offer, by retailer name then beacon; only one retailer's when `retailerName` is set.
    public func offers(retailerName: String? = nil) throws(ClientError) -> [ResolvedOffer] {
        try read { db in
            let rows =
                if let retailerName {
                    try db.query(
                        "SELECT \(Self.offerColumns) WHERE r.name = ? COLLATE NOCASE ORDER BY r.name, o.major, o.minor",
                        [.text(retailerName)])
                } else {
                    try db.query("SELECT \(Self.offerColumns) ORDER BY r.name, o.major, o.minor")
                }
            return try rows.map(Self.resolvedOffer)
        }
    }


    public var offerCount: Int {
        get throws(ClientError) {
            try read { db in Int(try db.query("SELECT count(*) FROM offers").first?.integer(0) ?? 0) }
        }
    }

    public func offer(id: UUID) throws(ClientError) -> ResolvedOffer? {
        try read { db in
            try db.query("SELECT \(Self.offerColumns) WHERE o.id = ?", [.text(id.uuidString)]).first
                .map(Self.resolvedOffer)
        }
    }

    /// The offer a beacon announces.
    public func offer(uuid: UUID, major: UInt16, minor: UInt16) throws(ClientError) -> ResolvedOffer? {
        try read { db in
            try db.query(
                "SELECT \(Self.offerColumns) WHERE r.uuid = ? AND o.major = ? AND o.minor = ?",
                [.text(uuid.uuidString), .integer(Int64(major)), .integer(Int64(minor))]
            ).first.map(Self.resolvedOffer)
        }
    }
}
