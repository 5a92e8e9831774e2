-- Outbound webhooks (docs/contract.md, "Event webhooks"): the endpoints a tenant's operator
-- registered, and one delivery per event and endpoint, with its attempts.
--
-- Events are read from the bookings' change feed (0008), which the store writes in each
-- write's transaction: an endpoint keeps the position of the last change it turned into
-- deliveries, and a host moves it on in the transaction that inserts them, so that a change
-- becomes a delivery once, whichever host gets there first.

CREATE TABLE webhook_endpoints (
    id          INTEGER PRIMARY KEY,
    tenant      TEXT NOT NULL REFERENCES tenants (slug),
    url         TEXT NOT NULL,
    -- The HMAC-SHA256 key its deliveries are signed with.
    secret      TEXT NOT NULL,
    -- The event types it receives, comma-separated.
    events      TEXT NOT NULL,
    -- The position in the change feed up to which changes became deliveries.
    position    INTEGER NOT NULL,
    -- Microseconds since the epoch.
    created_at  INTEGER NOT NULL
);

CREATE INDEX webhook_endpoints_by_tenant ON webhook_endpoints (tenant, id);

CREATE TABLE webhook_deliveries (
    id           INTEGER PRIMARY KEY,
    tenant       TEXT NOT NULL,
    -- No reference: a removed endpoint's deliveries stay in the log.
    endpoint_id  INTEGER NOT NULL,
    -- The change's position in the feed: the event's Id.
    position     INTEGER NOT NULL,
    event_type   TEXT NOT NULL,
    booking_id   TEXT NOT NULL,
    -- The signed body, as sent.
    payload      TEXT NOT NULL,
    -- 'pending', 'processing' (a host is sending it; available_at ends its lease),
    -- 'delivered' or 'dead'.
    status       TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    -- Microseconds since the epoch: when it is due, or when its lease ends.
    available_at INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    delivered_at INTEGER,
    -- The last attempt: the receiver's HTTP status (none when it did not answer), how long
    -- it took, and why it failed.
    last_status  INTEGER,
    last_latency_ms INTEGER,
    last_error   TEXT
);

CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (endpoint_id, position);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, available_at);
-- A booking's deliveries to one endpoint go in order: the next waits for the one before.
CREATE INDEX webhook_deliveries_by_booking ON webhook_deliveries (endpoint_id, booking_id, id);
CREATE INDEX webhook_deliveries_by_tenant ON webhook_deliveries (tenant, id);

-- A change's previous change of the same booking, which tells what the change did.
CREATE INDEX changes_by_document ON changes (tenant, collection, doc_id, position);
