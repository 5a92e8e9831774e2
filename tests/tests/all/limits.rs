//! The front door's connection limits (docs/operations.md, "The front door's limits"): a
//! silent, trickling, idle or slow-bodied connection is closed, anonymous bodies are small,
//! and a flood of connections from one address leaves the others served and the process's
//! descriptors bounded.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use rentald_tests::{Backend, Options, TestApp, client_builder};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpSocket, TcpStream};

/// Longest a test waits for the server to close a connection: far past the short timeouts
/// the servers here run with, far short of the defaults.
const CLOSED_WITHIN: Duration = Duration::from_secs(8);

/// A server with `serve_args` and the tenant `acme` (demo data); its token.
async fn acme(serve_args: &[&str]) -> (TestApp, String) {
    let mut options = Options::new(Backend::Sqlite);
    options.serve_args = serve_args.iter().map(ToString::to_string).collect();
    let app = TestApp::spawn(options).await.expect("sqlite");
    let token = app.tenant_with_token("acme", true).await;
    (app, token)
}

/// Reads from `stream` until the server closes it (or resets it); what it sent, or `None`
/// when it was still open after [`CLOSED_WITHIN`].
async fn closed_by_server(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + CLOSED_WITHIN;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(received),
            Ok(Ok(n)) => received.extend_from_slice(&buffer[..n]),
        }
    }
}

/// A connection to `server` from 127.0.0.`host` (all of 127.0.0.0/8 is loopback).
async fn connect_from(host: u8, server: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::from((Ipv4Addr::new(127, 0, 0, host), 0)))?;
    socket.connect(server).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_trickling_and_idle_connections_are_closed() {
    let (app, token) = acme(&[
        "--header-timeout-ms",
        "500",
        "--idle-timeout-ms",
        "800",
        "--body-timeout-ms",
        "700",
    ])
    .await;

    // Connected, and never a byte.
    let mut silent = TcpStream::connect(app.addr).await.unwrap();
    assert!(
        closed_by_server(&mut silent).await.is_some(),
        "a silent connection"
    );

    // A request head at a few bytes a second, never finished within the header timeout.
    let mut trickling = TcpStream::connect(app.addr).await.unwrap();
    let head = "GET /healthz HTTP/1.1\r\nHost: acme.localhost\r\nX-Slow: ";
    let trickle = async {
        for byte in head.bytes().chain(std::iter::repeat(b'a')) {
            if trickling.write_all(&[byte]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    assert!(
        tokio::time::timeout(CLOSED_WITHIN, trickle).await.is_ok(),
        "a trickled request head is cut off"
    );

    // One request, answered, then nothing on a kept-alive connection.
    let mut idle = TcpStream::connect(app.addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: acme.localhost\r\n\r\n")
        .await
        .unwrap();
    let answered = closed_by_server(&mut idle)
        .await
        .expect("an idle connection");
    assert!(
        String::from_utf8_lossy(&answered).starts_with("HTTP/1.1 200"),
        "answered first: {answered:?}"
    );

    // HTTP/2 with prior knowledge: the preface and the settings, then no stream.
    let mut h2 = TcpStream::connect(app.addr).await.unwrap();
    h2.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .await
        .unwrap();
    assert!(
        closed_by_server(&mut h2).await.is_some(),
        "an HTTP/2 connection without a stream"
    );

    // A body that stops arriving: 408, and the connection closed.
    let mut slow_body = TcpStream::connect(app.addr).await.unwrap();
    slow_body
        .write_all(
            format!(
                "POST /api/booking/price HTTP/1.1\r\nHost: acme.localhost\r\n\
                 Authorization: Bearer {token}\r\nContent-Type: application/json\r\n\
                 Content-Length: 1000\r\n\r\n{{\"Customer\":"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let answer = closed_by_server(&mut slow_body)
        .await
        .expect("a stalled body");
    assert!(
        String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 408"),
        "{:?}",
        String::from_utf8_lossy(&answer)
    );

    // Through all of that, a well-behaved client is served.
    let response = app.get("acme", "/api/cars?limit=1", &token).await;
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn anonymous_routes_take_small_bodies_only() {
    let (app, _) = acme(&[]).await;
    for path in ["/auth/token", "/api/bankone/webhooks"] {
        // Refused from its Content-Length, before a byte of it is read (a client still sending
        // a body the server will not read can see its connection reset before the answer).
        let mut stream = TcpStream::connect(app.addr).await.unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: acme.localhost\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n",
            (64 << 10) + 1
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let answer = closed_by_server(&mut stream)
            .await
            .expect("answered and closed");
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 413"), "{path}: {answer}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_connections_is_capped_and_leaves_other_addresses_served() {
    let (app, token) = acme(&[
        "--max-connections",
        "64",
        "--max-connections-per-address",
        "16",
    ])
    .await;
    let descriptors = || {
        std::fs::read_dir(format!("/proc/{}/fd", app.pid()))
            .unwrap()
            .count()
    };
    let before = descriptors();

    // 200 connections from one address (not the test client's): 16 are kept, the rest closed
    // at once.
    let mut flood = Vec::new();
    for _ in 0..200 {
        flood.push(connect_from(5, app.addr).await.unwrap());
    }
    let mut refused = 0;
    for stream in &mut flood {
        let mut byte = [0u8; 1];
        if let Ok(Ok(0) | Err(_)) =
            tokio::time::timeout(Duration::from_millis(200), stream.read(&mut byte)).await
        {
            refused += 1;
        }
    }
    assert_eq!(refused, 200 - 16, "all but 16 closed");

    // Another address is served meanwhile.
    let other = client_builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)))
        .build()
        .unwrap();
    let response = other
        .get(app.url("acme", "/api/cars?limit=1"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);

    // From many addresses: never more than 64 open in all.
    for host in 10..27 {
        for _ in 0..16 {
            flood.push(connect_from(host, app.addr).await.unwrap());
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let open = descriptors();
    assert!(
        open < before + 64 + 8,
        "{open} descriptors with {} connections (before: {before})",
        flood.len()
    );
    drop(flood);

    let mut served = false;
    for _ in 0..50 {
        served = app.get("acme", "/api/cars?limit=1", &token).await.status() == 200;
        if served {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(served, "served once the flood is gone");
}
