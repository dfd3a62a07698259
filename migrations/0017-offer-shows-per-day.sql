-- 0017: a per-offer cap of shows per shopper per day (issue 44). The retailer sets it (NULL: the offer shows once
-- ever, as before); the catalog carries it, so a change moves the feed, and a bulk import stages it.
ALTER TABLE offers ADD COLUMN shows_per_day integer CHECK (shows_per_day BETWEEN 1 AND 100);
ALTER TABLE offer_import_rows ADD COLUMN shows_per_day integer CHECK (shows_per_day BETWEEN 1 AND 100);
DROP TRIGGER offers_feed_version ON offers;
CREATE TRIGGER offers_feed_version
    BEFORE INSERT OR UPDATE OF title, description, category, image_url, starts_at, ends_at,
        per_shopper_limit, total_limit, reshow_after_s, schedule, shows_per_day, deleted_at ON offers
    FOR EACH ROW EXECUTE FUNCTION catalog_feed_next_version();

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
