//! Per-tenant components: uploads stored by sha256, each tenant's history of versions per
//! platform component, and the generation hosts poll to learn of changes.

use sqlx::Row as _;

use super::{Error, Result, Storage, now_micros, read_rows};

/// One version of a tenant's component.
#[derive(Debug, Clone)]
pub struct Installed {
    pub component: String,
    pub version: i64,
    pub sha256: String,
    pub size: i64,
    /// Microseconds since the Unix epoch.
    pub installed_at: i64,
    pub active: bool,
}

/// A row changed since a generation: what a host needs to update its assignments.
#[derive(Debug, Clone)]
pub struct Change {
    pub tenant: String,
    pub component: String,
    pub sha256: String,
    pub active: bool,
}

/// What an install did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Install {
    /// A new active version.
    Installed(i64),
    /// The same bytes were already the active version; nothing changed.
    AlreadyActive(i64),
}

/// What a rollback did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rollback {
    /// An earlier version is active again.
    Version(i64),
    /// The only version was rolled back: the platform's default serves again.
    PlatformDefault,
}

/// Takes the next generation; its row stays locked until the transaction ends, so writers of
/// components are serialised and generations become visible in order.
async fn next_generation(tx: &mut sqlx::Transaction<'_, sqlx::Any>) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "UPDATE component_generation SET value = value + 1 WHERE id = 1 RETURNING value",
    )
    .fetch_one(&mut **tx)
    .await?)
}

/// The active version of a tenant's component and its sha256, if any.
async fn active_version(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    tenant: &str,
    component: &str,
) -> Result<Option<(i64, String)>> {
    let row = sqlx::query(
        "SELECT version, sha256 FROM tenant_components \
         WHERE tenant = $1 AND component = $2 AND active = 1",
    )
    .bind(tenant)
    .bind(component)
    .fetch_optional(&mut **tx)
    .await?;
    match row {
        Some(row) => Ok(Some((row.try_get(0)?, row.try_get(1)?))),
        None => Ok(None),
    }
}

