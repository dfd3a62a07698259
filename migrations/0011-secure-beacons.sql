-- 0011: secure beacons (issue 43). A beacon whose broadcast identity rotates (Eddystone-EID) under an identity key
-- only the service holds: the key sealed (AES-256-GCM) under the server key `key_id` names, never in plaintext; the
-- beacon's time counter was `counter_origin` at `counter_at`, and counts seconds from there. A catalog table (a
-- reference table in the Citus plan), scoped by retailer like beacons.
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
