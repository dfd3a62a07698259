-- 0006: the beacon fleet (issue 25). What the retailer calls each beacon (major, minor) and where it hangs,
-- whether or not an offer is on it now: a beacon outlives the offers put on it. A catalog table (a reference
-- table in the Citus plan), scoped by retailer like offers and stores.
CREATE TABLE beacons (
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    major integer NOT NULL CHECK (major BETWEEN 0 AND 65535),
    minor integer NOT NULL CHECK (minor BETWEEN 0 AND 65535),
    name text NOT NULL,
    placement text NOT NULL DEFAULT '',
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (retailer_id, major, minor)
);
