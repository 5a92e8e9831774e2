//! The SQLite log under a sustained write load (docs/operations.md, "Databases"): started
//! over once it passes its limit, instead of growing for as long as the load lasts, and
//! without stalling the writers when a component keeps a snapshot open.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use rentald_tests::{Backend, Options, TestApp};
use reqwest::Method;

use crate::booking::{body, model};
use crate::sandbox::hostile_components;

/// The log's limit (`host/src/storage/log_reset.rs`).
const LIMIT: u64 = 64 << 20;

/// Creations: about 80 KB of log each (130 KB when each committed alone; writers queued for
/// the turn now commit as one), so well past twice the limit together.
const CREATIONS: usize = 2_000;

/// How many days ahead the bookings begin.
const AHEAD: u64 = 400;

/// Clients booking at once: enough that some writer is always reading while another
/// commits, which is what kept the log from being started over.
const CLIENTS: usize = 16;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_is_started_over_under_a_sustained_write_load() {
    let app = Arc::new(TestApp::spawn(Options::new(Backend::Sqlite)).await.unwrap());
    let token = app.tenant_with_token("acme", true).await;
    let watched = Watched::start(app.sqlite_log().unwrap());

    book(&app, &token, 0..CREATIONS).await;

    let largest = watched.largest();
    assert!(
        largest < LIMIT + LIMIT / 2,
        "the log reached {largest} bytes over {CREATIONS} creations (limit {LIMIT})"
    );
    assert!(watched.started_over(), "the log was never started over");
}

/// A component that keeps a snapshot open stops the log from being started over while it
/// does: each reset waits for it only briefly and is tried again later, so the bookings meanwhile
/// all go through (a reset waiting as long as a lock may would hold the writer turn past
/// the write deadline), and once it ends the log is started over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_snapshot_delays_the_reset_without_stalling_writers() {
    let mut options = Options::new(Backend::Sqlite);
    let components = hostile_components();
    options.components_dir = Some(components.path().to_path_buf());
    options.request_timeout_ms = 3_000;
    let app = Arc::new(TestApp::spawn(options).await.unwrap());
    let token = app.tenant_with_token("acme", true).await;
    let evil = app.tenant_with_token("evil", false).await;

    // The other tenant's component holds a snapshot, request after request, each until its
    // deadline.
    let holding = Arc::new(AtomicBool::new(true));
    let holder = {
        let (app, holding) = (Arc::clone(&app), Arc::clone(&holding));
        tokio::spawn(async move {
            while holding.load(Ordering::Relaxed) {
                let held = app.get("evil", "/api/cars?behave=hold-read", &evil).await;
                assert_eq!(held.status(), 503, "stopped at its deadline");
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let log = app.sqlite_log().unwrap();
    let watched = Watched::start(log.clone());
    book(&app, &token, 0..CREATIONS).await;
    holding.store(false, Ordering::Relaxed);
    holder.await.unwrap();

    // Started over on time, it stays under this bound (the test above).
    let held = watched.largest();
    assert!(
        held > LIMIT + LIMIT / 2,
        "the log ({held} bytes) was started over while the snapshot was held"
    );
    let watched = Watched::start(log);
    book(&app, &token, CREATIONS..CREATIONS + 600).await;
    assert!(
        watched.started_over(),
        "the log was not started over once the snapshot was let go"
    );
}

/// Books the creations `numbers` of the benchmark's schedule, on [`CLIENTS`] clients at
/// once: creation `n` books model `n % 8 + 1` for two days, every booking of a model three
/// days after the one before, from [`AHEAD`] days from now, so that all succeed.
async fn book(app: &Arc<TestApp>, token: &str, numbers: Range<usize>) {
    let clients: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let (app, token, numbers) = (Arc::clone(app), token.to_owned(), numbers.clone());
            tokio::spawn(async move {
                for n in numbers.skip(client).step_by(CLIENTS) {
                    let from = AHEAD + 3 * (n as u64 / 8);
                    let creation = body(model(n as i64 % 8 + 1), from, from + 2);
                    let (status, answer) = app
                        .call(
                            "acme",
                            &token,
                            Method::POST,
                            "/api/booking/book",
                            Some(&creation),
                        )
                        .await;
                    assert_eq!(status, 200, "booking {n}: {answer}");
                }
            })
        })
        .collect();
    for client in clients {
        client.await.unwrap();
    }
}

/// A log's file, looked at every 20 ms until dropped.
struct Watched {
    largest: Arc<AtomicU64>,
    /// Whether its checkpoint sequence (in the log's header, bumped each time SQLite starts
    /// the log over) ever changed.
    started_over: Arc<AtomicBool>,
    watcher: tokio::task::JoinHandle<()>,
}

impl Watched {
    fn start(log: PathBuf) -> Self {
        let largest = Arc::new(AtomicU64::new(0));
        let started_over = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (largest, started_over) = (Arc::clone(&largest), Arc::clone(&started_over));
            tokio::spawn(async move {
                let mut first = None;
                loop {
                    let size = std::fs::metadata(&log).map_or(0, |file| file.len());
                    largest.fetch_max(size, Ordering::Relaxed);
                    let sequence = checkpoint_sequence(&log);
                    if first.is_none() {
                        first = Some(sequence);
                    } else if first != Some(sequence) {
                        started_over.store(true, Ordering::Relaxed);
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            })
        };
        Self {
            largest,
            started_over,
            watcher,
        }
    }

    /// The largest size seen.
    fn largest(&self) -> u64 {
        self.largest.load(Ordering::Relaxed)
    }

    /// Whether it was started over.
    fn started_over(&self) -> bool {
        self.started_over.load(Ordering::Relaxed)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.watcher.abort();
    }
}

/// The checkpoint sequence number of the log at `path` (bytes 12 to 15 of its header, big
/// endian); `None` while it has no header (missing, or truncated to nothing).
fn checkpoint_sequence(path: &Path) -> Option<u32> {
    use std::io::Read;
    let mut header = [0; 16];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut header))
        .ok()?;
    Some(u32::from_be_bytes([
        header[12], header[13], header[14], header[15],
    ]))
}
