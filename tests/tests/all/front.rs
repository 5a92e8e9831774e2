//! What the host answers before any component runs: tenancy, routing, language, limits and the
//! correlation id.

use std::net::SocketAddr;

use rentald_tests::{Backend, Options, TestApp};
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

async fn app() -> TestApp {
    TestApp::spawn(Options::new(Backend::Sqlite))
        .await
        .expect("sqlite")
}

#[tokio::test]
async fn tenants_come_from_the_host_header() {
    let app = app().await;
    let token = app.tenant_with_token("acme", false).await;

    let unknown = app
        .client
        .get(app.url("nobody", "/api/cars"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    assert!(unknown.bytes().await.unwrap().is_empty());

    let outside = app
        .client
        .get(format!("http://{}/api/cars", app.addr))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(
        outside.status(),
        400,
        "an IP address is not under the base domain"
    );
    assert!(outside.bytes().await.unwrap().is_empty());

    let nested = app
        .client
        .get(format!(
            "http://a.acme.localhost:{}/api/cars",
            app.addr.port()
        ))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(nested.status(), 400);
}

#[tokio::test]
async fn unknown_paths_404_and_wrong_methods_405() {
    let app = app().await;
    let token = app.tenant_with_token("acme", false).await;
    let response = app.get("acme", "/api/nothing-here", &token).await;
    assert_eq!(response.status(), 404);
    assert!(response.bytes().await.unwrap().is_empty());

    let response = app
        .client
        .delete(app.url("acme", "/api/cars"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "GET");

    let response = app
        .client
        .get(app.url("acme", "/auth/token"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "POST");
}

/// A word where a path has an Id is not that path: `GET /api/booking/book` is the creation's
/// path with the wrong method, and `/api/booking/abc` no path at all. The probes and the
/// metrics are read with GET only.
#[tokio::test]
async fn wrong_methods_are_405_allowing_only_what_the_path_serves() {
    let app = app().await;
    let token = app.tenant_with_token("acme", false).await;
    let call = |method: reqwest::Method, url: String| {
        let request = app.client.request(method, url).bearer_auth(&token);
        async move { request.send().await.unwrap() }
    };
    let allowed = |response: &reqwest::Response| {
        response
            .headers()
            .get("allow")
            .map(|value| value.to_str().unwrap().to_owned())
    };

    for (path, allow) in [
        ("/api/booking/book", "POST"),
        ("/api/booking/price", "POST"),
        ("/api/booking/cancel", "POST"),
        ("/api/booking/update", "PUT"),
    ] {
        let response = call(reqwest::Method::GET, app.url("acme", path)).await;
        assert_eq!(response.status(), 405, "GET {path}");
        assert_eq!(allowed(&response).as_deref(), Some(allow), "GET {path}");
    }
    for path in [
        "/api/booking/abc",
        "/api/booking/0",
        "/api/booking/012",
        "/api/booking/-3",
        "/api/booking/book/history",
        "/api/booking/99999999999999999999",
    ] {
        let response = call(reqwest::Method::GET, app.url("acme", path)).await;
        assert_eq!(response.status(), 404, "GET {path}");
        assert!(response.bytes().await.unwrap().is_empty(), "GET {path}");
    }
    let response = call(reqwest::Method::DELETE, app.url("acme", "/api/booking/12")).await;
    assert_eq!(allowed(&response).as_deref(), Some("GET"));

    let metrics = |path: &str| format!("http://{}{path}", app.metrics_addr);
    for (method, url) in [
        (reqwest::Method::POST, app.url("acme", "/healthz")),
        (
            reqwest::Method::from_bytes(b"TRACE").unwrap(),
            app.url("acme", "/readyz"),
        ),
        (reqwest::Method::DELETE, metrics("/healthz")),
        (reqwest::Method::POST, metrics("/metrics")),
    ] {
        let response = call(method.clone(), url.clone()).await;
        assert_eq!(response.status(), 405, "{method} {url}");
        assert_eq!(allowed(&response).as_deref(), Some("GET"), "{method} {url}");
    }
    assert_eq!(app.metrics_get("/metrics").await.0, 200);
}

#[tokio::test]
async fn unsupported_language_is_error_6_with_the_correlation_id() {
    let app = app().await;
    let token = app.tenant_with_token("acme", false).await;
    let response = app.get("acme", "/api/cars?language=fr", &token).await;
    assert_eq!(response.status(), 400);
    let header = response.headers()["x-correlation-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["ErrorCode"], 6);
    assert_eq!(body["Id"], header.as_str());
    assert!(body["ErrorMessage"].as_str().is_some_and(|m| !m.is_empty()));

    for language in ["es-AR", "pt_BR", "EN", "es"] {
        let response = app
            .get("acme", &format!("/api/cars?language={language}"), &token)
            .await;
        assert_eq!(response.status(), 200, "{language}");
        assert!(response.headers().contains_key("x-correlation-id"));
    }
}

#[tokio::test]
async fn error_messages_are_translated() {
    let app = app().await;
    let token = app.tenant_with_token("acme", false).await;
    let mut messages = Vec::new();
    for language in ["en", "es", "pt"] {
        let body = app
            .get(
                "acme",
                &format!("/api/bookings/closed?language={language}"),
                &token,
            )
            .await;
        assert_eq!(body.status(), 400);
        let body: Value = body.json().await.unwrap();
        assert_eq!(body["ErrorCode"], 98);
        messages.push(body["ErrorMessage"].as_str().unwrap().to_owned());
    }
    assert_ne!(messages[0], messages[1]);
    assert_ne!(messages[1], messages[2]);
    assert!(
        messages.iter().all(|m| m.contains("fromDate")),
        "{messages:?}"
    );
}

#[tokio::test]
async fn bodies_over_one_mebibyte_get_413() {
    let app = app().await;
    let token = app.tenant_with_token("acme", false).await;
    let response = app
        .client
        .get(app.url("acme", "/api/cars"))
        .bearer_auth(&token)
        .body(vec![b'x'; (1 << 20) + 1])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
}

#[tokio::test]
async fn health_and_readiness() {
    let app = app().await;
    for path in ["/healthz", "/readyz"] {
        assert_eq!(app.probe(path).await, 200, "{path}");
    }
}

#[tokio::test]
async fn disabled_tenants_answer_404() {
    let app = app().await;
    let token = app.tenant_with_token("acme", false).await;
    app.cli_ok(&["tenant", "update", "acme", "--enabled", "false"], None)
        .await;
    assert_eq!(app.get("acme", "/api/cars", &token).await.status(), 404);
    let response = app
        .token_response("acme", &[("grant_type", "client_credentials")])
        .await;
    assert_eq!(response.status(), 404);
    app.cli_ok(&["tenant", "update", "acme", "--enabled", "true"], None)
        .await;
    assert_eq!(app.get("acme", "/api/cars", &token).await.status(), 200);
}

#[tokio::test]
async fn speaks_http2_with_prior_knowledge() {
    let app = app().await;
    let token = app.tenant_with_token("acme", false).await;
    let client = reqwest::Client::builder()
        .http2_prior_knowledge()
        .resolve(
            "acme.localhost",
            std::net::SocketAddr::from(([127, 0, 0, 1], app.addr.port())),
        )
        .build()
        .unwrap();
    let response = client
        .get(app.url("acme", "/api/cars"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_2);
    assert_eq!(response.status(), 200);
}

/// Connections past the process's file limit make `accept` fail; that must not end the
/// server: it waits for connections to close and serves again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_out_of_file_descriptors_does_not_stop_the_server() {
    let mut options = Options::new(Backend::Sqlite);
    options.open_files = Some(128);
    let mut app = TestApp::spawn(options).await.expect("sqlite");
    let token = app.tenant_with_token("acme", false).await;

    // Past the limit, connections wait in the kernel's backlog; once that is full too, a
    // connect waits for a free slot: stop there.
    let mut flood = Vec::new();
    for _ in 0..300 {
        let connect = tokio::net::TcpStream::connect(app.addr);
        match tokio::time::timeout(std::time::Duration::from_secs(1), connect).await {
            Ok(Ok(stream)) => flood.push(stream),
            _ => break,
        }
    }
    assert!(flood.len() > 128, "{} connections", flood.len());
    // Long enough for the server to accept what its limit allows and fail on the rest.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(app.is_running(), "the server survived the flood");
    drop(flood);

    let mut served = false;
    for _ in 0..50 {
        if let Ok(response) = app
            .client
            .get(app.url("acme", "/api/cars"))
            .bearer_auth(&token)
            .send()
            .await
        {
            served = response.status() == 200;
            if served {
                break;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(served, "served again once the connections closed");
    assert!(app.is_running());
    assert!(
        app.log().contains("accepting a connection failed"),
        "the flood did exhaust the limit"
    );
}

/// The status of a raw HTTP/1.1 request, written byte for byte as given.
async fn raw_status(addr: SocketAddr, request: &str) -> u16 {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    let status = answer.split(' ').nth(1).unwrap_or_default();
    status
        .parse()
        .unwrap_or_else(|_| panic!("no status in {answer:?}"))
}

/// `GET target` with one `Host` line per entry of `hosts` and a bearer token.
fn get(target: &str, hosts: &[&str], token: &str) -> String {
    let hosts: String = hosts
        .iter()
        .map(|host| format!("Host: {host}\r\n"))
        .collect();
    format!(
        "GET {target} HTTP/1.1\r\n{hosts}Authorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
}

#[tokio::test]
async fn host_names_follow_the_http_rules() {
    let app = app().await;
    let acme = app.tenant_with_token("acme", false).await;
    let globex = app.tenant_with_token("globex", false).await;
    let port = app.addr.port();
    let acme_host = format!("acme.localhost:{port}");

    // Host names are case-insensitive and may end with the root's dot.
    for host in [
        format!("ACME.localhost:{port}"),
        format!("acme.LOCALHOST.:{port}"),
        "acme.localhost.".to_owned(),
    ] {
        let status = raw_status(app.addr, &get("/api/cars", &[&host], &acme)).await;
        assert_eq!(status, 200, "{host}");
    }
    let status = raw_status(app.addr, &get("/api/cars", &["acme.localhost.."], &acme)).await;
    assert_eq!(status, 400);

    // The request target's authority wins over Host: this is globex's request.
    let absolute = format!("http://globex.localhost:{port}/api/cars");
    let status = raw_status(app.addr, &get(&absolute, &[&acme_host], &acme)).await;
    assert_eq!(status, 401, "acme's token is not globex's");
    let status = raw_status(app.addr, &get(&absolute, &[&acme_host], &globex)).await;
    assert_eq!(status, 200);

    // Two Host headers are a bad request, even when they agree.
    let status = raw_status(
        app.addr,
        &get("/api/cars", &[&acme_host, &acme_host], &acme),
    )
    .await;
    assert_eq!(status, 400);
}
