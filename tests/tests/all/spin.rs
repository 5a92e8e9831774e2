//! The components under Spin (docs/spin.md): the adapter composed into each HTTP component as
//! `spin up` composes a component dependency, what the composition imports and exports, a
//! stand-in for Spin's SQLite and variables on which the composed booking and listing
//! components create, update and list a booking, and spin.toml against the platform's route
//! table.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use rental_domain::payments;
use rental_platform::routes::ROUTES;
use rental_platform::{PERMISSIONS, spin_variable};
use serde_json::{Value, json};
use wac_graph::types::Package;
use wac_graph::{CompositionGraph, EncodeOptions};
use wasmtime::component::{Component, HasSelf, Linker, Resource, ResourceTable};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::p2::bindings::ProxyPre;
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

/// The components spin.toml serves, each with the adapter composed in: those with routes.
fn http_components() -> Vec<&'static str> {
    rental_platform::Component::ALL
        .into_iter()
        .filter(|c| c.routes().next().is_some())
        .map(rental_platform::Component::name)
        .collect()
}

/// What Spin 4.0.2 links for a `wasi:http/incoming-handler@0.2.x` component: WASI 0.2
/// (`wasi:cli/imports@0.2.6` and `wasi:http/outgoing-handler@0.2.6` in its `spin:up/platform`
/// world; a component importing a later 0.2 patch version is linked to them) and the
/// `fermyon:spin/platform@2.0.0` interfaces.
const SPIN_WASI_0_2: &[&str] = &[
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
    "wasi:clocks/monotonic-clock",
    "wasi:clocks/wall-clock",
    "wasi:filesystem/types",
    "wasi:filesystem/preopens",
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:random/random",
    "wasi:random/insecure",
    "wasi:random/insecure-seed",
    "wasi:sockets/network",
    "wasi:sockets/instance-network",
    "wasi:sockets/udp",
    "wasi:sockets/udp-create-socket",
    "wasi:sockets/tcp",
    "wasi:sockets/tcp-create-socket",
    "wasi:sockets/ip-name-lookup",
    "wasi:http/types",
    "wasi:http/outgoing-handler",
];
const SPIN_2_0_0: &[&str] = &[
    "fermyon:spin/llm",
    "fermyon:spin/redis",
    "fermyon:spin/mqtt",
    "fermyon:spin/postgres",
    "fermyon:spin/mysql",
    "fermyon:spin/rdbms-types",
    "fermyon:spin/sqlite",
    "fermyon:spin/key-value",
    "fermyon:spin/variables",
];

/// Whether Spin 4.0.2 satisfies an import of this name.
fn spin_provides(import: &str) -> bool {
    let (interface, version) = import.split_once('@').unwrap_or((import, ""));
    (SPIN_WASI_0_2.contains(&interface) && version.starts_with("0.2."))
        || (SPIN_2_0_0.contains(&interface) && version == "2.0.0")
}

fn wasm(name: &str) -> Vec<u8> {
    let path = rentald_tests::components_dir().join(format!("{name}.wasm"));
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (build with ./dev build or ./dev test)",
            path.display()
        )
    })
}

/// `component` with the adapter plugged into its imports, as Spin composes a dependency.
fn compose(component: &str) -> Vec<u8> {
    let mut graph = CompositionGraph::new();
    let socket = Package::from_bytes(
        &format!("rental:{component}"),
        None,
        wasm(component),
        graph.types_mut(),
    )
    .unwrap();
    let socket = graph.register_package(socket).unwrap();
    let adapter = Package::from_bytes(
        "rental:spin-adapter",
        None,
        wasm("spin_adapter"),
        graph.types_mut(),
    )
    .unwrap();
    let adapter = graph.register_package(adapter).unwrap();
    wac_graph::plug(&mut graph, vec![adapter], socket).unwrap();
    graph.encode(EncodeOptions::default()).unwrap()
}

/// One engine for every component of these tests, compiling quickly.
static ENGINE: LazyLock<Engine> = LazyLock::new(|| {
    let mut config = Config::new();
    config.cranelift_opt_level(wasmtime::OptLevel::None);
    Engine::new(&config).unwrap()
});

