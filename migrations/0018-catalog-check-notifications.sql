-- 0018: notifications that keep each server's in-memory catalog check current (issue 46, docs/SCALING.md). A
-- server LISTENs on the primary: `catalog_head` after any change of the feed's row (its version or generation),
-- once per transaction (identical payloads are folded); `device_tokens` with the digest (hex) of a device token
-- that stopped being valid: revoked, replaced or deleted (an account's deletion deletes its devices).
CREATE FUNCTION notify_catalog_head() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('catalog_head', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER catalog_feed_notify AFTER UPDATE ON catalog_feed
    FOR EACH STATEMENT EXECUTE FUNCTION notify_catalog_head();

CREATE FUNCTION notify_device_token() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR NEW.revoked_at IS NOT NULL OR NEW.token_hash <> OLD.token_hash
        OR NEW.account_id <> OLD.account_id THEN
        PERFORM pg_notify('device_tokens', encode(OLD.token_hash, 'hex'));
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER devices_notify AFTER UPDATE OR DELETE ON devices
    FOR EACH ROW EXECUTE FUNCTION notify_device_token();
