//! The WebAssembly runtime: one engine, components compiled once (and cached on disk by content
//! hash), a fresh sandboxed store per request.

mod cache;
mod explain;
mod fairness;
mod registry;
mod state;
mod ticker;
pub mod wit;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use tokio::sync::{OwnedSemaphorePermit, oneshot};
use tokio::task::JoinHandle;
use tokio::time::error::Elapsed;
use tracing::Instrument as _;
use wasmtime::component::{Component, Linker};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store,
    UpdateDeadline,
};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi_http::p2::bindings::ProxyPre;
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::{WasiHttp, WasiHttpView as _};

pub use registry::{Build, ComponentStats};
pub use state::{Caller, HostState, MemoryWatch, RequestContext};
use state::{Held, HeldWrite};

pub use fairness::CpuShare;
use fairness::Pacer;
use registry::Registry;
use rental_platform::{Component as PlatformComponent, WIT_VERSION, World};
use rental_store_sql::KeptBodies;
use ticker::{EPOCH_TICK, Ticker, Ticking};

use crate::bindings::handler::{self, HandlerExportPre};
use crate::bindings::responder::{self, ResponderExportPre};
use crate::metrics::Metrics;
use crate::storage::Storage;
use crate::storage::documents::DocTransaction;
use crate::storage::idempotency::Claim;

/// How much a single request may use.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall-clock budget of one request inside its component.
    pub deadline: Duration,
    /// How long a component may keep a read-write transaction open. On SQLite an open writer
    /// stops every other writer of the database, so this is far below `deadline`: a guest that
    /// computes (or loops) with a write open is stopped at this bound, not at its request's.
    pub write_deadline: Duration,
    /// Linear memory of one instance.
    pub memory_bytes: usize,
    /// Instances alive at once (the pooling allocator's slots).
    pub max_instances: u32,
    /// Instances one tenant may have running at once (its seats): with
    /// [`Self::memory_bytes`], the memory one tenant can hold.
    pub tenant_instances: usize,
    /// Read-write transactions one tenant may have open at once on PostgreSQL; past it a
    /// writer waits for one to end before it begins (see `storage::writers`).
    pub tenant_writers: usize,
    /// How long-running guests share the cores between tenants.
    pub cpu: CpuShare,
}

impl Limits {
    /// How long a component's question to a bank may take: under the request's deadline, so
    /// that the component can still answer (503) when the bank is slow.
    pub fn bank_timeout(&self) -> Duration {
        (self.deadline * 3 / 4).min(Duration::from_secs(5))
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            deadline: Duration::from_secs(5),
            write_deadline: Duration::from_secs(1),
            memory_bytes: 64 << 20,
            max_instances: 512,
            tenant_instances: 16,
            tenant_writers: 6,
            cpu: CpuShare::default(),
        }
    }
}

/// A compiled, pre-linked component, ready to instantiate.
pub struct LoadedComponent {
    /// Its `wasi:http/incoming-handler`, which every component exports.
    pre: ProxyPre<HostState>,
    /// The platform's own entry point, when it exports one: called instead of `pre`, with
    /// the request and the response as two values rather than `wasi:http`'s resources and
    /// streams.
    whole: Option<Whole>,
}

/// The platform's entry points, which take the request and return the response whole.
enum Whole {
    /// `rental:platform/responder`: the response's body in parts, the bodies the store kept
    /// for it among them.
    Responder(ResponderExportPre<HostState>),
    /// `rental:platform/handler`, of components built before `responder`.
    Handler(HandlerExportPre<HostState>),
}

/// The component chosen to serve a tenant's request, and whose build it is.
pub struct Serving {
    loaded: Arc<LoadedComponent>,
    build: Build,
}

impl Serving {
    /// The export the runtime calls: `rental:platform/responder` when the component has it,
    /// else `rental:platform/handler`, else `wasi:http/incoming-handler`.
    pub fn entry_point(&self) -> &'static str {
        self.loaded.entry_point()
    }
}

impl LoadedComponent {
    fn entry_point(&self) -> &'static str {
        match self.whole {
            Some(Whole::Responder(_)) => "rental:platform/responder",
            Some(Whole::Handler(_)) => "rental:platform/handler",
            None => "wasi:http/incoming-handler",
        }
    }
}

/// How a request inside a component ended.
pub enum Outcome {
    Response(http::Response<Bytes>),
    /// The guest trapped, or failed before answering.
    Trap(anyhow::Error),
    /// The guest ran past its deadline and was stopped.
    Timeout,
    /// The tenant had [`Limits::tenant_instances`] running, and none ended in time: not
    /// started.
    Busy,
}

/// What one run of a component used against its limits.
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// Wall time of the run, from asking for its tenant's seat to its outcome (the store's
    /// instantiation included).
    pub elapsed: Duration,
    /// The request deadline it ran under.
    pub deadline: Duration,
    /// The largest size one of its linear memories had, in bytes.
    pub memory_peak: usize,
    /// The memory limit of one linear memory, in bytes.
    pub memory_limit: usize,
}

