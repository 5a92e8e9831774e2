//! Persistence: one storage API over sqlx, on an embedded SQLite file (the default) or on
//! PostgreSQL (for scale).
//!
//! Both backends go through sqlx's `Any` driver with the same SQL text; they differ only in
//! what [`Backend`] names (how a transaction begins, the migrations, and the queue's row
//! locking), and in where the document store's statements run: on SQLite, on the request's
//! own thread ([`sqlite`]); on PostgreSQL, on connections that pipeline ([`postgres`]). Every table is keyed by tenant, and every function here takes the tenant as an
//! argument: nothing reads across tenants except the operator's own tools.

pub mod cache;
pub mod components;
pub mod documents;
pub mod idempotency;
mod journal;
mod log_reset;
mod postgres;
pub mod queue;
mod sqlite;
pub mod tenants;
#[cfg(test)]
mod tests;
pub mod webhooks;
mod writers;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use rental_store_sql::StoreError;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor as _};

use crate::files;

pub use documents::Mode;

/// Everything a storage call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The document store's own errors: conflict, invalid, unavailable (the guest's to
    /// handle) and faults.
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("tenant {0:?} already exists")]
    TenantExists(String),
    #[error("tenant {0:?} does not exist")]
    NoSuchTenant(String),
    #[error("user {0:?} already exists in this tenant")]
    UserExists(String),
    #[error("no user {name:?} in tenant {tenant:?}")]
    NoSuchUser { tenant: String, name: String },
    #[error("nothing to roll back: tenant {tenant} already uses the platform's {component}")]
    NothingToRollBack { tenant: String, component: String },
    #[error(
        "tenant {tenant} has no {component} version {version} (`rentald component list --tenant {tenant}` shows its versions)"
    )]
    NoSuchVersion {
        tenant: String,
        component: String,
        version: i64,
    },
    /// A database failure nobody can handle: a trap inside a component, 503 at the door.
    #[error(transparent)]
    Database(sqlx::Error),
    /// The same, from the document store's own SQLite connections.
    #[error(transparent)]
    Sqlite(rusqlite::Error),
    /// The same, from the document store's own PostgreSQL connections.
    #[error(transparent)]
    Postgres(tokio_postgres::Error),
}

/// Sorts a database error into conflict (retry), unavailable (try later) or a fault.
impl From<sqlx::Error> for Error {
    fn from(error: sqlx::Error) -> Self {
        match &error {
            sqlx::Error::Database(db) => {
                let code = db.code().unwrap_or_default();
                // PostgreSQL: serialization failure, deadlock. SQLite: busy, locked.
                if matches!(&*code, "40001" | "40P01" | "5" | "6" | "517" | "261") {
                    Self::Store(StoreError::Conflict)
                } else {
                    Self::Database(error)
                }
            }
            sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::PoolClosed => {
                Self::Store(StoreError::Unavailable(error.to_string()))
            }
            _ => Self::Database(error),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Reads each row with `read`; a column that cannot be read is a database error.
fn read_rows<T>(
    rows: &[sqlx::any::AnyRow],
    read: impl Fn(&sqlx::any::AnyRow) -> Result<T, sqlx::Error>,
) -> Result<Vec<T>> {
    Ok(rows.iter().map(read).collect::<Result<_, sqlx::Error>>()?)
}

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    fn from_url(url: &str) -> anyhow::Result<Self> {
        if url.starts_with("sqlite:") {
            Ok(Self::Sqlite)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Ok(Self::Postgres)
        } else {
            anyhow::bail!("unsupported database URL {url:?}: use sqlite:// or postgres://")
        }
    }

    /// What the queue's claim adds to the rows it selects. PostgreSQL locks them and skips
    /// rows another consumer holds, so consumers on many hosts share the queue without waiting
    /// on each other; SQLite has one writer at a time, so the claim statement is already
    /// alone.
    fn claim_lock(self) -> &'static str {
        match self {
            Self::Sqlite => "",
            Self::Postgres => " FOR UPDATE SKIP LOCKED",
        }
    }
}

/// A handle on the database; cheap to clone.
#[derive(Clone, Debug)]
pub struct Storage {
    pool: AnyPool,
    backend: Backend,
    /// What the request path reads of the tenants, kept in memory (see [`cache`]).
    tenant_cache: Arc<cache::TenantCache>,
    /// Where the document store's transactions run.
    documents: DocumentStore,
    /// The bound on each tenant's open writers on PostgreSQL ([`Storage::bound_writers`]);
    /// `None` on SQLite, whose writer turn lets one through, and for the operator's commands.
    writers: Option<Arc<writers::Writers>>,
}

/// The document store's own connections.
#[derive(Clone, Debug)]
enum DocumentStore {
    Sqlite(Arc<sqlite::Connections>),
    Postgres(Arc<postgres::Connections>),
}

impl Storage {
    /// Connects, creating the SQLite file (and its directory) when needed, and brings the schema
    /// up to date.
    pub async fn open(url: &str) -> anyhow::Result<Self> {
        sqlx::any::install_default_drivers();
        match Backend::from_url(url)? {
            Backend::Sqlite => {
                let path = url
                    .trim_start_matches("sqlite://")
                    .trim_start_matches("sqlite:");
                let path = path.split('?').next().unwrap_or(path);
                if let Some(dir) = Path::new(path)
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                {
                    files::create_private_dir(dir)
                        .with_context(|| format!("creating {}", dir.display()))?;
                }
                if path != ":memory:" {
                    files::create_private_file(Path::new(path))
                        .with_context(|| format!("creating {path}"))?;
                }
                let url = if url.contains('?') {
                    url.to_owned()
                } else {
                    format!("{url}?mode=rwc")
                };
                let connections = sqlite::Connections::new(PathBuf::from(path));
                Self::connect(
                    &url,
                    Backend::Sqlite,
                    DocumentStore::Sqlite(connections),
                    false,
                )
                .await
            }
            Backend::Postgres => {
                let connections = postgres::Connections::new(url, postgres::IDLE_TIMEOUT)
                    .with_context(|| format!("reading {}", redact(url)))?;
                Self::connect(
                    url,
                    Backend::Postgres,
                    DocumentStore::Postgres(connections),
                    false,
                )
                .await
            }
        }
    }

