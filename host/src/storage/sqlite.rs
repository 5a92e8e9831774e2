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
//! ([`super::journal`]), and the writers that queue for the turn while one writes are
//! committed with it, as one transaction ([`Group`]). Nor does the log grow for as long as
//! writes go on: the writer turn makes room for starting it over ([`super::log_reset`]).
//! Every other part of the storage (tenants, components, the queue's consumer, migrations)
//! stays on sqlx.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rental_store_sql::{Mode, Row, Statement};
use rusqlite::{Connection, OpenFlags};
use tokio::sync::watch;

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
    /// The one connection the holder of the writer turn writes on, in a group ([`Group`]).
    Writer,
}

/// Statements kept prepared per connection: the store has a few dozen distinct ones.
const STATEMENT_CACHE: usize = 128;

/// The most writers' transactions committed as one ([`Group`]). Read off the log under
/// load: eight consecutive commits as one write about 40 % of the pages they write apart
/// (docs/benchmarks.md, "Several writers' transactions in one commit").
const GROUP_LIMIT: usize = 8;

/// The writers' connection, and the group of transactions open on it.
#[derive(Debug, Default)]
struct Writer {
    connection: Option<Connection>,
    group: Option<Group>,
}

/// Writers' transactions written one after another on the writers' connection inside one
/// open transaction, each under a savepoint of its own, and committed as one.
///
/// A writer that ends its part while others wait for the turn leaves the transaction open
/// for them: the log then gets one commit (one `COMMIT`, one sync) for several writers, and
/// the pages they share (indexes, counts, sequences) once. It stays open for at most
/// [`GROUP_LIMIT`] writers, and only while writers queue: the one that ends with nobody
/// waiting commits, and a task queued for the turn behind the writers waiting when the group
/// began commits it if they all left ([`Connections::close_group_in_turn`]). A member waits
/// for the group's commit (and its sync) before it answers anyone; when that commit fails,
/// every member fails. A member that fails rolls back to its savepoint, leaving the others'
/// writes as they were. What a member read includes the uncommitted writes of the members
/// before it: they all commit or fail together.
#[derive(Debug)]
struct Group {
    /// How many transactions have joined.
    members: usize,
    /// Whether a task already queues for the turn to commit it.
    closing: bool,
    /// The group's commit, once made: its ticket, or why it failed.
    outcome: watch::Sender<Option<Committed>>,
}

/// How a group's commit went: the ticket to wait for (none for a database in memory), or the
/// failure that undid every member.
type Committed = std::result::Result<Option<Ticket>, String>;

/// A writer that ends its part in a group of transactions on the writers' connection.
const JOIN: &str = "SAVEPOINT member";
const KEEP: &str = "RELEASE member";
const UNDO: &str = "ROLLBACK TO member";

/// The connections of one SQLite database.
#[derive(Debug)]
pub struct Connections {
    /// Its file, or the URI of a database in memory.
    path: PathBuf,
    flags: OpenFlags,
    /// Idle connections of [`Shelf::Readers`] and [`Shelf::Writers`].
    readers: Mutex<Vec<Connection>>,
    writers: Mutex<Vec<Connection>>,
    /// The connection writers write on, taken only by the holder of the writer turn, and the
    /// group of transactions open on it. A connection drops its whole cache of pages whenever
    /// another connection has committed, so under load a shelved connection starts each
    /// transaction with nothing in memory; this one is emptied only by commits made elsewhere.
    writer: Mutex<Writer>,
    /// SQLite has one writer at a time. This process's writers queue here, in arrival order,
    /// before they take the write lock, rather than in SQLite's busy handler, which polls with
    /// growing sleeps and turns contention into second-long tails.
    turn: Arc<tokio::sync::Mutex<()>>,
    /// How many writers queue for the turn: while some do, a group stays open for them.
    waiting: AtomicUsize,
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
            waiting: AtomicUsize::new(0),
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
            Shelf::Writer => self.writer().connection.take(),
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

    fn writer(&self) -> std::sync::MutexGuard<'_, Writer> {
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
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
            self.writer().connection = Some(connection);
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
    /// for its turn first, and joins the group on the writers' connection: see
    /// [`Transaction::lock`].
    pub async fn begin(self: &Arc<Self>, mode: Mode, locked: bool) -> Result<Transaction> {
        let unlocked = match (mode, locked) {
            (Mode::ReadWrite, false) => self.log.read_unlocked(),
            _ => None,
        };
        let (lock, shelf) = match (mode, unlocked) {
            (Mode::ReadOnly, _) => (Lock::Never, Shelf::Readers),
            (Mode::ReadWrite, Some(counted)) => (
                Lock::Deferred {
                    reads: Vec::new(),
                    counted,
                },
                Shelf::Writers,
            ),
            (Mode::ReadWrite, None) => (
                Lock::Held {
                    _turn: self.wait_for_turn().await,
                },
                Shelf::Writer,
            ),
        };
        let connection = match shelf {
            Shelf::Writer => self.join_group().await?,
            Shelf::Readers | Shelf::Writers => {
                self.begin_on(self.take(shelf)?, READ, shelf).await?
            }
        };
        Ok(Transaction {
            connection: Some(connection),
            home: Arc::clone(self),
            lock,
            shelf,
        })
    }