impl Outcome {
    /// The outcome's metrics label.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Response(_) => "ok",
            Self::Trap(_) => "trap",
            Self::Timeout => "timeout",
            Self::Busy => "busy",
        }
    }
}

pub struct Runtime {
    engine: Engine,
    /// What API components are linked against (the `platform` world).
    api_linker: Linker<HostState>,
    /// What the webhook components are linked against (the `webhook-platform` world).
    webhook_linker: Linker<HostState>,
    cache: cache::CompiledCache,
    limits: Limits,
    /// Where each tenant's components come from, and those loaded in memory.
    registry: Registry,
    /// The platform's component files.
    components_dir: PathBuf,
    metrics: Arc<Metrics>,
    /// Paces each tenant's long-running guests.
    pacer: Arc<Pacer>,
    /// Advances the engine's epoch while a guest may run.
    ticker: Ticker,
}

/// A linker with the full WASI p2 command imports (a Rust std guest imports environment, exit
/// and the terminal interfaces), with nothing granted in the context: no directories, no
/// environment, no sockets. Of wasi:http only the types are linked, not the outgoing handler:
/// a component cannot make HTTP calls of its own.
fn wasi_linker(engine: &Engine) -> anyhow::Result<Linker<HostState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    let options = wasmtime_wasi_http::p2::bindings::LinkOptions::default();
    wasmtime_wasi_http::p2::bindings::http::types::add_to_linker::<_, WasiHttp>(
        &mut linker,
        &options.into(),
        HostState::http,
    )?;
    Ok(linker)
}

/// What a component may write to its stderr during one request; then the stream is closed.
const GUEST_STDERR_BYTES: usize = 64 << 10;

/// Largest response body a component may return; past it the request fails (500, ErrorCode
/// 99) rather than the host buffering without end.
const MAX_RESPONSE_BODY: usize = 8 << 20;

/// Logs what a component wrote to its stderr, a line an event, in the current (the request's)
/// span.
fn log_guest_stderr(component: PlatformComponent, written: &[u8]) {
    for line in String::from_utf8_lossy(written)
        .lines()
        .filter(|l| !l.trim().is_empty())
    {
        tracing::warn!(
            target: "rentald::guest",
            component = component.name(),
            output = line,
            "component wrote to stderr"
        );
    }
}

/// How much of a pooled linear memory, and of a pooled table, is reset in place rather than
/// unmapped when its instance ends (see `Runtime::new`).
const KEEP_RESIDENT_MEMORY: usize = 16 << 20;
const KEEP_RESIDENT_TABLE: usize = 1 << 20;

impl Runtime {
    pub fn new(limits: Limits, cache_dir: PathBuf, metrics: Arc<Metrics>) -> anyhow::Result<Self> {
        let mut pool = PoolingAllocationConfig::default();
        let n = limits.max_instances;
        pool.total_component_instances(n)
            .total_core_instances(n * 8)
            .total_memories(n * 2)
            .total_tables(n * 8)
            .total_stacks(n)
            .max_memory_size(limits.memory_bytes)
            // A finished instance's memory is reset by rewriting the pages it dirtied (found
            // with Linux's PAGEMAP_SCAN, up to these sizes) instead of unmapping them: no
            // page faults for the next instance in the slot, and no TLB shootdown across
            // cores, which was a fifth of a small request (docs/benchmarks.md). Where the
            // kernel has no PAGEMAP_SCAN (before 6.7, or not Linux), slots are unmapped as
            // before.
            .pagemap_scan(Enabled::Auto)
            .linear_memory_keep_resident(KEEP_RESIDENT_MEMORY)
            .table_keep_resident(KEEP_RESIDENT_TABLE);
        let mut config = Config::new();
        config
            .wasm_component_model(true)
            .epoch_interruption(true)
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let engine = Engine::new(&config)?;

        let ticker = Ticker::start(engine.weak())?;

        let mut api_linker = wasi_linker(&engine)?;
        crate::bindings::add_api_imports(&mut api_linker)?;
        let mut webhook_linker = wasi_linker(&engine)?;
        crate::bindings::add_webhook_imports(&mut webhook_linker)?;

        let cache = cache::CompiledCache::new(&engine, cache_dir)?;
        Ok(Self {
            engine,
            api_linker,
            webhook_linker,
            cache,
            limits,
            registry: Registry::default(),
            components_dir: PathBuf::new(),
            metrics,
            pacer: Arc::new(Pacer::new(limits.cpu, limits.tenant_instances)),
            ticker,
        })
    }

