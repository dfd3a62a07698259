-- 0004: the till and the console (issue 16), and catalog versions a multi-row write assigns itself.

-- A till key (`lt_...`) checks and accepts its retailer's redemption codes and does nothing else. Like an
-- API key it is shown once and stored as its SHA-256; a revoked key stays, so an acceptance still names it.
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
CREATE TABLE console_sessions (
    token_hash bytea PRIMARY KEY,
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX console_sessions_retailer ON console_sessions (retailer_id);

-- A redemption accepted at the till: when, and by which till (its name as it was then; the key, when a till
-- key did it, not the console). Accepting is one conditional UPDATE, so it succeeds once.
ALTER TABLE redemptions ADD COLUMN accepted_at timestamptz, ADD COLUMN accepted_by uuid REFERENCES till_keys (id),
    ADD COLUMN accepted_till text;
CREATE INDEX redemptions_code ON redemptions (code);
CREATE INDEX redemptions_offer_accepted ON redemptions (offer_id, accepted_at) WHERE accepted_at IS NOT NULL;
CREATE INDEX seen_offer_seen_at ON seen (offer_id, seen_at);

-- A write that assigned its rows' versions itself (a bulk import takes a block of versions with one UPDATE
-- of catalog_feed, under the same row lock) keeps them; every other write takes the next version here.
-- One UPDATE of the feed row per changed row made a write of N rows walk N dead versions of that row each
-- time: quadratic (100,000 offers in one statement: about 50 s).
CREATE OR REPLACE FUNCTION catalog_feed_next_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (TG_OP = 'INSERT' AND NEW.version IS NOT NULL)
        OR (TG_OP = 'UPDATE' AND NEW.version IS DISTINCT FROM OLD.version) THEN
        RETURN NEW;
    END IF;
    UPDATE catalog_feed SET version = version + 1 WHERE singleton RETURNING version INTO NEW.version;
    RETURN NEW;
END
$$;
