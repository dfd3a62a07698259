-- loyalty-server schema: the whole current schema, which the server applies to an empty database (see
-- SchemaMigration.swift). A database made by an earlier release is brought here by migrations/, in order;
-- a change to this file needs a migration that makes the same change.

-- The catalog change feed. Every write to a retailer's, an offer's or a store's catalog columns takes the next
-- `version` by incrementing the single row below. The row lock that UPDATE takes is held until the
-- writer commits, so a second writer waits and gets its version only after the first committed:
-- versions commit in order, and a reader that has seen version N has seen every version below N.
-- (A plain sequence would not do: nextval values commit out of order and a cursor would skip the
-- late one.) Readers cap what they return at the `version` they read here. Catalog writes are rare
-- retailer operations, so serialising them costs nothing that matters.
-- `generation` changes when the database is recreated, so cursors from elsewhere answer 410;
-- `purged_through` is the highest version of a tombstone deleted for good: older cursors answer 410.
CREATE TABLE catalog_feed (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    generation uuid NOT NULL DEFAULT gen_random_uuid(),
    version bigint NOT NULL DEFAULT 0,
    purged_through bigint NOT NULL DEFAULT 0
);
INSERT INTO catalog_feed DEFAULT VALUES;

-- A write that assigned its rows' versions itself (a bulk import takes a block of versions with one UPDATE of
-- this row, under the same lock) keeps them: one UPDATE of the row per changed row would make a write of N
-- rows walk N dead versions of it each time.
CREATE FUNCTION catalog_feed_next_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (TG_OP = 'INSERT' AND NEW.version IS NOT NULL)
        OR (TG_OP = 'UPDATE' AND NEW.version IS DISTINCT FROM OLD.version) THEN
        RETURN NEW;
    END IF;
    UPDATE catalog_feed SET version = version + 1 WHERE singleton RETURNING version INTO NEW.version;
    RETURN NEW;
END
$$;

CREATE TABLE retailers (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name text NOT NULL,
    uuid uuid NOT NULL UNIQUE,
    api_key_hash bytea NOT NULL UNIQUE,  -- SHA-256 of the key; the key itself is never stored
    created_at timestamptz NOT NULL,
    version bigint NOT NULL,
    -- The key before the last rotation: accepted until the new key's first use or until it expires (24 h).
    previous_api_key_hash bytea UNIQUE,
    previous_key_expires_at timestamptz,
    -- The name as it reads (RetailerName.readingKey): no two retailers' names read alike.
    name_key text
);
CREATE INDEX retailers_version ON retailers (version);
CREATE UNIQUE INDEX retailers_name_key ON retailers (name_key);
CREATE TRIGGER retailers_feed_version
    BEFORE INSERT OR UPDATE OF name, uuid ON retailers
    FOR EACH ROW EXECUTE FUNCTION catalog_feed_next_version();

-- A deleted offer stays as a tombstone (deleted_at set) so deltas can report it; a new offer at the
-- same beacon is a new row with a new id, hence the partial unique index.
CREATE TABLE offers (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    major integer NOT NULL CHECK (major BETWEEN 0 AND 65535),
    minor integer NOT NULL CHECK (minor BETWEEN 0 AND 65535),
    title text NOT NULL,
    description text,
    category text,
    image_url text,
    starts_at timestamptz,
    ends_at timestamptz,
    per_shopper_limit integer NOT NULL DEFAULT 1 CHECK (per_shopper_limit >= 1),
    total_limit integer CHECK (total_limit >= 1),
    reshow_after_s integer CHECK (reshow_after_s >= 0),
    updated_at timestamptz NOT NULL,
    deleted_at timestamptz,
    version bigint NOT NULL,
    created_at timestamptz,  -- no sighting of the offer is older (NULL: made before this was kept)
    -- The weekly hours it is on in the store's time zone (OfferSchedule: "Europe/London: weekdays 17:00-19:00");
    -- NULL: always. Checked by the server on redemption and by the client before showing.
    schedule text,
    -- Times one account may be shown it in a UTC day (offer_day_shows counts them); NULL: once ever.
    shows_per_day integer CHECK (shows_per_day BETWEEN 1 AND 100),
    CHECK (ends_at > starts_at)
);
CREATE UNIQUE INDEX offers_live_beacon ON offers (retailer_id, major, minor)
    WHERE deleted_at IS NULL;
