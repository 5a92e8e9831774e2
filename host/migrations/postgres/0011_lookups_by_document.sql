-- A document's index entries are looked up by the document first (its writes read the entries
-- they keep or take off). With (tenant, collection) leading, this index also served the scans
-- of a collection's range: a planner without statistics (autovacuum off, or a table that grows
-- faster than it is analysed) costs both candidates at about one row and decides by the height
-- of each tree, and took this one whenever the primary key had grown a level taller. It then
-- read every entry of the tenant's collection and sorted what was left: a booking's
-- availability read its car's entries in 3.5 to 7.4 ms at 13,000 bookings, where the primary
-- key reads them in 0.3 ms (docs/benchmarks.md, "A range scan through the wrong index"). With
-- the document's id leading, a range scan could only read this index whole, which no planner
-- prefers to the primary key's range; a lookup by document fixes every leading column, as
-- before. SQLite's planner prefers the index that matches more columns, and kept the primary
-- key.

DROP INDEX doc_index_by_doc;
CREATE INDEX doc_index_by_doc ON doc_index (doc_id, tenant, collection, index_name, key);
