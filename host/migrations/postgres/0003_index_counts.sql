-- Running counts of the entries of the counted indexes (rental_domain::collections::COUNTED),
-- per prefix of the counted depth, kept by every write in its own transaction: a list's Total
-- is one row read instead of a count over the tenant's history. The prefix is the encoded
-- first parts of the key (an empty one for a count of the whole index).

CREATE TABLE index_counts (
    tenant      TEXT NOT NULL,
    collection  TEXT NOT NULL,
    index_name  TEXT NOT NULL,
    prefix      BYTEA NOT NULL,
    n           BIGINT NOT NULL,
    PRIMARY KEY (tenant, collection, index_name, prefix)
);

-- The counts of what is already stored. Integer and time parts are encoded in 9 bytes.
INSERT INTO index_counts (tenant, collection, index_name, prefix, n)
SELECT tenant, collection, index_name, ''::bytea, COUNT(*) FROM doc_index
WHERE (collection, index_name) IN (('bookings', 'id'), ('customers', 'id'), ('cars', 'id'))
GROUP BY tenant, collection, index_name;

INSERT INTO index_counts (tenant, collection, index_name, prefix, n)
SELECT tenant, collection, index_name, substr(key, 1, 9), COUNT(*) FROM doc_index
WHERE collection = 'bookings' AND index_name = 'status'
GROUP BY tenant, collection, index_name, substr(key, 1, 9);

-- The writes look up a document's entries of one index (its counted entry, its entries to
-- keep): by document and index name, not through the primary key, which would walk every
-- entry of that index.
DROP INDEX doc_index_by_doc;
CREATE INDEX doc_index_by_doc ON doc_index (tenant, collection, doc_id, index_name, key);
