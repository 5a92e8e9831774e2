//! Test harness: starts the real `rentald` binary on a random loopback port, with the real
//! compiled components and a fresh database, and talks to it over HTTP.
//!
//! The binary and the components must have been built first (`./dev test` does it); their
//! places are derived from this test binary's own (`target/debug/deps/...`), or given by
//! `RENTALD_BIN` and `RENTALD_COMPONENTS_DIR`.

pub mod bank;
pub mod receiver;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, Command};

/// The PostgreSQL server to test against, as a URL to an existing database (e.g.
/// `postgres://postgres@127.0.0.1:5432/test`). Each test creates and drops its own database.
pub const POSTGRES_ENV: &str = "RENTALD_TEST_DATABASE_URL";

pub const BASE_DOMAIN: &str = "localhost";
pub const PASSWORD: &str = "correct horse battery staple";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The build output directory (`target/`), from this test binary's path.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    // target/<profile>/deps/<test binary>
    exe.parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target"))
}

fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target/debug"))
}

/// A response's JSON body, `null` when it is empty; `what` names the request in a panic.
pub async fn json_body(response: reqwest::Response, what: &str) -> Value {
    let text = response.text().await.unwrap_or_default();
    if text.is_empty() {
        return Value::Null;
    }
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: {e}: {text}"))
}

/// Asserts an API answer of 400 with `code` (and a message and an error id), and returns the
/// body.
#[track_caller]
pub fn refused(response: (u16, Value), code: i64) -> Value {
    let (status, body) = response;
    assert_eq!(
        (status, &body["ErrorCode"]),
        (400, &serde_json::json!(code)),
        "{body}"
    );
    assert!(body["ErrorMessage"].as_str().is_some_and(|m| !m.is_empty()));
    assert!(body["Id"].is_string());
    body
}

pub fn rentald_bin() -> PathBuf {
    std::env::var_os("RENTALD_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| profile_dir().join("rentald"))
}

/// Where the release builds of the components are.
pub fn components_dir() -> PathBuf {
    std::env::var_os("RENTALD_COMPONENTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join("wasm32-wasip2/release"))
}

/// The compiled-component cache every test server shares (so a component is compiled once
/// per test run).
pub fn cache_dir() -> PathBuf {
    target_dir().join("test-component-cache")
}

/// A database of its own for one test.
enum Database {
    Sqlite,
    Postgres { admin_url: String, name: String },
}

/// Listens on `addr` again, once the listener a stopped test server held there is closed (its
/// aborted task drops it a moment later).
pub async fn bind_again(addr: SocketAddr) -> tokio::net::TcpListener {
    let mut tries = 0;
    loop {
        match tokio::net::TcpListener::bind(addr).await {
            Ok(listener) => return listener,
            Err(_) if tries < 50 => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("cannot listen on {addr} again: {e}"),
        }
    }
}

/// One running `rentald` with its own data directory and database.
pub struct TestApp {
    pub addr: SocketAddr,
    /// Where `/metrics` is served (`--metrics-listen`).
    pub metrics_addr: SocketAddr,
    pub client: reqwest::Client,
    database_url: String,
    data_dir: tempfile::TempDir,
    database: Database,
    child: Child,
    options: Options,
}

/// Another `rentald serve` on a [`TestApp`]'s database (a second host sharing it); stopped
/// when dropped.
pub struct Peer {
    pub addr: SocketAddr,
    _child: Child,
    log_dir: tempfile::TempDir,
}

impl Peer {
    /// What this host has logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_dir.path().join("rentald.log")).unwrap_or_default()
    }
}

/// The benchmarks' native reference server on a [`TestApp`]'s database; stopped when
/// dropped.
pub struct Reference {
    pub addr: SocketAddr,
    _child: Child,
}

/// Options for starting a server.
#[derive(Debug, Clone)]
pub struct Options {
    pub backend: Backend,
    /// Replace the components directory (e.g. with a hostile component as `listing.wasm`).
    pub components_dir: Option<PathBuf>,
    pub request_timeout_ms: u64,
    /// The queue consumer's idle poll interval.
    pub queue_poll_ms: u64,
    /// `--component-poll-ms`: how soon the server sees components installed and tenants
    /// changed by the CLI.
    pub component_poll_ms: u64,
    /// Serve TLS with these certificates; `None`: plain HTTP (`--plain-http`).
    pub tls: Option<Tls>,
    /// `RUST_LOG` of the server.
    pub log_filter: String,
    /// `--log-format json` rather than text.
    pub json_logs: bool,
    /// Run the server with at most this many open files (`ulimit -n`), to exhaust them.
    pub open_files: Option<u32>,
    /// More `serve` options (ones the harness does not already pass).
    pub serve_args: Vec<String>,
}

impl Options {
    pub fn new(backend: Backend) -> Self {
        Self {
            backend,
            components_dir: None,
            request_timeout_ms: 5_000,
            queue_poll_ms: 50,
            component_poll_ms: 50,
            tls: None,
            log_filter: "warn".to_owned(),
            json_logs: false,
            open_files: None,
            serve_args: Vec::new(),
        }
    }

    /// The base domain tenants are served under.
    pub fn base_domain(&self) -> &str {
        self.tls
            .as_ref()
            .map_or(BASE_DOMAIN, |tls| &tls.base_domain)
    }
}

/// The certificate files of a TLS server, and the CA its clients trust.
#[derive(Debug, Clone)]
pub struct Tls {
    /// The server's `--base-domain`: clients accept a wildcard only with two labels after the
    /// `*`, so `*.localhost` would not do.
    pub base_domain: String,
    /// The only root the test app's client trusts (PEM).
    pub ca_pem: String,
    /// `--tls-cert` and `--tls-key`.
    pub cert: PathBuf,
    pub key: PathBuf,
    /// `--tls-tenant-certs`.
    pub tenant_certs: Option<PathBuf>,
    /// `--tls-reload-secs` (0: on SIGHUP only).
    pub reload_secs: u64,
}

/// Resolves every host name to the loopback address, so that `{tenant}.localhost` reaches the
/// test server whatever the system resolver does with `.localhost`.
struct Loopback;

impl reqwest::dns::Resolve for Loopback {
    fn resolve(&self, _name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(async {
            let addrs: reqwest::dns::Addrs =
                Box::new(std::iter::once(SocketAddr::from(([127, 0, 0, 1], 0))));
            Ok(addrs)
        })
    }
}

/// A client that reaches every name on loopback; plain HTTP, or HTTPS with the system's roots.
pub fn client_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .dns_resolver(Arc::new(Loopback))
        .timeout(Duration::from_secs(30))
}

