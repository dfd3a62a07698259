import Foundation
import LoyaltyAPI
import SQLite

/// The client's SQLite cache: the catalog copy, the account's seen set, the outbox of seen items not
/// yet acknowledged by the server, redemptions with their idempotency keys, and sync state.
///
/// Every state change is one transaction, so a process killed at any point leaves the file as it was
/// before or after the change. Outbox rows are deleted only after the server acknowledged them;
/// pushing one twice is harmless (the server's seen set is a union).
public final class OfferCache {
    /// `PRAGMA user_version` of the newest schema; `migrations[n]` upgrades version n to n + 1.
    public static var schemaVersion: Int { migrations.count }

    private static let migrations: [String] = [
        """
        CREATE TABLE sync_state (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE retailers (
            id TEXT PRIMARY KEY, name TEXT NOT NULL, uuid TEXT NOT NULL,
            -- The retailer's part of its offers' `offers --json` lines.
            listing TEXT NOT NULL) WITHOUT ROWID;
        CREATE INDEX retailers_by_uuid ON retailers (uuid);
        -- Keyed by beacon, so listing in beacon order reads the table front to back.
        CREATE TABLE offers (
            retailer_id TEXT NOT NULL, major INTEGER NOT NULL, minor INTEGER NOT NULL, id TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL, description TEXT, category TEXT, image_url TEXT,
            starts_at REAL, ends_at REAL, per_shopper_limit INTEGER NOT NULL, total_limit INTEGER,
            reshow_after_s INTEGER, updated_at REAL NOT NULL,
            -- The start of the offer's `offers --json` line, rendered once at sync.
            listing TEXT NOT NULL,
            PRIMARY KEY (retailer_id, major, minor)) WITHOUT ROWID;
        -- The latest time each offer was seen by the account, on any device (server time).
        CREATE TABLE seen (offer_id TEXT PRIMARY KEY, seen_at REAL NOT NULL) WITHOUT ROWID;
        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT, offer_id TEXT NOT NULL, seen_at REAL NOT NULL);
        -- A row is written before the request is sent, so a retry reuses its key.
        CREATE TABLE redemptions (
            idempotency_key TEXT PRIMARY KEY, offer_id TEXT NOT NULL, requested_at REAL NOT NULL,
            redemption_id TEXT, code TEXT, redeemed_at REAL) WITHOUT ROWID;
        CREATE UNIQUE INDEX one_pending_redemption_per_offer ON redemptions (offer_id)
            WHERE redemption_id IS NULL;
        """,
        """
        -- Stores and their geofences, from the catalog like offers.
        CREATE TABLE stores (
            id TEXT PRIMARY KEY, retailer_id TEXT NOT NULL, store_id TEXT NOT NULL, name TEXT NOT NULL,
            latitude REAL NOT NULL, longitude REAL NOT NULL, radius_m INTEGER NOT NULL, updated_at REAL NOT NULL
        ) WITHOUT ROWID;
        """,
    ]

    public let file: URL
    private let database: SQLiteDatabase

    /// Opens (creating and migrating) the cache at `file`.
    public init(file: URL) throws(ClientError) {
        self.file = file
        try StateFile.makeDirectory(file.deletingLastPathComponent())
        do {
            database = try SQLiteDatabase(path: file.path)
        } catch {
            throw Self.clientError(error, file: file)
        }
        try migrate()
    }

    /// Moves a damaged cache aside (`cache.sqlite.corrupt`) and starts an empty one; what it held comes
    /// back from the server at the next full sync.
    public static func discard(file: URL) throws(ClientError) {
        for suffix in ["-wal", "-shm", "-journal"] {
            try StateFile.remove(URL(fileURLWithPath: file.path + suffix))
        }
        if FileManager.default.fileExists(atPath: file.path),
            rename(file.path, file.path + ".corrupt") != 0
        {
            throw .io("cannot move the damaged cache \(file.path) aside: remove it by hand")
        }
    }

    private func migrate() throws(ClientError) {
        try write { db in
            let version = try db.userVersion
            guard version <= Self.schemaVersion else {
                throw ClientError.corruptCache(
                    "the cache \(file.path) was written by a newer loyalty (schema \(version)): upgrade, or run `loyalty sync --full` to rebuild it"
                )
            }
            for migration in Self.migrations[version...] {
                try db.execute(migration)
            }
            try db.setUserVersion(Self.schemaVersion)
        }
    }

