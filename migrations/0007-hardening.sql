-- 0007: hardening, round two (issue 23).

-- A console session lives only as long as the key it was made with (the current key, or the one before in its
-- grace period). Sessions from before this column are ended: their retailers sign in again.
DELETE FROM console_sessions;
ALTER TABLE console_sessions ADD COLUMN api_key_hash bytea NOT NULL;

-- A link code dies with the device that made it: revoking the device expires its unspent codes.
ALTER TABLE link_codes ADD COLUMN device_id uuid;
CREATE INDEX link_codes_device ON link_codes (device_id) WHERE used_at IS NULL;

-- When the offer was made: no sighting of it is older. Unknown (NULL) for offers made before this column.
ALTER TABLE offers ADD COLUMN created_at timestamptz;

-- A retailer name as it reads (NFKC, case folded, spaces collapsed, invisible characters dropped): two
-- retailers cannot have names that read alike. Of existing names that read alike, the first keeps its key and
-- the others none (NULL), so the index holds; they register no more look-alikes.
ALTER TABLE retailers ADD COLUMN name_key text;
UPDATE retailers SET name_key = first.key
FROM (
    SELECT DISTINCT ON (key) id, key
    FROM (SELECT id, created_at,
            lower(btrim(regexp_replace(normalize(name, NFKC), '\s+', ' ', 'g'))) AS key FROM retailers) AS keyed
    ORDER BY key, created_at, id
) AS first
WHERE retailers.id = first.id;
CREATE UNIQUE INDEX retailers_name_key ON retailers (name_key);