pub fn client() -> reqwest::Client {
    client_builder().build().expect("building the HTTP client")
}

/// A client that reaches every name on loopback and trusts only this CA (PEM).
pub fn tls_client_builder(ca_pem: &str) -> reqwest::ClientBuilder {
    client_builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca_pem.as_bytes()).expect("CA PEM"))
}

impl TestApp {
    /// Starts a server on a fresh database; `None` (after saying so loudly) when the backend is
    /// PostgreSQL and no server is configured.
    pub async fn spawn(options: Options) -> Option<Self> {
        let data_dir = tempfile::tempdir().expect("temporary directory");
        let (database_url, database) = match options.backend {
            Backend::Sqlite => (
                format!("sqlite://{}", data_dir.path().join("rentald.db").display()),
                Database::Sqlite,
            ),
            Backend::Postgres => {
                let Ok(admin_url) = std::env::var(POSTGRES_ENV) else {
                    eprintln!("\n*** SKIPPED: PostgreSQL test ({POSTGRES_ENV} is not set) ***\n");
                    return None;
                };
                let name = format!("rentald_test_{}", uuid::Uuid::new_v4().simple());
                admin(&admin_url, &format!("CREATE DATABASE {name}"))
                    .await
                    .expect("creating the test database");
                let url = with_database(&admin_url, &name);
                (url, Database::Postgres { admin_url, name })
            }
        };
        let started = start_server(&database_url, data_dir.path(), &options).await;
        let client = match &options.tls {
            Some(tls) => tls_client_builder(&tls.ca_pem)
                .build()
                .expect("building the HTTPS client"),
            None => client(),
        };
        Some(Self {
            addr: started.addr,
            metrics_addr: started.metrics_addr,
            client,
            database_url,
            data_dir,
            database,
            child: started.child,
            options,
        })
    }