    /// Checks that the platform's default components are in `dir` and link, and makes them the
    /// components of every tenant without its own. They stay in memory only while used.
    pub fn load_platform_components(&mut self, dir: &Path) -> anyhow::Result<()> {
        for name in PlatformComponent::ALL {
            let path = dir.join(format!("{name}.wasm"));
            let wasm = std::fs::read(&path).with_context(|| {
                format!(
                    "reading component {name} from {}: build the components first \
                     (`./dev build`, see the README) or point --components-dir at them",
                    path.display()
                )
            })?;
            let sha256 = self
                .check(name, &wasm)
                .with_context(|| format!("loading component {name} from {}", path.display()))?;
            tracing::info!(component = name.name(), %sha256, "platform component ready");
            self.registry.set_default(name.name(), sha256);
        }
        self.components_dir = dir.to_path_buf();
        Ok(())
    }

    /// How long a request's component may run (`--request-timeout-ms`).
    pub fn deadline(&self) -> Duration {
        self.limits.deadline
    }

    /// Compiles `wasm` (or takes it from the cache, where it stays compiled) and links it as
    /// component `name`: refused unless the bytes are a component that imports only what the
    /// platform offers to `name` and exports
    /// `wasi:http/incoming-handler`. Returns its sha256.
    pub fn check(&self, name: PlatformComponent, wasm: &[u8]) -> anyhow::Result<String> {
        self.compile_and_link(name, wasm).map(|(sha256, _)| sha256)
    }

    /// [`Self::check`], keeping what it linked: a component file ready to serve requests as
    /// `name` outside any tenant's assignments (`rentald component run`). Counted in the
    /// metrics as a tenant's build, since it is not the platform's loaded default.
    pub fn check_to_serve(
        &self,
        name: PlatformComponent,
        wasm: &[u8],
    ) -> anyhow::Result<(String, Serving)> {
        let (sha256, loaded) = self.compile_and_link(name, wasm)?;
        let serving = Serving {
            loaded: Arc::new(loaded),
            build: Build::Tenant,
        };
        Ok((sha256, serving))
    }

    /// What [`Self::check`] does: the sha256 and the linked component.
    fn compile_and_link(
        &self,
        name: PlatformComponent,
        wasm: &[u8],
    ) -> anyhow::Result<(String, LoadedComponent)> {
        explain::require_component(wasm)?;
        let (sha256, component) = self.cache.component(&self.engine, wasm)?;
        let loaded = self.link(name, &component)?;
        Ok((sha256, loaded))
    }

    /// Links a compiled component against the world of `name`.
    fn link(
        &self,
        name: PlatformComponent,
        component: &Component,
    ) -> anyhow::Result<LoadedComponent> {
        let world = name.world();
        let linker = match world {
            World::Api => &self.api_linker,
            World::Webhook => &self.webhook_linker,
        };
        let pre = linker.instantiate_pre(component).map_err(|e| {
            let unoffered = explain::unoffered_imports(&self.engine, component, name);
            if unoffered.is_empty() {
                // Every import is offered by name: wasmtime's error names the one whose
                // shape differs.
                anyhow::Error::from(e).context(format!(
                    "an import of component {name} does not match what this host offers (the \
                     {} world of rental:platform@{WIT_VERSION}): build against this release's \
                     WIT",
                    world.name()
                ))
            } else {
                anyhow::anyhow!(
                    "component {name} imports what this host does not offer to `{name}`:\n  - {}",
                    unoffered.join("\n  - ")
                )
            }
        })?;
        // Components built before the platform's own entry points only have `wasi:http`;
        // those built before `responder`, `handler` too.
        let whole = match ResponderExportPre::new(pre.clone()) {
            Ok(responder) => Some(Whole::Responder(responder)),
            Err(_) => HandlerExportPre::new(pre.clone()).ok().map(Whole::Handler),
        };
        let pre = ProxyPre::new(pre).map_err(|e| {
            anyhow::Error::from(e).context(format!(
                "component does not export `wasi:http/incoming-handler@0.2.x`, which `{name}` \
                 must: a request handler (in Rust, `rental_guest::export_handler!`)"
            ))
        })?;
        Ok(LoadedComponent { pre, whole })
    }

    /// The component serving `name` for a tenant: the tenant's own when it has one installed,
    /// the platform default otherwise. Loaded on first use (deserialized from the disk cache,
    /// or compiled), once however many requests ask at the same time.
    pub async fn component_for(
        &self,
        storage: &Storage,
        tenant: &str,
        name: PlatformComponent,
    ) -> anyhow::Result<Serving> {
        let (sha256, build) = self
            .registry
            .resolve(tenant, name.name())
            .with_context(|| format!("no component {name}"))?;
        let key = (sha256.clone(), name.world());
        let loaded = self
            .registry
            .get_or_load(key, || async {
                let cached =
                    tokio::task::block_in_place(|| self.cache.cached(&self.engine, &sha256));
                let component = match cached {
                    Some(component) => component,
                    None => {
                        let wasm = self.wasm(storage, name, &sha256).await?;
                        tokio::task::block_in_place(|| {
                            self.cache.compile(&self.engine, &sha256, &wasm)
                        })?
                    }
                };
                let loaded = self.link(name, &component)?;
                tracing::info!(
                    component = name.name(),
                    %sha256,
                    entry_point = loaded.entry_point(),
                    "component loaded"
                );
                Ok::<_, anyhow::Error>(loaded)
            })
            .await
            .with_context(|| format!("loading component {name} ({sha256})"))?;
        Ok(Serving { loaded, build })
    }

