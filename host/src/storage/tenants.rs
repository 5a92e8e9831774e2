//! Tenants, API users, settings and secrets: what the operator CLI writes and the request path
//! reads. Every write records the change for the hosts that keep tenants in memory
//! ([`super::cache`]), in its own transaction, and drops this process's entry once committed.

use std::collections::HashMap;

use sqlx::Row as _;

use super::cache::record_change;
use super::{Error, Result, Storage, now_micros, read_rows};

#[derive(Debug, Clone)]
pub struct Tenant {
    pub slug: String,
    pub enabled: bool,
    pub settings: HashMap<String, String>,
}

#[derive(Debug, Clone)]
pub struct ApiUser {
    pub id: i64,
    pub name: String,
    pub password_hash: String,
    pub enabled: bool,
    pub api_enabled: bool,
    pub permissions: Vec<String>,
}

fn flag(value: bool) -> i64 {
    i64::from(value)
}

impl Storage {
    pub async fn create_tenant(&self, slug: &str) -> Result<()> {
        let mut tx = self.pool().begin().await?;
        let inserted = sqlx::query(
            "INSERT INTO tenants (slug, enabled, created_at) VALUES ($1, 1, $2) \
             ON CONFLICT DO NOTHING",
        )
        .bind(slug)
        .bind(now_micros())
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 0 {
            return Err(Error::TenantExists(slug.to_owned()));
        }
        // Hosts may remember that the slug did not exist.
        self.commit_change(tx, slug).await
    }

    /// Records the change of `tenant`'s admin data, commits, and drops the tenant from this
    /// process's cache.
    async fn commit_change(
        &self,
        mut tx: sqlx::Transaction<'_, sqlx::Any>,
        tenant: &str,
    ) -> Result<()> {
        record_change(&mut tx, tenant).await?;
        tx.commit().await?;
        self.tenant_cache.invalidate([tenant]);
        Ok(())
    }

    /// Enables or disables a tenant; a disabled tenant answers 404 to everything.
    pub async fn set_tenant_enabled(&self, slug: &str, enabled: bool) -> Result<()> {
        let mut tx = self.pool().begin().await?;
        let updated = sqlx::query("UPDATE tenants SET enabled = $2 WHERE slug = $1")
            .bind(slug)
            .bind(flag(enabled))
            .execute(&mut *tx)
            .await?;
        if updated.rows_affected() == 0 {
            return Err(Error::NoSuchTenant(slug.to_owned()));
        }
        self.commit_change(tx, slug).await
    }

    /// The tenant with its settings, or `None` when it does not exist, read from the database
    /// (the request path reads [`Storage::cached_tenant`]).
    pub async fn tenant(&self, slug: &str) -> Result<Option<Tenant>> {
        let Some(row) = sqlx::query("SELECT enabled FROM tenants WHERE slug = $1")
            .bind(slug)
            .fetch_optional(self.pool())
            .await?
        else {
            return Ok(None);
        };
        let enabled: i64 = row.try_get(0)?;
        let rows = sqlx::query("SELECT key, value FROM tenant_settings WHERE tenant = $1")
            .bind(slug)
            .fetch_all(self.pool())
            .await?;
        let settings = read_rows(&rows, |row| Ok((row.try_get(0)?, row.try_get(1)?)))?
            .into_iter()
            .collect();
        Ok(Some(Tenant {
            slug: slug.to_owned(),
            enabled: enabled != 0,
            settings,
        }))
    }

    /// Refuses a tenant that does not exist.
    pub async fn require_tenant(&self, slug: &str) -> Result<()> {
        match self.tenant(slug).await? {
            Some(_) => Ok(()),
            None => Err(Error::NoSuchTenant(slug.to_owned())),
        }
    }

    pub async fn set_setting(&self, tenant: &str, key: &str, value: &str) -> Result<()> {
        self.upsert(
            "INSERT INTO tenant_settings (tenant, key, value) VALUES ($1, $2, $3) \
             ON CONFLICT (tenant, key) DO UPDATE SET value = excluded.value",
            tenant,
            key,
            value,
        )
        .await
    }

    pub async fn set_secret(&self, tenant: &str, name: &str, value: &str) -> Result<()> {
        self.upsert(
            "INSERT INTO tenant_secrets (tenant, name, value) VALUES ($1, $2, $3) \
             ON CONFLICT (tenant, name) DO UPDATE SET value = excluded.value",
            tenant,
            name,
            value,
        )
        .await
    }

