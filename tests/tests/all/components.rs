//! Per-tenant components: `rentald component install|list|rollback|activate` against a running server's
//! database. The `variant` test component answers every request with a recognisable body and
//! header, so a response shows whether the tenant's own component or the platform's served it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rentald_tests::{Backend, Options, TestApp, cache_dir, components_dir, on_both_backends};
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use wac_graph::types::Package;
use wac_graph::{CompositionGraph, EncodeOptions};

const VARIANT_HEADER: &str = "x-component-variant";
/// The endpoint the variant answers in place of the platform's `listing`.
pub(crate) const LIST: &str = "/api/bookings/list?limit=1";

pub(crate) fn variant_wasm() -> PathBuf {
    components_dir().join("variant.wasm")
}

fn sha256_of(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

/// A copy of a component with a custom section appended: the same behaviour, other bytes (and
/// so another sha256).
fn with_custom_section(from: &Path, to: &Path, payload: &str) {
    let mut wasm = std::fs::read(from).unwrap();
    let name = b"rentald-test";
    let mut section = vec![u8::try_from(name.len()).unwrap()];
    section.extend_from_slice(name);
    section.extend_from_slice(payload.as_bytes());
    wasm.push(0);
    let mut size = section.len();
    loop {
        let byte = u8::try_from(size & 0x7f).unwrap();
        size >>= 7;
        if size == 0 {
            wasm.push(byte);
            break;
        }
        wasm.push(byte | 0x80);
    }
    wasm.extend_from_slice(&section);
    std::fs::write(to, wasm).unwrap();
}

/// The `wasi:http` export every component has.
const WASI_HTTP_HANDLER: &str = "wasi:http/incoming-handler@0.2.12";

/// A component with only the `wasi:http` export of `from`, as one built before the
/// platform's own entry points were: a composition that instantiates `from` (its imports
/// become the composition's) and exports that one export of it.
fn wasi_http_only(from: &Path, to: &Path) {
    let mut graph = CompositionGraph::new();
    let package = Package::from_bytes(
        "rental:old",
        None,
        std::fs::read(from).unwrap(),
        graph.types_mut(),
    )
    .unwrap();
    let package = graph.register_package(package).unwrap();
    let instance = graph.instantiate(package);
    let handler = graph
        .alias_instance_export(instance, WASI_HTTP_HANDLER)
        .unwrap();
    graph.export(handler, WASI_HTTP_HANDLER).unwrap();
    std::fs::write(to, graph.encode(EncodeOptions::default()).unwrap()).unwrap();
}

/// The floor component (tests/components/floor) as the release before
/// `rental:platform/responder` built it: it exports `rental:platform/handler` and
/// `wasi:http`, and imports the store without `scan-kept` and `read-kept` (tests/fixtures).
fn handler_era_floor() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/floor-handler.wasm")
}

/// `rentald component ...`, with the test servers' compile cache for installs.
async fn component(app: &TestApp, args: &[&str]) -> std::process::Output {
    let mut all = vec!["component"];
    all.extend_from_slice(args);
    let cache = cache_dir();
    if args.first() == Some(&"install") {
        all.extend(["--cache-dir", cache.to_str().unwrap()]);
    }
    app.cli(&all, None).await
}