    /// The bytes of a component: the platform's file, or an upload from the database.
    async fn wasm(
        &self,
        storage: &Storage,
        name: PlatformComponent,
        sha256: &str,
    ) -> anyhow::Result<Vec<u8>> {
        if self.registry.default_sha256(name.name()) == Some(sha256) {
            let path = self.components_dir.join(format!("{name}.wasm"));
            return std::fs::read(&path).with_context(|| format!("reading {}", path.display()));
        }
        storage
            .component_blob(sha256)
            .await?
            .with_context(|| format!("component {sha256} is not in the database"))
    }

    /// Brings the tenants' component assignments up to date with the database: a cheap read
    /// of the generation, and the changed rows when it moved.
    pub async fn refresh_components(&self, storage: &Storage) -> anyhow::Result<()> {
        let seen = self.registry.generation();
        let current = storage.component_generation().await?;
        if current != seen {
            let changes = storage.component_changes(seen, current).await?;
            self.registry.apply(changes, current);
        }
        Ok(())
    }

    /// One round of upkeep: refreshes the assignments and drops components idle for `idle`.
    pub async fn maintain_components(&self, storage: &Storage, idle: Duration) {
        if let Err(e) = self.refresh_components(storage).await {
            tracing::warn!(error = %format!("{e:#}"), "refreshing the component assignments");
        }
        let evicted = self.registry.evict_idle(idle);
        if evicted > 0 {
            let stats = self.component_stats();
            tracing::info!(
                evicted,
                loaded = stats.loaded,
                evictions = stats.evictions,
                "idle components dropped"
            );
        }
    }

    /// How many components are in memory, and how many were loaded and evicted so far.
    pub fn component_stats(&self) -> ComponentStats {
        self.registry.stats()
    }

