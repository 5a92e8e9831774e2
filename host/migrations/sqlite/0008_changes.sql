-- The change feeds of the views that keep one (rental_domain::store::View::feed): every write
-- and every delete of a source document, with the document's rendering as the write left it
-- (NULL for a delete), in the order they committed.
--
-- `position` numbers a view's changes in commit order, from 1, without gaps. SQLite's
-- writers take turns, so a change is numbered as it is written (the largest position plus
-- one). On PostgreSQL, whose writers run side by side, a change is written unnumbered and a
-- reader of the feed numbers the committed ones before it reads (docs/decisions.md, "The
-- change feed").

CREATE TABLE changes (
    id          INTEGER PRIMARY KEY,
    tenant      TEXT NOT NULL REFERENCES tenants (slug),
    collection  TEXT NOT NULL,
    position    INTEGER,
    doc_id      TEXT NOT NULL,
    revision    INTEGER NOT NULL,
    body        TEXT,
    -- Microseconds since the epoch.
    changed_at  INTEGER NOT NULL
);

CREATE UNIQUE INDEX changes_by_position ON changes (tenant, collection, position);

-- The feed of the bookings' list items begins with every booking stored, as it is, in the
-- order of their Ids.
INSERT INTO changes (tenant, collection, position, doc_id, revision, body, changed_at)
SELECT v.tenant, v.collection,
       ROW_NUMBER() OVER (PARTITION BY v.tenant ORDER BY CAST(v.id AS INTEGER)),
       v.id, s.revision, v.body,
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)
FROM documents v
JOIN documents s ON s.tenant = v.tenant AND s.collection = 'bookings' AND s.id = v.id
WHERE v.collection = 'booking-items';