    /// This process's writer turn, once every writer before has ended; counted as waiting
    /// meanwhile, since a group stays open for the writers that wait ([`Group`]).
    pub(super) async fn wait_for_turn(&self) -> tokio::sync::OwnedMutexGuard<()> {
        if let Ok(turn) = Arc::clone(&self.turn).try_lock_owned() {
            return turn;
        }
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _counted = Waiting(&self.waiting);
        Arc::clone(&self.turn).lock_owned().await
    }

    /// The writer turn for a write on another connection (sqlx's pool): the group open on the
    /// writers' connection is committed first, since its lock would keep that write out.
    pub(super) async fn turn_to_write_elsewhere(&self) -> tokio::sync::OwnedMutexGuard<()> {
        let turn = self.wait_for_turn().await;
        self.close_group();
        turn
    }

    /// For the holder of the writer turn: the writers' connection, inside the open group and
    /// under a savepoint of the transaction joining it. Begins a group when none is open.
    async fn join_group(self: &Arc<Self>) -> Result<Connection> {
        let open = self.writer().group.is_some();
        let connection = self.take(Shelf::Writer)?;
        let connection = if open {
            connection
        } else {
            self.begin_on(connection, WRITE, Shelf::Writer).await?
        };
        if let Err(error) = control(&connection, JOIN) {
            if open {
                self.fail_group(connection, error.to_string());
            } else {
                self.release(connection, Shelf::Writer);
            }
            return Err(sorted(error));
        }
        let mut writer = self.writer();
        match &mut writer.group {
            Some(group) => group.members += 1,
            None => {
                writer.group = Some(Group {
                    members: 1,
                    closing: false,
                    outcome: watch::channel(None).0,
                });
            }
        }
        Ok(connection)
    }

    /// Ends the part in the group of the member writing on `connection`, keeping its writes
    /// or undoing them. Then leaves the group open when writers queue for the turn and it has
    /// room; else commits it. Answers what the member waits for: the group's commit.
    fn leave_group(
        self: &Arc<Self>,
        connection: Connection,
        keep: bool,
    ) -> watch::Receiver<Option<Committed>> {
        let (outcome, members, closing) = match &self.writer().group {
            Some(group) => (group.outcome.subscribe(), group.members, group.closing),
            None => {
                self.release(connection, Shelf::Writer);
                return watch::channel(Some(Err("its group was lost".to_owned()))).1;
            }
        };
        let ended = if keep {
            control(&connection, KEEP)
        } else {
            control(&connection, UNDO).and_then(|()| control(&connection, KEEP))
        };
        if let Err(error) = ended {
            self.fail_group(connection, error.to_string());
            return outcome;
        }
        let runtime = tokio::runtime::Handle::try_current().ok();
        let stays_open = members < GROUP_LIMIT
            && self.waiting.load(Ordering::SeqCst) > 0
            && (closing || runtime.is_some());
        if !stays_open {
            self.commit_group(connection);
            return outcome;
        }
        self.give_back(connection, Shelf::Writer);
        if let (false, Some(runtime)) = (closing, runtime) {
            if let Some(group) = &mut self.writer().group {
                group.closing = true;
            }
            runtime.spawn(Arc::clone(self).close_group_in_turn());
        }
        outcome
    }

    /// Queues for the turn behind the writers waiting now, and commits the group if they all
    /// left it open (one of them gave up waiting, say). Not counted as waiting: the last of
    /// them commits when nobody else waits.
    async fn close_group_in_turn(self: Arc<Self>) {
        let _turn = Arc::clone(&self.turn).lock_owned().await;
        self.close_group();
    }

    /// For the holder of the writer turn: commits the group open on the writers' connection,
    /// if any.
    fn close_group(&self) {
        let connection = {
            let mut writer = self.writer();
            if writer.group.is_none() {
                return;
            }
            writer.connection.take()
        };
        match connection {
            Some(connection) => self.commit_group(connection),
            None => {
                if let Some(group) = self.writer().group.take() {
                    group
                        .outcome
                        .send_replace(Some(Err("the writers' connection was lost".to_owned())));
                }
            }
        }
    }

    /// Commits the group open on `connection` (the writers' connection) and tells its members
    /// how that went.
    fn commit_group(&self, connection: Connection) {
        let Some(group) = self.writer().group.take() else {
            self.give_back(connection, Shelf::Writer);
            return;
        };
        let committed = self.commit_on(connection, Shelf::Writer, true);
        tracing::debug!(
            members = group.members,
            ok = committed.is_ok(),
            "a group of writes ended"
        );
        group
            .outcome
            .send_replace(Some(committed.map_err(|error| error.to_string())));
    }