    /// The platform components without a checked default (for the readiness probe).
    pub fn missing_platform_components(&self) -> Vec<&'static str> {
        PlatformComponent::ALL
            .map(PlatformComponent::name)
            .into_iter()
            .filter(|name| self.registry.default_sha256(name).is_none())
            .collect()
    }

    /// Runs one request through a component in a fresh store, bounded in time and memory; not
    /// at all ([`Outcome::Busy`]) when none of its tenant's seats frees in time.
    pub async fn handle(
        &self,
        component: &Serving,
        storage: Storage,
        request: RequestContext,
        http_request: http::Request<Bytes>,
    ) -> Outcome {
        self.handle_measured(component, storage, request, http_request)
            .await
            .0
    }

    /// [`Self::handle`], and what the run used against its limits.
    pub async fn handle_measured(
        &self,
        component: &Serving,
        storage: Storage,
        request: RequestContext,
        http_request: http::Request<Bytes>,
    ) -> (Outcome, Usage) {
        self.measured(component, storage, request, http_request, None)
            .await
    }

    /// [`Self::handle`] for a request with an idempotency key, `claim`: a write its guest
    /// commits is not committed but returned, for the caller to commit with the answer.
    pub async fn handle_claimed(
        &self,
        component: &Serving,
        storage: Storage,
        request: RequestContext,
        http_request: http::Request<Bytes>,
        claim: Claim,
    ) -> (Outcome, Option<DocTransaction>) {
        let write = Arc::new(HeldWrite::default());
        let held = Held {
            claim,
            write: write.clone(),
        };
        let (outcome, _) = self
            .measured(component, storage, request, http_request, Some(held))
            .await;
        (outcome, write.close())
    }

    /// Runs the request (a write its guest commits left in `held`, when given), and tells what
    /// the run used against its limits.
    async fn measured(
        &self,
        component: &Serving,
        storage: Storage,
        request: RequestContext,
        http_request: http::Request<Bytes>,
        held: Option<Held>,
    ) -> (Outcome, Usage) {
        let memory = Arc::new(MemoryWatch::default());
        let mut usage = Usage {
            elapsed: Duration::ZERO,
            deadline: self.limits.deadline,
            memory_peak: 0,
            memory_limit: self.limits.memory_bytes,
        };
        let started = Instant::now();
        let outcome = self
            .run(
                component,
                storage,
                request,
                http_request,
                memory.clone(),
                held,
            )
            .await;
        usage.elapsed = started.elapsed();
        usage.memory_peak = memory.peak();
        (outcome, usage)
    }

    /// Runs the request in a fresh store whose memories `memory` watches; a write its guest
    /// commits is left in `held`, when given.
    async fn run(
        &self,
        component: &Serving,
        storage: Storage,
        request: RequestContext,
        http_request: http::Request<Bytes>,
        memory: Arc<MemoryWatch>,
        held: Option<Held>,
    ) -> Outcome {
        let deadline = self.limits.deadline;
        let name = request.component;
        let meter = self.pacer.meter(&request.tenant.slug);
        let Some(seat) = self.pacer.seat(&meter).await else {
            self.metrics
                .component_finished(name, component.build, Outcome::Busy.label());
            return Outcome::Busy;
        };
        let stderr = MemoryOutputPipe::new(GUEST_STDERR_BYTES);
        let mut store = Store::new(
            &self.engine,
            HostState::new(
                request,
                storage,
                &self.limits,
                stderr.clone(),
                memory.clone(),
                meter,
                held,
            ),
        );
        store.limiter(|state| &mut state.limits);
        // Yield to the executor at every tick, so that the deadline below can cancel a guest
        // that never returns on its own and other requests get the core; past its burst (or
        // within it, while its tenant's long runners are paced) the guest is paced with its
        // tenant's other long runners, except inside a write. A guest past its write deadline
        // traps at the tick, and dropping its store rolls the transaction back.
        store.set_epoch_deadline(1);
        let pacer = self.pacer.clone();
        let watch = memory.clone();
        let (metrics, build) = (self.metrics.clone(), component.build);
        store.epoch_deadline_callback(move |mut store| {
            if let Some(overrun) = store.data().write_overrun() {
                return Err(overrun.into());
            }
            // The guest's running time is counted in the ticks it runs into, about (a guest
            // that waited for a core or for I/O across several ticks counts one), so that a
            // request slowed down by a busy host is not taken for a long runner.
            let wait = pacer.pace(&mut store.data_mut().meter, EPOCH_TICK, watch.grown());
            // A guest inside a write is charged but not put to sleep: asleep, it would hold
            // the file's writer turn (SQLite) or its rows (PostgreSQL) for every other writer
            // and run into its write deadline. Its tenant's next runners pay for its time.
            Ok(if wait.is_zero() || store.data().holds_write() {
                UpdateDeadline::Yield(1)
            } else {
                metrics.component_paced(name, build, wait);
                UpdateDeadline::YieldCustom(1, Box::pin(tokio::time::sleep(wait)))
            })
        });

        let loaded = component.loaded.clone();
        let calls = Calls {
            metrics: self.metrics.clone(),
            name,
            build: component.build,
            deadline,
            pacer: self.pacer.clone(),
            memory: memory.clone(),
            ticking: self.ticker.ticking(),
        };
        let ended = match &loaded.whole {
            Some(Whole::Responder(pre)) => {
                calls.whole(pre.clone(), store, seat, http_request).await
            }
            Some(Whole::Handler(pre)) => calls.whole(pre.clone(), store, seat, http_request).await,
            None => {
                calls
                    .wasi_http(loaded.pre.clone(), store, seat, http_request)
                    .await
            }
        };
        let outcome = match ended {
            Ended::Answered(outcome) => outcome,
            Ended::Failed(trap) if memory.refused() => Outcome::Trap(trap.context(format!(
                "the component reached its memory limit of {} MiB (--memory-limit-mib)",
                self.limits.memory_bytes >> 20
            ))),
            Ended::Failed(trap) => Outcome::Trap(trap),
            Ended::TimedOut => Outcome::Timeout,
        };
        log_guest_stderr(name, &stderr.contents());
        self.metrics
            .component_finished(name, component.build, outcome.label());
        outcome
    }
}

/// How a guest's call ended, before the runtime tells it as an [`Outcome`].
enum Ended {
    Answered(Outcome),
    /// The guest trapped or failed before answering.
    Failed(anyhow::Error),
    /// The deadline passed first.
    TimedOut,
}

/// What both ways of calling a guest need besides the guest.
struct Calls {
    metrics: Arc<Metrics>,
    name: PlatformComponent,
    build: Build,
    deadline: Duration,
    /// Where the request's cost is settled once its store is reset.
    pacer: Arc<Pacer>,
    /// Keeps the epoch advancing until the guest's store is dropped.
    ticking: Ticking,
    memory: Arc<MemoryWatch>,
}

/// A future borrowing the store of the request.
type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = wasmtime::Result<T>> + Send + 'a>>;

/// The guest's task. Its outcome is sent as soon as the guest has answered, before the task
/// drops the store: the instance's reset is paid by the task, not waited for by the client.
struct GuestTask<T> {
    answered: oneshot::Receiver<wasmtime::Result<T>>,
    task: JoinHandle<Result<(), Elapsed>>,
}

