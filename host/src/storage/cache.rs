//! The tenants as the request path reads them, kept in memory: each tenant with its settings,
//! the secrets the host itself reads (the signing key) and the users behind its tokens. A
//! request in steady state asks the database nothing before its component runs.
//!
//! Entries are filled on first use and dropped when their tenant changes. Every write of a
//! tenant's admin data (the tenant, its settings, secrets and users) stamps the tenant's row of
//! `tenant_changes` with the next tenant generation, in its own transaction; a serving host
//! reads the rows changed since the generation it has seen at every component poll, as it does
//! for components, and drops those tenants' entries. So a change made elsewhere (the operator
//! CLI, another host) is in effect within one poll, and one made by this process at once.
//!
//! An entry also remembers the bearer tokens that verified with its signing key, so that a
//! client's token is verified once per entry rather than on every call: decoding and checking
//! a JWT was a twentieth of a one-booking page (docs/benchmarks.md). A remembered token's
//! times are still checked on every use, and a new key comes with a new entry, which
//! remembers nothing.
//!
//! Bounded: one entry per existing tenant, holding at most its users (only those whose tokens
//! verified with the tenant's key, so nobody else can add any), the secrets the host asks for
//! by name and [`MAX_TOKENS`] tokens (again only ones that verified). Slugs found not to exist
//! are remembered up to [`MAX_UNKNOWN`], then forgotten all at once, so that made-up hosts
//! cannot grow the cache.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use sqlx::Row as _;

use super::tenants::{ApiUser, Tenant};
use super::{Result, Storage, read_rows};

/// Unknown slugs remembered at most.
const MAX_UNKNOWN: usize = 1024;

/// Verified tokens an entry remembers at most; past it, it forgets them all. A client keeps
/// its token for a day, so a tenant's integrations use a handful at a time.
const MAX_TOKENS: usize = 256;

/// A bearer token that verified with the signing key of the entry remembering it and named
/// its tenant: what each use of it still checks (`auth::authorize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifiedToken {
    /// The API user it was issued to (`sub`).
    pub user_id: i64,
    /// `exp`: in force until before this second.
    pub expires: i64,
    /// `nbf`, when it has one: in force from this second.
    pub not_before: Option<i64>,
}

impl VerifiedToken {
    /// Whether the token is in force at `now` (seconds since the epoch): before `exp`, which is
    /// exclusive (RFC 7519 section 4.1.4: refused on or after it), and from `nbf` on, if any.
    pub fn in_force(&self, now: i64) -> bool {
        now < self.expires && self.not_before.is_none_or(|nbf| nbf <= now)
    }
}

/// A tenant as the database had it when first asked for since its last change.
#[derive(Debug)]
pub struct CachedTenant {
    pub tenant: Arc<Tenant>,
    /// By name: the value, or `None` for a secret that is not set.
    secrets: Mutex<HashMap<String, Option<String>>>,
    /// By id: the user, or `None` for no such user.
    users: Mutex<HashMap<i64, Option<Arc<ApiUser>>>>,
    /// By the SHA-256 of their text, so that a lookup compares digests, never a secret.
    tokens: Mutex<HashMap<[u8; 32], VerifiedToken>>,
}

impl CachedTenant {
    fn new(tenant: Tenant) -> Self {
        Self {
            tenant: Arc::new(tenant),
            secrets: Mutex::default(),
            users: Mutex::default(),
            tokens: Mutex::default(),
        }
    }

    /// A token this entry has seen verify, by the SHA-256 of its text.
    pub fn verified_token(&self, digest: &[u8; 32]) -> Option<VerifiedToken> {
        lock(&self.tokens).get(digest).copied()
    }

    /// Remembers a token that verified with this entry's signing key.
    pub fn remember_token(&self, digest: [u8; 32], token: VerifiedToken) {
        let mut tokens = lock(&self.tokens);
        if tokens.len() >= MAX_TOKENS {
            tokens.clear();
        }
        tokens.insert(digest, token);
    }
}

#[derive(Debug, Default)]
struct Entries {
    /// Moves with every invalidation. A fill keeps what it read only when this has not moved
    /// since before it read: otherwise the read may predate the change.
    epoch: u64,
    known: HashMap<String, Arc<CachedTenant>>,
    unknown: HashSet<String>,
}

/// What the cache knows of a slug.
enum Lookup {
    Known(Arc<CachedTenant>),
    Unknown,
    /// Not in memory: read it, then keep it if the epoch is still this one.
    Missing(u64),
}

#[derive(Debug)]
pub struct TenantCache {
    entries: RwLock<Entries>,
    /// The tenant generation whose changes have been applied; -1 until the first refresh, and
    /// until then nothing is kept (a process that does not follow the changes, such as the
    /// operator CLI, never caches).
    generation: AtomicI64,
}

impl Default for TenantCache {
    fn default() -> Self {
        Self {
            entries: RwLock::default(),
            generation: AtomicI64::new(-1),
        }
    }
}

