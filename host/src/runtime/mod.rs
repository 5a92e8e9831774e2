//! The WebAssembly runtime: one engine, components compiled once (and cached on disk by content
//! hash), a fresh sandboxed store per request.

mod cache;
mod explain;
mod fairness;
mod registry;
mod state;
pub mod wit;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
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

pub use fairness::CpuShare;
use fairness::Pacer;
use registry::Registry;
use rental_platform::{Component as PlatformComponent, WIT_VERSION, World};

use crate::metrics::Metrics;
use crate::storage::Storage;

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
            cpu: CpuShare::default(),
        }
    }
}

/// A compiled, pre-linked component, ready to instantiate.
pub struct LoadedComponent {
    pre: ProxyPre<HostState>,
}

/// The component chosen to serve a tenant's request, and whose build it is.
pub struct Serving {
    loaded: Arc<LoadedComponent>,
    build: Build,
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

/// Interval of the epoch ticker: how often a running guest yields to the executor (and so how
/// late a deadline can be noticed).
const EPOCH_TICK: Duration = Duration::from_millis(1);

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

        let ticker = engine.weak();
        std::thread::Builder::new()
            .name("epoch-ticker".into())
            .spawn(move || {
                while let Some(engine) = ticker.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })?;

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
        let pre = ProxyPre::new(pre).map_err(|e| {
            anyhow::Error::from(e).context(format!(
                "component does not export `wasi:http/incoming-handler@0.2.x`, which `{name}` \
                 must: a request handler (in Rust, `rental_guest::export_handler!`)"
            ))
        })?;
        Ok(LoadedComponent { pre })
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
                tracing::info!(component = name.name(), %sha256, "component loaded");
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
    pub async fn handle<B>(
        &self,
        component: &Serving,
        storage: Storage,
        request: RequestContext,
        http_request: http::Request<B>,
    ) -> Outcome
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<wasmtime_wasi_http::Error>,
    {
        self.handle_measured(component, storage, request, http_request)
            .await
            .0
    }

    /// [`Self::handle`], and what the run used against its limits.
    pub async fn handle_measured<B>(
        &self,
        component: &Serving,
        storage: Storage,
        request: RequestContext,
        http_request: http::Request<B>,
    ) -> (Outcome, Usage)
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<wasmtime_wasi_http::Error>,
    {
        let memory = Arc::new(MemoryWatch::default());
        let mut usage = Usage {
            elapsed: Duration::ZERO,
            deadline: self.limits.deadline,
            memory_peak: 0,
            memory_limit: self.limits.memory_bytes,
        };
        let started = Instant::now();
        let outcome = self
            .run(component, storage, request, http_request, memory.clone())
            .await;
        usage.elapsed = started.elapsed();
        usage.memory_peak = memory.peak();
        (outcome, usage)
    }

    /// Runs the request in a fresh store whose memories `memory` watches.
    async fn run<B>(
        &self,
        component: &Serving,
        storage: Storage,
        request: RequestContext,
        http_request: http::Request<B>,
        memory: Arc<MemoryWatch>,
    ) -> Outcome
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<wasmtime_wasi_http::Error>,
    {
        let deadline = self.limits.deadline;
        let name = request.component;
        let clock = self.pacer.clock(&request.tenant.slug);
        let Some(seat) = self.pacer.seat(clock).await else {
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
                self.limits.memory_bytes,
                self.limits.bank_timeout(),
                self.limits.write_deadline,
                stderr.clone(),
                memory.clone(),
            ),
        );
        store.limiter(|state| &mut state.limits);
        // Yield to the executor at every tick, so that the deadline below can cancel a guest
        // that never returns on its own and other requests get the core; past its burst the
        // guest is paced with its tenant's other long runners. A guest past its write deadline
        // traps at the tick, and dropping its store rolls the transaction back.
        store.set_epoch_deadline(1);
        let pacer = self.pacer.clone();
        // Ticks the guest has run into: its running time in ticks, about (a guest that waited
        // for a core or for I/O across several ticks counts one), so a request slowed down by
        // a busy host is not taken for a long runner.
        let mut ran = Duration::ZERO;
        store.epoch_deadline_callback(move |store| {
            if let Some(overrun) = store.data().write_overrun() {
                return Err(overrun.into());
            }
            ran += EPOCH_TICK;
            if ran <= pacer.burst() {
                return Ok(UpdateDeadline::Yield(1));
            }
            let wait = pacer.charge(clock, EPOCH_TICK);
            Ok(if wait.is_zero() {
                UpdateDeadline::Yield(1)
            } else {
                UpdateDeadline::YieldCustom(1, Box::pin(tokio::time::sleep(wait)))
            })
        });

        let (sender, receiver) = tokio::sync::oneshot::channel();
        let prepared: wasmtime::Result<_> = (|| {
            let req = store
                .data_mut()
                .http()
                .new_incoming_request(Scheme::Http, http_request)?;
            let out = store.data_mut().http().new_response_outparam(sender)?;
            Ok((req, out))
        })();
        let (req, out) = match prepared {
            Ok(v) => v,
            Err(e) => return Outcome::Trap(e.into()),
        };
        let pre = component.loaded.pre.clone();
        let build = component.build;
        let metrics = self.metrics.clone();
        // The guest runs in a task of its own; the request's span goes with it, so that what
        // the capabilities log names the request.
        // The tenant's seat is held until the store is dropped with the task.
        let guest = tokio::spawn(
            tokio::time::timeout(deadline, async move {
                let _seat = seat;
                let started = Instant::now();
                let proxy = pre.instantiate_async(&mut store).await?;
                metrics.component_instantiated(name, build, started.elapsed());
                let started = Instant::now();
                let handled = proxy
                    .wasi_http_incoming_handler()
                    .call_handle(&mut store, req, out)
                    .await;
                metrics.component_executed(name, build, started.elapsed());
                handled
            })
            .in_current_span(),
        );

        let answer = tokio::time::timeout(deadline, async {
            match receiver.await {
                Ok(Ok(response)) => {
                    let (parts, body) = response.into_parts();
                    match Limited::new(body, MAX_RESPONSE_BODY).collect().await {
                        Ok(body) => {
                            Outcome::Response(http::Response::from_parts(parts, body.to_bytes()))
                        }
                        Err(e) if e.is::<LengthLimitError>() => Outcome::Trap(anyhow::anyhow!(
                            "the response body is over the limit of {} MiB",
                            MAX_RESPONSE_BODY >> 20
                        )),
                        Err(e) => Outcome::Trap(anyhow::anyhow!("response body failed: {e:?}")),
                    }
                }
                Ok(Err(code)) => {
                    Outcome::Trap(anyhow::anyhow!("guest answered with error {code:?}"))
                }
                Err(_) => match guest.await {
                    Ok(Ok(Ok(()))) => {
                        Outcome::Trap(anyhow::anyhow!("guest returned without a response"))
                    }
                    Ok(Ok(Err(trap))) if memory.refused() => {
                        Outcome::Trap(anyhow::Error::from(trap).context(format!(
                            "the component reached its memory limit of {} MiB \
                             (--memory-limit-mib)",
                            self.limits.memory_bytes >> 20
                        )))
                    }
                    Ok(Ok(Err(trap))) => Outcome::Trap(trap.into()),
                    Ok(Err(_elapsed)) => Outcome::Timeout,
                    Err(join) => Outcome::Trap(join.into()),
                },
            }
        })
        .await;
        let outcome = answer.unwrap_or(Outcome::Timeout);
        log_guest_stderr(name, &stderr.contents());
        self.metrics
            .component_finished(name, component.build, outcome.label());
        outcome
    }
}
