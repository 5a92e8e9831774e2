-- The Idempotency-Key of each write a client sent with one (docs/contract.md, "Idempotency
-- keys"), per tenant and API user: what the request was (a digest of its method, target and
-- body) and, once answered, its answer. The answer of a request that wrote is recorded in the
-- transaction of its writes, so that a key has an answer exactly when its work committed.
-- A key is forgotten 24 hours after its first use.

CREATE TABLE idempotency_keys (
    tenant        TEXT NOT NULL,
    user_id       BIGINT NOT NULL,
    client_key    TEXT NOT NULL,
    -- Hex SHA-256 of the request's method, target and body.
    fingerprint   TEXT NOT NULL,
    -- 'running': a host is serving it; 'committed': its writes committed, its answer not yet
    -- recorded; 'answered': status, content_type and body hold its answer.
    state         TEXT NOT NULL,
    -- The claim of the host serving it, which alone may record its answer.
    owner         TEXT NOT NULL,
    -- Microseconds since the epoch: past this, a 'running' claim is taken to be abandoned.
    lease_until   BIGINT NOT NULL,
    status        BIGINT NOT NULL,
    content_type  TEXT NOT NULL,
    body          BYTEA NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (tenant, user_id, client_key)
);

CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
