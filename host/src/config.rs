//! Layered configuration: command-line flags, then `RENTALD_*` environment variables (both
//! through clap), then a TOML file (`--config`), then defaults.
//!
//! Each option is declared once, in its concern's struct in [`options!`]: clap reads the
//! structs (flattened into the commands: flags and environment), the file is read under the
//! same names, and [`Layer::or`] puts the command line over the file. [`Config::resolve`]
//! settles the rest from the defaults: a default that is a value is a constant of its concern
//! (or [`Limits::default`]), which the option's help shows through [`with_default`]; a default
//! that is a rule (derived from another option, or looked up) is described in the help.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum as _};
use serde::Deserialize;

use crate::auth::LoginLimits;
use crate::connection;
use crate::runtime::{CpuShare, Limits};
use crate::tls::TlsFiles;
use crate::webhook;

/// One layer of configuration over a lower one.
trait Layer {
    /// This layer, with what it leaves unset taken from `lower`.
    fn or(self, lower: Self) -> Self;
}

impl<T> Layer for Option<T> {
    fn or(self, lower: Self) -> Self {
        Option::or(self, lower)
    }
}

/// A switch is on when any layer turns it on.
impl Layer for bool {
    fn or(self, lower: Self) -> Self {
        self || lower
    }
}

/// Declares the concerns, each `name: Struct { options }`: for each, a struct of options that
/// clap reads (every field optional, or a switch) and its [`Layer`], field by field the upper
/// layer's value, else the lower's; and [`FileConfig`], every concern as the file gives it.
///
/// The file is read through one flat struct of all the keys, as operators write them, rather
/// than by flattening the concerns with serde: that would lose where in the file a bad value
/// is, and which keys an unknown one could have been.
macro_rules! options {
    ($(
        $(#[$meta:meta])*
        $concern:ident: $name:ident {
            $($(#[$field_meta:meta])* $field:ident: $ty:ty,)*
        }
    )*) => {
        $(
            $(#[$meta])*
            #[derive(Debug, Default, Clone, Args)]
            pub struct $name {
                $($(#[$field_meta])* $field: $ty,)*
            }

            impl Layer for $name {
                fn or(self, lower: Self) -> Self {
                    Self {
                        $($field: Layer::or(self.$field, lower.$field),)*
                    }
                }
            }
        )*

        /// The configuration file, concern by concern; every key is optional.
        #[derive(Debug, Default)]
        struct FileConfig {
            $($concern: $name,)*
        }

        impl<'de> Deserialize<'de> for FileConfig {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                #[derive(Default, Deserialize)]
                #[serde(default, deny_unknown_fields)]
                struct Keys {
                    $($($field: $ty,)*)*
                }

                let keys = Keys::deserialize(deserializer)?;
                Ok(Self {
                    $($concern: $name {
                        $($field: keys.$field,)*
                    },)*
                })
            }
        }
    };
}

/// An option's help ending with its default, as clap writes it for defaults it knows.
fn with_default(help: &str, default: impl fmt::Display) -> String {
    format!("{help} [default: {default}]")
}

/// Options every sub-command takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Configuration file (TOML); its keys are the long option names with underscores.
    #[arg(long, global = true, env = "RENTALD_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    storage: StorageOptions,
}

/// Options of `rentald serve`; commands that do not serve take these from the file only.
#[derive(Debug, Default, Clone, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    listen: ListenOptions,
    #[command(flatten)]
    runtime: RuntimeOptions,
    #[command(flatten)]
    poll: PollOptions,
    #[command(flatten)]
    tls: TlsOptions,
    #[command(flatten)]
    login: LoginOptions,
    #[command(flatten)]
    connections: ConnectionOptions,
    #[command(flatten)]
    webhooks: WebhookOptions,
}

options! {
    /// Where the data lives and how the logs look; every command takes these.
    storage: StorageOptions {
        #[arg(long, global = true, env = "RENTALD_DATA_DIR", value_name = "DIR", help = with_default(
            "Directory for the embedded database and the compiled-component cache",
            Self::DATA_DIR,
        ))]
        data_dir: Option<PathBuf>,
        /// sqlite://FILE or postgres://USER@HOST/DB [default: an SQLite file in the data directory].
        #[arg(long, global = true, env = "RENTALD_DATABASE_URL", value_name = "URL")]
        database_url: Option<String>,
        #[arg(long, global = true, env = "RENTALD_LOG_FORMAT", value_name = "FORMAT", help = with_default(
            "Log format: text or json",
            Self::LOG_FORMAT,
        ))]
        log_format: Option<LogFormat>,
    }

    /// Where `serve` listens, and for which names.
    listen: ListenOptions {
        #[arg(long, env = "RENTALD_LISTEN", value_name = "ADDR", help = with_default(
            "Address to listen on; port 0 picks a free one (the chosen address is printed)",
            Self::LISTEN,
        ))]
        listen: Option<SocketAddr>,
        /// Serve /metrics (and the health probes) on this address, plain HTTP, for a private
        /// network; port 0 picks a free one (the chosen address is printed) [default: /metrics is
        /// not served].
        #[arg(long, env = "RENTALD_METRICS_LISTEN", value_name = "ADDR")]
        metrics_listen: Option<SocketAddr>,
        #[arg(long, env = "RENTALD_BASE_DOMAIN", value_name = "DOMAIN", help = with_default(
            "Tenants are served at {tenant}.{base-domain}",
            Self::BASE_DOMAIN,
        ))]
        base_domain: Option<String>,
    }

    /// The components, their compiled cache, and what one instance may use.
    runtime: RuntimeOptions {
        /// Directory holding the platform components as <name>.wasm [default: next to the binary,
        /// ./components or ../wasm32-wasip2/release].
        #[arg(long, env = "RENTALD_COMPONENTS_DIR", value_name = "DIR")]
        components_dir: Option<PathBuf>,
        /// Where compiled components are cached, keyed by content hash [default: DATA_DIR/cache].
        #[arg(long, env = "RENTALD_CACHE_DIR", value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        #[arg(long, env = "RENTALD_REQUEST_TIMEOUT_MS", value_name = "MS", help = with_default(
            "Time a component may take for one request, in milliseconds",
            Limits::default().deadline.as_millis(),
        ))]
        request_timeout_ms: Option<u64>,
        #[arg(long, env = "RENTALD_WRITE_TIMEOUT_MS", value_name = "MS", help = with_default(
            "Time a component may keep a read-write transaction open, in milliseconds (at most \
             the request timeout)",
            Limits::default().write_deadline.as_millis(),
        ))]
        write_timeout_ms: Option<u64>,
        #[arg(long, env = "RENTALD_MEMORY_LIMIT_MIB", value_name = "MIB", help = with_default(
            "Linear memory one component instance may use, in MiB",
            Limits::default().memory_bytes >> 20,
        ))]
        memory_limit_mib: Option<usize>,
        #[arg(long, env = "RENTALD_TENANT_INSTANCES", value_name = "N", help = with_default(
            "Components one tenant may have running at once; past it a request waits up to 1 s \
             for one to end, then is answered 503 with Retry-After",
            Limits::default().tenant_instances,
        ))]
        tenant_instances: Option<NonZeroUsize>,
        #[arg(long, env = "RENTALD_TENANT_WRITERS", value_name = "N", help = with_default(
            "Read-write transactions one tenant may have open at once on PostgreSQL; past it a \
             writer waits for one to end before it begins",
            Limits::default().tenant_writers,
        ))]
        tenant_writers: Option<NonZeroUsize>,
        #[arg(long, env = "RENTALD_CPU_BURST_MS", value_name = "MS", help = with_default(
            "Time a request runs its component unpaced; past it, the component is paced with \
             its tenant's other long runners (--tenant-cpu-percent), in milliseconds",
            Limits::default().cpu.burst.as_millis(),
        ))]
        cpu_burst_ms: Option<u64>,
        #[arg(long, env = "RENTALD_TENANT_CPU_PERCENT", value_name = "PERCENT",
            value_parser = clap::value_parser!(u8).range(1..=100), help = with_default(
            "The part of one core a tenant's long-running components may use together, in percent",
            Limits::default().cpu.share * 100.0,
        ))]
        tenant_cpu_percent: Option<u8>,
    }

    /// How often the background tasks of `serve` look for work.
    poll: PollOptions {
        #[arg(long, env = "RENTALD_QUEUE_POLL_MS", value_name = "MS", help = with_default(
            "How often the queue consumer looks for due messages when idle, in milliseconds",
            Self::QUEUE_POLL_MS,
        ))]
        queue_poll_ms: Option<u64>,
        #[arg(long, env = "RENTALD_COMPONENT_POLL_MS", value_name = "MS", help = with_default(
            "How often the database is asked whether a tenant's components, or the tenant, its \
             users, settings or secrets, changed, in milliseconds",
            Self::COMPONENT_POLL_MS,
        ))]
        component_poll_ms: Option<u64>,
        #[arg(long, env = "RENTALD_COMPONENT_IDLE_SECS", value_name = "SECS", help = with_default(
            "A compiled component nobody used for this long is dropped from memory, in seconds",
            Self::COMPONENT_IDLE_SECS,
        ))]
        component_idle_secs: Option<u64>,
    }

    /// How `serve` speaks to clients: TLS, or plain HTTP when asked for.
    tls: TlsOptions {
        /// Serve TLS with this certificate chain (PEM, leaf first), the one for names without a
        /// certificate of their own: typically a wildcard for *.{base-domain}. Needs --tls-key.
        #[arg(long, env = "RENTALD_TLS_CERT", value_name = "FILE")]
        tls_cert: Option<PathBuf>,
        /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
        #[arg(long, env = "RENTALD_TLS_KEY", value_name = "FILE")]
        tls_key: Option<PathBuf>,
        /// Directory of tenants' own certificates: <slug>.crt with <slug>.key (PEM), served to
        /// clients asking for <slug>.{base-domain}.
        #[arg(long, env = "RENTALD_TLS_TENANT_CERTS", value_name = "DIR")]
        tls_tenant_certs: Option<PathBuf>,
        #[arg(long, env = "RENTALD_TLS_RELOAD_SECS", value_name = "SECS", help = with_default(
            "How often the certificate files are checked for changes, in seconds; 0: only on SIGHUP",
            Self::RELOAD_SECS,
        ))]
        tls_reload_secs: Option<u64>,
        /// Serve plain HTTP, without TLS (local development, or behind a proxy that terminates
        /// TLS).
        #[arg(long, env = "RENTALD_PLAIN_HTTP", value_parser = clap::builder::BoolishValueParser::new())]
        plain_http: bool,
    }

    /// How many logins `POST /auth/token` verifies at once, and how long one waits its turn.
    login: LoginOptions {
        /// Password verifications run at once, each holding about 19 MiB while it runs
        /// [default: the number of CPUs].
        #[arg(long, env = "RENTALD_LOGIN_CONCURRENCY", value_name = "N")]
        login_concurrency: Option<NonZeroUsize>,
        #[arg(long, env = "RENTALD_LOGIN_QUEUE_MS", value_name = "MS", help = with_default(
            "How long a token request waits for a verification to start before it is answered \
             503, in milliseconds",
            LoginLimits::default().queue_wait.as_millis(),
        ))]
        login_queue_ms: Option<u64>,
    }

    /// How many connections `serve` keeps open, and how long one may stay silent, idle or
    /// slow.
    connections: ConnectionOptions {
        #[arg(long, env = "RENTALD_MAX_CONNECTIONS", value_name = "N", help = with_default(
            "Connections open at once; past it a new connection is closed as soon as it is \
             accepted. Keep it under the process's open-file limit",
            connection::Limits::default().max_connections,
        ))]
        max_connections: Option<NonZeroUsize>,
        #[arg(long, env = "RENTALD_MAX_CONNECTIONS_PER_ADDRESS", value_name = "N", help = with_default(
            "Connections open at once from one client address (IPv4 address, IPv6 /64); behind \
             a proxy every client has the proxy's address: raise it to --max-connections",
            connection::Limits::default().max_connections_per_address,
        ))]
        max_connections_per_address: Option<NonZeroUsize>,
        #[arg(long, env = "RENTALD_HEADER_TIMEOUT_MS", value_name = "MS",
            value_parser = clap::value_parser!(u64).range(1..), help = with_default(
            "Time for a request's head to arrive, from the connection's start or its previous \
             request's end (and for a TLS handshake), in milliseconds",
            connection::Limits::default().header_timeout.as_millis(),
        ))]
        header_timeout_ms: Option<u64>,
        #[arg(long, env = "RENTALD_BODY_TIMEOUT_MS", value_name = "MS",
            value_parser = clap::value_parser!(u64).range(1..), help = with_default(
            "Time for a request's whole body to arrive, in milliseconds (past it: 408)",
            connection::Limits::default().body_timeout.as_millis(),
        ))]
        body_timeout_ms: Option<u64>,
        #[arg(long, env = "RENTALD_IDLE_TIMEOUT_MS", value_name = "MS",
            value_parser = clap::value_parser!(u64).range(1..), help = with_default(
            "Time a connection stays open with no request in flight, in milliseconds",
            connection::Limits::default().idle_timeout.as_millis(),
        ))]
        idle_timeout_ms: Option<u64>,
    }

    /// How `serve` sends the tenants' event webhooks.
    webhooks: WebhookOptions {
        #[arg(long, env = "RENTALD_WEBHOOK_POLL_MS", value_name = "MS", help = with_default(
            "How often the webhook sender looks for new changes and due deliveries when idle, \
             in milliseconds",
            Self::POLL_MS,
        ))]
        webhook_poll_ms: Option<u64>,
        #[arg(long, env = "RENTALD_WEBHOOK_TIMEOUT_MS", value_name = "MS",
            value_parser = clap::value_parser!(u64).range(1..), help = with_default(
            "Time a webhook receiver has to answer a delivery, in milliseconds",
            Self::TIMEOUT_MS,
        ))]
        webhook_timeout_ms: Option<u64>,
        #[arg(long, env = "RENTALD_WEBHOOK_RETRY_MS", value_name = "MS",
            value_parser = clap::value_parser!(u64).range(1..), help = with_default(
            "The wait before a failed delivery's second attempt, in milliseconds; it doubles \
             with every further attempt, up to an hour, for three days",
            Self::RETRY_MS,
        ))]
        webhook_retry_ms: Option<u64>,
        /// Send webhooks to loopback, private, link-local and other non-public addresses too
        /// (in-house receivers); without it such an endpoint's deliveries fail, refused.
        #[arg(long, env = "RENTALD_WEBHOOK_ALLOW_PRIVATE", value_parser = clap::builder::BoolishValueParser::new())]
        webhook_allow_private: bool,
    }
}

