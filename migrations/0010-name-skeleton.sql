-- 0010: retailer names compared by their confusable skeleton (UTS #39), not NFKC alone (issue 41, item 13).
-- SQL has no skeleton: the keys are cleared here and made again by loyalty-server in the same transaction
-- (Database.migrate, RetailerName.readingKey). Of names that now read alike, the first registered keeps its key
-- and the others none (NULL), as in 0007: they stay, and no look-alike of them registers.
UPDATE retailers SET name_key = NULL;