/// The names a component imports and exports.
fn world(bytes: &[u8]) -> (Vec<String>, Vec<String>) {
    let component = Component::new(&ENGINE, bytes).unwrap();
    let ty = component.component_type();
    let imports = ty
        .imports(&ENGINE)
        .map(|(name, _)| name.to_owned())
        .collect();
    let exports = ty
        .exports(&ENGINE)
        .map(|(name, _)| name.to_owned())
        .collect();
    (imports, exports)
}

#[test]
fn the_composed_components_import_only_what_spin_4_0_2_provides() {
    let (adapter_imports, adapter_exports) = world(&wasm("spin_adapter"));
    for export in ["context", "store", "secrets", "bank"] {
        let name = format!("rental:platform/{export}@0.1.0");
        assert!(
            adapter_exports.contains(&name),
            "the adapter exports {name}: {adapter_exports:?}"
        );
    }
    let unprovided: Vec<&String> = adapter_imports
        .iter()
        .filter(|i| !spin_provides(i))
        .collect();
    assert!(unprovided.is_empty(), "the adapter imports {unprovided:?}");

    for component in http_components() {
        let (imports, _) = world(&wasm(component));
        assert!(
            imports
                .iter()
                .any(|i| i.starts_with("rental:platform/store@")),
            "{component} alone imports the platform: {imports:?}"
        );
        assert!(
            !imports.iter().all(|i| spin_provides(i)),
            "{component} alone needs the adapter"
        );

        let composed = compose(component);
        let (imports, exports) = world(&composed);
        let unprovided: Vec<&String> = imports.iter().filter(|i| !spin_provides(i)).collect();
        assert!(
            unprovided.is_empty(),
            "{component} composed still imports {unprovided:?}"
        );
        assert!(
            exports
                .iter()
                .any(|e| e.starts_with("wasi:http/incoming-handler@0.2.")),
            "{component} composed exports wasi:http: {exports:?}"
        );
        println!(
            "{component}: {} bytes alone, {} composed with the adapter",
            wasm(component).len(),
            composed.len()
        );
    }
    println!("spin_adapter: {} bytes", wasm("spin_adapter").len());
}

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "spin-host",
        with: {
            "fermyon:spin/sqlite.connection": super::Connection,
        },
    });
}

use self::bindings::fermyon::spin::{sqlite, variables};

/// A stand-in for Spin's SQLite connection: rusqlite on one database file.
pub struct Connection(rusqlite::Connection);

/// One instance's state, as Spin gives each request: WASI, wasi:http, the database file and
/// the variables.
struct SpinState {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    table: ResourceTable,
    database: PathBuf,
    variables: BTreeMap<String, String>,
}

impl WasiView for SpinState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for SpinState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: Default::default(),
        }
    }
}

fn io(error: rusqlite::Error) -> sqlite::Error {
    sqlite::Error::Io(error.to_string())
}

impl sqlite::Host for SpinState {}

impl sqlite::HostConnection for SpinState {
    fn open(&mut self, database: String) -> Result<Resource<Connection>, sqlite::Error> {
        if database != "default" {
            return Err(sqlite::Error::NoSuchDatabase);
        }
        let connection = rusqlite::Connection::open(&self.database).map_err(io)?;
        self.table
            .push(Connection(connection))
            .map_err(|e| sqlite::Error::Io(e.to_string()))
    }