impl ConnectionOptions {
    fn limits(&self) -> connection::Limits {
        let defaults = connection::Limits::default();
        let millis = |value: Option<u64>, default| value.map_or(default, Duration::from_millis);
        connection::Limits {
            max_connections: self
                .max_connections
                .map_or(defaults.max_connections, NonZeroUsize::get),
            max_connections_per_address: self
                .max_connections_per_address
                .map_or(defaults.max_connections_per_address, NonZeroUsize::get),
            header_timeout: millis(self.header_timeout_ms, defaults.header_timeout),
            body_timeout: millis(self.body_timeout_ms, defaults.body_timeout),
            idle_timeout: millis(self.idle_timeout_ms, defaults.idle_timeout),
        }
    }
}

impl LoginOptions {
    fn limits(&self) -> LoginLimits {
        let defaults = LoginLimits::default();
        LoginLimits {
            concurrency: self.login_concurrency.unwrap_or(defaults.concurrency),
            queue_wait: self
                .login_queue_ms
                .map_or(defaults.queue_wait, Duration::from_millis),
        }
    }
}

impl StorageOptions {
    const DATA_DIR: &'static str = "data";
    const LOG_FORMAT: LogFormat = LogFormat::Text;
}

impl ListenOptions {
    const LISTEN: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 8080));
    const BASE_DOMAIN: &'static str = "localhost";
}