impl<T> GuestTask<T> {
    /// How the guest's call ended, its answer told by `answered`. Nothing sent means the task
    /// ended early: its deadline passed, or it panicked.
    async fn ended(self, answered: impl FnOnce(T) -> Ended) -> Ended {
        match self.answered.await {
            Ok(Ok(value)) => answered(value),
            Ok(Err(trap)) => Ended::Failed(trap.into()),
            Err(_) => match self.task.await {
                Ok(Err(_elapsed)) => Ended::TimedOut,
                Err(join) => Ended::Failed(join.into()),
                // Every way through the task that is not cut short sends its outcome.
                Ok(Ok(())) => Ended::Failed(anyhow::anyhow!("the guest's task sent no outcome")),
            },
        }
    }
}

impl Calls {
    /// Instantiates the guest and calls it, in a task of its own that holds the tenant's seat
    /// until the store is dropped with it, under the deadline; the request's span goes with
    /// it, so that what the capabilities log names the request. A client that hangs up stops
    /// waiting for the task, not the task: a guest is never dropped halfway through a
    /// transaction.
    fn spawn<I, T>(
        self,
        mut store: Store<HostState>,
        seat: OwnedSemaphorePermit,
        instantiate: impl for<'a> FnOnce(&'a mut Store<HostState>) -> StoreFuture<'a, I>
        + Send
        + 'static,
        call: impl for<'a> FnOnce(I, &'a mut Store<HostState>) -> StoreFuture<'a, T> + Send + 'static,
    ) -> GuestTask<T>
    where
        I: Send + 'static,
        T: Send + 'static,
    {
        let Self {
            metrics,
            name,
            build,
            deadline,
            pacer,
            memory,
            ticking,
        } = self;
        let (answer, answered) = oneshot::channel();
        let task = tokio::spawn(
            tokio::time::timeout(deadline, async move {
                let started = Instant::now();
                let instance = match instantiate(&mut store).await {
                    Ok(instance) => instance,
                    Err(failed) => {
                        let _ = answer.send(Err(failed));
                        return;
                    }
                };
                metrics.component_instantiated(name, build, started.elapsed());
                let started = Instant::now();
                let called = call(instance, &mut store).await;
                metrics.component_executed(name, build, started.elapsed());
                // The client has its answer before the instance is reset: nobody waits for
                // the reset but the tenant's seat.
                let _ = answer.send(called);
                // Dropping the store resets the instance's memory in its slot, which costs as
                // much as the pages the guest dirtied: its tenant pays for that too.
                let meter = store.data().meter;
                let resetting = Instant::now();
                drop(store);
                drop(ticking);
                pacer.settle(meter, memory.grown(), resetting.elapsed());
                drop(seat);
            })
            .in_current_span(),
        );
        GuestTask { answered, task }
    }

    /// Calls the platform's entry point `pre` with the whole request.
    async fn whole<E: WholeExport>(
        self,
        pre: E,
        store: Store<HostState>,
        seat: OwnedSemaphorePermit,
        request: http::Request<Bytes>,
    ) -> Ended {
        let (parts, body) = request.into_parts();
        let request = WholeRequest {
            method: parts.method.as_str().to_owned(),
            path_with_query: parts
                .uri
                .path_and_query()
                .map_or("/", http::uri::PathAndQuery::as_str)
                .to_owned(),
            headers: parts
                .headers
                .iter()
                .map(|(name, value)| (name.as_str().to_owned(), value.as_bytes().to_vec()))
                .collect(),
            body: body.into(),
        };
        let guest = self.spawn(
            store,
            seat,
            |store| pre.instantiate(store),
            |instance, store| E::answer(instance, store, request),
        );
        guest
            .ended(|response| {
                Ended::Answered(match response {
                    Ok(response) => Outcome::Response(response),
                    Err(refused) => Outcome::Trap(refused),
                })
            })
            .await
    }

    /// Calls `wasi:http/incoming-handler`, and reads the response body as the guest streams it.
    async fn wasi_http(
        self,
        pre: ProxyPre<HostState>,
        mut store: Store<HostState>,
        seat: OwnedSemaphorePermit,
        request: http::Request<Bytes>,
    ) -> Ended {
        let deadline = self.deadline;
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let prepared: wasmtime::Result<_> = (|| {
            let req = store
                .data_mut()
                .http()
                .new_incoming_request(Scheme::Http, request.map(Full::new))?;
            let out = store.data_mut().http().new_response_outparam(sender)?;
            Ok((req, out))
        })();
        let (req, out) = match prepared {
            Ok(v) => v,
            Err(e) => return Ended::Answered(Outcome::Trap(e.into())),
        };
        let guest = self.spawn(
            store,
            seat,
            |store| Box::pin(async move { pre.instantiate_async(store).await }),
            |proxy, store| {
                Box::pin(async move {
                    proxy
                        .wasi_http_incoming_handler()
                        .call_handle(store, req, out)
                        .await
                })
            },
        );

        let answered = tokio::time::timeout(deadline, async {
            match receiver.await {
                Ok(Ok(response)) => {
                    let (parts, body) = response.into_parts();
                    Ended::Answered(
                        match Limited::new(body, MAX_RESPONSE_BODY).collect().await {
                            Ok(body) => Outcome::Response(http::Response::from_parts(
                                parts,
                                body.to_bytes(),
                            )),
                            Err(e) if e.is::<LengthLimitError>() => {
                                Outcome::Trap(body_over_limit())
                            }
                            Err(e) => Outcome::Trap(anyhow::anyhow!("response body failed: {e:?}")),
                        },
                    )
                }
                Ok(Err(code)) => Ended::Answered(Outcome::Trap(anyhow::anyhow!(
                    "guest answered with error {code:?}"
                ))),
                Err(_) => {
                    guest
                        .ended(|()| {
                            Ended::Answered(Outcome::Trap(anyhow::anyhow!(
                                "guest returned without a response"
                            )))
                        })
                        .await
                }
            }
        })
        .await;
        answered.unwrap_or(Ended::TimedOut)
    }
}