    /// Commits the transaction open on `connection` and puts the connection back on `shelf`,
    /// or on failure rolls back (closing a connection whose rollback fails). A commit that
    /// `wrote` is numbered for the log's sync, its ticket answered, and may start the log over.
    fn commit_on(
        &self,
        connection: Connection,
        shelf: Shelf,
        wrote: bool,
    ) -> rusqlite::Result<Option<Ticket>> {
        let ticket = match &self.journal {
            Some(journal) if wrote => Some(journal.commit_begins()),
            _ => None,
        };
        let committed = control(&connection, "COMMIT");
        if let (Some(journal), Some(ticket)) = (&self.journal, ticket) {
            journal.commit_returned(ticket);
        }
        if let Err(error) = committed {
            self.release(connection, shelf);
            return Err(error);
        }
        if wrote {
            self.log.after_commit(&connection);
        }
        self.give_back(connection, shelf);
        Ok(ticket)
    }

    /// Rolls back the group open on `connection` and fails every member, for `why`.
    fn fail_group(&self, connection: Connection, why: String) {
        let group = self.writer().group.take();
        self.release(connection, Shelf::Writer);
        if let Some(group) = group {
            group.outcome.send_replace(Some(Err(why)));
        }
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
/// rolls back (a member of a group, to its savepoint) and the connection goes back where it
/// was taken from.
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
        let connection = self.home.join_group().await?;
        for (statement, rows) in &reads {
            match rental_store_sql::embedded::execute(&connection, statement) {
                Ok(again) if again == *rows => {}
                outcome => {
                    tracing::debug!(reads = reads.len(), "a writer's reads changed: conflict");
                    // The group stays open: a request that lost a race begins its next write
                    // with the turn (`Storage::begin_locked`), in the group, where it reads
                    // what the members before it wrote.
                    drop(self.home.leave_group(connection, false));
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
    /// ([`Ending::durable`]) before it answers anyone: the sync of this commit, or of the
    /// group's that it joined, or for a transaction that wrote nothing, of every commit it may
    /// have seen.
    pub fn commit(mut self) -> Result<Ending> {
        let connection = self.connection.take().ok_or_else(conflict)?;
        let journal = self.home.journal.clone();
        if self.shelf == Shelf::Writer {
            let group = self.home.leave_group(connection, true);
            return Ok(Ending::Group(journal, group));
        }
        let ticket = self
            .home
            .commit_on(connection, self.shelf, self.holds_write())
            .map_err(sorted)?;
        Ok(Ending::Synced(journal.map(|journal| {
            let ticket = ticket.unwrap_or_else(|| journal.horizon());
            (journal, ticket)
        })))
    }

    /// Rolls back. Answers what the caller must wait for before it answers anyone from what
    /// the transaction read: the sync of every commit it may have seen, or the commit of the
    /// group it read in.
    pub fn roll_back(mut self) -> Ending {
        let journal = self.home.journal.clone();
        if self.shelf == Shelf::Writer
            && let Some(connection) = self.connection.take()
        {
            return Ending::Group(journal, self.home.leave_group(connection, false));
        }
        Ending::Synced(journal.map(|journal| {
            let ticket = journal.horizon();
            (journal, ticket)
        }))
    }
}

/// A transaction that has ended, not yet known durable.
#[must_use = "what a transaction wrote or read is durable only once its ending is waited for"]
pub enum Ending {
    /// Its own commit, or the commits it may have seen: the journal and the ticket to wait
    /// for (`None` for a database in memory, which is not durable anyway).
    Synced(Option<(Arc<Journal>, Ticket)>),
    /// The commit of the group it took part in, then its sync.
    Group(Option<Arc<Journal>>, watch::Receiver<Option<Committed>>),
}

impl Ending {
    /// Waits until the log is synced past everything the transaction wrote or may have seen.
    pub async fn durable(self) -> Result<()> {
        let (journal, ticket) = match self {
            Self::Synced(None) => return Ok(()),
            Self::Synced(Some((journal, ticket))) => (journal, ticket),
            Self::Group(journal, mut group) => {
                let committed = group
                    .wait_for(Option::is_some)
                    .await
                    .map(|committed| committed.clone())
                    .map_err(|_| group_failed("it was dropped uncommitted"))?;
                match (journal, committed) {
                    (Some(journal), Some(Ok(Some(ticket)))) => (journal, ticket),
                    (_, Some(Err(why))) => return Err(group_failed(why)),
                    _ => return Ok(()),
                }
            }
        };
        journal.durable(ticket).await
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        if let Some(connection) = self.connection.take() {
            if self.shelf == Shelf::Writer {
                drop(self.home.leave_group(connection, false));
            } else {
                self.home.release(connection, self.shelf);
            }
        }
    }
}

/// A writer queued for the turn, counted until it has it or gives up.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
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

/// What every member of a group of transactions is told when its commit failed.
fn group_failed(why: impl std::fmt::Display) -> Error {
    Error::Store(rental_store_sql::StoreError::Unavailable(format!(
        "a group of writes could not be committed: {why}"
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
