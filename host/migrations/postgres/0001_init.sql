-- Every row is keyed by tenant (a Citus distribution column when one server is not enough).
-- Integers are 64-bit, flags are 0/1 integers and times are microseconds since the Unix epoch,
-- so that both backends read them with the same code.

CREATE TABLE tenants (
    slug        TEXT PRIMARY KEY,
    enabled     BIGINT NOT NULL DEFAULT 1,
    created_at  BIGINT NOT NULL
);

CREATE TABLE tenant_settings (
    tenant  TEXT NOT NULL REFERENCES tenants (slug),
    key     TEXT NOT NULL,
    value   TEXT NOT NULL,
    PRIMARY KEY (tenant, key)
);

CREATE TABLE tenant_secrets (
    tenant  TEXT NOT NULL REFERENCES tenants (slug),
    name    TEXT NOT NULL,
    value   TEXT NOT NULL,
    PRIMARY KEY (tenant, name)
);

CREATE TABLE api_users (
    tenant         TEXT NOT NULL REFERENCES tenants (slug),
    id             BIGINT NOT NULL,
    name           TEXT NOT NULL,
    password_hash  TEXT NOT NULL,
    enabled        BIGINT NOT NULL,
    api_enabled    BIGINT NOT NULL,
    permissions    TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    PRIMARY KEY (tenant, name),
    UNIQUE (tenant, id)
);

CREATE TABLE sequences (
    tenant  TEXT NOT NULL REFERENCES tenants (slug),
    name    TEXT NOT NULL,
    value   BIGINT NOT NULL,
    PRIMARY KEY (tenant, name)
);

CREATE TABLE documents (
    tenant      TEXT NOT NULL REFERENCES tenants (slug),
    collection  TEXT NOT NULL,
    id          TEXT NOT NULL,
    revision    BIGINT NOT NULL,
    body        TEXT NOT NULL,
    PRIMARY KEY (tenant, collection, id)
);

CREATE TABLE doc_index (
    tenant      TEXT NOT NULL,
    collection  TEXT NOT NULL,
    index_name  TEXT NOT NULL,
    key         BYTEA NOT NULL,
    doc_id      TEXT NOT NULL,
    PRIMARY KEY (tenant, collection, index_name, key, doc_id),
    FOREIGN KEY (tenant, collection, doc_id) REFERENCES documents (tenant, collection, id)
        ON DELETE CASCADE
);
CREATE INDEX doc_index_by_doc ON doc_index (tenant, collection, doc_id);

CREATE TABLE queue (
    id            BIGSERIAL PRIMARY KEY,
    tenant        TEXT NOT NULL REFERENCES tenants (slug),
    topic         TEXT NOT NULL,
    payload       TEXT NOT NULL,
    dedupe_key    TEXT,
    status        TEXT NOT NULL DEFAULT 'pending',
    attempts      BIGINT NOT NULL DEFAULT 0,
    available_at  BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    delivered_at  BIGINT,
    last_error    TEXT,
    UNIQUE (tenant, topic, dedupe_key)
);
CREATE INDEX queue_ready ON queue (status, available_at);
