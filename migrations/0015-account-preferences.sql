-- 0015: the shopper's attention and offer schedules (issue 44). Per account, the same on every device: quiet hours
-- (minutes after the device's local midnight; an end before the start wraps midnight), caps on the offers shown per hour and per day
-- across retailers, and the retailers muted. Deleted with the account; distributed with its other rows in the Citus
-- plan.
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

-- The retailer's side: an offer's weekly hours in the store's time zone (OfferSchedule's text; NULL: always), which
-- the catalog carries (so a change moves the feed) and a bulk import stages.
ALTER TABLE offers ADD COLUMN schedule text;
ALTER TABLE offer_import_rows ADD COLUMN schedule text;
DROP TRIGGER offers_feed_version ON offers;
CREATE TRIGGER offers_feed_version
    BEFORE INSERT OR UPDATE OF title, description, category, image_url, starts_at, ends_at,
        per_shopper_limit, total_limit, reshow_after_s, schedule, deleted_at ON offers
    FOR EACH ROW EXECUTE FUNCTION catalog_feed_next_version();
