//! The operator CLI: `rentald <command>`. Names and flags are part of the public contract
//! (operators' scripts depend on them).

use std::io::{BufRead as _, Write as _};
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use rental_domain::events::EventType;
use rental_platform::{Component, PERMISSIONS};

use crate::apidocs::ApiDocs;
use crate::app::App;
use crate::config::{Config, GlobalArgs, ServeArgs, Transport};
use crate::connection::Gate;
use crate::metrics::Metrics;
use crate::runtime::{Caller, Serving};
use crate::runtime::{Runtime, wit};
use crate::server::Site;
use crate::storage::Storage;
use crate::storage::components::{Install, Rollback};
use crate::{
    auth, catalog, component_run, queue, scaffold, server, telemetry, tenancy, tls, webhook,
};

#[derive(Debug, Parser)]
#[command(name = "rentald", version, about = "The car-rental platform host")]
pub struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the HTTP API.
    Serve(Box<ServeArgs>),
    /// Manage tenants.
    #[command(subcommand)]
    Tenant(TenantCommand),
    /// Manage a tenant's API users.
    #[command(subcommand)]
    User(UserCommand),
    /// Manage a tenant's secrets (values are read from standard input).
    #[command(subcommand)]
    Secret(SecretCommand),
    /// Manage a tenant's settings.
    #[command(subcommand)]
    Setting(SettingCommand),
    /// Inspect the message queue.
    #[command(subcommand)]
    Queue(QueueCommand),
    /// Import or export a tenant's catalogue: branch offices, places, categories, models, cars,
    /// additionals, tariffs (docs/catalog.md).
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Manage a tenant's own components (in place of the platform's).
    #[command(subcommand)]
    Component(ComponentCommand),
    /// Manage a tenant's event webhooks: the endpoints its bookings' events are sent to,
    /// signed, and their deliveries (docs/contract.md, "Event webhooks").
    #[command(subcommand)]
    Webhook(WebhookCommand),
}

#[derive(Debug, Subcommand)]
enum ComponentCommand {
    /// Check a component file as install does, with no database: is it a component, does it
    /// import only what this host offers to the platform component it would replace, does it
    /// export a request handler. Nothing is stored but its compiled code in the cache.
    Check {
        /// The component (.wasm).
        file: std::path::PathBuf,
        /// The platform component it would replace: listing, booking, selfcheckin, bankone,
        /// banktwo or reconcile.
        #[arg(long = "as", value_name = "NAME")]
        component: String,
        /// Where to put the compiled component [default: the configuration's cache_dir, else
        /// DATA_DIR/cache].
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<std::path::PathBuf>,
    },
    /// Run one request through a component file as a platform component, as `serve` would
    /// (checked as `check` does, with the same limits), with no server and no database left
    /// behind: on a tenant `demo` in memory (the demo catalogue and bookings, or --data), as an
    /// API user holding every permission. Prints the answer, every document and queue message
    /// the request wrote, and its time and memory against the limits; fails when the component
    /// traps or runs past its deadline.
    Run(Box<component_run::RunArgs>),
    /// Write a new crate into DIR for a tenant's own build of platform component NAME, outside
    /// any workspace: it depends on the guest SDK and on the platform's NAME by path into this
    /// platform's source checkout, builds with `cargo build --release --target wasm32-wasip2`
    /// into a component `install` takes, and has a test on the SDK's test host. `listing`
    /// gets its own `listing::Rules` (the example hides canceled bookings); the others a
    /// wrapper around the platform's handler (the example marks every answer with a header).
    /// No database.
    New {
        /// The platform component it builds on: listing, booking, selfcheckin, bankone,
        /// banktwo or reconcile.
        component: String,
        /// Created; an existing directory must be empty. Its last component names the crate.
        dir: std::path::PathBuf,
        /// The root of the platform's source checkout to depend on [default: the one rentald
        /// was built from].
        #[arg(long, value_name = "DIR")]
        sdk: Option<std::path::PathBuf>,
    },
    /// Write the WIT package this host offers to components (rental:platform and the WASI 0.2
    /// packages it uses) into DIR, to build a component against; no database.
    Wit {
        /// Created if missing; files of the same names are replaced.
        dir: std::path::PathBuf,
    },
    /// The commands on a tenant's stored components.
    #[command(flatten)]
    Stored(StoredComponentCommand),
}

