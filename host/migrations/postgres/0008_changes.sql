-- The change feeds of the views that keep one (rental_domain::store::View::feed): every write
-- and every delete of a source document, with the document's rendering as the write left it
-- (NULL for a delete), in the order they committed.
--
-- `position` numbers a view's changes in commit order, from 1, without gaps. PostgreSQL's
-- writers run side by side and take their `id`s before they commit, so `id` order is not
-- commit order: a change is written unnumbered, and a reader of the feed numbers the
-- committed ones, under a lock of the feed, before it reads (docs/decisions.md, "The change
-- feed"). On SQLite, whose writers take turns, a change is numbered as it is written.

CREATE TABLE changes (
    id          BIGSERIAL PRIMARY KEY,
    tenant      TEXT NOT NULL REFERENCES tenants (slug),
    collection  TEXT NOT NULL,
    position    BIGINT,
    doc_id      TEXT NOT NULL,
    revision    BIGINT NOT NULL,
    body        TEXT,
    -- Microseconds since the epoch.
    changed_at  BIGINT NOT NULL
);

CREATE UNIQUE INDEX changes_by_position ON changes (tenant, collection, position);
CREATE INDEX changes_unnumbered ON changes (tenant, collection, id) WHERE position IS NULL;

-- The feed of the bookings' list items begins with every booking stored, as it is, in the
-- order of their Ids.
INSERT INTO changes (tenant, collection, position, doc_id, revision, body, changed_at)
SELECT v.tenant, v.collection,
       ROW_NUMBER() OVER (PARTITION BY v.tenant ORDER BY CAST(v.id AS BIGINT)),
       v.id, s.revision, v.body,
       CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)
FROM documents v
JOIN documents s ON s.tenant = v.tenant AND s.collection = 'bookings' AND s.id = v.id
WHERE v.collection = 'booking-items';
