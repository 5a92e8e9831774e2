//! POST /auth/token under attack (contract: "Authentication and authorization"): a flood of
//! logins is turned away rather than queued without end, guesses made at once are all counted,
//! a guesser is refused without locking out the client it guesses for, spraying client_ids is
//! refused, and over-long client_ids never reach a verification.

use std::net::{IpAddr, Ipv4Addr};

use rentald_tests::{Backend, Options, PASSWORD, TestApp, client_builder};
use serde_json::{Value, json};

/// A server with `serve_args`, whose tenant `acme` has the user `api`.
async fn acme(serve_args: &[&str]) -> TestApp {
    let mut options = Options::new(Backend::Sqlite);
    options.serve_args = serve_args.iter().map(ToString::to_string).collect();
    let app = TestApp::spawn(options).await.expect("sqlite");
    app.create_tenant("acme", false).await;
    app.create_user("acme", "api", &["bookings:read"]).await;
    app
}

/// A client whose connections come from 127.0.0.`host` (all of 127.0.0.0/8 is loopback).
fn client_from(host: u8) -> reqwest::Client {
    client_builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, host)))
        .build()
        .expect("building the HTTP client")
}

/// An answer of the token endpoint: the status and the `Retry-After` header.
type Answer = (u16, Option<u64>);

/// POST /auth/token of acme with form credentials, from `client`.
async fn login(app: &TestApp, client: &reqwest::Client, id: &str, secret: &str) -> Answer {
    post_login(
        client.clone(),
        app.url("acme", "/auth/token"),
        id.to_owned(),
        secret.to_owned(),
    )
    .await
}

async fn post_login(client: reqwest::Client, url: String, id: String, secret: String) -> Answer {
    let response = client
        .post(url)
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", &id),
            ("client_secret", &secret),
        ])
        .send()
        .await
        .expect("token request");
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok()?.parse().ok());
    (response.status().as_u16(), retry_after)
}

/// The answers to logins sent at once from `client`, one per client_id in `ids`.
async fn logins_at_once(
    app: &TestApp,
    client: &reqwest::Client,
    ids: Vec<String>,
    secret: &str,
) -> Vec<Answer> {
    let mut tasks = tokio::task::JoinSet::new();
    for id in ids {
        let url = app.url("acme", "/auth/token");
        tasks.spawn(post_login(client.clone(), url, id, secret.to_owned()));
    }
    tasks.join_all().await
}

fn count(answers: &[Answer], status: u16) -> usize {
    answers.iter().filter(|(s, _)| *s == status).count()
}

/// The server's resident memory and its peak so far, in KiB (`/proc/PID/status`).
fn memory_kib(app: &TestApp) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{}/status", app.pid())).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    };
    (field("VmRSS:"), field("VmHWM:"))
}

#[tokio::test]
async fn a_flood_of_logins_is_turned_away_not_queued() {
    let app = acme(&["--login-concurrency", "2", "--login-queue-ms", "100"]).await;
    let (_, peak_before) = memory_kib(&app);
    let ids = (0..64).map(|i| format!("guess{i}")).collect();
    let answers = logins_at_once(&app, &app.client, ids, "wrong").await;

    let busy = count(&answers, 503);
    assert!(
        busy > 0,
        "some wait too long for a verification: {answers:?}"
    );
    assert_eq!(busy + count(&answers, 401), 64, "{answers:?}");
    assert!(
        answers
            .iter()
            .all(|(status, retry)| *status != 503 || retry.is_some_and(|s| s >= 1)),
        "a 503 says when to retry: {answers:?}"
    );
    // Each verification holds about 19 MiB: 64 at once would add over 1 GiB.
    let (_, peak_after) = memory_kib(&app);
    let grown_mib = peak_after.saturating_sub(peak_before) / 1024;
    assert!(
        grown_mib < 256,
        "peak resident memory grew by {grown_mib} MiB"
    );

    assert_eq!(login(&app, &app.client, "api", PASSWORD).await.0, 200);
}

#[tokio::test]
async fn guesses_made_at_once_are_all_counted() {
    let app = acme(&["--login-queue-ms", "60000"]).await;
    let answers = logins_at_once(&app, &app.client, vec!["api".to_owned(); 40], "guess").await;
    assert_eq!(
        (count(&answers, 401), count(&answers, 429)),
        (10, 30),
        "{answers:?}"
    );
}

#[tokio::test]
async fn a_guesser_does_not_lock_the_client_out() {
    let app = acme(&["--login-queue-ms", "60000"]).await;
    let guesser = client_from(2);
    let answers = logins_at_once(&app, &guesser, vec!["api".to_owned(); 12], "guess").await;
    assert_eq!(count(&answers, 429), 2, "{answers:?}");

    let (status, retry_after) = login(&app, &guesser, "api", PASSWORD).await;
    assert_eq!(
        status, 429,
        "the guesser's address is refused even the right password"
    );
    assert!(retry_after.is_some_and(|s| s >= 1));
    assert_eq!(
        login(&app, &app.client, "api", PASSWORD).await.0,
        200,
        "the client, from its own address, logs in"
    );
}

#[tokio::test]
async fn spraying_client_ids_from_one_address_is_refused() {
    let app = acme(&["--login-queue-ms", "60000"]).await;
    let sprayer = client_from(3);
    let ids = (0..120).map(|i| format!("user{i}")).collect();
    let answers = logins_at_once(&app, &sprayer, ids, PASSWORD).await;
    assert_eq!(
        (count(&answers, 401), count(&answers, 429)),
        (100, 20),
        "{answers:?}"
    );
    assert_eq!(login(&app, &sprayer, "api", PASSWORD).await.0, 429);
    assert_eq!(login(&app, &app.client, "api", PASSWORD).await.0, 200);
}

#[tokio::test]
async fn over_long_client_ids_are_refused_before_verifying() {
    let app = acme(&[]).await;
    let status_and_body = |response: reqwest::Response| async move {
        (
            response.status().as_u16(),
            response.json::<Value>().await.unwrap(),
        )
    };
    let too_long = "x".repeat(1_000);
    let response = app
        .token_response(
            "acme",
            &[
                ("grant_type", "client_credentials"),
                ("client_id", &too_long),
                ("client_secret", "x"),
            ],
        )
        .await;
    assert_eq!(
        status_and_body(response).await,
        (400, json!({"error": "invalid_request"}))
    );
    let longest = "x".repeat(256);
    let response = app
        .client
        .post(app.url("acme", "/auth/token"))
        .basic_auth(format!("{longest}x"), Some("x"))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(
        status_and_body(response).await,
        (400, json!({"error": "invalid_request"}))
    );
    assert_eq!(login(&app, &app.client, &longest, "x").await.0, 401);

    // Nor can a user be created that could never log in.
    let output = app
        .cli(
            &[
                "user",
                "create",
                "--tenant",
                "acme",
                "--name",
                &format!("{longest}x"),
                "--password-stdin",
                "--permission",
                "bookings:read",
            ],
            Some("secret\n"),
        )
        .await;
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("longer than 256 bytes"),
        "{output:?}"
    );
}