/// What `component` does with the database.
#[derive(Debug, Subcommand)]
enum StoredComponentCommand {
    /// Check a component file against the world of the platform component it replaces, store
    /// it, compile it into the cache, and make it the tenant's active version. Running servers
    /// switch to it within their --component-poll-ms.
    Install {
        #[arg(long)]
        tenant: String,
        /// The platform component it replaces: listing, booking, selfcheckin, bankone,
        /// banktwo or reconcile.
        component: String,
        /// The component (.wasm).
        file: std::path::PathBuf,
        /// Where to put the compiled component: the servers' --cache-dir [default: the
        /// configuration's cache_dir, else DATA_DIR/cache].
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<std::path::PathBuf>,
    },
    /// Show, per platform component, the tenant's active version (or the platform default)
    /// and its history.
    List {
        #[arg(long)]
        tenant: String,
        /// One JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Make the version before the active one active again; rolling back the first version
    /// returns the tenant to the platform default.
    Rollback {
        #[arg(long)]
        tenant: String,
        component: String,
    },
    /// Make any installed version the active one again (`component list` shows them). Running
    /// servers switch to it within their --component-poll-ms.
    Activate {
        #[arg(long)]
        tenant: String,
        component: String,
        #[arg(long, value_name = "N")]
        version: i64,
    },
}

#[derive(Debug, Subcommand)]
enum TenantCommand {
    /// Create a tenant, reachable at {slug}.{base-domain}.
    Create {
        /// [a-z0-9][a-z0-9-]{0,62}
        slug: String,
        /// Load a demo catalogue (branch offices, categories, models, cars, additionals,
        /// tariffs) and bookings in every status.
        #[arg(long)]
        demo: bool,
        /// With --demo: that many more bookings, closed or canceled over the ten years
        /// before the demo's (a tenant with a long history, for benchmarks).
        #[arg(long, value_name = "N", requires = "demo", default_value_t = 0)]
        bookings: usize,
    },
    /// Enable or disable a tenant (a disabled tenant answers 404 to everything).
    Update {
        slug: String,
        #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
        enabled: bool,
    },
}

#[derive(Debug, Subcommand)]
enum UserCommand {
    /// Create an API user; the password is read from standard input.
    Create {
        #[arg(long)]
        tenant: String,
        /// The user's name: its client_id, at most 256 bytes.
        #[arg(long)]
        name: String,
        /// Read the password (one line) from standard input. Required: passwords never go on
        /// the command line.
        #[arg(long, required = true)]
        password_stdin: bool,
        /// A permission to grant; repeat for several. One of: bookings:read, bookings:write,
        /// selfcheckin:write, catalog:read.
        #[arg(long = "permission", value_name = "P", required = true)]
        permissions: Vec<String>,
    },
    /// Enable or disable a user, altogether or for API use.
    Update {
        #[arg(long)]
        tenant: String,
        #[arg(long)]
        name: String,
        /// Whether the user may sign in at all.
        #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
        enabled: bool,
        /// Whether the user may use the API (get tokens, call endpoints).
        #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
        api_enabled: bool,
    },
}

#[derive(Debug, Subcommand)]
enum SecretCommand {
    /// Set a secret; the value is all of standard input, trailing line breaks removed (a PEM
    /// certificate or key may span lines).
    Set {
        #[arg(long)]
        tenant: String,
        name: String,
    },
}

#[derive(Debug, Subcommand)]
enum SettingCommand {
    /// Set a setting, e.g. time_zone, default_language, auth_failure_status, availability_mode,
    /// banktwo.base_url, banktwo.ca_cert.
    Set {
        #[arg(long)]
        tenant: String,
        key: String,
        /// The value; it may start with a hyphen (a PEM certificate does).
        #[arg(allow_hyphen_values = true)]
        value: String,
    },
}

#[derive(Debug, Subcommand)]
enum CatalogCommand {
    /// Validate a catalogue file (JSON Lines, docs/catalog.md) and merge it into the tenant's
    /// catalogue in one transaction: records of the file replace those of the same kind and
    /// id, the others stay. Any error, each naming its line, and nothing is written.
    Import {
        #[arg(long)]
        tenant: String,
        /// The catalogue file.
        file: std::path::PathBuf,
    },
    /// Write the tenant's catalogue in the format import reads.
    Export {
        #[arg(long)]
        tenant: String,
        /// Write to this file instead of standard output.
        #[arg(long, value_name = "FILE")]
        output: Option<std::path::PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum QueueCommand {
    /// List the messages: pending, processing, delivered and dead, with attempts and the last
    /// error.
    List {
        #[arg(long)]
        tenant: String,
        #[arg(long)]
        topic: Option<String>,
        /// One JSON object a line (the only format).
        #[arg(long, required = true)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum WebhookCommand {
    /// Register an endpoint for the changes committed from now on; prints its id and the
    /// secret its deliveries are signed with (shown only here).
    Add {
        #[arg(long)]
        tenant: String,
        /// Where deliveries are POSTed: an https:// URL (http:// with --insecure).
        #[arg(long)]
        url: String,
        /// The event types it receives, comma-separated [default: all of them].
        #[arg(long, value_delimiter = ',', value_name = "TYPES")]
        events: Vec<String>,
        /// Accept a plain http:// URL: deliveries, booking data included, travel unencrypted.
        #[arg(long)]
        insecure: bool,
    },
    /// List the endpoints (never their secrets).
    List {
        #[arg(long)]
        tenant: String,
        /// One JSON object a line (the only format).
        #[arg(long, required = true)]
        json: bool,
    },
    /// Remove an endpoint; its deliveries not made yet are dead, and the log keeps them all.
    Remove {
        #[arg(long)]
        tenant: String,
        /// The endpoint's id, as `add` printed it.
        #[arg(long)]
        id: i64,
    },
    /// List the deliveries, oldest first: event, status, attempts, the last answer's status
    /// and latency, and the last error.
    Deliveries {
        #[arg(long)]
        tenant: String,
        /// Only this endpoint's.
        #[arg(long, value_name = "ID")]
        webhook: Option<i64>,
        /// One JSON object a line (the only format).
        #[arg(long, required = true)]
        json: bool,
    },
}

impl Cli {
    pub async fn run(self) -> anyhow::Result<()> {
        let serve = match &self.command {
            Command::Serve(args) => Some(args.as_ref()),
            _ => None,
        };
        let config = Config::resolve(&self.global, serve)?;
        telemetry::init(config.log_format);
        // `component check`, `run`, `new` and `wit` need no database, and opening one would
        // create it.
        if let Command::Component(ComponentCommand::Check {
            file,
            component,
            cache_dir,
        }) = self.command
        {
            let checked = check_file(&config, &component, &file, cache_dir)?;
            println!(
                "{} can replace {}: a component that imports only what this host offers to it \
                 and exports a request handler (sha256 {}); rentald calls its {}",
                file.display(),
                checked.component,
                checked.sha256,
                checked.serving.entry_point()
            );
            return Ok(());
        }
        if let Command::Component(ComponentCommand::Run(args)) = self.command {
            return run_component(&config, &args).await;
        }
        if let Command::Component(ComponentCommand::New {
            component,
            dir,
            sdk,
        }) = &self.command
        {
            let made = scaffold::new(component, dir, sdk.as_deref())?;
            let dir = dir.display();
            let wasm = made.wasm.display();
            println!(
                "wrote {} (a tenant's {component}, on the platform at {}) to {dir}\n\n  \
                 cd {dir}\n  \
                 cargo build --release --target wasm32-wasip2\n  \
                 cargo test\n  \
                 rentald component check {wasm} --as {component}\n  \
                 rentald component run {wasm} --as {component} METHOD PATH",
                made.package,
                made.sdk.display(),
            );
            return Ok(());
        }
        if let Command::Component(ComponentCommand::Wit { dir }) = &self.command {
            wit::write(dir)?;
            println!(
                "wrote rental:platform@{} and its WASI packages to {}",
                rental_platform::WIT_VERSION,
                dir.display()
            );
            return Ok(());
        }
        let storage = Storage::open(&config.database_url).await?;
        match self.command {
            Command::Serve(_) => run_server(config, storage).await,
            Command::Tenant(TenantCommand::Create {
                slug,
                demo,
                bookings,
            }) => create_tenant(&storage, &slug, demo.then_some(bookings)).await,
            Command::Tenant(TenantCommand::Update { slug, enabled }) => {
                Ok(storage.set_tenant_enabled(&slug, enabled).await?)
            }
            Command::User(UserCommand::Create {
                tenant,
                name,
                password_stdin: _,
                permissions,
            }) => {
                for p in &permissions {
                    anyhow::ensure!(
                        PERMISSIONS.contains(&p.as_str()),
                        "unknown permission {p:?}; known: {}",
                        PERMISSIONS.join(", ")
                    );
                }
                anyhow::ensure!(
                    name.len() <= auth::MAX_CLIENT_ID,
                    "the name is longer than {} bytes, the longest client_id the token endpoint \
                     accepts",
                    auth::MAX_CLIENT_ID
                );
                let password = read_stdin_line()?;
                anyhow::ensure!(!password.is_empty(), "the password is empty");
                let hash =
                    tokio::task::spawn_blocking(move || auth::hash_password(&password)).await??;
                let id = storage
                    .create_user(&tenant, &name, &hash, &permissions)
                    .await?;
                println!("created user {name} (id {id}) in tenant {tenant}");
                Ok(())
            }
            Command::User(UserCommand::Update {
                tenant,
                name,
                enabled,
                api_enabled,
            }) => Ok(storage
                .set_user_flags(&tenant, &name, enabled, api_enabled)
                .await?),
            Command::Secret(SecretCommand::Set { tenant, name }) => {
                let value = read_stdin_all()?;
                storage.set_secret(&tenant, &name, &value).await?;
                Ok(())
            }
            Command::Setting(SettingCommand::Set { tenant, key, value }) => {
                storage.set_setting(&tenant, &key, &value).await?;
                Ok(())
            }
            Command::Component(ComponentCommand::Stored(command)) => {
                component_command(&config, &storage, command).await
            }
            Command::Component(
                ComponentCommand::Check { .. }
                | ComponentCommand::Run(_)
                | ComponentCommand::New { .. }
                | ComponentCommand::Wit { .. },
            ) => {
                unreachable!(
                    "component check, run, new and wit are answered before the database is opened"
                )
            }
            Command::Catalog(CatalogCommand::Import { tenant, file }) => {
                catalog::import(&storage, &tenant, &file).await
            }
            Command::Catalog(CatalogCommand::Export { tenant, output }) => {
                catalog::export(&storage, &tenant, output.as_deref()).await
            }
            Command::Webhook(command) => webhook_command(&storage, command).await,
            Command::Queue(QueueCommand::List {
                tenant,
                topic,
                json: _,
            }) => {
                let mut out = std::io::stdout().lock();
                for message in storage.queue_messages(&tenant, topic.as_deref()).await? {
                    serde_json::to_writer(&mut out, &message)?;
                    writeln!(out)?;
                }
                Ok(())
            }
        }
    }
}

/// The longest endpoint URL accepted.
const MAX_WEBHOOK_URL: usize = 2_048;

async fn webhook_command(storage: &Storage, command: WebhookCommand) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match command {
        WebhookCommand::Add {
            tenant,
            url,
            events,
            insecure,
        } => {
            check_webhook_url(&url, insecure)?;
            let events = if events.is_empty() {
                EventType::ALL.to_vec()
            } else {
                events
                    .iter()
                    .map(|name| name.trim().parse::<EventType>())
                    .collect::<Result<_, _>>()?
            };
            let secret = format!("whsec_{}", hex::encode(rand::random::<[u8; 32]>()));
            let id = storage.add_webhook(&tenant, &url, &events, &secret).await?;
            let names: Vec<&str> = events.iter().map(|event| event.name()).collect();
            writeln!(
                out,
                "added webhook {id} to tenant {tenant}: {url} ({})\nsigning secret: {secret}",
                names.join(", ")
            )?;
        }
        WebhookCommand::List { tenant, json: _ } => {
            storage.require_tenant(&tenant).await?;
            for endpoint in storage.webhooks(&tenant).await? {
                serde_json::to_writer(&mut out, &endpoint)?;
                writeln!(out)?;
            }
        }
        WebhookCommand::Remove { tenant, id } => {
            anyhow::ensure!(
                storage.remove_webhook(&tenant, id).await?,
                "tenant {tenant} has no webhook {id} (`rentald webhook list --tenant {tenant} \
                 --json` shows them)"
            );
            writeln!(out, "removed webhook {id} of tenant {tenant}")?;
        }
        WebhookCommand::Deliveries {
            tenant,
            webhook,
            json: _,
        } => {
            storage.require_tenant(&tenant).await?;
            for delivery in storage.webhook_deliveries(&tenant, webhook).await? {
                serde_json::to_writer(&mut out, &delivery)?;
                writeln!(out)?;
            }
        }
    }
    Ok(())
}

/// Refuses an endpoint URL deliveries cannot, or should not, be sent to.
fn check_webhook_url(text: &str, insecure: bool) -> anyhow::Result<()> {
    anyhow::ensure!(
        text.len() <= MAX_WEBHOOK_URL,
        "the URL is longer than {MAX_WEBHOOK_URL} bytes"
    );
    let url = url::Url::parse(text).with_context(|| format!("{text:?} is not a URL"))?;
    match url.scheme() {
        "https" => {}
        "http" => anyhow::ensure!(
            insecure,
            "{text} is plain http://: deliveries would travel unencrypted (--insecure accepts it)"
        ),
        scheme => anyhow::bail!("{text}: a webhook is an https:// URL, not {scheme}://"),
    }
    anyhow::ensure!(url.host().is_some(), "{text} names no host");
    anyhow::ensure!(
        url.username().is_empty() && url.password().is_none(),
        "{text} holds credentials: a receiver checks the signature instead"
    );
    anyhow::ensure!(url.fragment().is_none(), "{text} has a #fragment");
    Ok(())
}

/// A component file that passed `component check`, with the runtime that checked it.
struct CheckedFile {
    component: Component,
    sha256: String,
    /// Its bytes.
    wasm: Vec<u8>,
    /// It, ready to serve requests as `component`.
    serving: Serving,
    /// A runtime of the configuration's limits.
    runtime: Runtime,
}

/// Checks `file` as a replacement of platform component `name` (compiling it into the cache),
/// as `component check`, `install` and `run` do: the file, checked and linked, or why it is
/// refused.
fn check_file(
    config: &Config,
    name: &str,
    file: &std::path::Path,
    cache_dir: Option<std::path::PathBuf>,
) -> anyhow::Result<CheckedFile> {
    let component: Component = name.parse()?;
    let wasm = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let runtime = Runtime::new(
        config.limits,
        cache_dir.unwrap_or_else(|| config.cache_dir.clone()),
        Arc::new(Metrics::new()),
    )?;
    let (sha256, serving) = runtime
        .check_to_serve(component, &wasm)
        .with_context(|| format!("{} refused as {component}", file.display()))?;
    Ok(CheckedFile {
        component,
        sha256,
        wasm,
        serving,
        runtime,
    })
}

/// `component run`: the file checked, a tenant in memory, one request.
async fn run_component(config: &Config, args: &component_run::RunArgs) -> anyhow::Result<()> {
    let checked = check_file(config, &args.component, &args.file, args.cache_dir.clone())?;
    let storage = Storage::open_in_memory().await?;
    let caller = run_tenant(&storage, args.data.as_deref()).await?;
    component_run::run(
        &checked.runtime,
        checked.component,
        &checked.serving,
        storage,
        caller,
        args,
        &config.base_domain,
    )
    .await
}

/// The tenant of `component run`, as `tenant create --demo` makes it, or created empty and
/// loaded from a catalogue file as `catalog import` loads it; and its API user holding every
/// permission.
async fn run_tenant(storage: &Storage, data: Option<&std::path::Path>) -> anyhow::Result<Caller> {
    let slug = component_run::TENANT;
    new_tenant(storage, slug).await?;
    match data {
        Some(file) => {
            catalog::load(storage, slug, file).await?;
        }
        None => {
            load_demo(storage, slug).await?;
        }
    }
    let password = uuid::Uuid::new_v4().to_string();
    let hash = tokio::task::spawn_blocking(move || auth::hash_password(&password)).await??;
    let permissions: Vec<String> = PERMISSIONS.iter().map(|p| (*p).to_owned()).collect();
    let user_id = storage
        .create_user(slug, component_run::USER, &hash, &permissions)
        .await?;
    Ok(Caller {
        user_id,
        user_name: component_run::USER.to_owned(),
        permissions,
    })
}

async fn component_command(
    config: &Config,
    storage: &Storage,
    command: StoredComponentCommand,
) -> anyhow::Result<()> {
    match command {
        StoredComponentCommand::Install {
            tenant,
            component,
            file,
            cache_dir,
        } => {
            let CheckedFile {
                component,
                sha256,
                wasm,
                ..
            } = check_file(config, &component, &file, cache_dir)?;
            match storage
                .install_component(&tenant, component.name(), &sha256, &wasm)
                .await?
            {
                Install::Installed(version) => println!(
                    "installed {component} version {version} for tenant {tenant} (sha256 {sha256})"
                ),
                Install::AlreadyActive(version) => println!(
                    "{component} version {version} of tenant {tenant} already is this file (sha256 {sha256})"
                ),
            }
            Ok(())
        }
        StoredComponentCommand::List { tenant, json } => {
            let installed = storage.tenant_components(&tenant).await?;
            let components: Vec<_> = Component::ALL
                .map(Component::name)
                .iter()
                .map(|name| {
                    let history: Vec<_> = installed
                        .iter()
                        .filter(|i| i.component == *name)
                        .map(|i| {
                            serde_json::json!({
                                "version": i.version,
                                "sha256": i.sha256,
                                "size": i.size,
                                "installed_at": micros_to_rfc3339(i.installed_at),
                                "active": i.active,
                            })
                        })
                        .collect();
                    let active = history.iter().find(|v| v["active"] == true).cloned();
                    serde_json::json!({ "component": name, "active": active, "history": history })
                })
                .collect();
            let mut out = std::io::stdout().lock();
            if json {
                serde_json::to_writer_pretty(
                    &mut out,
                    &serde_json::json!({ "tenant": tenant, "components": components }),
                )?;
                writeln!(out)?;
                return Ok(());
            }
            for component in &components {
                let name = component["component"].as_str().unwrap_or_default();
                match component["active"].as_object() {
                    Some(active) => writeln!(
                        out,
                        "{name}: version {} sha256 {} installed {}",
                        active["version"],
                        active["sha256"].as_str().unwrap_or_default(),
                        active["installed_at"].as_str().unwrap_or_default()
                    )?,
                    None => writeln!(out, "{name}: platform default")?,
                }
                for version in component["history"].as_array().into_iter().flatten() {
                    writeln!(
                        out,
                        "  version {} sha256 {} {} bytes installed {}{}",
                        version["version"],
                        version["sha256"].as_str().unwrap_or_default(),
                        version["size"],
                        version["installed_at"].as_str().unwrap_or_default(),
                        if version["active"] == true {
                            " (active)"
                        } else {
                            ""
                        }
                    )?;
                }
            }
            Ok(())
        }
        StoredComponentCommand::Rollback { tenant, component } => {
            let component: Component = component.parse()?;
            match storage
                .rollback_component(&tenant, component.name())
                .await?
            {
                Rollback::Version(version) => {
                    println!("tenant {tenant} uses {component} version {version} again")
                }
                Rollback::PlatformDefault => {
                    println!("tenant {tenant} uses the platform's {component} again")
                }
            }
            Ok(())
        }
        StoredComponentCommand::Activate {
            tenant,
            component,
            version,
        } => {
            let component: Component = component.parse()?;
            if storage
                .activate_component(&tenant, component.name(), version)
                .await?
            {
                println!("tenant {tenant} uses {component} version {version}");
            } else {
                println!("{component} version {version} already is tenant {tenant}'s active one");
            }
            Ok(())
        }
    }
}

/// A stored time (microseconds since the Unix epoch) as RFC 3339.
fn micros_to_rfc3339(micros: i64) -> String {
    chrono::DateTime::from_timestamp_micros(micros)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// All of standard input without its trailing line breaks: a secret may span lines (a PEM
/// certificate or key).
fn read_stdin_all() -> anyhow::Result<String> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut text)
        .context("reading standard input")?;
    Ok(text.trim_end_matches(['\r', '\n']).to_owned())
}

fn read_stdin_line() -> anyhow::Result<String> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("reading standard input")?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

/// Creates a tenant and its signing key; with `demo`, the demo tenant and that many past
/// bookings.
async fn create_tenant(storage: &Storage, slug: &str, demo: Option<usize>) -> anyhow::Result<()> {
    new_tenant(storage, slug).await?;
    let Some(past) = demo else {
        println!("created tenant {slug}");
        return Ok(());
    };
    let demo = load_demo(storage, slug).await?;
    println!(
        "created tenant {slug} with {} demo records",
        demo.records.len()
    );
    if past > 0 {
        load_past_bookings(storage, slug, demo.past_bookings(past)?).await?;
    }
    Ok(())
}

/// Creates an empty tenant and its signing key.
async fn new_tenant(storage: &Storage, slug: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        tenancy::is_valid_slug(slug),
        "invalid tenant slug {slug:?}: use [a-z0-9][a-z0-9-]{{0,62}}"
    );
    storage.create_tenant(slug).await?;
    storage
        .set_secret(slug, auth::SIGNING_KEY_SECRET, &auth::new_signing_key())
        .await?;
    Ok(())
}

/// Writes the demo's settings and records into a tenant, and returns the demo.
async fn load_demo(
    storage: &Storage,
    slug: &str,
) -> anyhow::Result<rental_domain::demo::DemoTenant> {
    let demo = rental_domain::demo::demo_tenant(chrono::Utc::now())?;
    for (key, value) in &demo.settings {
        storage.set_setting(slug, key, value).await?;
    }
    storage.put_records(slug, &demo.records).await?;
    Ok(demo)
}

/// Past bookings written in transactions of [`PAST_BOOKINGS_BATCH`], with progress on
/// standard error.
async fn load_past_bookings(
    storage: &Storage,
    slug: &str,
    past: rental_domain::demo::PastBookings,
) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let total = past.len();
    let mut batch = Vec::with_capacity(PAST_BOOKINGS_BATCH);
    let mut written = 0;
    for record in past {
        batch.push(record?);
        if batch.len() == PAST_BOOKINGS_BATCH || written + batch.len() == total {
            storage.put_records(slug, &batch).await?;
            written += batch.len();
            batch.clear();
            if written % (PAST_BOOKINGS_BATCH * 100) == 0 || written == total {
                eprintln!(
                    "{written} of {total} past bookings written ({:.0} s)",
                    started.elapsed().as_secs_f64()
                );
            }
        }
    }
    storage.refresh_statistics().await?;
    println!("added {total} past bookings to {slug}");
    Ok(())
}

