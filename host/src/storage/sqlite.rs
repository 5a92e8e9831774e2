//! The document store's SQLite connections, used on the thread of the request that holds
//! them.
//!
//! sqlx's SQLite driver gives every connection a thread of its own and sends each statement
//! there and its rows back: two thread switches per statement, about half of a small
//! request's time (docs/benchmarks.md, "Where the time goes"). A document transaction on
//! SQLite instead leases one of these connections and runs its statements where it is, as
//! plain function calls; a statement of the store is a few microseconds of SQLite work.
//!
//! A writer reads without the write lock and takes it at its first write, checking then that
//! what it read still holds ([`Transaction::lock`]): while its guest computes from what it
//! read, other writers go on.
//!
//! Nothing here waits on a lock while holding a runtime thread: readers never wait in WAL
//! mode; a writer has its turn in this process before it takes the lock (`Connections::turn`),
//! and its `BEGIN IMMEDIATE`, the one statement that may still wait (for another process, or
//! for the host's other writers on the sqlx pool), is tried without waiting and, when the lock
//! is taken, run again on the blocking pool, where it may wait. Nor does a commit wait for the
//! disk: the log is synced for many commits at once, outside the writer's turn
//! ([`super::journal`]). Nor does the log grow for as long as writes go on: the writer turn
//! makes room for starting it over ([`super::log_reset`]). Every other part of the storage
//! (tenants, components, the queue's consumer, migrations) stays on sqlx.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rental_store_sql::{Mode, Row, Statement};
use rusqlite::{Connection, OpenFlags};

use super::journal::{Journal, Ticket};
use super::log_reset::{LogReset, Unlocked};
use super::{Error, Result};

/// How long a statement waits for a lock held by another connection (the sqlx pool's setting).
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Every connection's settings, on sqlx's pool as on these. `synchronous = FULL`: in WAL mode
/// `NORMAL` may lose the last commits to a power loss or an OS crash, and a commit here is
/// acknowledged to someone (a booking's 200, a bank told its event was received, which it
/// will not send again). The cost is one `fsync` of the log per commit (docs/benchmarks.md).
///
/// `temp_store = MEMORY`: a statement that writes inside a longer transaction keeps the
/// pages it changes in a statement journal, to undo itself alone on failure. Past 64 KiB
/// SQLite moves that journal to a file of its own, created and deleted in the temporary
/// directory; a booking's writes passed it on one creation in four to eight, each paying
/// for a file created, written and unlinked (docs/benchmarks.md, "The statement journal in
/// memory"). In memory it costs what it holds, for as long as the statement runs.
pub(super) const PRAGMAS: &str =
    "PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL; PRAGMA temp_store = MEMORY;";

/// The document store's connections write the log without syncing it at each commit: the
/// commits of a database file are made durable together, and acknowledged only then
/// ([`Journal`]).
const GROUP_SYNCED: &str = "PRAGMA synchronous = NORMAL;";

/// The document store's read-only transactions read the database file through a memory map
/// (its first 256 MiB; the rest, and the log, are read as before). Without it SQLite reads the
/// last overflow page of a large row (a booking's list item is about 5 KB, more than a 4 KB
/// page) with a `pread` of its own on every read, past its page cache: one system call per
/// booking of a page (docs/decisions.md, "The document store reads the SQLite file through a
/// memory map").
///
/// Writers' connections do not map it. A connection drops its whole map when it begins a
/// transaction after another connection's commit, as it drops its page cache, and under
/// writes that is every transaction: each would unmap the pages the last one touched (with a
/// flush of the other cores' TLBs) and fault them in again, for the few pages a write reads.
const MEMORY_MAPPED: &str = "PRAGMA mmap_size = 268435456;";

/// At most this many idle connections are kept on each shelf (about one per request in
/// flight); more are opened under load and closed when they come back to a full shelf.
const MAX_IDLE: usize = 64;

/// Where a connection is kept between transactions, and so how it was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shelf {
    /// Read-only transactions' connections, which map the file ([`MEMORY_MAPPED`]).
    Readers,
    /// Read-write transactions', until they take the write lock.
    Writers,
    /// The one connection the holder of the writer turn writes on.
    Writer,
}