    fn execute(
        &mut self,
        connection: Resource<Connection>,
        statement: String,
        parameters: Vec<sqlite::Value>,
    ) -> Result<sqlite::QueryResult, sqlite::Error> {
        let connection = &self
            .table
            .get(&connection)
            .map_err(|_| sqlite::Error::InvalidConnection)?
            .0;
        let mut prepared = connection.prepare(&statement).map_err(io)?;
        let columns: Vec<String> = prepared
            .column_names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        let parameters = parameters.into_iter().map(|value| match value {
            sqlite::Value::Integer(v) => rusqlite::types::Value::Integer(v),
            sqlite::Value::Real(v) => rusqlite::types::Value::Real(v),
            sqlite::Value::Text(v) => rusqlite::types::Value::Text(v),
            sqlite::Value::Blob(v) => rusqlite::types::Value::Blob(v),
            sqlite::Value::Null => rusqlite::types::Value::Null,
        });
        let mut rows = prepared
            .query(rusqlite::params_from_iter(parameters))
            .map_err(io)?;
        let mut result = Vec::new();
        while let Some(row) = rows.next().map_err(io)? {
            let values = (0..columns.len())
                .map(|i| {
                    Ok(match row.get_ref(i)? {
                        rusqlite::types::ValueRef::Null => sqlite::Value::Null,
                        rusqlite::types::ValueRef::Integer(v) => sqlite::Value::Integer(v),
                        rusqlite::types::ValueRef::Real(v) => sqlite::Value::Real(v),
                        rusqlite::types::ValueRef::Text(v) => {
                            sqlite::Value::Text(String::from_utf8_lossy(v).into_owned())
                        }
                        rusqlite::types::ValueRef::Blob(v) => sqlite::Value::Blob(v.to_vec()),
                    })
                })
                .collect::<Result<Vec<_>, rusqlite::Error>>()
                .map_err(io)?;
            result.push(sqlite::RowResult { values });
        }
        Ok(sqlite::QueryResult {
            columns,
            rows: result,
        })
    }

    fn drop(&mut self, connection: Resource<Connection>) -> wasmtime::Result<()> {
        self.table.delete(connection)?;
        Ok(())
    }
}

impl variables::Host for SpinState {
    fn get(&mut self, name: String) -> Result<String, variables::Error> {
        self.variables
            .get(&name)
            .cloned()
            .ok_or(variables::Error::Undefined(name))
    }
}

/// A stand-in for `spin up` over one database file: the composed components, a fresh instance
/// per request.
struct SpinApp {
    database: PathBuf,
    variables: BTreeMap<String, String>,
    components: BTreeMap<&'static str, ProxyPre<SpinState>>,
}

