-- 0014: the shopper's data (issue 44): erased accounts, the seen set's folded counts, and the indexes the
-- retention purge walks.
-- An account erased by `DELETE /v1/account` leaves only its redemptions, moved to a new account of their own
-- (erased_at set, no devices, no seen set): the retailer's figures and limits count them, and nothing names the
-- shopper. A code of an erased account is refused at the till.
ALTER TABLE accounts ADD COLUMN erased_at timestamptz;

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
CREATE TABLE seen_day_folds (
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    day bigint NOT NULL,
    shoppers bigint NOT NULL,
    PRIMARY KEY (retailer_id, day)
);

-- The retention purge takes the oldest rows in small batches.
CREATE INDEX seen_seen_at ON seen (seen_at);
CREATE INDEX verified_sightings_heard_at ON verified_sightings (heard_at);