/// Statements kept prepared per connection: the store has a few dozen distinct ones.
const STATEMENT_CACHE: usize = 128;

/// The connections of one SQLite database.
#[derive(Debug)]
pub struct Connections {
    /// Its file, or the URI of a database in memory.
    path: PathBuf,
    flags: OpenFlags,
    /// Idle connections of [`Shelf::Readers`] and [`Shelf::Writers`].
    readers: Mutex<Vec<Connection>>,
    writers: Mutex<Vec<Connection>>,
    /// The connection writers write on, taken only by the holder of the writer turn. A
    /// connection drops its whole cache of pages whenever another connection has committed,
    /// so under load a shelved connection starts each transaction with nothing in memory;
    /// this one is emptied only by commits made elsewhere.
    writer: Mutex<Option<Connection>>,
    /// SQLite has one writer at a time. This process's writers queue here, in arrival order,
    /// before they take the write lock, rather than in SQLite's busy handler, which polls with
    /// growing sleeps and turns contention into second-long tails.
    turn: Arc<tokio::sync::Mutex<()>>,
    /// The group sync of the file's log; `None` for a database in memory, which has no log
    /// and is not durable anyway.
    journal: Option<Arc<Journal>>,
    /// When the file's log is started over under load.
    log: LogReset,
}

impl Connections {
    /// The connections of the database file at `path` (created and migrated by sqlx already).
    /// Starts the sync task of its log on the current runtime.
    pub fn new(path: PathBuf) -> Arc<Self> {
        let journal = Arc::new(Journal::start(&path));
        let log = LogReset::of_file(&path);
        Self::with_flags(path, OpenFlags::empty(), Some(journal), log)
    }

    /// The connections of the shared-cache database in memory named `name` (created and
    /// migrated by sqlx already, whose pool keeps it alive).
    pub fn in_memory(name: &str) -> Arc<Self> {
        Self::with_flags(
            PathBuf::from(format!("file:{name}?mode=memory&cache=shared")),
            OpenFlags::SQLITE_OPEN_URI,
            None,
            LogReset::in_memory(),
        )
    }

    fn with_flags(
        path: PathBuf,
        flags: OpenFlags,
        journal: Option<Arc<Journal>>,
        log: LogReset,
    ) -> Arc<Self> {
        Arc::new(Self {
            path,
            flags,
            readers: Mutex::default(),
            writers: Mutex::default(),
            writer: Mutex::default(),
            turn: Arc::default(),
            journal,
            log,
        })
    }

