//! Writes sent with an `Idempotency-Key` (docs/contract.md, "Idempotency keys"), on SQLite and
//! on PostgreSQL: a retry is answered again without doing the work again, whether the first
//! request was answered, is still being served, was left by its host before its commit, or
//! is on another host; a key reused with another request, a malformed key and another user's
//! key are told apart.

use std::time::{Duration, Instant};

use rentald_tests::{Backend, Options, TestApp, on_both_backends};
use reqwest::Method;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use tokio::task::JoinSet;

use crate::booking::{Api, FREE, body, model};

const TENANT: &str = "demo";
const BOOK: &str = "/api/booking/book";
const KEY: &str = "idempotency-key";
const REPLAYED: &str = "idempotent-replayed";

/// One answer: its status, whether it was sent again, and its body (`null` when empty).
#[derive(Debug, PartialEq)]
struct Answer {
    status: u16,
    replayed: bool,
    body: Value,
}

async fn read(response: reqwest::Response) -> Answer {
    let status = response.status().as_u16();
    let replayed = response
        .headers()
        .get(REPLAYED)
        .is_some_and(|value| value == "true");
    let body = rentald_tests::json_body(response, "a keyed request").await;
    Answer {
        status,
        replayed,
        body,
    }
}

/// A request to `app` (or `host`, another host on its database) with `key`.
async fn keyed_on(
    app: &TestApp,
    host: std::net::SocketAddr,
    token: &str,
    method: Method,
    path: &str,
    body: &Value,
    key: &str,
) -> Answer {
    let response = app
        .client
        .request(method, app.url_on(host, TENANT, path))
        .bearer_auth(token)
        .header(KEY, key)
        .json(body)
        .send()
        .await
        .expect("request");
    read(response).await
}

async fn keyed(
    app: &TestApp,
    token: &str,
    method: Method,
    path: &str,
    body: &Value,
    key: &str,
) -> Answer {
    keyed_on(app, app.addr, token, method, path, body, key).await
}

async fn total(api: &Api<'_>) -> u64 {
    api.get("/api/bookings/list?limit=1").await["Total"]
        .as_u64()
        .unwrap()
}

/// A creation of a model-2 car, `offset` days past the free window, so that tests do not
/// compete for cars.
fn creation(offset: u64) -> Value {
    body(model(2), FREE + offset, FREE + offset + 2)
}

/// The key's row, as the server keeps it.
fn key_row(key: &str) -> String {
    format!("tenant = 'demo' AND client_key = '{key}'")
}

/// The digest the server recognises a request by (method, target, body as sent).
fn fingerprint(method: &str, target: &str, body: &Value) -> String {
    let mut digest = Sha256::new();
    digest.update(format!("{method}\n{target}\n"));
    digest.update(serde_json::to_vec(body).unwrap());
    hex::encode(digest.finalize())
}