/// Marks one version active or not, in `generation`.
async fn set_active(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    tenant: &str,
    component: &str,
    version: i64,
    active: bool,
    generation: i64,
) -> Result<()> {
    sqlx::query(
        "UPDATE tenant_components SET active = $4, generation = $5 \
         WHERE tenant = $1 AND component = $2 AND version = $3",
    )
    .bind(tenant)
    .bind(component)
    .bind(version)
    .bind(i64::from(active))
    .bind(generation)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

impl Storage {
    /// Stores `bytes` (named by their `sha256`) and makes them the tenant's active version of
    /// `component`. The caller has checked the bytes.
    pub async fn install_component(
        &self,
        tenant: &str,
        component: &str,
        sha256: &str,
        bytes: &[u8],
    ) -> Result<Install> {
        self.require_tenant(tenant).await?;
        let mut tx = self.pool().begin().await?;
        let generation = next_generation(&mut tx).await?;
        let active = active_version(&mut tx, tenant, component).await?;
        if let Some((version, active_sha256)) = &active
            && active_sha256 == sha256
        {
            return Ok(Install::AlreadyActive(*version));
        }
        let size = i64::try_from(bytes.len()).unwrap_or(i64::MAX);
        sqlx::query(
            "INSERT INTO component_blobs (sha256, bytes, size, created_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        )
        .bind(sha256)
        .bind(bytes.to_vec())
        .bind(size)
        .bind(now_micros())
        .execute(&mut *tx)
        .await?;
        if let Some((version, _)) = active {
            set_active(&mut tx, tenant, component, version, false, generation).await?;
        }
        let version: i64 = sqlx::query_scalar(
            "SELECT COALESCE(MAX(version), 0) + 1 FROM tenant_components \
             WHERE tenant = $1 AND component = $2",
        )
        .bind(tenant)
        .bind(component)
        .fetch_one(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO tenant_components \
             (tenant, component, version, sha256, installed_at, active, generation) \
             VALUES ($1, $2, $3, $4, $5, 1, $6)",
        )
        .bind(tenant)
        .bind(component)
        .bind(version)
        .bind(sha256)
        .bind(now_micros())
        .bind(generation)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Install::Installed(version))
    }

    /// Deactivates the tenant's active version of `component` and activates the latest one
    /// before it, or the platform's default when there is none.
    pub async fn rollback_component(&self, tenant: &str, component: &str) -> Result<Rollback> {
        self.require_tenant(tenant).await?;
        let mut tx = self.pool().begin().await?;
        let generation = next_generation(&mut tx).await?;
        let Some((version, _)) = active_version(&mut tx, tenant, component).await? else {
            return Err(Error::NothingToRollBack {
                tenant: tenant.to_owned(),
                component: component.to_owned(),
            });
        };
        set_active(&mut tx, tenant, component, version, false, generation).await?;
        let previous: Option<i64> = sqlx::query_scalar(
            "SELECT MAX(version) FROM tenant_components \
             WHERE tenant = $1 AND component = $2 AND version < $3",
        )
        .bind(tenant)
        .bind(component)
        .bind(version)
        .fetch_one(&mut *tx)
        .await?;
        let outcome = match previous {
            Some(previous) => {
                set_active(&mut tx, tenant, component, previous, true, generation).await?;
                Rollback::Version(previous)
            }
            None => Rollback::PlatformDefault,
        };
        tx.commit().await?;
        Ok(outcome)
    }

    /// Makes the installed `version` the tenant's active version of `component`, whichever
    /// version is active now (older or newer); `false` when it already was.
    pub async fn activate_component(
        &self,
        tenant: &str,
        component: &str,
        version: i64,
    ) -> Result<bool> {
        self.require_tenant(tenant).await?;
        let mut tx = self.pool().begin().await?;
        let generation = next_generation(&mut tx).await?;
        let installed: Option<i64> = sqlx::query_scalar(
            "SELECT version FROM tenant_components \
             WHERE tenant = $1 AND component = $2 AND version = $3",
        )
        .bind(tenant)
        .bind(component)
        .bind(version)
        .fetch_optional(&mut *tx)
        .await?;
        if installed.is_none() {
            return Err(Error::NoSuchVersion {
                tenant: tenant.to_owned(),
                component: component.to_owned(),
                version,
            });
        }
        match active_version(&mut tx, tenant, component).await? {
            Some((active, _)) if active == version => return Ok(false),
            Some((active, _)) => {
                set_active(&mut tx, tenant, component, active, false, generation).await?;
            }
            None => {}
        }
        set_active(&mut tx, tenant, component, version, true, generation).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Every version the tenant installed, by component and version.
    pub async fn tenant_components(&self, tenant: &str) -> Result<Vec<Installed>> {
        self.require_tenant(tenant).await?;
        let rows = sqlx::query(
            "SELECT c.component, c.version, c.sha256, b.size, c.installed_at, c.active \
             FROM tenant_components c JOIN component_blobs b ON b.sha256 = c.sha256 \
             WHERE c.tenant = $1 ORDER BY c.component, c.version",
        )
        .bind(tenant)
        .fetch_all(self.pool())
        .await?;
        read_rows(&rows, |row| {
            Ok(Installed {
                component: row.try_get(0)?,
                version: row.try_get(1)?,
                sha256: row.try_get(2)?,
                size: row.try_get(3)?,
                installed_at: row.try_get(4)?,
                active: row.try_get::<i64, _>(5)? != 0,
            })
        })
    }

    /// The bytes of an uploaded component.
    pub async fn component_blob(&self, sha256: &str) -> Result<Option<Vec<u8>>> {
        Ok(
            sqlx::query_scalar("SELECT bytes FROM component_blobs WHERE sha256 = $1")
                .bind(sha256)
                .fetch_optional(self.pool())
                .await?,
        )
    }

    /// The component generation: it moves with every install and rollback.
    pub async fn component_generation(&self) -> Result<i64> {
        Ok(
            sqlx::query_scalar("SELECT value FROM component_generation WHERE id = 1")
                .fetch_one(self.pool())
                .await?,
        )
    }

    /// The rows changed after generation `after` up to `upto` (a generation read before, so
    /// that every writer up to it has committed).
    pub async fn component_changes(&self, after: i64, upto: i64) -> Result<Vec<Change>> {
        let rows = sqlx::query(
            "SELECT tenant, component, sha256, active FROM tenant_components \
             WHERE generation > $1 AND generation <= $2",
        )
        .bind(after)
        .bind(upto)
        .fetch_all(self.pool())
        .await?;
        read_rows(&rows, |row| {
            Ok(Change {
                tenant: row.try_get(0)?,
                component: row.try_get(1)?,
                sha256: row.try_get(2)?,
                active: row.try_get::<i64, _>(3)? != 0,
            })
        })
    }
}
