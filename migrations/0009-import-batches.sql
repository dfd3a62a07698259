-- 0009: a bulk import no longer holds the catalog feed's row lock for the whole file (issue 41, item 15). Its rows
-- are staged here first, checked as offers checks them, in a transaction that holds nothing another retailer's
-- write waits for; then they are applied to offers in batches, each a transaction that locks the feed row as any
-- catalog write does and deletes the staged rows it applied. Once staged, a file is applied whole: rows left by an
-- import whose request ended midway are applied at the server's start and before that retailer's next import.
CREATE TABLE offer_import_rows (
    import_id uuid NOT NULL,
    position integer NOT NULL,
    retailer_id uuid NOT NULL REFERENCES retailers (id),
    major integer NOT NULL CHECK (major BETWEEN 0 AND 65535),
    minor integer NOT NULL CHECK (minor BETWEEN 0 AND 65535),
    title text NOT NULL,
    description text,
    category text,
    image_url text,
    starts_at timestamptz,
    ends_at timestamptz,
    per_shopper_limit integer NOT NULL CHECK (per_shopper_limit >= 1),
    total_limit integer CHECK (total_limit >= 1),
    reshow_after_s integer CHECK (reshow_after_s >= 0),
    CHECK (ends_at > starts_at),
    PRIMARY KEY (import_id, position)
);
CREATE INDEX offer_import_rows_retailer ON offer_import_rows (retailer_id);
