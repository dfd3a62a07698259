import Foundation
import JSONCoding
import LoyaltyAPI
import SQLite

// Cursors, ETag, server time offset and other sync state, in `sync_state`.

extension OfferCache {
    // MARK: sync state

    enum StateKey: String {
        case catalogCursor = "catalog_cursor"
        case catalogETag = "catalog_etag"
        case seenCursor = "seen_cursor"
        case serverOffset = "server_offset_s"
        case lastSync = "last_sync_at"
        /// `LAT,LON,KM` when the cached catalog is the part around a point (`sync --near`).
        case catalogArea = "catalog_area"
        /// Set while the cache holds only the first pages of a full catalog (see `apply`).
        case catalogPartial = "catalog_partial"
        /// The account's `AccountPreferences` as JSON, as the last sync or change fetched them.
        case preferences
        /// `working-set` when the cache carries the directory and its working set's offers, `all` when it carries the
        /// whole catalog (`sync --all`); none in a new cache (a working set from its first sync) or one from before.
        case catalogScope = "catalog_scope"
        case directoryETag = "directory_etag"
        /// The directory's bucket count, which a heard UUID's bucket is asked with.
        case directoryBuckets = "directory_buckets"
        /// `LAT,LON,KM`: where a working set's retailers are near (`sync --near` with the working set).
        case homeArea = "home_area"
    }

    func state(_ key: StateKey) throws(ClientError) -> String? {
        try read { db in
            try db.query("SELECT value FROM sync_state WHERE key = ?", [.text(key.rawValue)]).first?.text(
                0)
        }
    }

    static func setState(_ db: SQLiteDatabase, _ key: StateKey, _ value: String?) throws {
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
    public var catalogArea: CatalogArea? { get throws(ClientError) { try area(.catalogArea) } }

    /// The area stored under `key` as `LAT,LON,KM`.
    func area(_ key: StateKey) throws(ClientError) -> CatalogArea? {
        guard let text = try state(key) else { return nil }
        let parts = text.split(separator: ",")
        guard parts.count == 3, let radius = Double(parts[2]) else { return nil }
        return try? CatalogArea(near: "\(parts[0]),\(parts[1])", radiusKilometres: String(radius))
    }

    static func areaText(_ area: CatalogArea) -> String { "\(area.latitude),\(area.longitude),\(area.radiusKilometres)" }

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

    /// The account's preferences as last fetched; nil before the first sync that fetched them.
    public var preferences: AccountPreferences? {
        get throws(ClientError) {
            guard let text = try state(.preferences) else { return nil }
            return try? LoyaltyJSON.decoder().decode(AccountPreferences.self, from: Data(text.utf8))
        }
    }

    public func setPreferences(_ preferences: AccountPreferences) throws(ClientError) {
        let text: String
        do {
            text = String(decoding: try LoyaltyJSON.encoder().encode(preferences), as: UTF8.self)
        } catch {
            throw .io("cannot encode the preferences: \(error)")
        }
        try write { db in try Self.setState(db, .preferences, text) }
    }

    public func noteSyncFinished(at date: Date) throws(ClientError) {
        try write { db in try Self.setState(db, .lastSync, String(date.timeIntervalSince1970)) }
    }
}
