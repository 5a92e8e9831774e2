-- How PostgreSQL keeps the large values the requests read and write: a booking's body is
-- about 8 KB of JSON and its list form about 5 KB. By default a row over 2 KB has its long
-- values compressed with pglz and, while still over 2 KB, moved out of line into the table's
-- TOAST relation: every booking read back from a list was then a lookup in that relation and
-- a pglz decompression (11 % of the machine's CPU under 30-booking pages), and every creation
-- compressed three such values (docs/decisions.md, "Large values are compressed with lz4 and
-- kept in their rows").
--
-- With a target of 4 KB, a row is compressed only past 4 KB, and a compressed list item
-- (about 3 KB) or booking (about 3.8 KB; the largest, 10 of the demo's 124, still go out of
-- line) stays in its row. lz4 compresses and decompresses JSON several times faster than
-- pglz. Values already stored keep their form until rewritten.

ALTER TABLE documents SET (toast_tuple_target = 4096);
ALTER TABLE changes SET (toast_tuple_target = 4096);

-- lz4 needs a server built with it (Debian's and the official images are); without it the
-- values stay compressed with pglz, and nothing else changes.
DO $$
BEGIN
    EXECUTE 'ALTER TABLE documents ALTER COLUMN body SET COMPRESSION lz4';
    EXECUTE 'ALTER TABLE changes ALTER COLUMN body SET COMPRESSION lz4';
    EXECUTE 'ALTER TABLE idempotency_keys ALTER COLUMN body SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this PostgreSQL has no lz4: large values stay compressed with pglz';
END
$$;
