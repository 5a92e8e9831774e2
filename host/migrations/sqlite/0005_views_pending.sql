-- The documents whose views (rental_domain::collections::VIEWS) are still to be rendered:
-- every write renders the views of its document in its own transaction, but the documents
-- stored before a view was declared have none yet. Whoever opens the database renders them
-- (rentald when it starts, the Spin adapter when it opens its database), a batch per
-- transaction that also deletes the batch's rows here.

CREATE TABLE views_pending (
    tenant      TEXT NOT NULL,
    collection  TEXT NOT NULL,
    id          TEXT NOT NULL,
    PRIMARY KEY (tenant, collection, id),
    FOREIGN KEY (tenant, collection, id) REFERENCES documents (tenant, collection, id)
        ON DELETE CASCADE
);

-- The list items of the bookings (collection `booking-items`).
INSERT INTO views_pending (tenant, collection, id)
SELECT tenant, collection, id FROM documents WHERE collection = 'bookings';
