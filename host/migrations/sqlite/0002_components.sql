-- Per-tenant components. The uploaded bytes live in the database, content-addressed, so every
-- host sharing it sees the same installs. A (tenant, component) has a history of versions, at
-- most one of them active; none active means the platform's default.

CREATE TABLE component_blobs (
    sha256      TEXT PRIMARY KEY NOT NULL,
    bytes       BLOB NOT NULL,
    size        INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
);

CREATE TABLE tenant_components (
    tenant        TEXT NOT NULL REFERENCES tenants (slug),
    component     TEXT NOT NULL,
    version       INTEGER NOT NULL,
    sha256        TEXT NOT NULL REFERENCES component_blobs (sha256),
    installed_at  INTEGER NOT NULL,
    active        INTEGER NOT NULL,
    -- The component generation that last changed this row (installed, activated, deactivated).
    generation    INTEGER NOT NULL,
    PRIMARY KEY (tenant, component, version)
);
CREATE UNIQUE INDEX tenant_components_active ON tenant_components (tenant, component)
    WHERE active = 1;
CREATE INDEX tenant_components_generation ON tenant_components (generation);

-- One row: bumped by every install and rollback, in its transaction, so that writers take
-- generations in commit order and hosts poll one value to know whether anything changed.
CREATE TABLE component_generation (
    id     INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    value  INTEGER NOT NULL
);
INSERT INTO component_generation (id, value) VALUES (1, 0);
