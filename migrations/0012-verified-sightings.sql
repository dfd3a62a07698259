-- 0012: verified sightings (issue 43). A sighting of a secure beacon the service resolved for an account: the beacon,
-- the EID window it was heard in (the beacon's counter at the window's start) and when. Offers on a secure beacon are
-- seen and redeemed only after one. Distributed with the account's other rows in the Citus plan.
CREATE TABLE verified_sightings (
    account_id uuid NOT NULL REFERENCES accounts (id),
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    major integer NOT NULL CHECK (major BETWEEN 0 AND 65535),
    minor integer NOT NULL CHECK (minor BETWEEN 0 AND 65535),
    window_counter bigint NOT NULL,
    heard_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, retailer_id, major, minor, window_counter)
);
