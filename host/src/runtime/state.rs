//! What a store holds for one request.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rental_domain::Language;
use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::Limits;
use super::fairness::Meter;
use crate::storage::documents::DocTransaction;
use crate::storage::idempotency::Claim;
use crate::storage::tenants::Tenant;
use crate::storage::{Backend, Storage};

/// The authenticated API user of a request.
#[derive(Debug, Clone)]
pub struct Caller {
    pub user_id: i64,
    pub user_name: String,
    pub permissions: Vec<String>,
}

/// Everything the host decided about a request before the guest runs. The guest reads it
/// through `rental:platform/context` and cannot change it.
#[derive(Debug, Clone)]
pub struct RequestContext {
    pub tenant: Arc<Tenant>,
    /// The component serving the request: what its secrets and its bank are named after.
    pub component: rental_platform::Component,
    pub caller: Option<Caller>,
    pub language: Language,
    pub correlation_id: String,
}

/// Where the guest of a request with an idempotency key leaves the write it committed, for
/// the host to commit with the request's answer ([`crate::storage::idempotency`]).
pub(crate) struct Held {
    pub(crate) claim: Claim,
    pub(crate) write: Arc<HeldWrite>,
}

/// A committed write, held until the request's answer is known. Once the host has taken what
/// it holds, it holds nothing more: a write committed after that (a `wasi:http` guest may go
/// on after its response) is committed at once, marked as committed without an answer, or
/// refused when the answer is recorded already.
#[derive(Default)]
pub(crate) struct HeldWrite(std::sync::Mutex<Slot>);

#[derive(Default)]
struct Slot {
    tx: Option<DocTransaction>,
    taken: bool,
}

impl HeldWrite {
    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Holds `tx`; gives it back when the host has taken what was held already.
    pub(crate) fn hold(&self, tx: DocTransaction) -> Option<DocTransaction> {
        let mut slot = self.slot();
        if slot.taken {
            return Some(tx);
        }
        slot.tx = Some(tx);
        None
    }

    /// What the guest left, if anything; for the guest to commit what it commits later on.
    pub(crate) fn take(&self) -> Option<DocTransaction> {
        self.slot().tx.take()
    }

    /// What the guest left, if anything, taken by the host once the guest has answered.
    pub(crate) fn close(&self) -> Option<DocTransaction> {
        let mut slot = self.slot();
        slot.taken = true;
        slot.tx.take()
    }
}

pub struct HostState {
    /// The guest's WASI context, made at its first WASI call: most requests through the
    /// platform's entry point make none, and making one is a per cent of a small request
    /// (docs/benchmarks.md, "A WASI context only when the guest asks").
    wasi: Option<WasiCtx>,
    /// Where the guest's stderr goes, once it has a WASI context.
    stderr: MemoryOutputPipe,
    http: WasiHttpCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limits: GuestLimits,
    pub(crate) request: RequestContext,
    pub(crate) storage: Storage,
    /// The request's one open transaction, if any.
    pub(crate) transactions: rental_store_sql::OneTransaction,
    /// How long a question to a bank may take.
    pub(crate) bank_timeout: Duration,
    /// When the open transaction began to write, if one is open and has.
    writing_since: Option<Instant>,
    /// A write of this request failed because what it read had changed: its next one holds
    /// the writer turn from its beginning ([`Storage::begin_locked`]).
    pub(crate) lost_a_race: bool,
    /// How long a read-write transaction may stay open.
    write_deadline: Duration,
    /// Whether the time the open write spends in store calls counts against its deadline, and
    /// how much of it was spent there so far (see [`HostState::write_overrun`]).
    store_calls_count: bool,
    in_store_calls: Duration,
    /// The request's account with its tenant's clock, kept up at every tick.
    pub(crate) meter: Meter,
    /// Where a committed write waits for the answer, for a request with an idempotency key.
    pub(crate) held: Option<Held>,
    /// The bodies the guest's store calls kept for its answer (`scan-kept`).
    pub(crate) kept: rental_store_sql::KeptBodies,
}

/// A store's limits, which also note in a [`MemoryWatch`] how its memories grew.
pub struct GuestLimits {
    store: StoreLimits,
    memory: Arc<MemoryWatch>,
}

/// What a store's linear memories did against the memory limit, noted as they grow and read
/// by the runtime once the guest has run (the store may be gone by then).
#[derive(Debug, Default)]
pub struct MemoryWatch {
    /// A memory was refused growth: the trap that usually follows (an allocation failing
    /// inside the guest) is then told as the memory limit.
    refused: AtomicBool,
    /// The largest size, in bytes, a memory of the store was allowed to have. The limit is
    /// per memory, so this is the figure to hold against it.
    peak: AtomicUsize,
    /// The largest size a memory of the store started with, in bytes.
    initial: AtomicUsize,
}

impl MemoryWatch {
    /// Whether a memory was refused growth.
    pub fn refused(&self) -> bool {
        self.refused.load(Ordering::Relaxed)
    }

    /// The largest size a memory was allowed to have, in bytes.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// How far the memories grew past the size they started with, in bytes: the pages the
    /// kernel had to open up to the guest while it ran. A memory's initial pages come with
    /// its pooled slot, already accessible.
    pub fn grown(&self) -> usize {
        self.peak()
            .saturating_sub(self.initial.load(Ordering::Relaxed))
    }
}

