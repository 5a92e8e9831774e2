//! Checkpointing the SQLite log, and starting it over while writes go on.
//!
//! SQLite appends every commit to the log (`<database>-wal`). Left to itself, the connection
//! that commits copies the log into the database file (a checkpoint, with a sync of each file)
//! right after its commit, once the log has passed a thousand pages: on the document store's
//! connections that is inside the writer turn ([`super::sqlite`]), where every other writer
//! waits for those syncs. So these connections never checkpoint; a task of the database does,
//! in the background, a while after commits came in ([`PAUSE`]), without waiting for anyone
//! (`PASSIVE`), and notes how long the log is.
//!
//! SQLite starts the log over only when a writer begins on a log that was checkpointed in full
//! and that no reader still reads. The document store's writers read before they take the
//! writer turn, so under a sustained write load some transaction always holds a snapshot
//! older than the newest commit, and the log grew by every commit (about 130 KB a booking)
//! for as long as the load lasted (docs/benchmarks.md, "The log grows without bound under
//! sustained writes").
//!
//! So once the log has passed [`LIMIT`], a reset is due: new writers take the turn before
//! they read. When the writers that were already reading without it have all taken it or
//! ended, the next writer to commit checkpoints the rest of the log and waits, still in its
//! turn and at most [`WAIT`], for readers (a few milliseconds of work each) to leave it
//! (`RESTART`); the next commit then writes the log from its beginning again. The file keeps
//! its blocks, so that the file system does not allocate them anew for every round; a log
//! that once grew past twice the limit is cut back to that when it starts over. A reset that
//! cannot finish in time (a component keeping a transaction open) is given up and tried
//! again after [`BACKOFF`], so that the other writers lose little to it. A checkpoint syncs
//! the log before it copies it and the database after, so the commits it moves stay as
//! durable as the log's group sync made them ([`super::journal`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use tokio::sync::watch;

/// The log's length past which it is started over.
pub const LIMIT: u64 = 64 << 20;

/// How long a reset waits for readers to leave the log.
const WAIT: Duration = Duration::from_millis(20);

/// How long after a reset was given up (or could not begin, writers still reading without
/// the turn) before another is tried.
const BACKOFF: Duration = Duration::from_secs(1);

/// The background checkpoints' pace: at most one this often, so that one serves many commits.
const PAUSE: Duration = Duration::from_millis(20);

/// When the log of one database file is checkpointed and started over.
#[derive(Debug)]
pub struct LogReset {
    /// The log's checkpoints; `None` for a database in memory, which has no log.
    checkpoints: Option<Checkpoints>,
    /// Writers in flight that read without the turn: their snapshots keep the log.
    unlocked: Arc<AtomicUsize>,
    state: Mutex<State>,
}

/// The background checkpoints of a log.
#[derive(Debug)]
struct Checkpoints {
    /// The log's length in bytes, as of the last checkpoint.
    length: Arc<AtomicU64>,
    /// Rung at every commit; the task checkpoints when it has been. Dropped, it ends the task.
    commits: watch::Sender<()>,
}

#[derive(Debug, Clone, Copy)]
enum State {
    /// The log was under the limit when last looked at.
    Idle,
    /// Past it since this instant: new writers take the turn before they read.
    Due(Instant),
    /// A reset was given up: none is tried before this instant.
    Resting(Instant),
}

/// A writer reading without the turn, counted until it is dropped.
#[derive(Debug)]
pub struct Unlocked(Arc<AtomicUsize>);

impl Drop for Unlocked {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl LogReset {
    /// For the database file at `database`. Starts the task that checkpoints its log on the
    /// current runtime; the task ends with this.
    pub fn of_file(database: &Path) -> Self {
        let length = Arc::new(AtomicU64::new(0));
        let (commits, rung) = watch::channel(());
        tokio::spawn(checkpoint_log(
            database.to_path_buf(),
            rung,
            Arc::downgrade(&length),
        ));
        Self::new(Some(Checkpoints { length, commits }))
    }

    /// For a database in memory: never due.
    pub fn in_memory() -> Self {
        Self::new(None)
    }

    fn new(checkpoints: Option<Checkpoints>) -> Self {
        Self {
            checkpoints,
            unlocked: Arc::default(),
            state: Mutex::new(State::Idle),
        }
    }

    /// Sets up a connection that writes the log: it leaves checkpoints to the background task
    /// and trims a log that grew long when it starts over.
    pub fn configure(connection: &Connection) -> rusqlite::Result<()> {
        connection.pragma_update(None, "wal_autocheckpoint", 0)?;
        connection.pragma_update(None, "journal_size_limit", 2 * LIMIT)
    }