    fn open(&self, shelf: Shelf) -> Result<Connection> {
        let connection = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | self.flags,
        )
        .map_err(sorted)?;
        connection.execute_batch(PRAGMAS).map_err(sorted)?;
        if self.journal.is_some() {
            connection.execute_batch(GROUP_SYNCED).map_err(sorted)?;
            if shelf == Shelf::Readers {
                connection.execute_batch(MEMORY_MAPPED).map_err(sorted)?;
            }
            LogReset::configure(&connection).map_err(sorted)?;
        }
        connection.busy_timeout(BUSY_TIMEOUT).map_err(sorted)?;
        connection.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Ok(connection)
    }

    /// A connection from `shelf`, or a new one opened for it.
    pub(super) fn take(&self, shelf: Shelf) -> Result<Connection> {
        let idle = match shelf {
            Shelf::Writer => self
                .writer
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
            Shelf::Readers | Shelf::Writers => self
                .idle(shelf)
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pop(),
        };
        match idle {
            Some(connection) => Ok(connection),
            None => self.open(shelf),
        }
    }

    /// The idle connections of [`Shelf::Readers`] or [`Shelf::Writers`].
    fn idle(&self, shelf: Shelf) -> &Mutex<Vec<Connection>> {
        if shelf == Shelf::Readers {
            &self.readers
        } else {
            &self.writers
        }
    }

    /// Rolls back what `connection` has open and shelves it; a connection whose rollback
    /// fails is in an unknown state, and is closed instead.
    fn release(&self, connection: Connection, shelf: Shelf) {
        if control(&connection, "ROLLBACK").is_ok() {
            self.give_back(connection, shelf);
        }
    }

    /// Puts `connection` back on `shelf`, where [`Connections::take`] took it.
    fn give_back(&self, connection: Connection, shelf: Shelf) {
        if shelf == Shelf::Writer {
            *self.writer.lock().unwrap_or_else(PoisonError::into_inner) = Some(connection);
            return;
        }
        let mut idle = self
            .idle(shelf)
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if idle.len() < MAX_IDLE {
            idle.push(connection);
        }
    }

    /// Begins a transaction in `mode` on a leased connection. A writer begins without the
    /// write lock unless `locked` or a reset of the log is due ([`LogReset`]); then it waits
    /// for its turn first: see [`Transaction::lock`].
    pub async fn begin(self: &Arc<Self>, mode: Mode, locked: bool) -> Result<Transaction> {
        let unlocked = match (mode, locked) {
            (Mode::ReadWrite, false) => self.log.read_unlocked(),
            _ => None,
        };
        let (begin, lock) = match (mode, unlocked) {
            (Mode::ReadOnly, _) => (READ, Lock::Never),
            (Mode::ReadWrite, Some(counted)) => (
                READ,
                Lock::Deferred {
                    reads: Vec::new(),
                    counted,
                },
            ),
            (Mode::ReadWrite, None) => (
                WRITE,
                Lock::Held {
                    _turn: self.wait_for_turn().await,
                },
            ),
        };
        let shelf = match (&lock, mode) {
            (Lock::Held { .. }, _) => Shelf::Writer,
            (_, Mode::ReadWrite) => Shelf::Writers,
            (_, Mode::ReadOnly) => Shelf::Readers,
        };
        let connection = self.begin_on(self.take(shelf)?, begin, shelf).await?;
        Ok(Transaction {
            connection: Some(connection),
            home: Arc::clone(self),
            lock,
            shelf,
        })
    }

    /// This process's writer turn, once every writer before has ended.
    pub(super) async fn wait_for_turn(&self) -> tokio::sync::OwnedMutexGuard<()> {
        Arc::clone(&self.turn).lock_owned().await
    }

    /// Runs `begin` on `connection`. A deferred begin takes no lock, and an immediate one
    /// finds the lock free unless another connection holds it: it is tried without waiting
    /// first, and only when the lock is taken run again on the blocking pool, where it may
    /// wait. On failure the connection goes back to `shelf`, where it was taken from.
    async fn begin_on(
        self: &Arc<Self>,
        connection: Connection,
        begin: &'static str,
        shelf: Shelf,
    ) -> Result<Connection> {
        connection.busy_timeout(Duration::ZERO).map_err(sorted)?;
        let first = control(&connection, begin);
        connection.busy_timeout(BUSY_TIMEOUT).map_err(sorted)?;
        match first {
            Ok(()) => Ok(connection),
            Err(error) if begin == WRITE && is_busy(&error) => {
                let home = Arc::clone(self);
                tokio::task::spawn_blocking(move || match control(&connection, begin) {
                    Ok(()) => Ok(connection),
                    Err(error) => {
                        home.give_back(connection, shelf);
                        Err(sorted(error))
                    }
                })
                .await
                .map_err(|error| unavailable(&error))?
            }
            Err(error) => {
                self.give_back(connection, shelf);
                Err(sorted(error))
            }
        }
    }

    #[cfg(test)]
    pub(super) fn journal(&self) -> Option<&Journal> {
        self.journal.as_deref()
    }
}

/// How a transaction begins: without a lock (readers, and writers until their first write),
/// or with the write lock.
const READ: &str = "BEGIN DEFERRED";
const WRITE: &str = "BEGIN IMMEDIATE";

/// A statement that writes nothing but takes the write lock, which SQLite grants a transaction
/// only while the state it reads is the newest (else `SQLITE_BUSY_SNAPSHOT`).
const TAKE_WRITE_LOCK: &str = "UPDATE sequences SET value = value WHERE 0";