on_both_backends! {
    async fn a_retried_write_is_done_once_and_answered_again(app: TestApp) {
        let api = Api::new(&app).await;
        let before = total(&api).await;
        let first = keyed(&app, &api.token, Method::POST, BOOK, &creation(0), "book-1").await;
        assert_eq!((first.status, first.replayed), (200, false), "{first:?}");
        let again = keyed(&app, &api.token, Method::POST, BOOK, &creation(0), "book-1").await;
        assert_eq!(again.status, 200);
        assert!(again.replayed);
        assert_eq!(again.body, first.body, "the same answer, byte for byte");
        assert_eq!(total(&api).await, before + 1, "one booking for two requests");

        // A cancellation retried: done again, it would be refused (Canceled cannot be
        // canceled); with its key, the first answer comes back.
        let cancel = json!({"BookingId": first.body["Id"], "Lastname": "Fernández"});
        let canceled = keyed(&app, &api.token, Method::POST, "/api/booking/cancel", &cancel, "cancel-1").await;
        assert_eq!(canceled.status, 200, "{canceled:?}");
        let again = keyed(&app, &api.token, Method::POST, "/api/booking/cancel", &cancel, "cancel-1").await;
        assert_eq!((again.status, again.replayed), (200, true), "{again:?}");
        assert_eq!(again.body, canceled.body);
        let unkeyed = api.call(Method::POST, "/api/booking/cancel", Some(&cancel)).await;
        assert_eq!(unkeyed.0, 400, "without a key it is done again, and refused: {unkeyed:?}");

        // A refusal is an answer too: kept, and sent again.
        let mut bad = creation(0);
        bad["ToDate"] = bad["FromDate"].clone();
        let refused = keyed(&app, &api.token, Method::POST, BOOK, &bad, "bad-1").await;
        assert_eq!(refused.status, 400, "{refused:?}");
        let again = keyed(&app, &api.token, Method::POST, BOOK, &bad, "bad-1").await;
        assert_eq!((again.status, again.replayed), (400, true));
        assert_eq!(again.body, refused.body, "the first error body, its Id included");
    }

    async fn a_key_with_another_request_or_of_another_user_is_another_key(app: TestApp) {
        let api = Api::new(&app).await;
        let before = total(&api).await;
        let first = keyed(&app, &api.token, Method::POST, BOOK, &creation(10), "shared").await;
        assert_eq!(first.status, 200, "{first:?}");
        let other = keyed(&app, &api.token, Method::POST, BOOK, &creation(20), "shared").await;
        assert_eq!(other.status, 422, "{other:?}");
        assert_eq!(other.body["ErrorCode"], 98);
        assert!(other.body["ErrorMessage"].as_str().unwrap().contains("Idempotency-Key"), "{other:?}");
        assert!(other.body["Id"].is_string());
        // The same body on another target (another language) is another request too.
        let elsewhere = keyed(&app, &api.token, Method::POST, "/api/booking/book?language=es", &creation(10), "shared").await;
        assert_eq!(elsewhere.status, 422, "{elsewhere:?}");
        assert_eq!(total(&api).await, before + 1);

        // Keys are the API user's own.
        app.create_user(TENANT, "second", &["bookings:read", "bookings:write"]).await;
        let second = app.token(TENANT, "second", rentald_tests::PASSWORD).await;
        let theirs = keyed(&app, &second, Method::POST, BOOK, &creation(30), "shared").await;
        assert_eq!((theirs.status, theirs.replayed), (200, false), "{theirs:?}");
        assert_ne!(theirs.body["Id"], first.body["Id"]);
        assert_eq!(total(&api).await, before + 2);
    }

    async fn a_malformed_key_is_refused_and_a_read_ignores_its_key(app: TestApp) {
        let api = Api::new(&app).await;
        let before = total(&api).await;
        for key in ["x".repeat(256), "two words".to_owned(), String::new()] {
            let refused = keyed(&app, &api.token, Method::POST, BOOK, &creation(40), &key).await;
            assert_eq!(refused.status, 400, "{key:?}: {refused:?}");
            assert_eq!(refused.body["ErrorCode"], 98);
        }
        let longest = keyed(&app, &api.token, Method::POST, BOOK, &creation(40), &"x".repeat(255)).await;
        assert_eq!(longest.status, 200, "{longest:?}");
        assert_eq!(total(&api).await, before + 1);
        // Reads take no key: the same key on two different reads answers both.
        for path in ["/api/bookings/list?limit=1", "/api/bookings/list?limit=2"] {
            let response = app
                .client
                .get(app.url(TENANT, path))
                .bearer_auth(&api.token)
                .header(KEY, "read")
                .send()
                .await
                .unwrap();
            let answer = read(response).await;
            assert_eq!((answer.status, answer.replayed), (200, false), "{path}");
        }
    }

    async fn retries_sent_while_the_first_is_served_get_its_answer(app: TestApp) {
        let api = Api::new(&app).await;
        let before = total(&api).await;
        let mut sent = JoinSet::new();
        for _ in 0..8 {
            let (client, url, token) = (app.client.clone(), app.url(TENANT, BOOK), api.token.clone());
            sent.spawn(async move {
                let response = client
                    .post(url)
                    .bearer_auth(token)
                    .header(KEY, "together")
                    .json(&creation(50))
                    .send()
                    .await
                    .unwrap();
                read(response).await
            });
        }
        let answers = sent.join_all().await;
        let served: Vec<_> = answers.iter().filter(|a| !a.replayed).collect();
        assert_eq!(served.len(), 1, "one served, the others answered again: {answers:?}");
        for answer in &answers {
            assert_eq!(answer.status, 200, "{answer:?}");
            assert_eq!(answer.body, served[0].body);
        }
        assert_eq!(total(&api).await, before + 1);
    }

    async fn a_client_that_retries_a_book_after_a_timeout_gets_one_booking(app: TestApp) {
        let api = Api::new(&app).await;
        // How long a creation takes here, so that the impatient client gives up halfway.
        let started = Instant::now();
        api.booked(&creation(60)).await;
        let patience = started.elapsed() / 2;
        let before = total(&api).await;
        let impatient = rentald_tests::client_builder().timeout(patience).build().unwrap();
        let sent = impatient
            .post(app.url(TENANT, BOOK))
            .bearer_auth(&api.token)
            .header(KEY, "impatient")
            .json(&creation(70))
            .send()
            .await;
        let timed_out = sent.as_ref().is_err_and(reqwest::Error::is_timeout);
        let retried = keyed(&app, &api.token, Method::POST, BOOK, &creation(70), "impatient").await;
        assert_eq!(retried.status, 200, "{retried:?}");
        assert_eq!(total(&api).await, before + 1, "timed out first: {timed_out}");
        let again = keyed(&app, &api.token, Method::POST, BOOK, &creation(70), "impatient").await;
        assert_eq!((again.status, again.replayed, &again.body), (200, true, &retried.body));
    }

    async fn a_claim_left_before_its_commit_is_taken_over_and_one_left_after_it_is_in_doubt(app: TestApp) {
        let api = Api::new(&app).await;
        let body = creation(80);
        let target = BOOK;
        let print = fingerprint("POST", target, &body);
        let user = app.sql_count("SELECT id FROM api_users WHERE tenant = 'demo' AND name = 'api'").await;
        // A host took the key and stopped before its commit: its lease has run out.
        app.sql(&format!(
            "INSERT INTO idempotency_keys (tenant, user_id, client_key, fingerprint, state, owner, \
             lease_until, status, content_type, body, created_at) \
             VALUES ('demo', {user}, 'left', '{print}', 'running', 'gone', 0, 0, '', {empty}, {now})",
            empty = empty_blob(&app),
            now = chrono::Utc::now().timestamp_micros(),
        ))
        .await;
        let before = total(&api).await;
        let served = keyed(&app, &api.token, Method::POST, target, &body, "left").await;
        assert_eq!((served.status, served.replayed), (200, false), "{served:?}");
        assert_eq!(total(&api).await, before + 1);
        let owner = app.sql_texts(&format!("SELECT state FROM idempotency_keys WHERE {}", key_row("left"))).await;
        assert_eq!(owner, ["answered"]);

        // A host committed the key's request and stopped before recording its answer.
        app.sql(&format!(
            "UPDATE idempotency_keys SET state = 'committed', lease_until = 0 WHERE {}",
            key_row("left")
        ))
        .await;
        let doubt = keyed(&app, &api.token, Method::POST, target, &body, "left").await;
        assert_eq!(doubt.status, 409, "{doubt:?}");
        assert_eq!(doubt.body["ErrorCode"], 99);
        assert_eq!(total(&api).await, before + 1, "not done again");
    }
}