    /// Writes a named value of an existing tenant with `statement` (tenant, name, value).
    async fn upsert(
        &self,
        statement: &'static str,
        tenant: &str,
        name: &str,
        value: &str,
    ) -> Result<()> {
        self.require_tenant(tenant).await?;
        let mut tx = self.pool().begin().await?;
        sqlx::query(statement)
            .bind(tenant)
            .bind(name)
            .bind(value)
            .execute(&mut *tx)
            .await?;
        self.commit_change(tx, tenant).await
    }

    pub async fn secret(&self, tenant: &str, name: &str) -> Result<Option<String>> {
        Ok(
            sqlx::query_scalar("SELECT value FROM tenant_secrets WHERE tenant = $1 AND name = $2")
                .bind(tenant)
                .bind(name)
                .fetch_optional(self.pool())
                .await?,
        )
    }

    pub async fn create_user(
        &self,
        tenant: &str,
        name: &str,
        password_hash: &str,
        permissions: &[String],
    ) -> Result<i64> {
        self.require_tenant(tenant).await?;
        let mut tx = self.pool().begin().await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO sequences (tenant, name, value) VALUES ($1, 'api-users', 1) \
             ON CONFLICT (tenant, name) DO UPDATE SET value = sequences.value + 1 \
             RETURNING value",
        )
        .bind(tenant)
        .fetch_one(&mut *tx)
        .await?;
        let inserted = sqlx::query(
            "INSERT INTO api_users \
             (tenant, id, name, password_hash, enabled, api_enabled, permissions, created_at) \
             VALUES ($1, $2, $3, $4, 1, 1, $5, $6) ON CONFLICT DO NOTHING",
        )
        .bind(tenant)
        .bind(id)
        .bind(name)
        .bind(password_hash)
        .bind(permissions.join(" "))
        .bind(now_micros())
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 0 {
            return Err(Error::UserExists(name.to_owned()));
        }
        // Hosts may remember that a token's user id did not exist.
        self.commit_change(tx, tenant).await?;
        Ok(id)
    }

    /// Enables or disables a user altogether, or only for API use.
    pub async fn set_user_flags(
        &self,
        tenant: &str,
        name: &str,
        enabled: bool,
        api_enabled: bool,
    ) -> Result<()> {
        let mut tx = self.pool().begin().await?;
        let updated = sqlx::query(
            "UPDATE api_users SET enabled = $3, api_enabled = $4 WHERE tenant = $1 AND name = $2",
        )
        .bind(tenant)
        .bind(name)
        .bind(flag(enabled))
        .bind(flag(api_enabled))
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() != 1 {
            return Err(Error::NoSuchUser {
                tenant: tenant.to_owned(),
                name: name.to_owned(),
            });
        }
        self.commit_change(tx, tenant).await
    }

    pub async fn user_by_name(&self, tenant: &str, name: &str) -> Result<Option<ApiUser>> {
        let row = sqlx::query(&format!("{USER_COLUMNS} WHERE tenant = $1 AND name = $2"))
            .bind(tenant)
            .bind(name)
            .fetch_optional(self.pool())
            .await?;
        Ok(row.as_ref().map(user_from_row).transpose()?)
    }

    pub async fn user_by_id(&self, tenant: &str, id: i64) -> Result<Option<ApiUser>> {
        let row = sqlx::query(&format!("{USER_COLUMNS} WHERE tenant = $1 AND id = $2"))
            .bind(tenant)
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        Ok(row.as_ref().map(user_from_row).transpose()?)
    }
}

const USER_COLUMNS: &str =
    "SELECT id, name, password_hash, enabled, api_enabled, permissions FROM api_users";

fn user_from_row(row: &sqlx::any::AnyRow) -> std::result::Result<ApiUser, sqlx::Error> {
    let permissions: String = row.try_get(5)?;
    Ok(ApiUser {
        id: row.try_get(0)?,
        name: row.try_get(1)?,
        password_hash: row.try_get(2)?,
        enabled: row.try_get::<i64, _>(3)? != 0,
        api_enabled: row.try_get::<i64, _>(4)? != 0,
        permissions: permissions.split_whitespace().map(str::to_owned).collect(),
    })
}
