-- 0013: secure beacons in the fleet (issue 43). The latest Eddystone-TLM a verified sighting of a beacon carried
-- (battery, temperature, advertising count, uptime), one row per beacon, distributed by retailer in the Citus plan;
-- the store a beacon is placed in, whose location bounds an account's journey between verified sightings; and the
-- account's verified sightings by time, for its latest one.
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
ALTER TABLE beacons ADD COLUMN store_id text;
CREATE INDEX verified_sightings_account_heard_at ON verified_sightings (account_id, heard_at);