/// An empty blob in the database's SQL.
fn empty_blob(app: &TestApp) -> &'static str {
    if app.sqlite_log().is_some() {
        "X''"
    } else {
        "''::bytea"
    }
}

/// The demo tenant on a server whose `booking` component is the hostile test component, and
/// its API user's token; `None` where no PostgreSQL is configured.
async fn hostile_booking(backend: Backend) -> Option<(TestApp, tempfile::TempDir, String)> {
    let dir = crate::sandbox::hostile_components_as("booking");
    let mut options = Options::new(backend);
    options.components_dir = Some(dir.path().to_path_buf());
    let app = TestApp::spawn(options).await?;
    let token = app.tenant_with_token(TENANT, true).await;
    Some((app, dir, token))
}

/// The hostile component's sequence, as stored; `None` before its first value.
async fn hostile_sequence(app: &TestApp) -> Option<i64> {
    let query = "SELECT value FROM sequences WHERE tenant = 'demo' AND name = 'hostile'";
    let values = app
        .sql_texts(&format!("SELECT CAST(value AS TEXT) FROM ({query}) AS s"))
        .await;
    values.first().map(|value| value.parse().unwrap())
}

async fn a_write_committed_before_another_is_committed_first_and_one_left_by_a_failure_is_not(
    backend: Backend,
) {
    let Some((app, _dir, token)) = hostile_booking(backend).await else {
        return;
    };
    // Its second transaction finds the first one's write committed (it waits for nothing),
    // and the key is answered.
    let path = "/api/booking/book?behave=commit-then-write";
    let answered = keyed(&app, &token, Method::POST, path, &json!({}), "twice").await;
    assert_eq!(answered.status, 200, "{answered:?}");
    assert_eq!(answered.body, json!({"first": 1, "second": 2}));
    let again = keyed(&app, &token, Method::POST, path, &json!({}), "twice").await;
    assert_eq!(
        (again.status, again.replayed, &again.body),
        (200, true, &answered.body)
    );
    assert_eq!(hostile_sequence(&app).await, Some(2));

    // A write committed by a guest that then fails does not last with a key (it does
    // without one), and the key may be sent again.
    let path = "/api/booking/book?behave=commit-then-panic";
    for _ in 0..2 {
        let failed = keyed(&app, &token, Method::POST, path, &json!({}), "fails").await;
        assert_eq!((failed.status, failed.replayed), (500, false), "{failed:?}");
        assert_eq!(failed.body["ErrorCode"], 99);
        assert_eq!(hostile_sequence(&app).await, Some(2), "rolled back");
    }
    let unkeyed = app
        .call(TENANT, &token, Method::POST, path, Some(&json!({})))
        .await;
    assert_eq!(unkeyed.0, 500);
    assert_eq!(
        hostile_sequence(&app).await,
        Some(3),
        "committed without a key"
    );
    let keys = app
        .sql_count("SELECT COUNT(*) FROM idempotency_keys WHERE client_key = 'fails'")
        .await;
    assert_eq!(keys, 0, "a failed request's key is given up");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guests_writes_and_answer_commit_together_on_sqlite() {
    a_write_committed_before_another_is_committed_first_and_one_left_by_a_failure_is_not(
        Backend::Sqlite,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guests_writes_and_answer_commit_together_on_postgres() {
    a_write_committed_before_another_is_committed_first_and_one_left_by_a_failure_is_not(
        Backend::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_still_being_served_elsewhere_is_busy_until_its_deadline() {
    let mut options = Options::new(Backend::Sqlite);
    options.request_timeout_ms = 1_000;
    let app = TestApp::spawn(options).await.expect("sqlite always runs");
    let api = Api::new(&app).await;
    let body = creation(90);
    let user = app
        .sql_count("SELECT id FROM api_users WHERE tenant = 'demo' AND name = 'api'")
        .await;
    let far = chrono::Utc::now().timestamp_micros() + 3_600_000_000;
    app.sql(&format!(
        "INSERT INTO idempotency_keys (tenant, user_id, client_key, fingerprint, state, owner, \
         lease_until, status, content_type, body, created_at) \
         VALUES ('demo', {user}, 'busy', '{print}', 'running', 'elsewhere', {far}, 0, '', X'', {far})",
        print = fingerprint("POST", BOOK, &body),
    ))
    .await;
    let before = total(&api).await;
    let started = Instant::now();
    let response = app
        .client
        .post(app.url(TENANT, BOOK))
        .bearer_auth(&api.token)
        .header(KEY, "busy")
        .json(&body)
        .send()
        .await
        .unwrap();
    let retry_after = response.headers().get("retry-after").cloned();
    let busy = read(response).await;
    assert_eq!(busy.status, 409, "{busy:?}");
    assert_eq!(busy.body["ErrorCode"], 499);
    assert_eq!(retry_after.unwrap(), "1");
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "it waited for the other request first"
    );
    assert_eq!(total(&api).await, before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_host_answers_a_key_again() {
    let Some(app) = TestApp::spawn(Options::new(Backend::Postgres)).await else {
        return;
    };
    let peer = app.start_peer().await;
    let api = Api::new(&app).await;
    let before = total(&api).await;
    let mut answers = Vec::new();
    for host in [app.addr, peer.addr] {
        let body = creation(100);
        answers.push(keyed_on(&app, host, &api.token, Method::POST, BOOK, &body, "hosts").await);
    }
    assert_eq!(
        (answers[0].status, answers[0].replayed),
        (200, false),
        "{answers:?}"
    );
    assert_eq!(
        (answers[1].status, answers[1].replayed),
        (200, true),
        "{answers:?}"
    );
    assert_eq!(answers[1].body, answers[0].body);
    assert_eq!(total(&api).await, before + 1);
}