/// Where a transaction stands with the file's write lock.
#[derive(Debug)]
enum Lock {
    /// A reader: never takes it.
    Never,
    /// A writer that has only read so far: each statement it ran and the rows it got, to be
    /// checked again once it has the lock; counted as reading without the turn.
    Deferred {
        reads: Vec<(Statement, Vec<Row>)>,
        counted: Unlocked,
    },
    /// A writer with the lock, and with this process's writer turn until it ends. (Dropped
    /// after the connection has gone back: the next writer takes the writers' connection.)
    Held {
        _turn: tokio::sync::OwnedMutexGuard<()>,
    },
}

/// An open transaction on a leased connection. Dropped without [`Transaction::commit`], it
/// rolls back and the connection goes back where it was taken from.
#[derive(Debug)]
pub struct Transaction {
    /// `None` once a failed [`Transaction::lock`] has rolled the transaction back.
    connection: Option<Connection>,
    home: Arc<Connections>,
    lock: Lock,
    /// Where the connection came from and goes back to ([`Connections::take`]).
    shelf: Shelf,
}

impl Transaction {
    fn connection(&self) -> Result<&Connection> {
        // Only a failed `lock` leaves a transaction without its connection; the guest was
        // told, and is to begin again.
        self.connection.as_ref().ok_or_else(conflict)
    }

    /// Whether the transaction holds the write lock (and this process's writer turn).
    pub fn holds_write(&self) -> bool {
        matches!(self.lock, Lock::Held { .. })
    }

    /// Runs one statement and returns its rows. A writer without the lock notes what it read,
    /// and takes the lock before its first statement that writes.
    pub async fn execute(&mut self, statement: &Statement) -> Result<Vec<Row>> {
        if let Lock::Deferred { reads, .. } = &mut self.lock {
            let connection = self.connection.as_ref().ok_or_else(conflict)?;
            match rental_store_sql::embedded::execute_if_reading(connection, statement) {
                Ok(Some(rows)) => {
                    reads.push((statement.clone(), rows.clone()));
                    return Ok(rows);
                }
                Ok(None) => {
                    if let Lock::Deferred { reads, counted } =
                        std::mem::replace(&mut self.lock, Lock::Never)
                    {
                        self.lock(reads, counted).await?;
                    }
                }
                Err(error) => return Err(sorted(error)),
            }
        }
        rental_store_sql::embedded::execute(self.connection()?, statement).map_err(sorted)
    }

    /// Takes the writer turn of this process and the write lock, for a writer about to write
    /// that has run `reads` so far.
    ///
    /// A writer reads without the lock, from the state of the file when it first read, so
    /// that other writers are not kept waiting while its guest computes from what it read.
    /// When no commit has come in since, SQLite grants the lock on that same state. Otherwise
    /// the transaction begins again with the lock, on the newest state and on the writers'
    /// connection (whose cache other writers' commits have not emptied), and runs every
    /// statement it ran so far once more: when each answers the same rows, what the guest
    /// decided still holds, and it goes on as if it had read here. When one answers otherwise,
    /// the transaction is rolled back and fails with a conflict: the guest begins again.
    ///
    /// It stays `counted` as reading without the turn until its old snapshot is given up: a
    /// reset of the log waits for it ([`LogReset`]).
    async fn lock(&mut self, reads: Vec<(Statement, Vec<Row>)>, counted: Unlocked) -> Result<()> {
        // No writer until the lock is held: a failure below has rolled the transaction back,
        // and its next statement fails with a conflict.
        self.lock = Lock::Never;
        let turn = self.home.wait_for_turn().await;
        let Some(connection) = self.connection.take() else {
            return Err(conflict());
        };
        connection.busy_timeout(Duration::ZERO).map_err(sorted)?;
        let in_place = control(&connection, TAKE_WRITE_LOCK);
        connection.busy_timeout(BUSY_TIMEOUT).map_err(sorted)?;
        match in_place {
            Ok(()) => {
                self.connection = Some(connection);
                self.lock = Lock::Held { _turn: turn };
                return Ok(());
            }
            Err(error) if is_busy(&error) => {}
            Err(error) => {
                self.home.release(connection, self.shelf);
                return Err(sorted(error));
            }
        }
        self.home.release(connection, self.shelf);
        // Its old snapshot is given up: a reset of the log no longer waits for it.
        drop(counted);
        self.shelf = Shelf::Writer;
        let connection = self.home.take(Shelf::Writer)?;
        let connection = self.home.begin_on(connection, WRITE, Shelf::Writer).await?;
        for (statement, rows) in &reads {
            match rental_store_sql::embedded::execute(&connection, statement) {
                Ok(again) if again == *rows => {}
                outcome => {
                    tracing::debug!(reads = reads.len(), "a writer's reads changed: conflict");
                    self.home.release(connection, Shelf::Writer);
                    return Err(outcome.map_or_else(sorted, |_| conflict()));
                }
            }
        }
        tracing::debug!(reads = reads.len(), "a writer's reads held after a commit");
        self.connection = Some(connection);
        self.lock = Lock::Held { _turn: turn };
        Ok(())
    }

