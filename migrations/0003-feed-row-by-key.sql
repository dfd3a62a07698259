-- 0003: the catalog_feed row is reached by its key. A bulk catalog write leaves one dead row version per
-- changed row behind in catalog_feed (100,000 offers in one statement: 834 pages, the live row on the
-- last), and VACUUM cannot give back the pages before the live row: an unkeyed read or update scanned
-- them all (2.2 ms) until the row moved. Through the primary key it is one index probe.
CREATE OR REPLACE FUNCTION catalog_feed_next_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE catalog_feed SET version = version + 1 WHERE singleton RETURNING version INTO NEW.version;
    RETURN NEW;
END
$$;