pub(crate) async fn component_ok(app: &TestApp, args: &[&str]) -> String {
    let output = component(app, args).await;
    assert!(
        output.status.success(),
        "component {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

async fn component_list(app: &TestApp, tenant: &str) -> Value {
    serde_json::from_str(&component_ok(app, &["list", "--tenant", tenant, "--json"]).await).unwrap()
}

/// The `listing` entry of `component list --json`.
fn listing(list: &Value) -> &Value {
    list["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["component"] == "listing")
        .unwrap()
}

/// Whether the tenant's list endpoint is answered by the variant (asserting a 200 either way).
async fn served_by_variant(app: &TestApp, tenant: &str, token: &str) -> bool {
    answered_by_variant(app.get(tenant, LIST, token).await, tenant).await
}

/// Whether this answer of the tenant's list endpoint, on any host, came from the variant
/// (asserting a 200 either way).
pub(crate) async fn answered_by_variant(response: reqwest::Response, tenant: &str) -> bool {
    assert_eq!(response.status(), 200, "{tenant}");
    let variant = response.headers().contains_key(VARIANT_HEADER);
    let body: Value = response.json().await.unwrap();
    if variant {
        assert_eq!(body["Variant"], "listing-variant");
        assert_eq!(body["Tenant"], tenant, "the variant is bound to the tenant");
    } else {
        assert!(body["Items"].is_array() || body.is_array() || body.is_object());
        assert!(body.get("Variant").is_none(), "{body}");
    }
    variant
}

/// Waits (up to 20 s) until the tenant is served by the variant, or not.
async fn wait_for(app: &TestApp, tenant: &str, token: &str, variant: bool) {
    let started = Instant::now();
    while served_by_variant(app, tenant, token).await != variant {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{tenant} is not served by the {} within 20 s",
            if variant {
                "variant"
            } else {
                "platform's listing"
            }
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

on_both_backends! {
    async fn a_tenant_component_changes_only_that_tenant(app: TestApp) {
        let alpha = app.tenant_with_token("alpha", true).await;
        let beta = app.tenant_with_token("beta", true).await;
        assert!(!served_by_variant(&app, "alpha", &alpha).await);
        let list = component_list(&app, "alpha").await;
        for component in list["components"].as_array().unwrap() {
            assert_eq!(component["active"], Value::Null, "{component}");
        }
        assert_eq!(list["components"].as_array().unwrap().len(), 6);

        let installed = component_ok(
            &app,
            &["install", "--tenant", "alpha", "listing", variant_wasm().to_str().unwrap()],
        )
        .await;
        let sha256 = sha256_of(&variant_wasm());
        assert!(installed.contains("version 1"), "{installed}");
        assert!(installed.contains(&sha256), "{installed}");
        wait_for(&app, "alpha", &alpha, true).await;
        assert!(!served_by_variant(&app, "beta", &beta).await, "the other tenant keeps the platform's");
        // The metrics tell the tenant's build from the platform's.
        let (_, metrics) = app.metrics_get("/metrics").await;
        for build in ["tenant", "platform"] {
            let runs = format!(r#"rentald_component_outcomes_total{{component="listing",build="{build}",outcome="ok"}}"#);
            assert!(metrics.lines().any(|line| line.starts_with(&runs)), "{runs} in\n{metrics}");
        }
        // The variant replaces listing only: another component's endpoint is unchanged.
        let (status, booking) = app
            .call("alpha", &alpha, reqwest::Method::GET, "/api/booking/1", None)
            .await;
        assert_eq!(status, 200, "{booking}");
        assert_eq!(booking["Id"], 1, "{booking}");

        let list = component_list(&app, "alpha").await;
        let entry = listing(&list);
        assert_eq!(entry["active"]["version"], 1, "{entry}");
        assert_eq!(entry["active"]["sha256"], sha256.as_str(), "{entry}");
        assert_eq!(entry["history"].as_array().unwrap().len(), 1);
        assert_eq!(listing(&component_list(&app, "beta").await)["active"], Value::Null);
        let text = component_ok(&app, &["list", "--tenant", "alpha"]).await;
        assert!(text.contains(&format!("listing: version 1 sha256 {sha256}")), "{text}");
        assert!(text.contains("booking: platform default"), "{text}");

        // The same file again changes nothing.
        let again = component_ok(
            &app,
            &["install", "--tenant", "alpha", "listing", variant_wasm().to_str().unwrap()],
        )
        .await;
        assert!(again.contains("already"), "{again}");
        assert_eq!(listing(&component_list(&app, "alpha").await)["history"].as_array().unwrap().len(), 1);

        let rolled = component_ok(&app, &["rollback", "--tenant", "alpha", "listing"]).await;
        assert!(rolled.contains("platform"), "{rolled}");
        wait_for(&app, "alpha", &alpha, false).await;
        let entry = listing(&component_list(&app, "alpha").await).clone();
        assert_eq!(entry["active"], Value::Null, "{entry}");
        assert_eq!(entry["history"][0]["active"], false, "the history is kept: {entry}");

        let output = component(&app, &["rollback", "--tenant", "alpha", "listing"]).await;
        assert!(!output.status.success());
        let error = String::from_utf8_lossy(&output.stderr);
        assert!(error.contains("nothing to roll back"), "{error}");
    }

    async fn any_installed_version_can_be_activated_again(app: TestApp) {
        let alpha = app.tenant_with_token("alpha", true).await;
        let dir = tempfile::tempdir().unwrap();
        let variant_again = dir.path().join("variant-again.wasm");
        with_custom_section(&variant_wasm(), &variant_again, "3");
        let platform_listing = components_dir().join("listing.wasm");
        // v1 the variant, v2 the platform's own listing (as the tenant's build), v3 the variant
        // again: v3 is active.
        for file in [variant_wasm(), platform_listing, variant_again] {
            component_ok(&app, &["install", "--tenant", "alpha", "listing", file.to_str().unwrap()])
                .await;
        }
        wait_for(&app, "alpha", &alpha, true).await;
        // A rollback steps back one version, to v2; activate goes to any, here v1.
        component_ok(&app, &["rollback", "--tenant", "alpha", "listing"]).await;
        wait_for(&app, "alpha", &alpha, false).await;
        let activated =
            component_ok(&app, &["activate", "--tenant", "alpha", "listing", "--version", "1"]).await;
        assert!(activated.contains("version 1"), "{activated}");
        wait_for(&app, "alpha", &alpha, true).await;
        let entry = listing(&component_list(&app, "alpha").await).clone();
        assert_eq!(entry["active"]["version"], 1, "{entry}");
        let active: Vec<_> = entry["history"].as_array().unwrap().iter().filter(|v| v["active"] == true).collect();
        assert_eq!(active.len(), 1, "one active version: {entry}");

        let again =
            component_ok(&app, &["activate", "--tenant", "alpha", "listing", "--version", "1"]).await;
        assert!(again.contains("already"), "{again}");
        let output = component(&app, &["activate", "--tenant", "alpha", "listing", "--version", "7"]).await;
        assert!(!output.status.success());
        let error = String::from_utf8_lossy(&output.stderr);
        assert!(error.contains("no listing version 7") && error.contains("component list"), "{error}");
        assert_eq!(listing(&component_list(&app, "alpha").await)["active"]["version"], 1);
    }

    async fn a_swap_under_load_fails_no_request(app: TestApp) {
        let token = app.tenant_with_token("alpha", true).await;
        let dir = tempfile::tempdir().unwrap();
        let second = dir.path().join("variant-2.wasm");
        with_custom_section(&variant_wasm(), &second, "second");

        let stop = Arc::new(AtomicBool::new(false));
        let url = app.url("alpha", LIST);
        let clients: Vec<_> = (0..6)
            .map(|_| {
                let (client, url, token, stop) =
                    (app.client.clone(), url.clone(), token.clone(), stop.clone());
                tokio::spawn(async move {
                    let (mut failures, mut variant, mut platform) = (Vec::new(), 0, 0);
                    while !stop.load(Ordering::Relaxed) {
                        match client.get(&url).bearer_auth(&token).send().await {
                            Ok(response) if response.status() == 200 => {
                                if response.headers().contains_key(VARIANT_HEADER) {
                                    variant += 1;
                                } else {
                                    platform += 1;
                                }
                                if let Err(e) = response.bytes().await {
                                    failures.push(format!("body: {e}"));
                                }
                            }
                            Ok(response) => failures.push(format!(
                                "{}: {}",
                                response.status(),
                                response.text().await.unwrap_or_default()
                            )),
                            Err(e) => failures.push(e.to_string()),
                        }
                    }
                    (failures, variant, platform)
                })
            })
            .collect();

        tokio::time::sleep(Duration::from_millis(300)).await;
        let variant = variant_wasm();
        for file in [&variant, &second] {
            component_ok(&app, &["install", "--tenant", "alpha", "listing", file.to_str().unwrap()])
                .await;
            wait_for(&app, "alpha", &token, true).await;
        }
        let rolled = component_ok(&app, &["rollback", "--tenant", "alpha", "listing"]).await;
        assert!(rolled.contains("version 1"), "{rolled}");
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        component_ok(&app, &["rollback", "--tenant", "alpha", "listing"]).await;
        wait_for(&app, "alpha", &token, false).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        stop.store(true, Ordering::Relaxed);

        let (mut failures, mut variant, mut platform) = (Vec::new(), 0, 0);
        for client in clients {
            let (f, v, p) = client.await.unwrap();
            failures.extend(f);
            variant += v;
            platform += p;
        }
        assert!(failures.is_empty(), "{} failed requests: {failures:?}", failures.len());
        assert!(variant > 0 && platform > 0, "variant {variant}, platform {platform}");
        let entry = listing(&component_list(&app, "alpha").await).clone();
        assert_eq!(entry["history"].as_array().unwrap().len(), 2, "{entry}");
        assert_eq!(entry["active"], Value::Null, "{entry}");
    }

    async fn uploads_that_do_not_fit_are_refused_and_not_stored(app: TestApp) {
        app.create_tenant("alpha", false).await;
        let dir = tempfile::tempdir().unwrap();
        let not_wasm = dir.path().join("notes.wasm");
        std::fs::write(&not_wasm, "not a component").unwrap();
        // An empty component: valid, but it exports nothing.
        let empty = dir.path().join("empty.wasm");
        std::fs::write(&empty, b"\0asm\x0d\x00\x01\x00").unwrap();
        // A core module: what wasm32-unknown-unknown or wasm32-wasip1 would build.
        let module = dir.path().join("module.wasm");
        std::fs::write(&module, b"\0asm\x01\x00\x00\x00").unwrap();
        let banktwo = components_dir().join("banktwo.wasm");
        let variant = variant_wasm();
        // The variant built against a later version of the platform's context interface: the
        // same bytes with every mention of the interface renamed (same length).
        let newer = dir.path().join("newer.wasm");
        let mut bytes = std::fs::read(&variant).unwrap();
        let (old, new) = (b"rental:platform/context@0.1.0", b"rental:platform/context@0.2.0");
        let mut renamed = 0;
        while let Some(at) = bytes.windows(old.len()).position(|w| w == old) {
            bytes[at..at + old.len()].copy_from_slice(new);
            renamed += 1;
        }
        assert!(renamed > 0, "the variant imports the context");
        std::fs::write(&newer, bytes).unwrap();

        for (name, file, expected) in [
            ("listing", &not_wasm, "not a WebAssembly file"),
            ("listing", &module, "a core WebAssembly module, not a component"),
            ("listing", &module, "--target wasm32-wasip2"),
            ("listing", &banktwo, "`rental:platform/secrets@0.1.0`: the platform offers `secrets` to the bank webhook components"),
            ("listing", &banktwo, "`listing` is given context and store"),
            (
                "listing",
                &newer,
                "`rental:platform/context@0.2.0`: this host offers `rental:platform/context@0.1.0`",
            ),
            (
                "listing",
                &empty,
                "does not export `wasi:http/incoming-handler@0.2.x`",
            ),
            ("pricing", &variant, "unknown component \"pricing\""),
        ] {
            let output = component(
                &app,
                &["install", "--tenant", "alpha", name, file.to_str().unwrap()],
            )
            .await;
            let error = String::from_utf8_lossy(&output.stderr);
            assert!(!output.status.success(), "{name} {}", file.display());
            assert!(error.contains(expected), "{name} {}: {error}", file.display());
        }
        let output = component(
            &app,
            &["install", "--tenant", "nobody", "listing", variant.to_str().unwrap()],
        )
        .await;
        assert!(!output.status.success());
        assert!(String::from_utf8_lossy(&output.stderr).contains("nobody"));

        assert_eq!(app.sql_count("SELECT COUNT(*) FROM component_blobs").await, 0);
        assert_eq!(app.sql_count("SELECT COUNT(*) FROM tenant_components").await, 0);
    }
}

/// rentald calls a component's `rental:platform/responder`; one built before it, with
/// `rental:platform/handler`, links (its store has fewer functions) and is served through that;
/// one with only `wasi:http/incoming-handler` through `wasi:http`, where a page whose bookings
/// the store kept in the host (`scan-kept`) is read back by the component: the same bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn components_built_before_the_responder_are_served_through_their_own_entry_points() {
    let app = TestApp::spawn(Options::new(Backend::Sqlite))
        .await
        .expect("sqlite always runs");
    let dir = tempfile::tempdir().unwrap();
    let listing = components_dir().join("listing.wasm");
    let wasi_http = dir.path().join("listing-wasi-http.wasm");
    wasi_http_only(&listing, &wasi_http);
    let handler = handler_era_floor();

    for (file, entry_point) in [
        (&listing, "rental:platform/responder"),
        (&handler, "rental:platform/handler"),
        (&wasi_http, "wasi:http/incoming-handler"),
    ] {
        let checked =
            component_ok(&app, &["check", file.to_str().unwrap(), "--as", "listing"]).await;
        assert!(
            checked.contains(&format!("rentald calls its {entry_point}")),
            "{checked}"
        );
    }

    // The earlier floor, as a tenant's listing: its own answer, whole.
    let alpha = app.tenant_with_token("alpha", true).await;
    component_ok(
        &app,
        &[
            "install",
            "--tenant",
            "alpha",
            "listing",
            handler.to_str().unwrap(),
        ],
    )
    .await;
    let started = Instant::now();
    loop {
        let (status, answer) = app
            .call("alpha", &alpha, reqwest::Method::GET, LIST, None)
            .await;
        assert_eq!(status, 200, "{answer}");
        if answer.get("Filler").is_some() {
            assert_eq!(answer["Path"], "/api/bookings/list", "{answer}");
            assert_eq!(answer["Filler"].as_str().map(str::len), Some(5_000));
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the floor is not served"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The listing through `wasi:http`: the platform's build answers a page, then the
    // tenant's own the same bytes, once it serves (the first answer a tenant's build gives
    // from now on is this tenant's).
    let page = "/api/bookings/list?limit=30&sortDirectionAsc=false";
    let beta = app.tenant_with_token("beta", true).await;
    let platform = app.get("beta", page, &beta).await.bytes().await.unwrap();
    assert!(platform.len() > 10_000, "a page of 30 bookings");
    let served = tenant_builds_served(&app).await;
    component_ok(
        &app,
        &[
            "install",
            "--tenant",
            "beta",
            "listing",
            wasi_http.to_str().unwrap(),
        ],
    )
    .await;
    let started = Instant::now();
    loop {
        let answer = app.get("beta", page, &beta).await.bytes().await.unwrap();
        if tenant_builds_served(&app).await > served {
            assert_eq!(answer, platform);
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the listing is not served"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// How many requests tenants' own builds of `listing` have answered.
async fn tenant_builds_served(app: &TestApp) -> u64 {
    let (_, metrics) = app.metrics_get("/metrics").await;
    let runs =
        r#"rentald_component_outcomes_total{component="listing",build="tenant",outcome="ok"} "#;
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(runs))
        .map_or(0, |count| count.trim().parse().unwrap())
}