/// A request as the platform's entry points take it: the same record in each.
struct WholeRequest {
    method: String,
    path_with_query: String,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
}

/// One of the platform's entry points ([`Whole`]), pre-linked: how to instantiate its
/// component and call it with the whole request.
trait WholeExport: Send + 'static {
    type Instance: Send + 'static;

    fn instantiate(self, store: &mut Store<HostState>) -> StoreFuture<'_, Self::Instance>;

    /// Calls the instance; the response, or why it is not one the host can send.
    fn answer(
        instance: Self::Instance,
        store: &mut Store<HostState>,
        request: WholeRequest,
    ) -> StoreFuture<'_, anyhow::Result<http::Response<Bytes>>>;
}

impl WholeExport for ResponderExportPre<HostState> {
    type Instance = responder::ResponderExport;

    fn instantiate(self, store: &mut Store<HostState>) -> StoreFuture<'_, Self::Instance> {
        Box::pin(async move { self.instantiate_async(store).await })
    }

    fn answer(
        instance: Self::Instance,
        store: &mut Store<HostState>,
        request: WholeRequest,
    ) -> StoreFuture<'_, anyhow::Result<http::Response<Bytes>>> {
        Box::pin(async move {
            let request = responder::Request {
                method: request.method,
                path_with_query: request.path_with_query,
                headers: request.headers,
                body: request.body,
            };
            let response = instance
                .rental_platform_responder()
                .call_handle(&mut *store, &request)
                .await?;
            Ok(joined(response.body, &store.data().kept)
                .and_then(|body| whole_response(response.status, response.headers, body)))
        })
    }
}

impl WholeExport for HandlerExportPre<HostState> {
    type Instance = handler::HandlerExport;

    fn instantiate(self, store: &mut Store<HostState>) -> StoreFuture<'_, Self::Instance> {
        Box::pin(async move { self.instantiate_async(store).await })
    }

    fn answer(
        instance: Self::Instance,
        store: &mut Store<HostState>,
        request: WholeRequest,
    ) -> StoreFuture<'_, anyhow::Result<http::Response<Bytes>>> {
        Box::pin(async move {
            let request = handler::Request {
                method: request.method,
                path_with_query: request.path_with_query,
                headers: request.headers,
                body: request.body,
            };
            let response = instance
                .rental_platform_handler()
                .call_handle(store, &request)
                .await?;
            Ok(whole_response(
                response.status,
                response.headers,
                response.body,
            ))
        })
    }
}

/// A response body past [`MAX_RESPONSE_BODY`].
fn body_over_limit() -> anyhow::Error {
    anyhow::anyhow!(
        "the response body is over the limit of {} MiB",
        MAX_RESPONSE_BODY >> 20
    )
}

/// A response body given in parts (`rental:platform/responder`): the bytes the guest wrote
/// and the bodies its store calls kept, in order. Refused when a part names a body not kept,
/// or the whole is over [`MAX_RESPONSE_BODY`] (checked before anything is copied).
fn joined(mut parts: Vec<responder::Part>, kept: &KeptBodies) -> anyhow::Result<Vec<u8>> {
    if let [responder::Part::Bytes(_)] = parts.as_slice()
        && let Some(responder::Part::Bytes(only)) = parts.pop()
    {
        return Ok(only);
    }
    let mut len = 0usize;
    for part in &parts {
        len = len.saturating_add(match part {
            responder::Part::Bytes(bytes) => bytes.len(),
            responder::Part::Kept(body) => kept_body(kept, *body)?.len(),
        });
    }
    if len > MAX_RESPONSE_BODY {
        return Err(body_over_limit());
    }
    let mut body = Vec::with_capacity(len);
    for part in &parts {
        match part {
            responder::Part::Bytes(bytes) => body.extend_from_slice(bytes),
            responder::Part::Kept(n) => body.extend_from_slice(kept_body(kept, *n)?.as_bytes()),
        }
    }
    Ok(body)
}

