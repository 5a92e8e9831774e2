//! Layered configuration: command-line flags, then `RENTALD_*` environment variables (both
//! through clap), then a TOML file (`--config`), then defaults.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use serde::Deserialize;

use crate::runtime::Limits;
use crate::tls::TlsFiles;

/// Options every sub-command takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Configuration file (TOML); its keys are the long option names with underscores.
    #[arg(long, global = true, env = "RENTALD_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Directory for the embedded database and the compiled-component cache [default: ./data].
    #[arg(long, global = true, env = "RENTALD_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// sqlite://FILE or postgres://USER@HOST/DB [default: an SQLite file in the data directory].
    #[arg(long, global = true, env = "RENTALD_DATABASE_URL", value_name = "URL")]
    pub database_url: Option<String>,
    /// Log format: text or json [default: text].
    #[arg(long, global = true, env = "RENTALD_LOG_FORMAT", value_name = "FORMAT")]
    pub log_format: Option<LogFormat>,
}

/// Options of `rentald serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free one (the chosen address is printed)
    /// [default: 127.0.0.1:8080].
    #[arg(long, env = "RENTALD_LISTEN", value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    /// Serve /metrics (and the health probes) on this address, plain HTTP, for a private
    /// network; port 0 picks a free one (the chosen address is printed) [default: /metrics is
    /// not served].
    #[arg(long, env = "RENTALD_METRICS_LISTEN", value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,
    /// Tenants are served at {tenant}.{base-domain} [default: localhost].
    #[arg(long, env = "RENTALD_BASE_DOMAIN", value_name = "DOMAIN")]
    pub base_domain: Option<String>,
    /// Directory holding the platform components as <name>.wasm [default: next to the binary,
    /// ./components or ../wasm32-wasip2/release].
    #[arg(long, env = "RENTALD_COMPONENTS_DIR", value_name = "DIR")]
    pub components_dir: Option<PathBuf>,
    /// Where compiled components are cached, keyed by content hash [default: DATA_DIR/cache].
    #[arg(long, env = "RENTALD_CACHE_DIR", value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Time a component may take for one request, in milliseconds [default: 5000].
    #[arg(long, env = "RENTALD_REQUEST_TIMEOUT_MS", value_name = "MS")]
    pub request_timeout_ms: Option<u64>,
    /// Linear memory one component instance may use, in MiB [default: 64].
    #[arg(long, env = "RENTALD_MEMORY_LIMIT_MIB", value_name = "MIB")]
    pub memory_limit_mib: Option<usize>,
    /// How often the queue consumer looks for due messages when idle, in milliseconds
    /// [default: 500].
    #[arg(long, env = "RENTALD_QUEUE_POLL_MS", value_name = "MS")]
    pub queue_poll_ms: Option<u64>,
    /// How often the database is asked whether a tenant's components changed, in milliseconds
    /// [default: 1000].
    #[arg(long, env = "RENTALD_COMPONENT_POLL_MS", value_name = "MS")]
    pub component_poll_ms: Option<u64>,
    /// A compiled component nobody used for this long is dropped from memory, in seconds
    /// [default: 300].
    #[arg(long, env = "RENTALD_COMPONENT_IDLE_SECS", value_name = "SECS")]
    pub component_idle_secs: Option<u64>,
    /// Serve TLS with this certificate chain (PEM, leaf first), the one for names without a
    /// certificate of their own: typically a wildcard for *.{base-domain}. Needs --tls-key.
    #[arg(long, env = "RENTALD_TLS_CERT", value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, env = "RENTALD_TLS_KEY", value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// Directory of tenants' own certificates: <slug>.crt with <slug>.key (PEM), served to
    /// clients asking for <slug>.{base-domain}.
    #[arg(long, env = "RENTALD_TLS_TENANT_CERTS", value_name = "DIR")]
    pub tls_tenant_certs: Option<PathBuf>,
    /// How often the certificate files are checked for changes, in seconds; 0: only on SIGHUP
    /// [default: 5].
    #[arg(long, env = "RENTALD_TLS_RELOAD_SECS", value_name = "SECS")]
    pub tls_reload_secs: Option<u64>,
    /// Serve plain HTTP, without TLS (local development, or behind a proxy that terminates
    /// TLS).
    #[arg(long, env = "RENTALD_PLAIN_HTTP", value_parser = clap::builder::BoolishValueParser::new())]
    pub plain_http: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

/// The configuration file; every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    data_dir: Option<PathBuf>,
    database_url: Option<String>,
    log_format: Option<LogFormat>,
    listen: Option<SocketAddr>,
    metrics_listen: Option<SocketAddr>,
    base_domain: Option<String>,
    components_dir: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
    request_timeout_ms: Option<u64>,
    memory_limit_mib: Option<usize>,
    queue_poll_ms: Option<u64>,
    component_poll_ms: Option<u64>,
    component_idle_secs: Option<u64>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
    tls_tenant_certs: Option<PathBuf>,
    tls_reload_secs: Option<u64>,
    plain_http: Option<bool>,
}

/// How `serve` speaks to clients.
#[derive(Debug, Clone)]
pub enum Transport {
    Tls(TlsFiles),
    /// Asked for with `--plain-http`; also what commands other than `serve`, which never
    /// listen, are given.
    Plain,
}