impl RuntimeOptions {
    fn limits(&self) -> Limits {
        let defaults = Limits::default();
        let deadline = self
            .request_timeout_ms
            .map_or(defaults.deadline, Duration::from_millis);
        Limits {
            deadline,
            write_deadline: self
                .write_timeout_ms
                .map_or(defaults.write_deadline, Duration::from_millis)
                .min(deadline),
            memory_bytes: self
                .memory_limit_mib
                .map_or(defaults.memory_bytes, |mib| mib << 20),
            tenant_instances: self
                .tenant_instances
                .map_or(defaults.tenant_instances, NonZeroUsize::get),
            tenant_writers: self
                .tenant_writers
                .map_or(defaults.tenant_writers, NonZeroUsize::get),
            cpu: CpuShare {
                burst: self
                    .cpu_burst_ms
                    .map_or(defaults.cpu.burst, Duration::from_millis),
                share: self
                    .tenant_cpu_percent
                    .map_or(defaults.cpu.share, |percent| f64::from(percent) / 100.0),
            },
            ..defaults
        }
    }
}

impl WebhookOptions {
    const POLL_MS: u64 = 1_000;
    const TIMEOUT_MS: u64 = 10_000;
    const RETRY_MS: u64 = 10_000;

    fn policy(&self) -> webhook::Policy {
        let millis = |value: Option<u64>, default| Duration::from_millis(value.unwrap_or(default));
        webhook::Policy {
            poll: millis(self.webhook_poll_ms, Self::POLL_MS).max(Duration::from_millis(1)),
            timeout: millis(self.webhook_timeout_ms, Self::TIMEOUT_MS),
            first_retry: millis(self.webhook_retry_ms, Self::RETRY_MS),
            max_retry: webhook::Policy::MAX_RETRY,
            max_age: webhook::Policy::MAX_AGE,
            allow_private: self.webhook_allow_private,
        }
    }
}

