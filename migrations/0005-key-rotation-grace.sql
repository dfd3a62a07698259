-- 0005: a rotated-out retailer key keeps working until the new key is first used or for 24 hours, so a
-- retailer whose client could not save the new key is not locked out (issue 13).
ALTER TABLE retailers
    ADD COLUMN previous_api_key_hash bytea UNIQUE,
    ADD COLUMN previous_key_expires_at timestamptz;