CREATE INDEX offers_version ON offers (version);
-- A retailer's part of the feed, in version order: a working set's or a bucket's pages, and a retailer's head.
CREATE INDEX offers_retailer_version ON offers (retailer_id, version);
CREATE TRIGGER offers_feed_version
    BEFORE INSERT OR UPDATE OF title, description, category, image_url, starts_at, ends_at,
        per_shopper_limit, total_limit, reshow_after_s, schedule, shows_per_day, deleted_at ON offers
    FOR EACH ROW EXECUTE FUNCTION catalog_feed_next_version();

-- A bulk import's rows, staged (checked as offers checks them) before any is applied to offers in batches of
-- bounded transactions, so that another retailer's write waits for one batch, not the whole file; applied
-- whole once staged (Database.importOffers).
CREATE TABLE offer_import_rows (
    import_id uuid NOT NULL,
    position integer NOT NULL,
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    major integer NOT NULL CHECK (major BETWEEN 0 AND 65535),
    minor integer NOT NULL CHECK (minor BETWEEN 0 AND 65535),
    title text NOT NULL,
    description text,
    category text,
    image_url text,
    starts_at timestamptz,
    ends_at timestamptz,
    per_shopper_limit integer NOT NULL CHECK (per_shopper_limit >= 1),
    total_limit integer CHECK (total_limit >= 1),
    reshow_after_s integer CHECK (reshow_after_s >= 0),
    schedule text,
    shows_per_day integer CHECK (shows_per_day BETWEEN 1 AND 100),
    CHECK (ends_at > starts_at),
    PRIMARY KEY (import_id, position)
);
CREATE INDEX offer_import_rows_retailer ON offer_import_rows (retailer_id);

-- A retailer's stores and their geofences. Like offers: a removed store stays as a tombstone for the
-- feed; `store_id` is the retailer's own key, unique among its live stores.
CREATE TABLE stores (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    store_id text NOT NULL,
    name text NOT NULL,
    latitude double precision NOT NULL CHECK (latitude BETWEEN -90 AND 90),
    longitude double precision NOT NULL CHECK (longitude BETWEEN -180 AND 180),
    radius_m integer NOT NULL CHECK (radius_m BETWEEN 10 AND 10000),
    updated_at timestamptz NOT NULL,
    deleted_at timestamptz,
    version bigint NOT NULL
);
CREATE UNIQUE INDEX stores_live_id ON stores (retailer_id, store_id) WHERE deleted_at IS NULL;
CREATE INDEX stores_version ON stores (version);
CREATE INDEX stores_retailer_version ON stores (retailer_id, version);
-- `near` queries: a latitude range scan of this index, longitude checked in the index, then the exact
-- distance below on the few rows left (no PostGIS needed).
CREATE INDEX stores_location ON stores (latitude, longitude) WHERE deleted_at IS NULL;
CREATE TRIGGER stores_feed_version
    BEFORE INSERT OR UPDATE OF name, latitude, longitude, radius_m, deleted_at ON stores
    FOR EACH ROW EXECUTE FUNCTION catalog_feed_next_version();

-- The bucket of a proximity UUID among `buckets`: the first 32 bits of its SHA-256, modulo the count. A device that
-- heard a UUID asks for its bucket and gets every retailer in it, so the service learns one of those, not which.
CREATE FUNCTION retailer_bucket(proximity_uuid uuid, buckets integer) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT (('x' || left(encode(sha256(uuid_send(proximity_uuid)), 'hex'), 8))::bit(32)::bigint % buckets)::integer
$$;