impl TenantCache {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Entries> {
        self.entries.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Entries> {
        self.entries.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The tenant generation this cache reflects (-1: none read yet).
    fn generation(&self) -> i64 {
        self.generation.load(Ordering::Acquire)
    }

    fn lookup(&self, slug: &str) -> Lookup {
        let entries = self.read();
        if let Some(cached) = entries.known.get(slug) {
            Lookup::Known(cached.clone())
        } else if entries.unknown.contains(slug) {
            Lookup::Unknown
        } else {
            Lookup::Missing(entries.epoch)
        }
    }

    /// Keeps what was read for `slug` while the epoch was `epoch`, unless a change came since.
    fn fill(&self, slug: &str, cached: Option<&Arc<CachedTenant>>, epoch: u64) {
        if self.generation() < 0 {
            return;
        }
        let mut entries = self.write();
        if entries.epoch != epoch {
            return;
        }
        match cached {
            Some(cached) => {
                entries.known.insert(slug.to_owned(), cached.clone());
            }
            None => {
                if entries.unknown.len() >= MAX_UNKNOWN {
                    entries.unknown.clear();
                }
                entries.unknown.insert(slug.to_owned());
            }
        }
    }

    /// Drops what is known of these tenants. Requests holding an entry finish with it; the
    /// next ones read the database again.
    pub(super) fn invalidate<'a>(&self, slugs: impl IntoIterator<Item = &'a str>) {
        let mut entries = self.write();
        entries.epoch += 1;
        for slug in slugs {
            entries.known.remove(slug);
            entries.unknown.remove(slug);
        }
    }