/// Past bookings per transaction: large enough that commits do not dominate, small enough
/// that a transaction stays a few megabytes.
const PAST_BOOKINGS_BATCH: usize = 1_000;

/// Stops a background task when the server stops.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn run_server(config: Config, mut storage: Storage) -> anyhow::Result<()> {
    storage.bound_writers(config.limits.tenant_writers);
    let metrics = Arc::new(Metrics::new());
    let mut runtime = Runtime::new(config.limits, config.cache_dir.clone(), metrics.clone())?;
    runtime.load_platform_components(&config.components_dir)?;
    runtime
        .refresh_components(&storage)
        .await
        .context("reading the tenants' components")?;
    storage
        .refresh_tenants()
        .await
        .context("reading the tenants' changes")?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("listening on {}", config.listen))?;
    let address = listener.local_addr()?;
    let (tls, _stop_reloading) = match config.transport {
        Transport::Tls(files) => {
            let (acceptor, watcher) = tls::start(files, &config.base_domain)?;
            (Some(acceptor), Some(AbortOnDrop(watcher)))
        }
        Transport::Plain => (None, None),
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let app = Arc::new(App {
        storage,
        runtime,
        base_domain: config.base_domain,
        logins: auth::Logins::new(config.login),
        metrics,
        api_docs: ApiDocs::load()?,
        connections: config.connections,
    });
    let gate = Gate::new(config.connections, "api", app.metrics.clone());
    let _stop_metrics = match config.metrics_listen {
        Some(metrics_listen) => {
            let listener = tokio::net::TcpListener::bind(metrics_listen)
                .await
                .with_context(|| format!("listening on {metrics_listen} for the metrics"))?;
            let address = listener.local_addr()?;
            // Printed before the API's line, which tests and scripts wait for.
            println!("metrics on http://{address}/metrics");
            let gate = Gate::new(
                config.connections.for_metrics(),
                "metrics",
                app.metrics.clone(),
            );
            Some(AbortOnDrop(tokio::spawn(server::serve(
                app.clone(),
                listener,
                None,
                Site::Metrics,
                gate,
            ))))
        }
        None => None,
    };
    // Tests and scripts read the bound address from this line.
    println!("listening on {scheme}://{address}");
    std::io::stdout().flush()?;
    tracing::info!(%address, scheme, database = %crate::storage::redact(&config.database_url), "serving");
    let consumer = tokio::spawn(queue::run(
        app.clone(),
        queue::Policy::new(config.queue_poll, config.limits.deadline),
    ));
    let _stop_consumer = AbortOnDrop(consumer);
    let follower = app.clone();
    let _stop_following = AbortOnDrop(tokio::spawn(async move {
        follower
            .follow_changes(config.component_poll, config.component_idle)
            .await;
    }));
    let _stop_expiring = AbortOnDrop(tokio::spawn(app.storage.clone().expire_keys_forever()));
    let _stop_sending = AbortOnDrop(tokio::spawn(webhook::run(
        app.storage.clone(),
        config.webhooks,
    )));
    tokio::select! {
        () = server::serve(app, listener, tls, Site::Api, gate) => Ok(()),
        _ = tokio::signal::ctrl_c() => {
            tracing::info!("shutting down");
            Ok(())
        }
    }
}