-- Great-circle distance in metres on the sphere of the Earth's mean radius (haversine), the same
-- formula as the clients' Geofencing module. IMMUTABLE SQL: the planner inlines it.
CREATE FUNCTION great_circle_m(lat1 double precision, lon1 double precision,
    lat2 double precision, lon2 double precision) RETURNS double precision
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT 2 * 6371008.8 * asin(least(1, sqrt(
        sin(radians(lat2 - lat1) / 2) ^ 2
        + cos(radians(lat1)) * cos(radians(lat2)) * sin(radians(lon2 - lon1) / 2) ^ 2)))
$$;

-- seen_version: the account's own seen feed, advanced the same way as catalog_feed (row lock held
-- until commit), so `GET /v1/seen?since=` cannot skip a push committed late by another device.
-- erased_at: an account erased by `DELETE /v1/account` leaves only its redemptions, moved to a new account of
-- their own (erased_at set, no devices, no seen set): figures and limits count them, nothing names the shopper,
-- and the till refuses their codes.
CREATE TABLE accounts (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    created_at timestamptz NOT NULL,
    seen_version bigint NOT NULL DEFAULT 0,
    erased_at timestamptz
);

-- Keys of the shopper tables hold the column they are to be distributed by (docs/SCALING.md): the account's,
-- except for link_codes (by code) and redemption_totals (by offer).
-- A device token names its account (DeviceToken.swift): it is looked up by (account, hash), and a token
-- from before that by its hash alone; the unique index serves both.
CREATE TABLE devices (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    account_id uuid NOT NULL REFERENCES accounts (id),
    name text,
    token_hash bytea NOT NULL,  -- SHA-256 of the device token
    created_at timestamptz NOT NULL,
    revoked_at timestamptz,
    PRIMARY KEY (account_id, id),
    CONSTRAINT devices_token_hash_account UNIQUE (token_hash, account_id)
);

-- Notifications that keep each server's in-memory catalog check current (docs/SCALING.md): `catalog_head` after
-- any change of the feed's row, once per transaction; `device_tokens` with the digest (hex) of a device token that
-- stopped being valid (revoked, replaced or deleted).
CREATE FUNCTION notify_catalog_head() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('catalog_head', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER catalog_feed_notify AFTER UPDATE ON catalog_feed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_catalog_head();

CREATE FUNCTION notify_device_token() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR NEW.revoked_at IS NOT NULL OR NEW.token_hash <> OLD.token_hash
        OR NEW.account_id <> OLD.account_id THEN
        PERFORM pg_notify('device_tokens', encode(OLD.token_hash, 'hex'));
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER devices_notify AFTER UPDATE OR DELETE ON devices
    FOR EACH ROW EXECUTE FUNCTION notify_device_token();

-- Spent by a device that knows only the code, so keyed by the code alone (and not co-located with accounts).
CREATE TABLE link_codes (
    code_hash bytea PRIMARY KEY,  -- SHA-256 of the code
    account_id uuid NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    device_id uuid  -- the device that made it: revoking the device expires the code
);
CREATE INDEX link_codes_device ON link_codes (device_id) WHERE used_at IS NULL;

-- The account's grow-only seen set: the first report of an offer wins (ON CONFLICT DO NOTHING).
CREATE TABLE seen (
    account_id uuid NOT NULL REFERENCES accounts (id),
    offer_id uuid NOT NULL REFERENCES offers (id) ON DELETE CASCADE,
    seen_at timestamptz NOT NULL,
    version bigint NOT NULL,
    PRIMARY KEY (account_id, offer_id)
);
CREATE INDEX seen_account_version ON seen (account_id, version);
CREATE INDEX seen_offer ON seen (offer_id);
CREATE INDEX seen_offer_seen_at ON seen (offer_id, seen_at);
CREATE INDEX seen_seen_at ON seen (seen_at);  -- the retention purge takes the oldest rows first

-- Seen records deleted (by the retention purge, or with their account) are folded into counts first, so the
-- retailer's figures keep them: per offer and UTC day (days since 1970-01-01), what the seen rows gave (shown,
-- shoppers not also counted by a redemption that day, the last sighting); per retailer and day, the shoppers
-- of the day's total that no remaining row counts.
CREATE TABLE seen_folds (
    offer_id uuid NOT NULL REFERENCES offers (id) ON DELETE CASCADE,
    day bigint NOT NULL,
    shown bigint NOT NULL,
    shoppers bigint NOT NULL,
    last_seen_at timestamptz NOT NULL,
    PRIMARY KEY (offer_id, day)
);