    /// A new, migrated SQLite database in this process's memory, gone with the process: no
    /// file, no server (`rentald component run`). It is named and in shared-cache mode, so
    /// that sqlx's pool and the document store's own connections all open the same one; the
    /// pool keeps its connections for as long as it lives, so that the database does.
    pub async fn open_in_memory() -> anyhow::Result<Self> {
        sqlx::any::install_default_drivers();
        let name = format!("rentald-{}", uuid::Uuid::new_v4().simple());
        let url = format!("sqlite:file:{name}?mode=memory&cache=shared");
        let connections = sqlite::Connections::in_memory(&name);
        Self::connect(
            &url,
            Backend::Sqlite,
            DocumentStore::Sqlite(connections),
            true,
        )
        .await
    }

    /// Opens the pool on `url` and migrates; `documents` are the document store's connections
    /// to the same database; `keep` keeps the pool's connections open for its whole life.
    async fn connect(
        url: &str,
        backend: Backend,
        documents: DocumentStore,
        keep: bool,
    ) -> anyhow::Result<Self> {
        let options = AnyConnectOptions::from_str(url)?;
        let mut pool = AnyPoolOptions::new()
            // On PostgreSQL the document store, the request path's database work, has its
            // connections of its own ([`postgres`]).
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(5));
        if keep {
            pool = pool
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None);
        }
        let pool = pool
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        conn.execute(sqlite::PRAGMAS).await?;
                        conn.execute(
                            format!("PRAGMA busy_timeout = {}", sqlite::BUSY_TIMEOUT.as_millis())
                                .as_str(),
                        )
                        .await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .with_context(|| format!("connecting to {}", redact(url)))?;
        if backend == Backend::Sqlite {
            // WAL lets readers proceed while one writer commits; the mode is kept in the file
            // (a database in memory keeps its own journal mode, `memory`).
            pool.execute("PRAGMA journal_mode = WAL").await?;
        }
        let migrator = match backend {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        };
        migrator
            .run(&pool)
            .await
            .context("migrating the database")?;
        let storage = Self {
            pool,
            backend,
            tenant_cache: Arc::default(),
            writers: None,
            documents,
        };
        let rendered = storage
            .render_pending_views()
            .await
            .context("rendering the views of stored documents")?;
        if rendered > 0 {
            tracing::info!(
                documents = rendered,
                "rendered the views of stored documents"
            );
        }
        Ok(storage)
    }

    /// Lets at most `bound` read-write transactions of each tenant be open at once on
    /// PostgreSQL; the others wait for one to end before they begin ([`writers`]). Nothing on
    /// SQLite.
    pub fn bound_writers(&mut self, bound: usize) {
        if self.backend == Backend::Postgres {
            self.writers = Some(Arc::new(writers::Writers::new(bound)));
        }
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    fn sqlite(&self) -> Option<&Arc<sqlite::Connections>> {
        match &self.documents {
            DocumentStore::Sqlite(connections) => Some(connections),
            DocumentStore::Postgres(_) => None,
        }
    }

    /// On SQLite, this process's writer turn, for a short write through the pool: it then
    /// waits in line with the document store's writers rather than on the file's lock, where
    /// it would sleep and retry behind them for as long as they keep coming (and, under a
    /// steady write load, give up after the busy timeout: the queue's consumer did), and the
    /// group of writers open on the writers' connection is committed first. None on
    /// PostgreSQL, whose writers lock rows.
    async fn writer_turn(&self) -> Option<tokio::sync::OwnedMutexGuard<()>> {
        match self.sqlite() {
            Some(connections) => Some(connections.turn_to_write_elsewhere().await),
            None => None,
        }
    }

    /// Refreshes the planner's statistics after a bulk load. PostgreSQL plans by them, and
    /// autovacuum refreshes them only a while after the load: until then a freshly loaded
    /// tenant's pages were planned as if the tables were empty, a scan of a whole collection
    /// per page (1.5 s a page at 10^5 bookings). SQLite plans by its indexes alone.
    pub async fn refresh_statistics(&self) -> Result<()> {
        if self.backend == Backend::Postgres {
            self.pool
                .execute("ANALYZE documents, doc_index, index_counts")
                .await?;
        }
        Ok(())
    }

    /// Whether the database answers (for readiness checks).
    pub async fn ping(&self) -> bool {
        sqlx::query("SELECT 1").execute(&self.pool).await.is_ok()
    }
}

/// A database URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}

/// Microseconds since the Unix epoch: the unit of every stored time.
pub fn now_micros() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

/// A stored time (microseconds since the epoch) as a date.
fn time(micros: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_micros(micros).unwrap_or_default()
}

/// `wait` after `micros` (a stored time), saturating.
fn micros_after(micros: i64, wait: Duration) -> i64 {
    micros.saturating_add(i64::try_from(wait.as_micros()).unwrap_or(i64::MAX))
}
