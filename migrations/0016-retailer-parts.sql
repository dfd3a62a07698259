-- 0016: a retailer's part of the catalog feed (issue 45). A device fetches the offers and stores of a few retailers
-- (its working set, or a bucket of them) and later their changes since a version: these indexes read one
-- retailer's rows in version order without walking the whole feed, and give its head (its highest version).
CREATE INDEX offers_retailer_version ON offers (retailer_id, version);
CREATE INDEX stores_retailer_version ON stores (retailer_id, version);

-- The bucket of a proximity UUID among `buckets`: the first 32 bits of its SHA-256, modulo the count. A device that
-- heard a UUID asks for its bucket and gets every retailer in it, so the service learns one of those, not which.
CREATE FUNCTION retailer_bucket(proximity_uuid uuid, buckets integer) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT (('x' || left(encode(sha256(uuid_send(proximity_uuid)), 'hex'), 8))::bit(32)::bigint % buckets)::integer
$$;
