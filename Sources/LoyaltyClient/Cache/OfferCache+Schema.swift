import Foundation
import SQLite

// The cache's tables and the migrations from each older schema.

extension OfferCache {
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
        // When a till accepted the code (server time), learned at sync.
        "ALTER TABLE redemptions ADD COLUMN accepted_at REAL;",
        """
        -- An offer claimed for showing whose line may not have gone out yet, and the process that claimed it
        -- (ProcessIdentity): a row left by a process that is gone is an offer seen and never shown.
        CREATE TABLE showing (offer_id TEXT PRIMARY KEY, claimant TEXT NOT NULL) WITHOUT ROWID;
        """,
        """
        -- What a scan heard of secure beacons and could not send (offline, or the service unreachable), for the
        -- next sync: an Eddystone EID (16 hex digits), or a rotating iBeacon (uuid, major, minor). Server time.
        CREATE TABLE sightings (
            id INTEGER PRIMARY KEY AUTOINCREMENT, eid TEXT, uuid TEXT, major INTEGER, minor INTEGER,
            heard_at REAL NOT NULL, rssi INTEGER);
        -- 1: the offer's beacon is secure, and its offer shows only for a beacon the service resolved. The offers
        -- cached before it was known come again at a full sync: the cursor is forgotten.
        ALTER TABLE offers ADD COLUMN presence_required INTEGER NOT NULL DEFAULT 0;
        DELETE FROM sync_state WHERE key IN ('catalog_cursor', 'catalog_etag');
        """,
        """
        -- An offer's weekly hours (OfferSchedule). The cached offers came without theirs: the next sync fetches the
        -- whole catalog again.
        ALTER TABLE offers ADD COLUMN schedule TEXT;
        DELETE FROM sync_state WHERE key IN ('catalog_cursor', 'catalog_etag');
        """,
        """
        -- The directory of every retailer (sync --working-set): whose region a UUID is, its bucket, its head, and
        -- its stores' geofences.
        CREATE TABLE directory (
            id TEXT PRIMARY KEY, name TEXT NOT NULL, uuid TEXT NOT NULL, bucket INTEGER NOT NULL,
            head INTEGER NOT NULL) WITHOUT ROWID;
        CREATE INDEX directory_by_uuid ON directory (uuid);
        CREATE TABLE directory_stores (
            retailer_id TEXT NOT NULL, latitude REAL NOT NULL, longitude REAL NOT NULL, radius_m INTEGER NOT NULL);
        -- The retailers whose offers this device carries: the cursor of its copy of each (NULL: not fetched yet),
        -- the head that copy is at, and when the retailer was last near, heard or followed (device time).
        CREATE TABLE carried (
            retailer_id TEXT PRIMARY KEY, cursor TEXT, head INTEGER NOT NULL DEFAULT -1,
            wanted_at REAL NOT NULL) WITHOUT ROWID;
        CREATE TABLE followed (retailer_id TEXT PRIMARY KEY) WITHOUT ROWID;
        -- Proximity UUIDs a scan heard whose retailer this device does not carry yet: fetched at the next sync.
        CREATE TABLE heard (uuid TEXT PRIMARY KEY, heard_at REAL NOT NULL) WITHOUT ROWID;
        """,
        """
        -- An offer's cap of shows per shopper per UTC day (NULL: once ever). The cached offers came without theirs:
        -- the next sync fetches the whole catalog again.
        ALTER TABLE offers ADD COLUMN shows_per_day INTEGER;
        DELETE FROM sync_state WHERE key IN ('catalog_cursor', 'catalog_etag');
        -- The account's shows of such an offer per UTC day, on all its devices: the larger of this device's count
        -- and the server's at the last sync.
        UPDATE carried SET cursor = NULL, head = -1;
        CREATE TABLE day_shows (
            offer_id TEXT NOT NULL, day INTEGER NOT NULL, shows INTEGER NOT NULL,
            PRIMARY KEY (offer_id, day)) WITHOUT ROWID;
        """,
    ]

    func migrate() throws(ClientError) {
        try write { db in
            let version = try db.userVersion
            guard version <= Self.schemaVersion else {
                throw ClientError.corruptCache(path: file.path, newerSchema: version)
            }
            // An up-to-date cache is left as it is: setting the version anyway wrote the file's first page at
            // every start, and so the log with its fsyncs, even for a command that only reads.
            guard version < Self.schemaVersion else { return }
            for migration in Self.migrations[version...] {
                try db.execute(migration)
            }
            try db.setUserVersion(Self.schemaVersion)
        }
    }
}
