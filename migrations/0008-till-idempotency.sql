-- 0008: a till's accept takes an Idempotency-Key (issue 24): the key of the accept that took the code, so that
-- the same till retrying after a lost answer (a failover's COMMIT whose reply never came) gets the first answer.
ALTER TABLE redemptions ADD COLUMN accepted_key text;
