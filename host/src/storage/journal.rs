//! Group sync of the SQLite log: the document store's commits are written at once and made
//! durable together.
//!
//! With `synchronous = FULL` every commit synced the write-ahead log itself, inside the
//! writer's turn: one `fsync` per commit, with every other writer of the file waiting behind
//! it. The document store's connections now commit with `synchronous = NORMAL` (the log is
//! written, not synced) and number their commits; a task of the database syncs the log,
//! which covers every commit written before the sync began, and each caller waits, after it
//! has given up the writer turn, until a sync covers its own commit. While one sync runs, the
//! commits that arrive meanwhile wait for the next, so under load one sync serves many.
//!
//! A commit is visible to readers before it is durable. So a transaction that only read
//! waits too, when it ends, for every commit it may have seen: nothing answered from the
//! store, written or read, is ever lost to a crash of the machine after it was answered.
//! With no unsynced commit (no writes of late), that wait is one comparison.
//!
//! A failed sync leaves the log's pages in an unknown state (the kernel may have dropped
//! them), so it is never retried: every later wait fails, and the host answers writes with
//! an error (500) until it is restarted and SQLite recovers the log.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rental_store_sql::StoreError;
use tokio::sync::watch;

use super::{Error, Result};

/// How far the log is durable, or the failure that stopped the syncs.
type Synced = std::result::Result<Progress, String>;

/// The syncs done so far.
#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    /// Every commit numbered up to this one is durable.
    upto: u64,
    /// How many syncs it took (one covers every commit written before it began).
    syncs: u64,
}

/// What a transaction's caller waits for when it ends: a sync of the log covering this
/// commit's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[must_use = "a transaction is durable only once its ticket is waited for"]
pub struct Ticket(u64);

/// The numbering of one database's commits and the task that syncs its log.
#[derive(Debug)]
pub struct Journal {
    /// Commits begun: a commit takes its number before `COMMIT` is sent, so that a reader
    /// that may have seen it counts it. Commits are numbered in the order of the writer turn.
    begun: AtomicU64,
    /// The highest number whose `COMMIT` has returned: what the next sync covers.
    written: watch::Sender<u64>,
    synced: watch::Receiver<Synced>,
}

impl Journal {
    /// The journal of the SQLite database at `database`, whose log is `<database>-wal`. Starts
    /// its sync task on the current runtime; the task ends with the journal.
    pub fn start(database: &Path) -> Self {
        let mut wal = database.as_os_str().to_owned();
        wal.push("-wal");
        let (written, to_sync) = watch::channel(0);
        let (synced_tx, synced) = watch::channel(Ok(Progress::default()));
        tokio::spawn(sync_log(PathBuf::from(wal), to_sync, synced_tx));
        Self {
            begun: AtomicU64::new(0),
            written,
            synced,
        }
    }

    /// Numbers a commit about to be sent.
    pub fn commit_begins(&self) -> Ticket {
        Ticket(self.begun.fetch_add(1, Ordering::AcqRel) + 1)
    }

    /// The commit of `ticket` has returned (committed or failed): the next sync covers it.
    pub fn commit_returned(&self, ticket: Ticket) {
        self.written.send_if_modified(|written| {
            let moved = ticket.0 > *written;
            *written = (*written).max(ticket.0);
            moved
        });
    }

    /// What a reader ending now may have seen: every commit begun so far.
    pub fn horizon(&self) -> Ticket {
        Ticket(self.begun.load(Ordering::Acquire))
    }

    /// Waits until the log is synced past `ticket`.
    pub async fn durable(&self, ticket: Ticket) -> Result<()> {
        let mut synced = self.synced.clone();
        let state = synced
            .wait_for(|state| state.as_ref().map_or(true, |done| done.upto >= ticket.0))
            .await
            .map_err(|_| unavailable("the log's sync task has ended"))?;
        match &*state {
            Ok(_) => Ok(()),
            Err(failure) => Err(unavailable(failure)),
        }
    }

    /// How many syncs of the log have been done.
    #[cfg(test)]
    pub fn syncs(&self) -> u64 {
        self.synced.borrow().as_ref().map_or(0, |done| done.syncs)
    }

    /// How many commits have been numbered.
    #[cfg(test)]
    pub fn commits(&self) -> u64 {
        self.begun.load(Ordering::Acquire)
    }

    /// The highest commit number known durable.
    #[cfg(test)]
    pub fn synced_upto(&self) -> Ticket {
        Ticket(self.synced.borrow().as_ref().map_or(0, |done| done.upto))
    }
}

/// The sync task: whenever commits have been written since the last sync, syncs the log
/// once for all of them. Ends when the journal is dropped, or at the first failed sync.
async fn sync_log(wal: PathBuf, mut written: watch::Receiver<u64>, synced: watch::Sender<Synced>) {
    while written.changed().await.is_ok() {
        let upto = *written.borrow_and_update();
        let file = wal.clone();
        let outcome = match tokio::task::spawn_blocking(move || sync_file(&file)).await {
            Ok(outcome) => outcome.map_err(|error| error.to_string()),
            Err(error) => Err(error.to_string()),
        };
        match outcome {
            Ok(()) => {
                synced.send_modify(|state| {
                    if let Ok(done) = state {
                        done.upto = upto;
                        done.syncs += 1;
                    }
                });
            }
            Err(error) => {
                let failure = format!("syncing {}: {error}", wal.display());
                tracing::error!(
                    %failure,
                    "the database's log could not be synced: writes are refused until rentald is restarted"
                );
                synced.send_modify(|state| *state = Err(failure));
                return;
            }
        }
    }
}

/// Syncs the data of the file at `path`. A log that does not exist holds nothing to sync:
/// SQLite removes it only after copying it into the database and syncing that.
fn sync_file(path: &Path) -> io::Result<()> {
    match std::fs::File::open(path) {
        Ok(file) => file.sync_data(),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    }
}

fn unavailable(why: impl std::fmt::Display) -> Error {
    Error::Store(StoreError::Unavailable(format!(
        "the database's log is not durable: {why}"
    )))
}
