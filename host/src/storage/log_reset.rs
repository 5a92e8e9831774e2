//! Starting the SQLite log over while writes go on.
//!
//! SQLite appends every commit to the log (`<database>-wal`) and starts the log over only
//! when a writer begins on a log that was checkpointed in full and that no reader still
//! reads. The document store's writers read before they take the writer turn
//! ([`super::sqlite`]), so under a sustained write load some transaction always holds a
//! snapshot older than the newest commit: checkpoints never finish, and the log grew by every
//! commit (about 130 KB a booking) for as long as the load lasted (docs/benchmarks.md, "The
//! log grows without bound under sustained writes").
//!
//! So once the log has passed [`LIMIT`], a reset is due: new writers take the turn before
//! they read. When the writers that were already reading without it have all taken it or
//! ended, the next writer to commit checkpoints the log in full and truncates it, still in
//! its turn, waiting at most [`WAIT`] for readers (a few milliseconds of work each) to leave
//! the log. A reset that cannot finish in time (a component keeping a transaction open) is
//! given up and tried again after [`BACKOFF`], so that the other writers lose little to it.
//! The checkpoint syncs the log before it copies it and the database after, so the commits
//! it moves stay as durable as the log's group sync made them ([`super::journal`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::Connection;

/// The log's size past which it is started over.
pub const LIMIT: u64 = 64 << 20;

/// How long a reset waits for readers to leave the log.
const WAIT: Duration = Duration::from_millis(20);

/// How long after a reset was given up (or could not begin, writers still reading without
/// the turn) before another is tried.
const BACKOFF: Duration = Duration::from_secs(1);

/// When the log of one database file is started over.
#[derive(Debug)]
pub struct LogReset {
    /// The log; `None` for a database in memory, which has none.
    wal: Option<PathBuf>,
    /// Writers in flight that read without the turn: their snapshots keep the log.
    unlocked: Arc<AtomicUsize>,
    state: Mutex<State>,
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
    /// For the database file at `database`, whose log is `<database>-wal`.
    pub fn of_file(database: &Path) -> Self {
        let mut wal = database.as_os_str().to_owned();
        wal.push("-wal");
        Self::new(Some(PathBuf::from(wal)))
    }

    /// For a database in memory: never due.
    pub fn in_memory() -> Self {
        Self::new(None)
    }

    fn new(wal: Option<PathBuf>) -> Self {
        Self {
            wal,
            unlocked: Arc::default(),
            state: Mutex::new(State::Idle),
        }
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
        let Some(wal) = &self.wal else { return };
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
                if std::fs::metadata(wal).map_or(0, |file| file.len()) < LIMIT {
                    self.set(State::Idle);
                    return;
                }
                self.set(State::Due(now));
                if self.unlocked.load(Ordering::SeqCst) > 0 {
                    return;
                }
            }
        }
        match truncate(connection) {
            Ok(true) => {
                tracing::debug!("the database's log was started over");
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

/// Checkpoints the log in full and truncates it, waiting at most [`WAIT`] for readers;
/// whether it finished.
fn truncate(connection: &Connection) -> rusqlite::Result<bool> {
    connection.busy_timeout(WAIT)?;
    let busy = connection.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
        row.get::<_, i64>(0)
    });
    connection.busy_timeout(super::sqlite::BUSY_TIMEOUT)?;
    Ok(busy? == 0)
}