-- A till key (`lt_...`) checks and accepts its retailer's redemption codes and does nothing else. Shown once,
-- stored as its SHA-256; a revoked key stays, so an acceptance still names it.
CREATE TABLE till_keys (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    name text NOT NULL,
    key_hash bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX till_keys_retailer ON till_keys (retailer_id, created_at);

-- A signed-in console: the cookie's SHA-256, whose retailer it is and until when. Signing out deletes the row.
-- It lives only as long as the key it was made with (api_key_hash): the current key, or the one before in its
-- grace period.
CREATE TABLE console_sessions (
    token_hash bytea PRIMARY KEY,
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    api_key_hash bytea NOT NULL
);
CREATE INDEX console_sessions_retailer ON console_sessions (retailer_id);

-- What the retailer calls each beacon (major, minor) and where it hangs, whether or not an offer is on it now.
CREATE TABLE beacons (
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    major integer NOT NULL CHECK (major BETWEEN 0 AND 65535),
    minor integer NOT NULL CHECK (minor BETWEEN 0 AND 65535),
    name text NOT NULL,
    placement text NOT NULL DEFAULT '',
    updated_at timestamptz NOT NULL,
    -- The store (its `store_id`) the beacon is placed in: where a verified sighting of it puts the shopper.
    store_id text,
    PRIMARY KEY (retailer_id, major, minor)
);

-- Secure beacons: a beacon whose broadcast identity rotates (Eddystone-EID) under an identity key only the service
-- holds, sealed (AES-256-GCM) under the server key `key_id` names, never in plaintext. The beacon's time counter was
-- `counter_origin` at `counter_at` and counts seconds from there.
CREATE TABLE secure_beacons (
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    major integer NOT NULL CHECK (major BETWEEN 0 AND 65535),
    minor integer NOT NULL CHECK (minor BETWEEN 0 AND 65535),
    exponent smallint NOT NULL CHECK (exponent BETWEEN 0 AND 15),
    form text NOT NULL CHECK (form IN ('eddystone', 'ibeacon')),
    key_id text NOT NULL,
    sealed_key bytea NOT NULL,
    counter_origin bigint NOT NULL,
    counter_at timestamptz NOT NULL,
    PRIMARY KEY (retailer_id, major, minor)
);

-- A sighting of a secure beacon the service resolved for an account: the beacon, the EID window it was heard in (the
-- beacon's counter at the window's start) and when. Offers on a secure beacon are seen and redeemed only after one.
CREATE TABLE verified_sightings (
    account_id uuid NOT NULL REFERENCES accounts (id),
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    major integer NOT NULL CHECK (major BETWEEN 0 AND 65535),
    minor integer NOT NULL CHECK (minor BETWEEN 0 AND 65535),
    window_counter bigint NOT NULL,
    heard_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, retailer_id, major, minor, window_counter)
);
CREATE INDEX verified_sightings_heard_at ON verified_sightings (heard_at);

-- The account's latest verified sighting: where an impossible journey starts from.
CREATE INDEX verified_sightings_account_heard_at ON verified_sightings (account_id, heard_at);