impl SpinApp {
    fn new(dir: &Path, components: &[&'static str]) -> Self {
        let mut linker = Linker::<SpinState>::new(&ENGINE);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).unwrap();
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker).unwrap();
        sqlite::add_to_linker::<_, HasSelf<SpinState>>(&mut linker, |s| s).unwrap();
        variables::add_to_linker::<_, HasSelf<SpinState>>(&mut linker, |s| s).unwrap();
        let components = components
            .iter()
            .map(|name| {
                let component = Component::new(&ENGINE, compose(name)).unwrap();
                (
                    *name,
                    ProxyPre::new(linker.instantiate_pre(&component).unwrap()).unwrap(),
                )
            })
            .collect();
        let variables = [
            ("demo_data", "true"),
            ("tenant", "spin"),
            ("user_name", "spin-dev"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        Self {
            database: dir.join("sqlite_db.db"),
            variables,
            components,
        }
    }

    /// One request to `component` in a new instance: the status and the JSON body (`null`
    /// when empty).
    async fn call(
        &self,
        component: &str,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let (status, _, value) = self.respond(component, method, path, body).await;
        (status, value)
    }

    /// [`SpinApp::call`] with the response's header fields.
    async fn respond(
        &self,
        component: &str,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, http::HeaderMap, Value) {
        let state = SpinState {
            wasi: WasiCtx::builder().inherit_stderr().build(),
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            database: self.database.clone(),
            variables: self.variables.clone(),
        };
        let mut store = Store::new(&ENGINE, state);
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let request = http::Request::builder()
            .method(method)
            .uri(format!("http://127.0.0.1:3000{path}"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let request = store
            .data_mut()
            .http()
            .new_incoming_request(Scheme::Http, request)
            .unwrap();
        let out = store
            .data_mut()
            .http()
            .new_response_outparam(sender)
            .unwrap();
        let pre = self.components[component].clone();
        let guest = tokio::spawn(async move {
            let proxy = pre.instantiate_async(&mut store).await?;
            proxy
                .wasi_http_incoming_handler()
                .call_handle(&mut store, request, out)
                .await
        });
        let response = receiver.await.unwrap().unwrap();
        let status = response.status().as_u16();
        assert!(
            response
                .headers()
                .get("x-correlation-id")
                .is_some_and(|id| id.len() == 32),
            "the guest names the request: {:?}",
            response.headers()
        );
        let (head, body) = response.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        guest.await.unwrap().unwrap();
        let value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap()
        };
        (status, head.headers, value)
    }
}

/// `hour`:00 on the demo tenant's clock (Buenos Aires), `days` from today.
fn at(days: u64, hour: u32) -> String {
    let zone = chrono_tz::America::Argentina::Buenos_Aires;
    let date = chrono::Utc::now().with_timezone(&zone).date_naive() + chrono::Days::new(days);
    format!("{date}T{hour:02}:00:00-03:00")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_booking_is_created_updated_and_listed_through_the_adapter() {
    let dir = tempfile::tempdir().unwrap();
    let app = SpinApp::new(dir.path(), &["booking", "listing"]);

    // The demo catalogue is loaded on the first request; model 2 is free 70 days ahead.
    let request = json!({
        "Customer": {"Id": 3},
        "Car": {"Model": {"Id": 2}},
        "FromDate": at(70, 10),
        "ToDate": at(73, 10),
        "DeliveryPlace": {"Id": 1},
        "ReturnPlace": {"Id": 1},
        "FullResponse": true,
    });
    let (status, created) = app
        .call("booking", "POST", "/api/booking/book", Some(&request))
        .await;
    assert_eq!(status, 200, "{created}");
    let id = created["Id"].as_i64().unwrap();
    assert_eq!(created["CurrentStatus"], 2);
    assert_eq!(created["Model"]["Id"], 2);
    assert_eq!(
        created["UpdatedByUserName"], "spin-dev",
        "the caller is the variable's"
    );
    assert_eq!(
        created["Code"],
        format!("SPIN-{id:06}"),
        "the tenant is the variable's"
    );

    let update = json!({"Id": id, "ToDate": at(74, 10), "FullResponse": true});
    let (status, updated) = app
        .call("booking", "PUT", "/api/booking/update", Some(&update))
        .await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(updated["ToDate"], at(74, 10));
    assert_eq!(updated["Id"], id);

    // Another instance of another component sees the committed booking.
    let (status, page) = app
        .call(
            "listing",
            "GET",
            "/api/bookings/list?sortDirectionAsc=false&limit=1",
            None,
        )
        .await;
    assert_eq!(status, 200, "{page}");
    let newest = &page["Results"][0];
    assert_eq!(newest["Id"], id, "{page}");
    assert_eq!(newest["ToDate"], at(74, 10));

    let (status, read) = app
        .call("booking", "GET", &format!("/api/booking/{id}"), None)
        .await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["ToDate"], at(74, 10));

    // The availability search reads the same availability index: one car of model 2 fewer.
    let search = |from: u64, to: u64| {
        format!(
            "/api/availability?from={}&to={}&deliveryPlace=1&returnPlace=1",
            at(from, 10),
            at(to, 10)
        )
    };
    let available = |page: &Value| {
        page["Results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|item| item["Model"]["Id"] == 2)
            .map(|item| item["Available"].as_i64().unwrap())
    };
    let (status, during) = app.call("booking", "GET", &search(70, 73), None).await;
    assert_eq!(status, 200, "{during}");
    let (status, after) = app.call("booking", "GET", &search(80, 83), None).await;
    assert_eq!(status, 200, "{after}");
    assert_eq!(available(&during).unwrap() + 1, available(&after).unwrap());

    // The change feed, through the adapter's store: the demo's bookings, then the creation
    // and the update, each as it left the booking.
    let (status, feed) = app
        .call("listing", "GET", "/api/bookings/changes?cursor=124", None)
        .await;
    assert_eq!(status, 200, "{feed}");
    let changes = feed["Changes"].as_array().unwrap();
    let steps: Vec<(&Value, &Value, &Value)> = changes
        .iter()
        .map(|c| (&c["Id"], &c["Revision"], &c["Booking"]["ToDate"]))
        .collect();
    let (to, moved) = (json!(at(73, 10)), json!(at(74, 10)));
    assert_eq!(
        steps,
        [
            (&json!(id), &json!(1), &to),
            (&json!(id), &json!(2), &moved)
        ],
        "{feed}"
    );

    // A wrong method is answered by the component as rentald answers it: 405 with `Allow`.
    for (component, method, path, allow) in [
        ("booking", "GET", "/api/booking/book", "POST"),
        ("booking", "DELETE", &*format!("/api/booking/{id}"), "GET"),
        ("listing", "POST", "/api/bookings/list", "GET"),
    ] {
        let (status, headers, body) = app.respond(component, method, path, None).await;
        assert_eq!((status, body), (405, Value::Null), "{method} {path}");
        assert_eq!(headers["allow"], allow, "{method} {path}");
    }
    // A path that is no route is still the component's 404.
    let (status, body) = app.call("booking", "GET", "/api/booking/abc", None).await;
    assert_eq!((status, body), (404, Value::Null));
}

/// spin.toml's triggers, per component: the routes it serves.
fn spin_routes(manifest: &toml::Table) -> BTreeMap<String, BTreeSet<String>> {
    let triggers = manifest["trigger"]["http"].as_array().unwrap();
    let mut routes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for trigger in triggers {
        let component = trigger["component"].as_str().unwrap().to_owned();
        let route = trigger["route"].as_str().unwrap().to_owned();
        assert!(
            routes.entry(component).or_default().insert(route),
            "one trigger per route: {trigger}"
        );
    }
    routes
}

/// The platform's route table, per component, in Spin's route syntax (`{id}` is `:id`). Spin
/// routes by path only: a path served with several methods is one trigger.
fn table_routes() -> BTreeMap<String, BTreeSet<String>> {
    let mut routes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for route in ROUTES {
        let path = route
            .path
            .split('/')
            .map(
                |s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                    Some(name) => format!(":{name}"),
                    None => s.to_owned(),
                },
            )
            .collect::<Vec<_>>()
            .join("/");
        routes
            .entry(route.component.name().to_owned())
            .or_default()
            .insert(path);
    }
    routes
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn spin_toml_serves_every_route_with_the_adapter() {
    let manifest: toml::Table = std::fs::read_to_string(workspace().join("spin.toml"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(manifest["spin_manifest_version"].as_integer(), Some(2));

    assert_eq!(
        spin_routes(&manifest),
        table_routes(),
        "spin.toml serves the route table's paths, each by the table's component"
    );
    assert_eq!(
        manifest["variables"]["permissions"]["default"].as_str(),
        Some(PERMISSIONS.join(",").as_str()),
        "the caller holds every permission by default"
    );

    let components = manifest["component"].as_table().unwrap();
    assert_eq!(
        components
            .keys()
            .map(String::as_str)
            .collect::<BTreeSet<_>>(),
        http_components().into_iter().collect(),
        "one component per HTTP component"
    );
    for name in http_components() {
        let component = &components[name];
        assert_eq!(
            component["source"].as_str(),
            Some(format!("target/wasm32-wasip2/release/{name}.wasm").as_str()),
            "{name} runs the .wasm rentald runs"
        );
        assert_eq!(
            component["sqlite_databases"].as_array().unwrap()[0].as_str(),
            Some("default")
        );
        let dependency = &component["dependencies"]["rental:platform"];
        assert_eq!(
            dependency["path"].as_str(),
            Some("target/wasm32-wasip2/release/spin_adapter.wasm"),
            "{name}"
        );
        let inherited: Vec<&str> = dependency["inherit_configuration"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        for grant in ["sqlite_databases", "variables", "allowed_outbound_hosts"] {
            assert!(
                inherited.contains(&grant),
                "{name} passes {grant} to the adapter"
            );
        }
        let build = component["build"]["command"].as_str().unwrap();
        assert!(
            build.contains(&format!("-p {name}")) && build.contains("-p spin-adapter"),
            "{build}"
        );
        let variables = component["variables"].as_table().unwrap();
        for variable in [
            "tenant",
            "user_name",
            "permissions",
            "language",
            "demo_data",
        ] {
            assert!(
                variables.contains_key(variable),
                "{name} declares {variable}"
            );
        }
    }
    let banktwo_base_url = spin_variable("", &payments::base_url_setting("banktwo")).unwrap();
    assert!(
        manifest["variables"]
            .as_table()
            .unwrap()
            .contains_key(&banktwo_base_url),
        "spin.toml declares {banktwo_base_url}"
    );
    for (name, variable) in [
        ("bankone", "bankone_signing_secret"),
        ("banktwo", "banktwo_shared_secret"),
        ("banktwo", banktwo_base_url.as_str()),
    ] {
        assert!(
            components[name]["variables"]
                .as_table()
                .unwrap()
                .contains_key(variable),
            "{name} declares {variable}"
        );
    }
}

/// The Spin to run: `SPIN`, else `spin` on the `PATH`.
fn real_spin() -> Option<PathBuf> {
    if let Some(spin) = std::env::var_os("SPIN") {
        return Some(PathBuf::from(spin));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("spin"))
        .find(|candidate| candidate.is_file())
}

/// Kills `spin up` when the test ends, however it ends.
struct SpinUp(std::process::Child);

impl Drop for SpinUp {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The README's walk-through, under a real `spin up` of spin.toml with the components
/// `./dev test` built: the list, a price, a booking, and a wrong method answered 405 with
/// `Allow` by the component itself. Spin is on none of the registries the suite can install
/// from, so without one the test says so and passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_spin_serves_the_walk_through() {
    let Some(spin) = real_spin() else {
        eprintln!(
            "skipped: no Spin found (set SPIN to a Spin 4.0.x binary or put `spin` on the PATH)"
        );
        return;
    };
    // A copy of spin.toml whose files are the workspace's, so Spin's state (its SQLite
    // database) goes to a fresh directory rather than into the workspace.
    let dir = tempfile::tempdir().unwrap();
    let release = workspace().join("target/wasm32-wasip2/release/");
    let manifest = std::fs::read_to_string(workspace().join("spin.toml"))
        .unwrap()
        .replace(
            "\"target/wasm32-wasip2/release/",
            &format!("\"{}", release.display()),
        );
    std::fs::write(dir.path().join("spin.toml"), manifest).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _spin = SpinUp(
        std::process::Command::new(&spin)
            .arg("up")
            .arg("--from")
            .arg(dir.path().join("spin.toml"))
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .current_dir(dir.path())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", spin.display())),
    );
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let mut up = false;
    for _ in 0..600 {
        if client
            .get(format!("{base}/api/branchoffices"))
            .send()
            .await
            .is_ok()
        {
            up = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(up, "spin up did not answer within 60 s");

    let page: Value = client
        .get(format!("{base}/api/bookings/list?limit=5"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(page["Total"], 124, "the demo's bookings: {page}");
    assert_eq!(page["Results"].as_array().map(Vec::len), Some(5), "{page}");

    let booking = json!({
        "Customer": {"Id": 1},
        "Car": {"Model": {"Id": 2}},
        "FromDate": at(70, 10),
        "ToDate": at(73, 10),
        "DeliveryPlace": {"Id": 1},
        "ReturnPlace": {"Id": 1},
    });
    let price = client
        .post(format!("{base}/api/booking/price"))
        .json(&booking)
        .send()
        .await
        .unwrap();
    assert_eq!(price.status(), 200);
    let price: Value = price.json().await.unwrap();
    let booked = client
        .post(format!("{base}/api/booking/book"))
        .json(&booking)
        .send()
        .await
        .unwrap();
    assert_eq!(booked.status(), 200);
    let booked: Value = booked.json().await.unwrap();
    assert_eq!(booked["Price"], price["Price"], "{booked} {price}");
    assert_eq!(booked["Id"], 125, "{booked}");

    let wrong = client
        .post(format!("{base}/api/bookings/list"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 405);
    assert_eq!(wrong.headers()["allow"], "GET");
}