    /// Applies the changes read up to `generation`.
    fn apply(&self, changed: &[String], generation: i64) {
        self.invalidate(changed.iter().map(String::as_str));
        self.generation.store(generation, Ordering::Release);
    }
}

/// Takes the next tenant generation and stamps it on `tenant`'s change row, in the writer's
/// transaction. The generation's row stays locked until the transaction ends, so that
/// generations become visible in order; writers take it last, after their own rows.
pub(super) async fn record_change(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    tenant: &str,
) -> Result<()> {
    let generation: i64 = sqlx::query_scalar(
        "UPDATE tenant_generation SET value = value + 1 WHERE id = 1 RETURNING value",
    )
    .fetch_one(&mut **tx)
    .await?;
    sqlx::query(
        "INSERT INTO tenant_changes (tenant, generation) VALUES ($1, $2) \
         ON CONFLICT (tenant) DO UPDATE SET generation = excluded.generation",
    )
    .bind(tenant)
    .bind(generation)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

impl Storage {
    /// The tenant with its settings, from memory, else from the database (and then kept);
    /// `None` when it does not exist.
    pub async fn cached_tenant(&self, slug: &str) -> Result<Option<Arc<CachedTenant>>> {
        let epoch = match self.tenant_cache.lookup(slug) {
            Lookup::Known(cached) => return Ok(Some(cached)),
            Lookup::Unknown => return Ok(None),
            Lookup::Missing(epoch) => epoch,
        };
        let cached = self
            .tenant(slug)
            .await?
            .map(|tenant| Arc::new(CachedTenant::new(tenant)));
        self.tenant_cache.fill(slug, cached.as_ref(), epoch);
        Ok(cached)
    }

    /// A secret of a cached tenant, read once per entry. What is put in an entry that a change
    /// dropped meanwhile is never seen again, so no epoch is needed here.
    pub async fn cached_secret(&self, cached: &CachedTenant, name: &str) -> Result<Option<String>> {
        if let Some(value) = lock(&cached.secrets).get(name) {
            return Ok(value.clone());
        }
        let value = self.secret(&cached.tenant.slug, name).await?;
        lock(&cached.secrets).insert(name.to_owned(), value.clone());
        Ok(value)
    }

    /// A user of a cached tenant by id, read once per entry (as [`Self::cached_secret`]).
    pub async fn cached_user(
        &self,
        cached: &CachedTenant,
        id: i64,
    ) -> Result<Option<Arc<ApiUser>>> {
        if let Some(user) = lock(&cached.users).get(&id) {
            return Ok(user.clone());
        }
        let user = self
            .user_by_id(&cached.tenant.slug, id)
            .await?
            .map(Arc::new);
        lock(&cached.users).insert(id, user.clone());
        Ok(user)
    }

    /// The tenant generation the cached tenants reflect (-1: none read yet).
    pub fn tenant_generation(&self) -> i64 {
        self.tenant_cache.generation()
    }

    /// Brings the cached tenants up to date with the database: a cheap read of the tenant
    /// generation, and when it moved, the tenants changed since, whose entries are dropped.
    pub async fn refresh_tenants(&self) -> Result<()> {
        let seen = self.tenant_cache.generation();
        let current: i64 = sqlx::query_scalar("SELECT value FROM tenant_generation WHERE id = 1")
            .fetch_one(self.pool())
            .await?;
        if current == seen {
            return Ok(());
        }
        // Every writer up to `current` has committed: it was read after they released its row.
        let rows = sqlx::query(
            "SELECT tenant FROM tenant_changes WHERE generation > $1 AND generation <= $2",
        )
        .bind(seen)
        .bind(current)
        .fetch_all(self.pool())
        .await?;
        let changed: Vec<String> = read_rows(&rows, |row| row.try_get(0))?;
        self.tenant_cache.apply(&changed, current);
        Ok(())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(slug: &str) -> Arc<CachedTenant> {
        Arc::new(CachedTenant::new(Tenant {
            slug: slug.to_owned(),
            enabled: true,
            settings: HashMap::new(),
        }))
    }

    fn missing(cache: &TenantCache, slug: &str) -> u64 {
        match cache.lookup(slug) {
            Lookup::Missing(epoch) => epoch,
            Lookup::Known(_) | Lookup::Unknown => panic!("{slug} is cached"),
        }
    }

    #[test]
    fn nothing_is_kept_before_the_first_refresh() {
        let cache = TenantCache::default();
        let epoch = missing(&cache, "a");
        cache.fill("a", Some(&tenant("a")), epoch);
        missing(&cache, "a");
        cache.apply(&[], 0);
        cache.fill("a", Some(&tenant("a")), missing(&cache, "a"));
        assert!(matches!(cache.lookup("a"), Lookup::Known(_)));
    }

    #[test]
    fn a_read_older_than_a_change_is_not_kept() {
        let cache = TenantCache::default();
        cache.apply(&[], 0);
        let epoch = missing(&cache, "a");
        // The change lands between the read and the fill.
        cache.apply(&["a".to_owned()], 1);
        cache.fill("a", Some(&tenant("a")), epoch);
        missing(&cache, "a");
    }

    #[test]
    fn changes_drop_known_and_unknown_tenants() {
        let cache = TenantCache::default();
        cache.apply(&[], 0);
        cache.fill("a", Some(&tenant("a")), missing(&cache, "a"));
        cache.fill("b", Some(&tenant("b")), missing(&cache, "b"));
        cache.fill("new", None, missing(&cache, "new"));
        assert!(matches!(cache.lookup("new"), Lookup::Unknown));
        cache.apply(&["a".to_owned(), "new".to_owned()], 2);
        missing(&cache, "a");
        missing(&cache, "new");
        assert!(matches!(cache.lookup("b"), Lookup::Known(_)));
        assert_eq!(cache.generation(), 2);
    }

    #[tokio::test]
    async fn writes_are_seen_at_once_here_and_after_a_refresh_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let host = Storage::open(&url).await.unwrap();
        // The operator CLI: another process on the same database.
        let cli = Storage::open(&url).await.unwrap();
        host.refresh_tenants().await.unwrap();

        assert!(host.cached_tenant("a").await.unwrap().is_none());
        cli.create_tenant("a").await.unwrap();
        assert!(
            host.cached_tenant("a").await.unwrap().is_none(),
            "remembered as unknown until the refresh"
        );
        host.refresh_tenants().await.unwrap();
        let a = host.cached_tenant("a").await.unwrap().unwrap();
        assert!(a.tenant.enabled && a.tenant.settings.is_empty());

        host.set_setting("a", "time_zone", "Europe/Madrid")
            .await
            .unwrap();
        let a = host.cached_tenant("a").await.unwrap().unwrap();
        assert_eq!(a.tenant.settings["time_zone"], "Europe/Madrid", "at once");

        cli.set_tenant_enabled("a", false).await.unwrap();
        assert!(
            host.cached_tenant("a")
                .await
                .unwrap()
                .unwrap()
                .tenant
                .enabled
        );
        host.refresh_tenants().await.unwrap();
        assert!(
            !host
                .cached_tenant("a")
                .await
                .unwrap()
                .unwrap()
                .tenant
                .enabled
        );
        assert_eq!(host.tenant_generation(), 3);
    }

    #[test]
    fn a_token_is_in_force_from_nbf_until_before_exp() {
        let token = |not_before| VerifiedToken {
            user_id: 1,
            expires: 200,
            not_before,
        };
        assert!(token(None).in_force(199));
        assert!(!token(None).in_force(200), "exp is exclusive");
        assert!(!token(None).in_force(201));
        assert!(token(Some(150)).in_force(150), "nbf is inclusive");
        assert!(!token(Some(150)).in_force(149));
    }

    #[test]
    fn remembered_tokens_are_bounded() {
        let entry = tenant("a");
        let token = VerifiedToken {
            user_id: 1,
            expires: 200,
            not_before: None,
        };
        for i in 0..=MAX_TOKENS {
            let mut digest = [0; 32];
            digest[..8].copy_from_slice(&i.to_le_bytes());
            entry.remember_token(digest, token);
        }
        assert_eq!(lock(&entry.tokens).len(), 1);
        let mut last = [0; 32];
        last[..8].copy_from_slice(&MAX_TOKENS.to_le_bytes());
        assert_eq!(entry.verified_token(&last), Some(token));
        assert_eq!(entry.verified_token(&[0; 32]), None);
    }

    #[test]
    fn unknown_slugs_are_bounded() {
        let cache = TenantCache::default();
        cache.apply(&[], 0);
        for i in 0..=MAX_UNKNOWN {
            let slug = format!("x{i}");
            cache.fill(&slug, None, missing(&cache, &slug));
        }
        assert_eq!(cache.read().unknown.len(), 1);
    }
}