-- The latest Eddystone-TLM a verified sighting of a secure beacon carried: the fleet page's battery, temperature and
-- uptime. Absent fields were not in the frame (temperature 0x8000: the beacon has no sensor).
CREATE TABLE beacon_telemetry (
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    major integer NOT NULL CHECK (major BETWEEN 0 AND 65535),
    minor integer NOT NULL CHECK (minor BETWEEN 0 AND 65535),
    battery_mv integer CHECK (battery_mv BETWEEN 0 AND 65535),
    temperature double precision CHECK (temperature BETWEEN -128 AND 128),
    advertising_count bigint CHECK (advertising_count BETWEEN 0 AND 4294967295),
    uptime_seconds double precision CHECK (uptime_seconds BETWEEN 0 AND 429496729.5),
    heard_at timestamptz NOT NULL,
    PRIMARY KEY (retailer_id, major, minor)
);

-- The shopper's attention, the same on every device of the account: quiet hours (minutes after the device's local
-- midnight; an end before the start wraps midnight), caps on the offers shown per hour and per day across retailers
-- (no row: the defaults of AccountPreferences), and the retailers muted. Deleted with the account.
CREATE TABLE account_preferences (
    account_id uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    quiet_start_minute smallint CHECK (quiet_start_minute BETWEEN 0 AND 1439),
    quiet_end_minute smallint CHECK (quiet_end_minute BETWEEN 0 AND 1439),
    offers_per_hour integer NOT NULL CHECK (offers_per_hour >= 0),
    offers_per_day integer NOT NULL CHECK (offers_per_day >= 0),
    updated_at timestamptz NOT NULL,
    CHECK ((quiet_start_minute IS NULL) = (quiet_end_minute IS NULL) AND quiet_start_minute <> quiet_end_minute)
);

CREATE TABLE muted_retailers (
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    retailer_id uuid NOT NULL REFERENCES retailers (id) ON DELETE CASCADE,
    muted_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, retailer_id)
);

-- The shows each account's devices reported of an offer with shows_per_day, per UTC day (days since 1970-01-01):
-- what holds the cap across the account's devices. Deleted with the account or the offer.
CREATE TABLE offer_day_shows (
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    offer_id uuid NOT NULL REFERENCES offers (id) ON DELETE CASCADE,
    day bigint NOT NULL,
    shows integer NOT NULL CHECK (shows >= 1),
    last_shown_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, offer_id, day)
);
CREATE INDEX offer_day_shows_offer ON offer_day_shows (offer_id);

-- accepted_*: the redemption accepted at the till, when and by which till (its name as it was then; the key
-- when a till key did it, not the console). Accepting is one conditional UPDATE, so it succeeds once.
CREATE TABLE redemptions (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    account_id uuid NOT NULL REFERENCES accounts (id),
    offer_id uuid NOT NULL REFERENCES offers (id),
    code text NOT NULL,
    idempotency_key text,
    created_at timestamptz NOT NULL,
    accepted_at timestamptz,
    accepted_by uuid REFERENCES till_keys (id),
    accepted_till text,
    -- The Idempotency-Key of the till's accept that took the code: the same till retrying gets the first answer.
    accepted_key text,
    PRIMARY KEY (account_id, id),
    UNIQUE (account_id, idempotency_key)
);
CREATE INDEX redemptions_account_offer ON redemptions (account_id, offer_id);
CREATE INDEX redemptions_offer ON redemptions (offer_id);
CREATE INDEX redemptions_code ON redemptions (code);
CREATE INDEX redemptions_offer_accepted ON redemptions (offer_id, accepted_at) WHERE accepted_at IS NOT NULL;

-- How often each offer was redeemed, the total limit's counter: its row lock serialises the offer's
-- redemptions (Store.redeem). Created by the first redemption; kept out of `offers`, a catalog table.
CREATE TABLE redemption_totals (
    offer_id uuid PRIMARY KEY REFERENCES offers (id),
    redeemed_count integer NOT NULL
);

-- The shoppers of a retailer's daily total whose seen records were folded (see seen_folds).
CREATE TABLE seen_day_folds (
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    day bigint NOT NULL,
    shoppers bigint NOT NULL,
    PRIMARY KEY (retailer_id, day)
);