    /// A writer beginning now may read before it takes the turn, counted while it does;
    /// `None` while a reset is due.
    pub fn read_unlocked(&self) -> Option<Unlocked> {
        self.unlocked.fetch_add(1, Ordering::SeqCst);
        let counted = Unlocked(Arc::clone(&self.unlocked));
        match self.state() {
            State::Due(_) => None,
            State::Idle | State::Resting(_) => Some(counted),
        }
    }

    /// After a writer's commit, in its turn and on its connection: starts the log over when
    /// it has passed the limit and nothing stops it.
    pub fn after_commit(&self, connection: &Connection) {
        let Some(checkpoints) = &self.checkpoints else {
            return;
        };
        checkpoints.commits.send_modify(|()| {});
        let now = Instant::now();
        match self.state() {
            State::Resting(until) if now < until => return,
            State::Due(since) => {
                if self.unlocked.load(Ordering::SeqCst) > 0 {
                    if now.duration_since(since) > BACKOFF {
                        self.set(State::Resting(now + BACKOFF));
                    }
                    return;
                }
            }
            State::Idle | State::Resting(_) => {
                if checkpoints.length.load(Ordering::SeqCst) < LIMIT {
                    self.set(State::Idle);
                    return;
                }
                self.set(State::Due(now));
                if self.unlocked.load(Ordering::SeqCst) > 0 {
                    return;
                }
            }
        }
        match restart(connection) {
            Ok(true) => {
                tracing::debug!("the database's log was started over");
                checkpoints.length.store(0, Ordering::SeqCst);
                self.set(State::Idle);
            }
            outcome => {
                tracing::debug!(?outcome, "the database's log could not be started over yet");
                self.set(State::Resting(now + BACKOFF));
            }
        }
    }

    fn state(&self) -> State {
        *self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set(&self, state: State) {
        *self.state.lock().unwrap_or_else(PoisonError::into_inner) = state;
    }
}

/// Checkpoints the log in full and waits at most [`WAIT`] for readers to leave it, so that the
/// next commit starts it over; whether it finished.
fn restart(connection: &Connection) -> rusqlite::Result<bool> {
    connection.busy_timeout(WAIT)?;
    let busy = connection.query_row("PRAGMA wal_checkpoint(RESTART)", [], |row| {
        row.get::<_, i64>(0)
    });
    connection.busy_timeout(super::sqlite::BUSY_TIMEOUT)?;
    Ok(busy? == 0)
}

/// The checkpoint task of the database at `database`: a while after commits came in, copies
/// what it can of the log into the database on a connection of its own, and notes the log's
/// `length`, until that passes the limit (the reset then sets it back). Ends when the
/// database's [`LogReset`] is dropped.
async fn checkpoint_log(
    database: PathBuf,
    mut commits: watch::Receiver<()>,
    length: Weak<AtomicU64>,
) {
    let mut connection: Option<Checkpointer> = None;
    while commits.changed().await.is_ok() {
        tokio::time::sleep(PAUSE).await;
        commits.borrow_and_update();
        // Once a reset is due, the reset copies what is left, and would wait for this.
        if length
            .upgrade()
            .is_none_or(|length| length.load(Ordering::SeqCst) >= LIMIT)
        {
            continue;
        }
        let database = database.clone();
        let taken = connection.take();
        let done = tokio::task::spawn_blocking(move || {
            let checkpointer = match taken {
                Some(checkpointer) => checkpointer,
                None => Checkpointer::open(&database)?,
            };
            let log = checkpointer.passive()?;
            Ok::<_, rusqlite::Error>((checkpointer, log))
        })
        .await
        .map_err(|error| error.to_string())
        .and_then(|done| done.map_err(|error| error.to_string()));
        let Some(length) = length.upgrade() else {
            return;
        };
        match done {
            Ok((checkpointer, log)) => {
                if let Some(log) = log {
                    length.store(log, Ordering::SeqCst);
                }
                connection = Some(checkpointer);
            }
            Err(error) => tracing::warn!(%error, "the database's log could not be checkpointed"),
        }
    }
}

/// The checkpoint task's connection.
struct Checkpointer {
    connection: Connection,
    /// The length of one frame of the log: a page and its header.
    frame: u64,
}

impl Checkpointer {
    fn open(database: &Path) -> rusqlite::Result<Self> {
        let connection = Connection::open_with_flags(
            database,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        connection.execute_batch(super::sqlite::PRAGMAS)?;
        let page: u64 = connection.query_row("PRAGMA page_size", [], |row| row.get(0))?;
        Ok(Self {
            connection,
            frame: page + 24,
        })
    }

    /// Copies what no reader still needs of the log into the database, without waiting for
    /// anyone; the log's length, unless another checkpoint was running.
    fn passive(&self) -> rusqlite::Result<Option<u64>> {
        let (busy, frames) =
            self.connection
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
                    Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?))
                })?;
        Ok(u64::try_from(frames)
            .ok()
            .filter(|_| busy == 0)
            .map(|frames| frames * self.frame))
    }
}