    /// Commits, or on failure rolls back. Answers what the caller must wait for
    /// ([`Ending::durable`]) before it answers anyone: the sync of this commit, or for a
    /// transaction that wrote nothing, of every commit it may have seen.
    pub fn commit(mut self) -> Result<Ending> {
        let connection = self.connection.take().ok_or_else(conflict)?;
        let journal = self.home.journal.clone();
        let ticket = match &journal {
            Some(journal) if self.holds_write() => Some(journal.commit_begins()),
            _ => None,
        };
        let committed = control(&connection, "COMMIT");
        if let (Some(journal), Some(ticket)) = (&journal, ticket) {
            journal.commit_returned(ticket);
        }
        if let Err(error) = committed {
            self.home.release(connection, self.shelf);
            return Err(sorted(error));
        }
        if self.holds_write() {
            self.home.log.after_commit(&connection);
        }
        self.home.give_back(connection, self.shelf);
        Ok(Ending(journal.map(|journal| {
            let ticket = ticket.unwrap_or_else(|| journal.horizon());
            (journal, ticket)
        })))
    }

    /// Rolls back. Answers what the caller must wait for before it answers anyone from what
    /// the transaction read: the sync of every commit it may have seen.
    pub fn roll_back(self) -> Ending {
        Ending(self.home.journal.clone().map(|journal| {
            let ticket = journal.horizon();
            (journal, ticket)
        }))
    }
}

/// A transaction that has ended, not yet known durable: the journal and the ticket to wait
/// for (`None` for a database in memory, which is not durable anyway).
#[must_use = "what a transaction wrote or read is durable only once its ending is waited for"]
pub struct Ending(Option<(Arc<Journal>, Ticket)>);

impl Ending {
    /// Waits until the log is synced past everything the transaction wrote or may have seen.
    pub async fn durable(self) -> Result<()> {
        match self.0 {
            Some((journal, ticket)) => journal.durable(ticket).await,
            None => Ok(()),
        }
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        if let Some(connection) = self.connection.take() {
            self.home.release(connection, self.shelf);
        }
    }
}

/// Runs one of the statements that begin, lock and end transactions, kept prepared on the
/// connection: every request runs two or three of them, and parsing them anew each time was
/// a tenth of a one-booking page's SQLite time (docs/benchmarks.md).
fn control(connection: &Connection, sql: &'static str) -> rusqlite::Result<()> {
    connection.prepare_cached(sql)?.execute([]).map(drop)
}

/// A begin that did not come back from the blocking pool (the runtime is shutting down).
fn unavailable(error: &tokio::task::JoinError) -> Error {
    Error::Store(rental_store_sql::StoreError::Unavailable(format!(
        "beginning a transaction: {error}"
    )))
}

/// What a writer is told when what it read has changed: begin again.
fn conflict() -> Error {
    Error::Store(rental_store_sql::StoreError::Conflict)
}

/// Whether SQLite answered busy or locked: another connection holds what it needs.
fn is_busy(error: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode::{DatabaseBusy, DatabaseLocked};
    matches!(error, rusqlite::Error::SqliteFailure(failure, _)
        if matches!(failure.code, DatabaseBusy | DatabaseLocked))
}

/// Sorts an SQLite error as the sqlx ones are: busy or locked is a conflict (the guest retries),
/// anything else a fault.
fn sorted(error: rusqlite::Error) -> Error {
    if is_busy(&error) {
        conflict()
    } else {
        Error::Sqlite(error)
    }
}
