//! The WebAssembly runtime: one engine, components compiled once (and cached on disk by content
//! hash), a fresh sandboxed store per request.

mod cache;
mod state;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::BodyExt as _;
use wasmtime::component::Linker;
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, UpdateDeadline,
};
use wasmtime_wasi_http::p2::bindings::ProxyPre;
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::{WasiHttp, WasiHttpView as _};

pub use state::{Caller, HostState, RequestContext};

use crate::storage::Storage;

/// The components the platform ships, each serving a group of endpoints.
pub const PLATFORM_COMPONENTS: &[&str] = &[
    "listing",
    "booking",
    "selfcheckin",
    "bankone",
    "banktwo",
    "reconcile",
];

/// The components linked against the `webhook-platform` world (their own secrets and the
/// bank); every other component gets the `platform` world only, and fails to load if it
/// imports more.
pub const WEBHOOK_COMPONENTS: &[&str] = &["bankone", "banktwo"];

/// How much a single request may use.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall-clock budget of one request inside its component.
    pub deadline: Duration,
    /// Linear memory of one instance.
    pub memory_bytes: usize,
    /// Instances alive at once (the pooling allocator's slots).
    pub max_instances: u32,
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
            memory_bytes: 64 << 20,
            max_instances: 512,
        }
    }
}

/// A compiled, pre-linked component, ready to instantiate.
pub struct LoadedComponent {
    pre: ProxyPre<HostState>,
}

/// How a request inside a component ended.
pub enum Outcome {
    Response(http::Response<Bytes>),
    /// The guest trapped, or failed before answering.
    Trap(anyhow::Error),
    /// The guest ran past its deadline and was stopped.
    Timeout,
}

pub struct Runtime {
    engine: Engine,
    /// What API components are linked against (the `platform` world).
    api_linker: Linker<HostState>,
    /// What the webhook components are linked against (the `webhook-platform` world).
    webhook_linker: Linker<HostState>,
    cache: cache::CompiledCache,
    limits: Limits,
    defaults: HashMap<String, Arc<LoadedComponent>>,
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

/// Interval of the epoch ticker: how often a running guest yields to the executor (and so how
/// late a deadline can be noticed).
const EPOCH_TICK: Duration = Duration::from_millis(10);

impl Runtime {
    pub fn new(limits: Limits, cache_dir: PathBuf) -> anyhow::Result<Self> {
        let mut pool = PoolingAllocationConfig::default();
        let n = limits.max_instances;
        pool.total_component_instances(n)
            .total_core_instances(n * 8)
            .total_memories(n * 2)
            .total_tables(n * 8)
            .total_stacks(n)
            .max_memory_size(limits.memory_bytes);
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
            defaults: HashMap::new(),
        })
    }

    /// Loads the platform's default components from a directory of `<name>.wasm` files.
    pub fn load_platform_components(&mut self, dir: &Path) -> anyhow::Result<()> {
        for name in PLATFORM_COMPONENTS {
            let path = dir.join(format!("{name}.wasm"));
            let component = self
                .load(name, &path)
                .with_context(|| format!("loading component {name} from {}", path.display()))?;
            self.defaults
                .insert((*name).to_owned(), Arc::new(component));
        }
        Ok(())
    }

    /// Compiles (or fetches from the cache) and links one component file, against the
    /// webhook world when `name` is a webhook component and the platform world otherwise.
    pub fn load(&self, name: &str, path: &Path) -> anyhow::Result<LoadedComponent> {
        let wasm = std::fs::read(path)?;
        let (hash, component) = self.cache.component(&self.engine, &wasm)?;
        let (linker, world) = if WEBHOOK_COMPONENTS.contains(&name) {
            (&self.webhook_linker, "webhook-platform")
        } else {
            (&self.api_linker, "platform")
        };
        let pre = linker
            .instantiate_pre(&component)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("component {name} imports more than the {world} world"))?;
        let pre = ProxyPre::new(pre)?;
        tracing::info!(component = name, sha256 = %hash, "component ready");
        Ok(LoadedComponent { pre })
    }

    /// The component serving `name` for a tenant: the tenant's own when it has one installed,
    /// the platform default otherwise.
    pub fn component_for(&self, _tenant: &str, name: &str) -> Option<Arc<LoadedComponent>> {
        self.defaults.get(name).cloned()
    }

    /// Runs one request through a component in a fresh store, bounded in time and memory.
    pub async fn handle<B>(
        &self,
        component: &LoadedComponent,
        storage: Storage,
        request: RequestContext,
        http_request: http::Request<B>,
    ) -> Outcome
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<wasmtime_wasi_http::Error>,
    {
        let deadline = self.limits.deadline;
        let mut store = Store::new(
            &self.engine,
            HostState::new(
                request,
                storage,
                self.limits.memory_bytes,
                self.limits.bank_timeout(),
            ),
        );
        store.limiter(|state| &mut state.limits);
        // Yield to the executor at every tick so that the deadline below can cancel a guest
        // that never returns on its own.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|_| Ok(UpdateDeadline::Yield(1)));

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
        let pre = component.pre.clone();
        let guest = tokio::spawn(tokio::time::timeout(deadline, async move {
            let proxy = pre.instantiate_async(&mut store).await?;
            proxy
                .wasi_http_incoming_handler()
                .call_handle(&mut store, req, out)
                .await
        }));

        let answer = tokio::time::timeout(deadline, async {
            match receiver.await {
                Ok(Ok(response)) => {
                    let (parts, body) = response.into_parts();
                    match body.collect().await {
                        Ok(body) => {
                            Outcome::Response(http::Response::from_parts(parts, body.to_bytes()))
                        }
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
                    Ok(Ok(Err(trap))) => Outcome::Trap(trap.into()),
                    Ok(Err(_elapsed)) => Outcome::Timeout,
                    Err(join) => Outcome::Trap(join.into()),
                },
            }
        })
        .await;
        answer.unwrap_or(Outcome::Timeout)
    }
}