    /// Starts the benchmarks' native reference server (`benches/reference`) on this server's
    /// database; stopped when dropped.
    pub async fn start_reference(&self) -> Reference {
        let mut child = Command::new(profile_dir().join("rentald-reference"))
            .arg("--database-url")
            .arg(&self.database_url)
            .arg("--listen")
            .arg("127.0.0.1:0")
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("starting rentald-reference (built by ./dev test)");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let addr = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await.ok()? {
                if let Some(addr) = line.strip_prefix("listening on http://") {
                    return addr.parse::<SocketAddr>().ok();
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
        .expect("rentald-reference did not start");
        Reference {
            addr,
            _child: child,
        }
    }

    /// Starts a second host on this server's database, with the same options.
    pub async fn start_peer(&self) -> Peer {
        let log_dir = tempfile::tempdir().expect("temporary directory");
        let started = start_server(&self.database_url, log_dir.path(), &self.options).await;
        Peer {
            addr: started.addr,
            _child: started.child,
            log_dir,
        }
    }

    /// Runs SQL statements on this server's database (to stage what tests cannot reach
    /// through the API, such as a message delivered twice).
    pub async fn sql(&self, statement: &str) {
        let mut conn = self.database().await;
        sqlx::raw_sql(statement)
            .execute(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
    }

    /// The value of a query that returns one integer (e.g. a `COUNT(*)`), on this server's
    /// database.
    pub async fn sql_count(&self, query: &str) -> i64 {
        sqlx::query_scalar(query)
            .fetch_one(&mut self.database().await)
            .await
            .unwrap_or_else(|e| panic!("{query}: {e}"))
    }

    /// The values of a query that returns one text column, on this server's database.
    pub async fn sql_texts(&self, query: &str) -> Vec<String> {
        sqlx::query_scalar(query)
            .fetch_all(&mut self.database().await)
            .await
            .unwrap_or_else(|e| panic!("{query}: {e}"))
    }

    /// A connection of the test's own to this server's database.
    /// A connection of its own to this server's database, to stage what tests cannot reach
    /// through the API (a writer that has not committed yet).
    pub async fn database(&self) -> sqlx::AnyConnection {
        use sqlx::Connection as _;
        sqlx::any::install_default_drivers();
        sqlx::AnyConnection::connect(&self.database_url)
            .await
            .expect("connecting to the test database")
    }

    /// The tenant's queued messages (`rentald queue list --json`), oldest first.
    pub async fn queue(&self, tenant: &str) -> Vec<Value> {
        self.cli_ok(&["queue", "list", "--tenant", tenant, "--json"], None)
            .await
            .lines()
            .map(|line| serde_json::from_str(line).expect("a JSON line"))
            .collect()
    }

    /// Waits (up to 30 s) until no message of the tenant is pending or processing, and
    /// returns the queue.
    pub async fn settled_queue(&self, tenant: &str) -> Vec<Value> {
        let started = std::time::Instant::now();
        loop {
            let queue = self.queue(tenant).await;
            let open = queue
                .iter()
                .any(|m| m["status"] == "pending" || m["status"] == "processing");
            if !open {
                return queue;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the queue did not settle: {queue:#?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// POST without a token, with headers and a raw body.
    pub async fn post_raw(
        &self,
        tenant: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> reqwest::Response {
        let mut request = self
            .client
            .post(self.url(tenant, path))
            .header("content-type", "application/json")
            .body(body.to_owned());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.expect("POST")
    }

    /// Runs an operator command against this server's database. After one that changes a
    /// tenant's admin data (tenant, user, secret, setting), waits until the server has polled
    /// the change, as a client would after `--component-poll-ms`.
    pub async fn cli(&self, args: &[&str], stdin: Option<&str>) -> std::process::Output {
        let output = self.run_cli(args, stdin).await;
        let admin = matches!(
            args.first().copied(),
            Some("tenant" | "user" | "secret" | "setting")
        );
        if admin && output.status.success() {
            self.await_tenant_changes().await;
        }
        output
    }

    /// Waits (up to 30 s) until the server's cached tenants reflect every change committed so
    /// far: its `rentald_tenant_generation` has reached the database's.
    async fn await_tenant_changes(&self) {
        let committed = self
            .sql_count("SELECT value FROM tenant_generation WHERE id = 1")
            .await;
        let started = std::time::Instant::now();
        loop {
            let (_, metrics) = self.metrics_get("/metrics").await;
            let seen = metrics
                .lines()
                .find_map(|line| line.strip_prefix("rentald_tenant_generation "))
                .and_then(|value| value.trim().parse::<i64>().ok());
            if seen.is_some_and(|seen| seen >= committed) {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the server did not reach tenant generation {committed} (at {seen:?})"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn run_cli(&self, args: &[&str], stdin: Option<&str>) -> std::process::Output {
        let mut child = Command::new(rentald_bin())
            .arg("--database-url")
            .arg(&self.database_url)
            .arg("--data-dir")
            .arg(self.data_dir.path())
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("running rentald");
        let mut input = child.stdin.take().expect("piped stdin");
        input
            .write_all(stdin.unwrap_or_default().as_bytes())
            .await
            .expect("writing stdin");
        drop(input);
        child.wait_with_output().await.expect("rentald output")
    }

    /// Runs an operator command that must succeed.
    pub async fn cli_ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let output = self.cli(args, stdin).await;
        assert!(
            output.status.success(),
            "rentald {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub async fn create_tenant(&self, slug: &str, demo: bool) {
        let mut args = vec!["tenant", "create", slug];
        if demo {
            args.push("--demo");
        }
        self.cli_ok(&args, None).await;
    }

    pub async fn create_user(&self, tenant: &str, name: &str, permissions: &[&str]) {
        let mut args = vec![
            "user",
            "create",
            "--tenant",
            tenant,
            "--name",
            name,
            "--password-stdin",
        ];
        for p in permissions {
            args.extend(["--permission", p]);
        }
        self.cli_ok(&args, Some(&format!("{PASSWORD}\n"))).await;
    }

    /// `rentald user update` of `tenant`'s user `name`: whether it may log in at all and
    /// through the API.
    pub async fn update_user(&self, tenant: &str, name: &str, enabled: bool, api_enabled: bool) {
        let (enabled, api_enabled) = (enabled.to_string(), api_enabled.to_string());
        let args = [
            "user",
            "update",
            "--tenant",
            tenant,
            "--name",
            name,
            "--enabled",
            &enabled,
            "--api-enabled",
            &api_enabled,
        ];
        self.cli_ok(&args, None).await;
    }

    /// A tenant with a user holding every permission, and that user's token.
    pub async fn tenant_with_token(&self, slug: &str, demo: bool) -> String {
        self.create_tenant(slug, demo).await;
        self.create_user(slug, "api", rental_platform::PERMISSIONS)
            .await;
        self.token(slug, "api", PASSWORD).await
    }

    pub fn url(&self, tenant: &str, path: &str) -> String {
        self.url_on(self.addr, tenant, path)
    }

    /// The URL of `path` on the host listening at `addr`: this server, or a peer on its
    /// database ([`TestApp::start_peer`]).
    pub fn url_on(&self, addr: SocketAddr, tenant: &str, path: &str) -> String {
        let scheme = if self.options.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let base = self.options.base_domain();
        format!("{scheme}://{tenant}.{base}:{}{path}", addr.port())
    }

    /// POST /auth/token with form credentials.
    pub async fn token_response(&self, tenant: &str, form: &[(&str, &str)]) -> reqwest::Response {
        self.client
            .post(self.url(tenant, "/auth/token"))
            .form(form)
            .send()
            .await
            .expect("token request")
    }

    pub async fn token(&self, tenant: &str, user: &str, password: &str) -> String {
        let response = self
            .token_response(
                tenant,
                &[
                    ("grant_type", "client_credentials"),
                    ("client_id", user),
                    ("client_secret", password),
                ],
            )
            .await;
        assert_eq!(response.status(), 200, "token for {user}@{tenant}");
        let body: Value = response.json().await.expect("token JSON");
        body["access_token"]
            .as_str()
            .expect("access_token")
            .to_owned()
    }

    /// GET with a bearer token.
    pub async fn get(&self, tenant: &str, path: &str, token: &str) -> reqwest::Response {
        self.client
            .get(self.url(tenant, path))
            .bearer_auth(token)
            .send()
            .await
            .expect("GET")
    }

    /// A request with a bearer token and an optional JSON body; the status and the JSON answer
    /// (`null` for an empty body).
    pub async fn call(
        &self,
        tenant: &str,
        token: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let mut request = self
            .client
            .request(method, self.url(tenant, path))
            .bearer_auth(token);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        (status, json_body(response, path).await)
    }

    /// The SQLite database's log (`rentald.db-wal`); `None` on PostgreSQL.
    pub fn sqlite_log(&self) -> Option<PathBuf> {
        matches!(self.database, Database::Sqlite)
            .then(|| self.data_dir.path().join("rentald.db-wal"))
    }

    /// GET that must answer 200 with JSON.
    pub async fn get_json(&self, tenant: &str, path: &str, token: &str) -> Value {
        let response = self.get(tenant, path, token).await;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        assert_eq!(status, 200, "GET {path}: {text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("GET {path}: {e}: {text}"))
    }

    /// The booking `id` (`GET /api/booking/{id}`), which must answer 200.
    pub async fn booking(&self, tenant: &str, token: &str, id: &Value) -> Value {
        self.get_json(tenant, &format!("/api/booking/{id}"), token)
            .await
    }

    /// The texts of booking `id`'s comments (`GET /api/booking/{id}/history`), which must come
    /// oldest first.
    pub async fn booking_history(&self, tenant: &str, token: &str, id: &Value) -> Vec<String> {
        let comments = self
            .get_json(tenant, &format!("/api/booking/{id}/history"), token)
            .await;
        let comments = comments.as_array().expect("the history is an array");
        let seqs: Vec<i64> = comments
            .iter()
            .map(|c| c["Seq"].as_i64().expect("a comment's Seq"))
            .collect();
        assert!(
            seqs.windows(2).all(|w| w[0] < w[1]),
            "oldest first: {seqs:?}"
        );
        comments
            .iter()
            .map(|c| c["Text"].as_str().expect("a comment's Text").to_owned())
            .collect()
    }

    /// `rentald setting set`, which must succeed.
    pub async fn set_setting(&self, tenant: &str, name: &str, value: &str) {
        self.cli_ok(&["setting", "set", "--tenant", tenant, name, value], None)
            .await;
    }

    /// GET without a token on the API listener, as a probe would: the status.
    pub async fn probe(&self, path: &str) -> u16 {
        self.client
            .get(format!("http://{}{path}", self.addr))
            .send()
            .await
            .expect("GET on the API listener")
            .status()
            .as_u16()
    }

    /// The server's log so far (for assertions and failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.data_dir.path().join("rentald.log")).unwrap_or_default()
    }

    /// Drops this server's PostgreSQL database, closing its connections, so that the server
    /// loses its database; false (and nothing done) on SQLite.
    pub async fn drop_postgres_database(&self) -> bool {
        let Database::Postgres { admin_url, name } = &self.database else {
            return false;
        };
        admin(admin_url, &drop_database(name))
            .await
            .expect("dropping the test database");
        true
    }

    /// GET on the metrics listener: the status and the body.
    pub async fn metrics_get(&self, path: &str) -> (u16, String) {
        let response = self
            .client
            .get(format!("http://{}{path}", self.metrics_addr))
            .send()
            .await
            .expect("GET on the metrics listener");
        let status = response.status().as_u16();
        (status, response.text().await.unwrap_or_default())
    }

    /// Whether the server process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The server's process id (to send it signals).
    pub fn pid(&self) -> u32 {
        self.child.id().expect("the server is running")
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        if std::thread::panicking() {
            eprintln!("--- rentald log ---\n{}", self.log());
        }
        if let Database::Postgres { admin_url, name } = &self.database {
            let (admin_url, name) = (admin_url.clone(), name.clone());
            // Drop the test database on a thread of its own: Drop cannot await.
            let _ = std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                if let Ok(runtime) = runtime {
                    let _ = runtime.block_on(admin(&admin_url, &drop_database(&name)));
                }
            })
            .join();
        }
    }
}

/// A started `rentald serve`.
struct Started {
    child: Child,
    addr: SocketAddr,
    metrics_addr: SocketAddr,
}

/// Starts `rentald serve` on `database_url` and waits for the addresses it listens on.
async fn start_server(database_url: &str, data_dir: &Path, options: &Options) -> Started {
    let components = options
        .components_dir
        .clone()
        .unwrap_or_else(components_dir);
    let cache = cache_dir();
    let log = data_dir.join("rentald.log");
    // With a file limit, a shell lowers it and then becomes the server (same process).
    let mut command = match options.open_files {
        Some(limit) => {
            let mut shell = Command::new("sh");
            shell
                .arg("-c")
                .arg("ulimit -n \"$0\" && exec \"$@\"")
                .arg(limit.to_string())
                .arg(rentald_bin());
            shell
        }
        None => Command::new(rentald_bin()),
    };
    let mut child = command
        .arg("--database-url")
        .arg(database_url)
        .arg("--data-dir")
        .arg(data_dir)
        .arg("serve")
        .arg("--listen")
        .arg("127.0.0.1:0")
        .arg("--base-domain")
        .arg(options.base_domain())
        .arg("--components-dir")
        .arg(&components)
        .arg("--cache-dir")
        .arg(&cache)
        .arg("--request-timeout-ms")
        .arg(options.request_timeout_ms.to_string())
        .arg("--queue-poll-ms")
        .arg(options.queue_poll_ms.to_string())
        .arg("--component-poll-ms")
        .arg(options.component_poll_ms.to_string())
        .args(transport_args(options.tls.as_ref()))
        .arg("--metrics-listen")
        .arg("127.0.0.1:0")
        .arg("--log-format")
        .arg(if options.json_logs { "json" } else { "text" })
        .args(&options.serve_args)
        .env("RUST_LOG", &options.log_filter)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).expect("log file"))
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", rentald_bin().display()));
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let addrs = tokio::time::timeout(Duration::from_secs(120), async {
        let mut metrics_addr = None;
        while let Some(line) = lines.next_line().await? {
            if let Some(addr) = line
                .strip_prefix("metrics on http://")
                .and_then(|rest| rest.strip_suffix("/metrics"))
            {
                metrics_addr = Some(addr.parse::<SocketAddr>()?);
            }
            let addr = line
                .strip_prefix("listening on http://")
                .or_else(|| line.strip_prefix("listening on https://"));
            if let Some(addr) = addr {
                let metrics_addr = metrics_addr.context("no metrics address before the API's")?;
                return Ok((addr.parse::<SocketAddr>()?, metrics_addr));
            }
        }
        anyhow::bail!("rentald exited before listening")
    })
    .await;
    match addrs {
        Ok(Ok((addr, metrics_addr))) => Started {
            child,
            addr,
            metrics_addr,
        },
        other => panic!(
            "rentald did not start ({other:?}); its log:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        ),
    }
}

/// `serve`'s TLS options, or `--plain-http`.
fn transport_args(tls: Option<&Tls>) -> Vec<std::ffi::OsString> {
    let Some(tls) = tls else {
        return vec!["--plain-http".into()];
    };
    let mut args = vec![
        "--tls-cert".into(),
        tls.cert.clone().into_os_string(),
        "--tls-key".into(),
        tls.key.clone().into_os_string(),
        "--tls-reload-secs".into(),
        tls.reload_secs.to_string().into(),
    ];
    if let Some(dir) = &tls.tenant_certs {
        args.extend(["--tls-tenant-certs".into(), dir.clone().into_os_string()]);
    }
    args
}

/// Drops a test database, closing its connections.
fn drop_database(name: &str) -> String {
    format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")
}

async fn admin(url: &str, statement: &str) -> anyhow::Result<()> {
    use sqlx::Connection as _;
    let mut conn = sqlx::PgConnection::connect(url)
        .await
        .with_context(|| format!("connecting to {url}"))?;
    sqlx::query(statement).execute(&mut conn).await?;
    Ok(())
}

fn with_database(url: &str, name: &str) -> String {
    let mut parsed = url::Url::parse(url).expect("a valid PostgreSQL URL");
    parsed.set_path(&format!("/{name}"));
    parsed.to_string()
}

/// Declares a test that runs once on SQLite and once on PostgreSQL (skipped, loudly, when no
/// PostgreSQL is configured).
#[macro_export]
macro_rules! on_both_backends {
    ($(async fn $name:ident($app:ident : TestApp) $body:block)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                async fn run($app: $crate::TestApp) $body

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    let app = $crate::TestApp::spawn($crate::Options::new($crate::Backend::Sqlite)).await;
                    run(app.expect("sqlite always runs")).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(app) = $crate::TestApp::spawn($crate::Options::new($crate::Backend::Postgres)).await {
                        run(app).await;
                    }
                }
            }
        )*
    };
}
