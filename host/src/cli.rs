//! The operator CLI: `rentald <command>`. Names and flags are part of the public contract
//! (operators' scripts depend on them).

use std::io::{BufRead as _, Write as _};
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Parser, Subcommand};

use crate::config::{Config, GlobalArgs, ServeArgs};
use crate::routes::PERMISSIONS;
use crate::runtime::Runtime;
use crate::server::App;
use crate::storage::Storage;
use crate::{auth, queue, server, telemetry, tenancy};

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
    Serve(ServeArgs),
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

impl Cli {
    pub async fn run(self) -> anyhow::Result<()> {
        let serve = match &self.command {
            Command::Serve(args) => Some(args),
            _ => None,
        };
        let config = Config::resolve(&self.global, serve)?;
        telemetry::init(config.log_format);
        let storage = Storage::open(&config.database_url).await?;
        match self.command {
            Command::Serve(_) => run_server(config, storage).await,
            Command::Tenant(TenantCommand::Create { slug, demo }) => {
                create_tenant(&storage, &slug, demo).await
            }
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
            }) => {
                storage
                    .set_user_flags(&tenant, &name, enabled, api_enabled)
                    .await
            }
            Command::Secret(SecretCommand::Set { tenant, name }) => {
                let value = read_stdin_all()?;
                storage.set_secret(&tenant, &name, &value).await?;
                Ok(())
            }
            Command::Setting(SettingCommand::Set { tenant, key, value }) => {
                storage.set_setting(&tenant, &key, &value).await?;
                Ok(())
            }
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

async fn create_tenant(storage: &Storage, slug: &str, with_demo: bool) -> anyhow::Result<()> {
    anyhow::ensure!(
        tenancy::is_valid_slug(slug),
        "invalid tenant slug {slug:?}: use [a-z0-9][a-z0-9-]{{0,62}}"
    );
    storage.create_tenant(slug).await?;
    storage
        .set_secret(slug, auth::SIGNING_KEY_SECRET, &auth::new_signing_key())
        .await?;
    if with_demo {
        let demo = rental_domain::demo::demo_tenant(chrono::Utc::now())?;
        for (key, value) in &demo.settings {
            storage.set_setting(slug, key, value).await?;
        }
        storage.put_records(slug, &demo.records).await?;
        println!(
            "created tenant {slug} with {} demo records",
            demo.records.len()
        );
    } else {
        println!("created tenant {slug}");
    }
    Ok(())
}

/// Stops a background task when the server stops.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn run_server(config: Config, storage: Storage) -> anyhow::Result<()> {
    let mut runtime = Runtime::new(config.limits, config.cache_dir.clone())?;
    runtime
        .load_platform_components(&config.components_dir)
        .context("build the components first (see the README)")?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("listening on {}", config.listen))?;
    let address = listener.local_addr()?;
    let app = Arc::new(App {
        storage,
        runtime,
        base_domain: config.base_domain,
        throttle: auth::Throttle::new(),
    });
    // Tests and scripts read the bound address from this line.
    println!("listening on http://{address}");
    std::io::stdout().flush()?;
    tracing::info!(%address, database = %crate::storage::redact(&config.database_url), "serving");
    let consumer = tokio::spawn(queue::run(
        app.clone(),
        queue::Policy::new(config.queue_poll, config.limits.deadline),
    ));
    let _stop_consumer = AbortOnDrop(consumer);
    tokio::select! {
        result = server::serve(app, listener) => result,
        _ = tokio::signal::ctrl_c() => {
            tracing::info!("shutting down");
            Ok(())
        }
    }
}