impl PollOptions {
    const QUEUE_POLL_MS: u64 = 500;
    const COMPONENT_POLL_MS: u64 = 1_000;
    const COMPONENT_IDLE_SECS: u64 = 300;
}

impl TlsOptions {
    const RELOAD_SECS: u64 = 5;

    /// TLS with a certificate and its key, or plain HTTP when asked for; never plain by
    /// omission.
    fn transport(self) -> anyhow::Result<Transport> {
        match (self.tls_cert, self.tls_key) {
            (Some(_), Some(_)) if self.plain_http => {
                anyhow::bail!("--plain-http and --tls-cert/--tls-key exclude each other")
            }
            (Some(cert), Some(key)) => Ok(Transport::Tls(TlsFiles {
                cert,
                key,
                tenant_certs: self.tls_tenant_certs,
                reload_every: match self.tls_reload_secs.unwrap_or(Self::RELOAD_SECS) {
                    0 => None,
                    secs => Some(Duration::from_secs(secs)),
                },
            })),
            (Some(_), None) | (None, Some(_)) => {
                anyhow::bail!("--tls-cert and --tls-key go together: give both or neither")
            }
            (None, None) if self.plain_http => Ok(Transport::Plain),
            (None, None) => anyhow::bail!(
                "serve needs a certificate (--tls-cert and --tls-key), or --plain-http to serve \
                 plain HTTP (local development, behind a proxy that terminates TLS)"
            ),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

/// As on the command line.
impl fmt::Display for LogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_possible_value() {
            Some(value) => f.write_str(value.get_name()),
            None => Ok(()),
        }
    }
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
    /// How the token endpoint bounds its password verifications.
    pub login: LoginLimits,
    /// How many connections are open, and how long one may stay silent, idle or slow.
    pub connections: connection::Limits,
    /// The queue consumer's idle poll interval.
    pub queue_poll: Duration,
    /// How often the tenants' component assignments are refreshed.
    pub component_poll: Duration,
    /// How long a loaded component may stay unused before it is dropped.
    pub component_idle: Duration,
    /// How the tenants' event webhooks are sent.
    pub webhooks: webhook::Policy,
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
        let flags = serve.cloned().unwrap_or_default();
        let storage = global.storage.clone().or(file.storage);
        let listen = flags.listen.or(file.listen);
        let runtime = flags.runtime.or(file.runtime);
        let poll = flags.poll.or(file.poll);
        let login = flags.login.or(file.login);
        let connections = flags.connections.or(file.connections);
        let webhooks = flags.webhooks.or(file.webhooks);
        let transport = match serve {
            Some(_) => flags.tls.or(file.tls).transport()?,
            None => Transport::Plain,
        };
        let data_dir = storage
            .data_dir
            .unwrap_or_else(|| PathBuf::from(StorageOptions::DATA_DIR));
        Ok(Self {
            transport,
            database_url: storage
                .database_url
                .unwrap_or_else(|| format!("sqlite://{}", data_dir.join("rentald.db").display())),
            log_format: storage.log_format.unwrap_or(StorageOptions::LOG_FORMAT),
            listen: listen.listen.unwrap_or(ListenOptions::LISTEN),
            metrics_listen: listen.metrics_listen,
            base_domain: listen
                .base_domain
                .as_deref()
                .unwrap_or(ListenOptions::BASE_DOMAIN)
                .to_ascii_lowercase(),
            limits: runtime.limits(),
            login: login.limits(),
            connections: connections.limits(),
            components_dir: match runtime.components_dir {
                Some(dir) => dir,
                None => default_components_dir()?,
            },
            cache_dir: runtime.cache_dir.unwrap_or_else(|| data_dir.join("cache")),
            queue_poll: Duration::from_millis(
                poll.queue_poll_ms
                    .unwrap_or(PollOptions::QUEUE_POLL_MS)
                    .max(1),
            ),
            component_poll: Duration::from_millis(
                poll.component_poll_ms
                    .unwrap_or(PollOptions::COMPONENT_POLL_MS)
                    .max(1),
            ),
            webhooks: webhooks.policy(),
            component_idle: Duration::from_secs(
                poll.component_idle_secs
                    .unwrap_or(PollOptions::COMPONENT_IDLE_SECS),
            ),
        })
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

#[cfg(test)]
mod tests;