impl ResourceLimiter for GuestLimits {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = self.store.memory_growing(current, desired, maximum)?;
        if allowed {
            if current == 0 {
                self.memory.initial.fetch_max(desired, Ordering::Relaxed);
            }
            self.memory.peak.fetch_max(desired, Ordering::Relaxed);
        } else {
            self.memory.refused.store(true, Ordering::Relaxed);
        }
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.store.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.store.instances()
    }

    fn tables(&self) -> usize {
        self.store.tables()
    }

    fn memories(&self) -> usize {
        self.store.memories()
    }
}

/// Resources (streams, fields, transactions) one request may hold at once.
const MAX_RESOURCES: usize = 1_000;

impl HostState {
    /// The state of a request run within `limits`, its guest's stderr kept in `stderr`, its
    /// memories watched by `memory` and its cost counted by `meter`; a write its guest commits
    /// is left in `held`, when given.
    pub(crate) fn new(
        request: RequestContext,
        storage: Storage,
        limits: &Limits,
        stderr: MemoryOutputPipe,
        memory: Arc<MemoryWatch>,
        meter: Meter,
        held: Option<Held>,
    ) -> Self {
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCES);
        Self {
            wasi: None,
            stderr,
            http: WasiHttpCtx::new(),
            table,
            limits: GuestLimits {
                store: StoreLimitsBuilder::new()
                    .memory_size(limits.memory_bytes)
                    .instances(16)
                    .tables(16)
                    .memories(4)
                    .build(),
                memory,
            },
            // Read before `storage` moves in.
            store_calls_count: storage.backend() == Backend::Sqlite,
            request,
            storage,
            transactions: Default::default(),
            bank_timeout: limits.bank_timeout(),
            writing_since: None,
            lost_a_race: false,
            write_deadline: limits.write_deadline,
            in_store_calls: Duration::ZERO,
            meter,
            held,
            kept: Default::default(),
        }
    }

    /// The request's transaction has begun to write (on SQLite at its first write, on
    /// PostgreSQL when a read-write transaction begins): its write deadline runs from now.
    pub(crate) fn writing(&mut self) {
        self.writing_since = Some(Instant::now());
        self.in_store_calls = Duration::ZERO;
    }

    /// Whether the guest's transaction holds what a writer holds ([`DocTransaction::holds_write`]).
    ///
    /// [`DocTransaction::holds_write`]: crate::storage::documents::DocTransaction::holds_write
    pub(crate) fn holds_write(&self) -> bool {
        self.writing_since.is_some()
    }

    /// A store call that began at `started` has returned; `writes`: the transaction now holds
    /// what a writer holds.
    pub(crate) fn store_call_returned(&mut self, started: Instant, writes: bool) {
        if self.writing_since.is_some() {
            self.in_store_calls += started.elapsed();
        } else if writes {
            self.writing();
        }
    }

    /// The request's transaction ended (committed, dropped or never begun).
    pub(crate) fn transaction_ended(&mut self) {
        self.transactions.end();
        self.writing_since = None;
    }

    /// The request's transaction was committed by its guest and is held for the answer: the
    /// guest may begin another, but what the held write holds still counts against the write
    /// deadline, and keeps the guest from being paced.
    pub(crate) fn transaction_held(&mut self) {
        self.transactions.end();
    }

    /// The held write was committed: it no longer counts against the write deadline.
    pub(crate) fn held_write_ended(&mut self) {
        self.writing_since = None;
    }

    /// Why the guest must stop now: it has kept a read-write transaction open past its write
    /// deadline.
    ///
    /// On SQLite the whole time counts: an open write holds the file's one writer turn, so even
    /// its store calls keep every other writer waiting. On PostgreSQL a write holds only the
    /// rows it touched, and a store call may itself wait for rows other transactions hold (a
    /// tenant's creations all take its id sequence's row): that wait is the database's queue,
    /// not the guest's doing, so only the time the guest spends between store calls counts
    /// there. The request deadline still bounds the whole.
    pub(crate) fn write_overrun(&self) -> Option<WriteOverrun> {
        let since = self.writing_since?;
        let held = if self.store_calls_count {
            since.elapsed()
        } else {
            since.elapsed().saturating_sub(self.in_store_calls)
        };
        (held > self.write_deadline).then_some(WriteOverrun(self.write_deadline))
    }
}

/// A guest kept a read-write transaction open longer than its write deadline.
#[derive(Debug, thiserror::Error)]
#[error("kept a read-write transaction open longer than the write deadline ({} ms)", .0.as_millis())]
pub struct WriteOverrun(Duration);

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let stderr = &self.stderr;
        WasiCtxView {
            // Nothing is granted: no directories, environment, arguments or sockets. Guest
            // stderr is kept for the runtime to log (a panic message reaches the operator's
            // logs as a log event of the request, never as raw text in them).
            ctx: self
                .wasi
                .get_or_insert_with(|| WasiCtx::builder().stderr(stderr.clone()).build()),
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for HostState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A memory's initial size is told apart from its growth: the pacer charges the growth.
    #[test]
    fn memory_growth_is_counted_past_the_initial_size() {
        let memory = Arc::new(MemoryWatch::default());
        let mut limits = GuestLimits {
            store: StoreLimitsBuilder::new().memory_size(16 << 20).build(),
            memory: memory.clone(),
        };
        assert!(limits.memory_growing(0, 4 << 20, None).unwrap());
        assert_eq!((memory.peak(), memory.grown()), (4 << 20, 0));
        assert!(limits.memory_growing(4 << 20, 7 << 20, None).unwrap());
        assert_eq!((memory.peak(), memory.grown()), (7 << 20, 3 << 20));
        assert!(!limits.memory_growing(7 << 20, 32 << 20, None).unwrap());
        assert_eq!((memory.peak(), memory.grown()), (7 << 20, 3 << 20));
        assert!(memory.refused());
    }
}