/// The kept body numbered `body`, or why there is none.
fn kept_body(kept: &KeptBodies, body: u32) -> anyhow::Result<&str> {
    kept.get(body)
        .with_context(|| format!("the response names kept body {body}, which was not kept"))
}

/// The HTTP response a guest returned whole; refused when its status or a header is not
/// valid HTTP, or its body is over [`MAX_RESPONSE_BODY`].
fn whole_response(
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
) -> anyhow::Result<http::Response<Bytes>> {
    if body.len() > MAX_RESPONSE_BODY {
        return Err(body_over_limit());
    }
    let mut answer = http::Response::new(Bytes::from(body));
    *answer.status_mut() = http::StatusCode::from_u16(status)
        .with_context(|| format!("invalid response status {status}"))?;
    let fields = answer.headers_mut();
    for (name, value) in headers {
        let header = http::HeaderName::from_bytes(name.as_bytes())
            .with_context(|| format!("invalid response header name {name:?}"))?;
        let value = http::HeaderValue::try_from(value)
            .with_context(|| format!("invalid value of response header {name}"))?;
        fields.append(header, value);
    }
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(
        status: u16,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> anyhow::Result<http::Response<Bytes>> {
        let headers = headers
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        whole_response(status, headers, body.to_vec())
    }

    #[test]
    fn a_whole_response_keeps_its_status_headers_and_body() {
        let response = answer(
            201,
            &[
                ("content-type", "application/json"),
                ("x-a", "1"),
                ("x-a", "2"),
            ],
            b"{}",
        )
        .unwrap();
        assert_eq!(response.status(), 201);
        assert_eq!(response.headers()["content-type"], "application/json");
        let repeated: Vec<_> = response.headers().get_all("x-a").iter().collect();
        assert_eq!(repeated, ["1", "2"], "repeated headers keep their order");
        assert_eq!(response.body().as_ref(), b"{}");
    }

    #[test]
    fn a_whole_response_that_is_not_http_is_refused() {
        for (refused, why) in [
            (answer(1000, &[], b""), "invalid response status"),
            (
                answer(200, &[("bad name", "x")], b""),
                "invalid response header name",
            ),
            (answer(200, &[("x-a", "line\nbreak")], b""), "invalid value"),
            (
                answer(200, &[], &vec![b'x'; MAX_RESPONSE_BODY + 1]),
                "over the limit",
            ),
        ] {
            let error = refused.unwrap_err();
            assert!(format!("{error:#}").contains(why), "{error:#}");
        }
        assert!(answer(200, &[], &vec![b'x'; MAX_RESPONSE_BODY]).is_ok());
    }

    /// Kept bodies of `sizes` bytes each, `a`s, `b`s, ... in turn.
    fn kept(sizes: &[usize]) -> KeptBodies {
        let mut kept = KeptBodies::default();
        let documents = sizes
            .iter()
            .zip(b'a'..)
            .map(|(&size, letter)| rental_store_sql::Document {
                id: size.to_string(),
                revision: 1,
                body: char::from(letter).to_string().repeat(size),
            })
            .collect();
        kept.keep(documents).unwrap();
        kept
    }

    #[test]
    fn a_body_in_parts_is_joined_in_order() {
        use responder::Part::{Bytes, Kept};
        let kept = kept(&[2, 3]);
        let parts = vec![
            Bytes(b"[".to_vec()),
            Kept(1),
            Bytes(b",".to_vec()),
            Kept(0),
            Kept(1),
            Bytes(b"]".to_vec()),
        ];
        assert_eq!(joined(parts, &kept).unwrap(), b"[bbb,aabbb]");
        assert_eq!(joined(vec![Bytes(b"{}".to_vec())], &kept).unwrap(), b"{}");
        assert_eq!(joined(Vec::new(), &kept).unwrap(), b"");
    }

    #[test]
    fn a_body_in_parts_is_refused_for_an_unknown_body_or_past_the_limit() {
        use responder::Part::Kept;
        let error = joined(vec![Kept(0), Kept(2)], &kept(&[1, 1])).unwrap_err();
        assert!(format!("{error:#}").contains("kept body 2"), "{error:#}");

        // Naming one kept body over and over asks for more than the limit: refused before
        // anything is copied.
        let kept = kept(&[1 << 20]);
        let error = joined(vec![Kept(0); 9], &kept).unwrap_err();
        assert!(format!("{error:#}").contains("over the limit"), "{error:#}");
        assert_eq!(joined(vec![Kept(0); 8], &kept).unwrap().len(), 8 << 20);
    }
}
