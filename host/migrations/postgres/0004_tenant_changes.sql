-- What hosts need to know to keep tenants in memory: which tenants' admin data (the tenant,
-- its settings, secrets and API users) changed since a generation. Every such write stamps its
-- tenant's row with the next generation, in its own transaction.

CREATE TABLE tenant_changes (
    tenant      TEXT PRIMARY KEY REFERENCES tenants (slug),
    -- The tenant generation of the tenant's last change.
    generation  BIGINT NOT NULL
);
CREATE INDEX tenant_changes_generation ON tenant_changes (generation);

-- One row, as component_generation: writers take generations in commit order, and hosts poll
-- one value to know whether anything changed.
CREATE TABLE tenant_generation (
    id     BIGINT PRIMARY KEY CHECK (id = 1),
    value  BIGINT NOT NULL
);
INSERT INTO tenant_generation (id, value) VALUES (1, 0);