/// Settled configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub database_url: String,
    pub log_format: LogFormat,
    pub listen: SocketAddr,
    /// Where /metrics is served, if anywhere.
    pub metrics_listen: Option<SocketAddr>,
    pub base_domain: String,
    pub components_dir: PathBuf,
    pub cache_dir: PathBuf,
    pub limits: Limits,
    /// The queue consumer's idle poll interval.
    pub queue_poll: Duration,
    /// How often the tenants' component assignments are refreshed.
    pub component_poll: Duration,
    /// How long a loaded component may stay unused before it is dropped.
    pub component_idle: Duration,
    pub transport: Transport,
}

impl Config {
    pub fn resolve(global: &GlobalArgs, serve: Option<&ServeArgs>) -> anyhow::Result<Self> {
        let file = match &global.config {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?
            }
            None => FileConfig::default(),
        };
        let transport = match serve {
            Some(serve) => transport(serve, &file)?,
            None => Transport::Plain,
        };
        let data_dir = global
            .data_dir
            .clone()
            .or(file.data_dir)
            .unwrap_or_else(|| PathBuf::from("data"));
        let database_url = global
            .database_url
            .clone()
            .or(file.database_url)
            .unwrap_or_else(|| format!("sqlite://{}", data_dir.join("rentald.db").display()));
        let defaults = Limits::default();
        let limits = Limits {
            deadline: serve
                .and_then(|s| s.request_timeout_ms)
                .or(file.request_timeout_ms)
                .map_or(defaults.deadline, Duration::from_millis),
            memory_bytes: serve
                .and_then(|s| s.memory_limit_mib)
                .or(file.memory_limit_mib)
                .map_or(defaults.memory_bytes, |mib| mib << 20),
            ..defaults
        };
        Ok(Self {
            transport,
            cache_dir: serve
                .and_then(|s| s.cache_dir.clone())
                .or(file.cache_dir)
                .unwrap_or_else(|| data_dir.join("cache")),
            database_url,
            log_format: global
                .log_format
                .or(file.log_format)
                .unwrap_or(LogFormat::Text),
            listen: serve
                .and_then(|s| s.listen)
                .or(file.listen)
                .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080))),
            metrics_listen: serve.and_then(|s| s.metrics_listen).or(file.metrics_listen),
            base_domain: serve
                .and_then(|s| s.base_domain.clone())
                .or(file.base_domain)
                .unwrap_or_else(|| "localhost".to_owned())
                .to_ascii_lowercase(),
            components_dir: match serve
                .and_then(|s| s.components_dir.clone())
                .or(file.components_dir)
            {
                Some(dir) => dir,
                None => default_components_dir()?,
            },
            limits,
            component_poll: Duration::from_millis(
                serve
                    .and_then(|s| s.component_poll_ms)
                    .or(file.component_poll_ms)
                    .unwrap_or(1_000)
                    .max(1),
            ),
            component_idle: Duration::from_secs(
                serve
                    .and_then(|s| s.component_idle_secs)
                    .or(file.component_idle_secs)
                    .unwrap_or(300),
            ),
            queue_poll: Duration::from_millis(
                serve
                    .and_then(|s| s.queue_poll_ms)
                    .or(file.queue_poll_ms)
                    .unwrap_or(500)
                    .max(1),
            ),
        })
    }
}

/// TLS with a certificate and its key, or plain HTTP when asked for; never plain by omission.
fn transport(serve: &ServeArgs, file: &FileConfig) -> anyhow::Result<Transport> {
    let plain = serve.plain_http || file.plain_http.unwrap_or(false);
    let cert = serve.tls_cert.clone().or_else(|| file.tls_cert.clone());
    let key = serve.tls_key.clone().or_else(|| file.tls_key.clone());
    match (cert, key) {
        (Some(_), Some(_)) if plain => {
            anyhow::bail!("--plain-http and --tls-cert/--tls-key exclude each other")
        }
        (Some(cert), Some(key)) => Ok(Transport::Tls(TlsFiles {
            cert,
            key,
            tenant_certs: serve
                .tls_tenant_certs
                .clone()
                .or_else(|| file.tls_tenant_certs.clone()),
            reload_every: match serve.tls_reload_secs.or(file.tls_reload_secs).unwrap_or(5) {
                0 => None,
                secs => Some(Duration::from_secs(secs)),
            },
        })),
        (Some(_), None) | (None, Some(_)) => {
            anyhow::bail!("--tls-cert and --tls-key go together: give both or neither")
        }
        (None, None) if plain => Ok(Transport::Plain),
        (None, None) => anyhow::bail!(
            "serve needs a certificate (--tls-cert and --tls-key), or --plain-http to serve \
             plain HTTP (local development, behind a proxy that terminates TLS)"
        ),
    }
}

/// `components/` beside the binary (an installed layout), else the workspace's wasm build
/// output when the binary runs from `target/<profile>/`.
fn default_components_dir() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let bin_dir = exe.parent().unwrap_or(Path::new("."));
    let installed = bin_dir.join("components");
    if installed.is_dir() {
        return Ok(installed);
    }
    Ok(bin_dir.join("../wasm32-wasip2/release"))
}
