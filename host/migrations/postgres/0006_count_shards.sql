-- The counts of the counted indexes, split into shards: each connection adds to and takes
-- from its own row of a count (rental_store_sql's COUNT_SHARD), and a count is the sum of its
-- rows. With one row per count, every transaction that adds a booking held the row of the
-- bookings' count until it committed, and the tenant's creations ran one after another.
-- SQLite has one writer at a time and keeps one row per count.

ALTER TABLE index_counts ADD COLUMN shard INT NOT NULL DEFAULT 0;
ALTER TABLE index_counts DROP CONSTRAINT index_counts_pkey;
ALTER TABLE index_counts ADD PRIMARY KEY (tenant, collection, index_name, prefix, shard);