    // MARK: sync state

    private enum StateKey: String {
        case catalogCursor = "catalog_cursor"
        case catalogETag = "catalog_etag"
        case seenCursor = "seen_cursor"
        case serverOffset = "server_offset_s"
        case lastSync = "last_sync_at"
        /// `LAT,LON,KM` when the cached catalog is the part around a point (`sync --near`).
        case catalogArea = "catalog_area"
        /// Set while the cache holds only the first pages of a full catalog (see `apply`).
        case catalogPartial = "catalog_partial"
    }

    private func state(_ key: StateKey) throws(ClientError) -> String? {
        try read { db in
            try db.query("SELECT value FROM sync_state WHERE key = ?", [.text(key.rawValue)]).first?.text(
                0)
        }
    }

    private static func setState(_ db: SQLiteDatabase, _ key: StateKey, _ value: String?) throws {
        if let value {
            try db.run(
                "INSERT INTO sync_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [.text(key.rawValue), .text(value)])
        } else {
            try db.run("DELETE FROM sync_state WHERE key = ?", [.text(key.rawValue)])
        }
    }

    public var catalogCursor: String? { get throws(ClientError) { try state(.catalogCursor) } }
    public var catalogETag: String? { get throws(ClientError) { try state(.catalogETag) } }
    public var seenCursor: String? { get throws(ClientError) { try state(.seenCursor) } }

    /// Whether the cache holds only the first pages of a full catalog: a full sync stopped midway.
    /// The next sync goes on from the last page stored.
    public var catalogIsPartial: Bool {
        get throws(ClientError) { try state(.catalogPartial) != nil }
    }

    /// The area the cached catalog covers; nil when it is the whole catalog.
    public var catalogArea: CatalogArea? {
        get throws(ClientError) {
            guard let text = try state(.catalogArea) else { return nil }
            let parts = text.split(separator: ",")
            guard parts.count == 3, let radius = Double(parts[2]) else { return nil }
            return try? CatalogArea(near: "\(parts[0]),\(parts[1])", radiusKilometres: String(radius))
        }
    }

    /// Server time minus device time, in seconds, as learned at the last catalog sync (0 before).
    public var serverTimeOffset: Double {
        get throws(ClientError) { try state(.serverOffset).flatMap(Double.init) ?? 0 }
    }

    /// When the last sync finished, by the device clock.
    public var lastSync: Date? {
        get throws(ClientError) {
            try state(.lastSync).flatMap(Double.init).map(Date.init(timeIntervalSince1970:))
        }
    }

    /// Forgets the catalog and seen cursors so the next sync fetches everything again.
    public func forgetCursors() throws(ClientError) {
        try write { db in
            for key in [StateKey.catalogCursor, .catalogETag, .seenCursor, .catalogArea] {
                try Self.setState(db, key, nil)
            }
        }
    }

    public func noteSyncFinished(at date: Date) throws(ClientError) {
        try write { db in try Self.setState(db, .lastSync, String(date.timeIntervalSince1970)) }
    }

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
        try write { db in
            if page.full {
                try db.execute("DELETE FROM offers; DELETE FROM retailers; DELETE FROM stores;")
            }
            if page.full || !page.more {
                try Self.setState(db, .catalogPartial, page.more ? "full sync stopped midway" : nil)
            }
            for store in page.stores {
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
            for tombstone in page.removedStores {
                try db.run("DELETE FROM stores WHERE id = ?", [.text(tombstone.id.uuidString)])
            }
            try Self.setState(
                db, .catalogArea,
                area.map { "\($0.latitude),\($0.longitude),\($0.radiusKilometres)" })
            for retailer in page.retailers {
                try db.run(
                    """
                    INSERT INTO retailers (id, name, uuid, listing)
                    VALUES (?1, ?2, ?3, ',"retailer":' || json_quote(?2) || ',"uuid":"' || ?3 || '"')
                    ON CONFLICT (id) DO UPDATE
                    SET name = excluded.name, uuid = excluded.uuid, listing = excluded.listing
                    """,
                    [.text(retailer.id.uuidString), .text(retailer.name), .text(retailer.uuid.uuidString)])
            }
            let insert = """
                INSERT OR REPLACE INTO offers (id, retailer_id, major, minor, title, description, category,
                    image_url, starts_at, ends_at, per_shopper_limit, total_limit, reshow_after_s, updated_at, listing)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,
                    '{"id":"' || lower(?1) || '","major":' || ?3 || ',"minor":' || ?4 || ',"title":' || json_quote(?5)
                    || ',"description":' || json_quote(?6) || ',"category":' || json_quote(?7)
                    || ',"starts_at":' || json_quote(\(Self.sqlTimestamp("?9")))
                    || ',"ends_at":' || json_quote(\(Self.sqlTimestamp("?10"))))
                """
            for offer in page.offers {
                try db.run(
                    insert,
                    [
                        .text(offer.id.uuidString), .text(offer.retailerID.uuidString),
                        .integer(Int64(offer.major)),
                        .integer(Int64(offer.minor)), .text(offer.title), .optionalText(offer.description),
                        .optionalText(offer.category), .optionalText(offer.imageURL),
                        .optionalDate(offer.startsAt),
                        .optionalDate(offer.endsAt), .integer(Int64(offer.perShopperLimit)),
                        .optionalInteger(offer.totalLimit), .optionalInteger(offer.reshowAfterSeconds),
                        .real(offer.updatedAt.timeIntervalSince1970),
                    ])
            }
            for tombstone in page.removed {
                try db.run("DELETE FROM offers WHERE id = ?", [.text(tombstone.id.uuidString)])
            }
            try Self.setState(db, .catalogCursor, page.cursor)
            try Self.setState(db, .catalogETag, etag)
            try Self.setState(db, .serverOffset, String(serverTimeOffset))
        }
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
        o.ends_at, o.per_shopper_limit, o.total_limit, o.reshow_after_s, o.updated_at, r.name, r.uuid
        FROM offers o JOIN retailers r ON r.id = o.retailer_id
        """

    private static func resolvedOffer(_ row: SQLiteRow) throws -> ResolvedOffer {
        let offer = Offer(
            id: try row.uuid(0), retailerID: try row.uuid(1), major: UInt16(try row.integer(2)),
            minor: UInt16(try row.integer(3)), title: try row.text(4), description: row.optionalText(5),
            category: row.optionalText(6), imageURL: row.optionalText(7), startsAt: row.optionalDate(8),
            endsAt: row.optionalDate(9), perShopperLimit: Int(try row.integer(10)),
            totalLimit: row.optionalInteger(11).map(Int.init),
            reshowAfterSeconds: row.optionalInteger(12).map(Int.init),
            updatedAt: Date(timeIntervalSince1970: try row.real(13)))
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

    /// `2026-01-31T09:00:00Z` (a fraction only when there is one) of a REAL column or parameter, or NULL.
    private static func sqlTimestamp(_ value: String) -> String {
        """
        CASE WHEN \(value) = CAST(\(value) AS INTEGER) THEN strftime('%Y-%m-%dT%H:%M:%SZ', \(value), 'unixepoch')
             ELSE strftime('%Y-%m-%dT%H:%M:%fZ', \(value), 'unixepoch') END
        """
    }

    /// Each cached offer as one JSON object (`offers --json`), rendered at sync but for `seen`, so that
    /// a catalog of 100,000 offers lists fast. Keys, in order: id, major, minor, title, description,
    /// category, starts_at, ends_at, retailer, uuid, seen.
    public func forEachOfferJSON(retailerName: String? = nil, _ body: (String) -> Void)
        throws(ClientError)
    {
        let sql = """
            SELECT o.listing || r.listing
                || CASE WHEN EXISTS (SELECT 1 FROM seen s WHERE s.offer_id = o.id) THEN ',"seen":true}'
                   ELSE ',"seen":false}' END
            FROM offers o JOIN retailers r ON r.id = o.retailer_id
            \(retailerName == nil ? "" : "WHERE r.name = ? COLLATE NOCASE")
            ORDER BY o.retailer_id, o.major, o.minor
            """
        try read { db in
            try db.forEachRow(sql, retailerName.map { [.text($0)] } ?? []) { row in
                if let line = row[0].text { body(line) }
            }
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

    // MARK: seen set and outbox

    /// The latest known seen time of each offer the account has seen.
    public func seen() throws(ClientError) -> [UUID: Date] {
        try read { db in
            var seen: [UUID: Date] = [:]
            for row in try db.query("SELECT offer_id, seen_at FROM seen") {
                seen[try row.uuid(0)] = Date(timeIntervalSince1970: try row.real(1))
            }
            return seen
        }
    }

    /// Records offers this device showed: the seen set and the outbox change together.
    public func recordShown(_ items: [SeenItem]) throws(ClientError) {
        try write { db in
            for item in items {
                try Self.mergeSeen(db, item)
                try db.run(
                    "INSERT INTO outbox (offer_id, seen_at) VALUES (?, ?)",
                    [.text(item.offerID.uuidString), .real(item.seenAt.timeIntervalSince1970)])
            }
        }
    }

    /// Claims an offer for showing at `shownAt` (the scan's server time), as one transaction: false when the
    /// seen set (written by any process on this device, or synced) has it and `reshowAfter` seconds have not
    /// passed since; otherwise records `shownAt` in the seen set and `reportedAt` in the outbox, and returns
    /// true. So scans running at once on one device show each offer once. The two times differ for a replay,
    /// whose timeline runs ahead of the clock: the server is told the real moment.
    public func claimShown(
        _ offerID: UUID, shownAt: Date, reportedAt: Date, reshowAfter: Int?
    ) throws(ClientError) -> Bool {
        try write { db in
            if let row = try db.query("SELECT seen_at FROM seen WHERE offer_id = ?", [.text(offerID.uuidString)]).first {
                let seenAt = Date(timeIntervalSince1970: try row.real(0))
                guard let reshowAfter, shownAt.timeIntervalSince(seenAt) >= Double(reshowAfter) else { return false }
            }
            try Self.mergeSeen(db, SeenItem(offerID: offerID, seenAt: shownAt))
            try db.run(
                "INSERT INTO outbox (offer_id, seen_at) VALUES (?, ?)",
                [.text(offerID.uuidString), .real(reportedAt.timeIntervalSince1970)])
            return true
        }
    }

    private static func mergeSeen(_ db: SQLiteDatabase, _ item: SeenItem) throws {
        try db.run(
            """
            INSERT INTO seen (offer_id, seen_at) VALUES (?, ?)
            ON CONFLICT (offer_id) DO UPDATE SET seen_at = max(seen_at, excluded.seen_at)
            """,
            [.text(item.offerID.uuidString), .real(item.seenAt.timeIntervalSince1970)])
    }

    /// The oldest unsent seen items, with the outbox position to acknowledge them by.
    public func outbox(limit: Int) throws(ClientError) -> (items: [SeenItem], through: Int64) {
        try read { db in
            var items: [SeenItem] = []
            var through: Int64 = 0
            for row in try db.query(
                "SELECT id, offer_id, seen_at FROM outbox ORDER BY id LIMIT ?", [.integer(Int64(limit))])
            {
                through = try row.integer(0)
                items.append(
                    SeenItem(offerID: try row.uuid(1), seenAt: Date(timeIntervalSince1970: try row.real(2))))
            }
            return (items, through)
        }
    }

    public var outboxCount: Int {
        get throws(ClientError) {
            try read { db in Int(try db.query("SELECT count(*) FROM outbox").first?.integer(0) ?? 0) }
        }
    }

    /// The server acknowledged every outbox item up to `id`.
    public func acknowledgeOutbox(through id: Int64) throws(ClientError) {
        try write { db in try db.run("DELETE FROM outbox WHERE id <= ?", [.integer(id)]) }
    }

    /// Merges a page of the account's seen set and moves the seen cursor, in one transaction.
    public func apply(_ page: SeenPage) throws(ClientError) {
        try write { db in
            for item in page.items { try Self.mergeSeen(db, item) }
            try Self.setState(db, .seenCursor, page.cursor)
        }
    }

    // MARK: redemptions

    /// A redemption as the cache knows it: pending until the server's answer is stored.
    public struct RedemptionRecord: Sendable, Equatable {
        public var idempotencyKey: String
        public var offerID: UUID
        public var requestedAt: Date
        public var redemption: Redemption?
    }

    /// The key of the unanswered redemption of `offerID`, or a new one stored before it is used.
    public func idempotencyKey(forRedeeming offerID: UUID, now: Date, newKey: () -> String)
        throws(ClientError)
        -> String
    {
        try write { db in
            if let pending = try db.query(
                "SELECT idempotency_key FROM redemptions WHERE offer_id = ? AND redemption_id IS NULL",
                [.text(offerID.uuidString)]
            ).first {
                return try pending.text(0)
            }
            let key = newKey()
            try db.run(
                "INSERT INTO redemptions (idempotency_key, offer_id, requested_at) VALUES (?, ?, ?)",
                [.text(key), .text(offerID.uuidString), .real(now.timeIntervalSince1970)])
            return key
        }
    }

    public func completeRedemption(key: String, _ redemption: Redemption) throws(ClientError) {
        try write { db in
            try db.run(
                "UPDATE redemptions SET redemption_id = ?, code = ?, redeemed_at = ? WHERE idempotency_key = ?",
                [
                    .text(redemption.id.uuidString), .text(redemption.code),
                    .real(redemption.redeemedAt.timeIntervalSince1970), .text(key),
                ])
        }
    }

    /// The server refused for good (limit reached, offer gone): a new attempt gets a new key.
    public func abandonRedemption(key: String) throws(ClientError) {
        try write { db in
            try db.run(
                "DELETE FROM redemptions WHERE idempotency_key = ? AND redemption_id IS NULL", [.text(key)])
        }
    }

    /// Every redemption this device made or is still trying to make, newest first.
    public func redemptions() throws(ClientError) -> [RedemptionRecord] {
        try read { db in
            try db.query(
                "SELECT idempotency_key, offer_id, requested_at, redemption_id, code, redeemed_at FROM redemptions ORDER BY requested_at DESC"
            ).map { row in
                var redemption: Redemption? = nil
                if let id = row.optionalText(3), let id = UUID(uuidString: id),
                    let code = row.optionalText(4),
                    let redeemedAt = row.optionalDate(5)
                {
                    redemption = Redemption(
                        id: id, offerID: try row.uuid(1), code: code, redeemedAt: redeemedAt)
                }
                return RedemptionRecord(
                    idempotencyKey: try row.text(0), offerID: try row.uuid(1),
                    requestedAt: Date(timeIntervalSince1970: try row.real(2)), redemption: redemption)
            }
        }
    }

    // MARK: plumbing

    private func read<T>(_ body: (SQLiteDatabase) throws -> T) throws(ClientError) -> T {
        do {
            return try body(database)
        } catch {
            throw Self.clientError(error, file: file)
        }
    }

    @discardableResult
    private func write<T>(_ body: (SQLiteDatabase) throws -> T) throws(ClientError) -> T {
        do {
            return try database.transaction { try body(database) }
        } catch {
            throw Self.clientError(error, file: file)
        }
    }

    static func clientError(_ error: any Error, file: URL) -> ClientError {
        if let error = error as? ClientError { return error }
        if case .corrupt = error as? SQLiteError {
            return .corruptCache(
                "the cache \(file.path) is damaged: run `loyalty sync --full` to rebuild it from the server"
            )
        }
        return .io("the cache \(file.path) failed: \(error)")
    }
}

extension SQLiteValue {
    fileprivate static func optionalText(_ value: String?) -> SQLiteValue {
        value.map { .text($0) } ?? .null
    }
    fileprivate static func optionalInteger(_ value: Int?) -> SQLiteValue {
        value.map { .integer(Int64($0)) } ?? .null
    }
    fileprivate static func optionalDate(_ value: Date?) -> SQLiteValue {
        value.map { .real($0.timeIntervalSince1970) } ?? .null
    }
}

/// Typed reads of the cache's own rows; a value of the wrong type means the file was tampered with.
extension SQLiteRow {
    fileprivate func text(_ index: Int) throws(SQLiteError) -> String {
        guard let value = self[index].text else { throw mismatch(index) }
        return value
    }

    fileprivate func integer(_ index: Int) throws(SQLiteError) -> Int64 {
        guard let value = self[index].integer else { throw mismatch(index) }
        return value
    }

    fileprivate func real(_ index: Int) throws(SQLiteError) -> Double {
        guard let value = self[index].real else { throw mismatch(index) }
        return value
    }

    fileprivate func uuid(_ index: Int) throws(SQLiteError) -> UUID {
        guard let value = self[index].text.flatMap(UUID.init(uuidString:)) else {
            throw mismatch(index)
        }
        return value
    }

    fileprivate func optionalText(_ index: Int) -> String? { self[index].text }
    fileprivate func optionalInteger(_ index: Int) -> Int64? { self[index].integer }
    fileprivate func optionalDate(_ index: Int) -> Date? {
        self[index].real.map(Date.init(timeIntervalSince1970:))
    }

    private func mismatch(_ index: Int) -> SQLiteError {
        .failed(code: 20, message: "unexpected value in column \(index)", sql: "")  // SQLITE_MISMATCH
    }
}
