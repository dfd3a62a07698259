-- 0002: keys and counters that fit the Citus plan of docs/SCALING.md. Shopper tables are to be distributed
-- by account (link_codes by code, redemption_totals by offer): Citus needs every primary key and unique
-- constraint of a distributed table to hold its distribution column, and foreign keys between
-- distributed tables to join on it. The catalog tables become reference tables, copied to every node, so
-- the per-redemption counter leaves `offers`.

-- Devices by account. The token hash stays unique with the account beside it, the index serving both
-- lookups: by (account, hash) for tokens that name their account, by hash alone for older tokens.
ALTER TABLE devices DROP CONSTRAINT devices_pkey, ADD CONSTRAINT devices_pkey PRIMARY KEY (account_id, id);
ALTER TABLE devices DROP CONSTRAINT devices_token_hash_key,
    ADD CONSTRAINT devices_token_hash_account UNIQUE (token_hash, account_id);
DROP INDEX devices_account;  -- the primary key's leading column

ALTER TABLE redemptions DROP CONSTRAINT redemptions_pkey, ADD CONSTRAINT redemptions_pkey PRIMARY KEY (account_id, id);

-- A link code is spent by a device that knows only the code: link_codes are to be distributed by the code's
-- hash, away from accounts, so the foreign key to accounts (not co-located) goes.
ALTER TABLE link_codes DROP CONSTRAINT link_codes_account_id_fkey;

-- The total-limit counter, out of the catalog: a row per offer once it has been redeemed.
CREATE TABLE redemption_totals (
    offer_id uuid PRIMARY KEY REFERENCES offers (id),
    redeemed_count integer NOT NULL
);
INSERT INTO redemption_totals (offer_id, redeemed_count)
SELECT id, redeemed_count FROM offers WHERE redeemed_count > 0;
ALTER TABLE offers DROP COLUMN redeemed_count;
