//! Event webhooks (docs/contract.md, "Event webhooks"), on SQLite and on PostgreSQL: the host
//! sends each booking event committed after an endpoint was added to a real receiving server,
//! signed, once, in each booking's order; a receiver that is down gets everything once it is
//! back; several hosts send each event once; non-public addresses are refused unless the
//! operator allows them, and a receiver that never answers costs one attempt.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use chrono::Utc;
use hmac::{Hmac, Mac as _};
use rentald_tests::receiver::{Answer, Received, Receiver};
use rentald_tests::{Backend, Options, TestApp};
use reqwest::Method;
use serde_json::{Value, json};
use sha2::Sha256;

use crate::booking::{Api, FREE, at, body, model};
use crate::webhooks::{bankone_event, post_bankone, signature};

const TENANT: &str = "demo";
const BANK_SECRET: &str = "whsec_bankone_events";
const ALL: [&str; 6] = [
    "booking.created",
    "booking.updated",
    "booking.canceled",
    "booking.delivered",
    "booking.returned",
    "payment.credited",
];

/// A host that sends webhooks quickly and to loopback receivers, retrying after 200 ms.
fn options(backend: Backend) -> Options {
    let mut options = Options::new(backend);
    options.serve_args = [
        "--webhook-poll-ms",
        "50",
        "--webhook-retry-ms",
        "200",
        "--webhook-timeout-ms",
        "1000",
        "--webhook-allow-private",
    ]
    .map(str::to_owned)
    .to_vec();
    options
}

/// Runs each test on a host of [`options`], on SQLite and on PostgreSQL.
macro_rules! on_both_backends {
    ($(async fn $name:ident($app:ident : TestApp) $body:block)*) => {
        $(
            mod $name {
                use super::*;

                async fn run($app: TestApp) $body

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    run(TestApp::spawn(options(Backend::Sqlite)).await.expect("sqlite")).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(app) = TestApp::spawn(options(Backend::Postgres)).await {
                        run(app).await;
                    }
                }
            }
        )*
    };
}

/// An endpoint added with the CLI: its id and signing secret.
struct Endpoint {
    id: String,
    secret: String,
}

async fn add(app: &TestApp, url: &str, events: Option<&str>) -> Endpoint {
    let mut args = vec![
        "webhook",
        "add",
        "--tenant",
        TENANT,
        "--url",
        url,
        "--insecure",
    ];
    if let Some(events) = events {
        args.extend(["--events", events]);
    }
    let out = app.cli_ok(&args, None).await;
    let id = out
        .split_whitespace()
        .nth(2)
        .unwrap_or_else(|| panic!("{out}"))
        .to_owned();
    let secret = out
        .lines()
        .find_map(|line| line.strip_prefix("signing secret: "))
        .unwrap_or_else(|| panic!("{out}"))
        .to_owned();
    assert!(
        secret.starts_with("whsec_") && secret.len() == 70,
        "{secret}"
    );
    Endpoint { id, secret }
}

/// The deliveries of the tenant, as `rentald webhook deliveries --json` lists them.
async fn deliveries(app: &TestApp, webhook: Option<&str>) -> Vec<Value> {
    let mut args = vec!["webhook", "deliveries", "--tenant", TENANT, "--json"];
    if let Some(webhook) = webhook {
        args.extend(["--webhook", webhook]);
    }
    app.cli_ok(&args, None)
        .await
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Waits (up to 60 s) until the deliveries satisfy `done`; them.
async fn deliveries_until(
    app: &TestApp,
    webhook: Option<&str>,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    for _ in 0..300 {
        let found = deliveries(app, webhook).await;
        if done(&found) {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{:#?}", deliveries(app, webhook).await);
}

/// Checks that a request is signed with `secret` over its raw body, a moment ago.
fn verify(received: &Received, secret: &str) {
    let (t, v1) = received
        .signature
        .split_once(",v1=")
        .unwrap_or_else(|| panic!("{received:?}"));
    let t: i64 = t.strip_prefix("t=").unwrap().parse().unwrap();
    assert!((Utc::now().timestamp() - t).abs() < 300, "{t}");
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.{}", received.raw).as_bytes());
    mac.verify_slice(&hex::decode(v1).unwrap())
        .unwrap_or_else(|_| panic!("a bad signature: {received:?}"));
    assert_eq!(received.content_type, "application/json");
    assert_eq!(received.event, received.body["Type"].as_str().unwrap());
}

/// The types of the events of each booking, in the order they arrived.
fn by_booking(received: &[Received]) -> BTreeMap<i64, Vec<String>> {
    let mut events: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for r in received {
        events
            .entry(r.body["BookingId"].as_i64().unwrap())
            .or_default()
            .push(r.body["Type"].as_str().unwrap().to_owned());
    }
    events
}

/// Asserts that no event arrived twice.
fn once_each(received: &[Received]) {
    let ids: BTreeSet<&str> = received
        .iter()
        .map(|r| r.body["Id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids.len(),
        received.len(),
        "an event arrived twice: {received:#?}"
    );
}

/// A creation (created), an update (updated) and a cancellation (canceled) of one booking;
/// its Id.
async fn book_update_cancel(api: &Api<'_>, from: u64) -> i64 {
    let id = api.booked(&body(model(2), from, from + 2)).await["Id"]
        .as_i64()
        .unwrap();
    let update = json!({"Id": id, "ToDate": at(from + 3, 10)});
    let (status, updated) = api
        .call(Method::PUT, "/api/booking/update", Some(&update))
        .await;
    assert_eq!(status, 200, "{updated}");
    let cancel = json!({"BookingId": id, "Lastname": "Fernández"});
    let (status, canceled) = api
        .call(Method::POST, "/api/booking/cancel", Some(&cancel))
        .await;
    assert_eq!(status, 200, "{canceled}");
    id
}

on_both_backends! {
    async fn events_arrive_signed_once_and_in_each_bookings_order(app: TestApp) {
        let api = Api::new(&app).await;
        // A booking before the endpoint exists is no event of it.
        api.booked(&body(model(2), FREE + 20, FREE + 22)).await;
        app.cli_ok(&["secret", "set", "--tenant", TENANT, "bankone.signing_secret"], Some(&format!("{BANK_SECRET}\n"))).await;
        let receiver = Receiver::start().await;
        let all = add(&app, &receiver.url("/all"), None).await;
        let canceled = Receiver::start().await;
        let only = add(&app, &canceled.url("/canceled"), Some("booking.canceled")).await;

        let first = book_update_cancel(&api, FREE).await;
        // Created two hours from now, paid, delivered and returned.
        let now = Utc::now();
        let mut request = body(model(2), FREE, FREE + 2);
        request["FromDate"] = json!((now + chrono::Duration::hours(2)).fixed_offset().to_rfc3339());
        request["ToDate"] = json!((now + chrono::Duration::hours(50)).fixed_offset().to_rfc3339());
        let booked = api.booked(&request).await;
        let second = booked["Id"].as_i64().unwrap();
        let kms = booked["Car"]["CurrentKms"].as_i64().unwrap();
        let payment = bankone_event("evt_1", booked["Code"].as_str().unwrap(), "10.00");
        let t = crate::webhooks::now();
        let (status, _) = post_bankone(&app, Some(&signature(BANK_SECRET, t, &payment)), &payment).await;
        assert_eq!(status, 200);
        // The payment is credited by the queue's consumer; the delivery waits for it.
        let paid = receiver.wait_for(5).await;
        assert!(paid.iter().any(|r| r.body["Type"] == "payment.credited"), "{paid:#?}");
        for (path, kms) in [("/api/operations/deliver", kms + 10), ("/api/operations/return", kms + 20)] {
            let operation = json!({"BookingId": second, "Kilometers": kms, "Gasoline": 7});
            let (status, done) = api.call(Method::POST, path, Some(&operation)).await;
            assert_eq!(status, 200, "{done}");
        }

        let received = receiver.wait_for(7).await;
        // Give a duplicate time to come.
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(receiver.accepted().len(), received.len());
        once_each(&received);
        let events = by_booking(&received);
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(events[&first], ["booking.created", "booking.updated", "booking.canceled"]);
        assert_eq!(
            events[&second],
            ["booking.created", "payment.credited", "booking.delivered", "booking.returned"]
        );
        for r in &received {
            verify(r, &all.secret);
        }

        // The body is the change as the feed has it, with its type.
        for r in &received {
            let id: u64 = r.body["Id"].as_str().unwrap().parse().unwrap();
            let page = api.get(&format!("/api/bookings/changes?cursor={}&limit=1", id - 1)).await;
            let change = &page["Changes"][0];
            assert_eq!(change["Cursor"], r.body["Id"]);
            assert_eq!(r.body["BookingId"], change["Id"]);
            assert_eq!(r.body["Revision"], change["Revision"]);
            assert_eq!(r.body["ChangedOn"], change["ChangedOn"]);
            assert_eq!(r.body["Booking"], change["Booking"]);
        }
        let status = |r: &Received| r.body["Booking"]["CurrentStatus"].as_i64().unwrap();
        assert_eq!(status(received.iter().find(|r| r.event == "booking.returned").unwrap()), 5);

        // The filtered endpoint got the cancellation only, signed with its own secret.
        let got = canceled.wait_for(1).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(canceled.accepted().len(), 1, "{got:#?}");
        assert_eq!(got[0].body["BookingId"], first);
        assert_eq!(got[0].body["Type"], "booking.canceled");
        verify(&got[0], &only.secret);
        assert_ne!(got[0].delivery, received[2].delivery, "each endpoint's delivery has its id");
        assert_eq!(got[0].body["Id"], received.iter().find(|r| r.event == "booking.canceled").unwrap().body["Id"]);

        // The log: every delivery made once, answered 204.
        let log = deliveries(&app, Some(&all.id)).await;
        assert_eq!(log.len(), 7, "{log:#?}");
        for d in &log {
            assert_eq!((d["status"].as_str(), d["attempts"].as_i64(), d["last_status"].as_i64()),
                (Some("delivered"), Some(1), Some(204)), "{d}");
            assert!(d["last_error"].is_null() && d["last_latency_ms"].as_i64().is_some(), "{d}");
        }
        let sent: BTreeSet<String> = received.iter().map(|r| r.delivery.clone()).collect();
        let logged: BTreeSet<String> = log.iter().map(|d| d["id"].to_string()).collect();
        assert_eq!(sent, logged);

        // Listed without secrets; removed, it gets nothing more.
        let listed = app.cli_ok(&["webhook", "list", "--tenant", TENANT, "--json"], None).await;
        assert_eq!(listed.lines().count(), 2, "{listed}");
        assert!(!listed.contains("whsec_"), "{listed}");
        let first_listed: Value = serde_json::from_str(listed.lines().next().unwrap()).unwrap();
        assert_eq!(first_listed["events"], json!(ALL));
        app.cli_ok(&["webhook", "remove", "--tenant", TENANT, "--id", &all.id], None).await;
        book_update_cancel(&api, FREE + 5).await;
        canceled.wait_for(2).await;
        assert_eq!(receiver.accepted().len(), 7);
        let removed = app.cli(&["webhook", "remove", "--tenant", TENANT, "--id", &all.id], None).await;
        assert!(!removed.status.success());
        assert!(String::from_utf8_lossy(&removed.stderr).contains("has no webhook"));
    }

    async fn a_receiver_down_for_a_while_gets_everything_afterwards(app: TestApp) {
        let api = Api::new(&app).await;
        let receiver = Receiver::start().await;
        let endpoint = add(&app, &receiver.url("/hooks"), None).await;
        receiver.stop();
        let id = book_update_cancel(&api, FREE).await;
        // The creation is tried again and again; the update and the cancellation wait behind
        // it, untried. A delivery is `processing` while an attempt is under way (the attempt
        // is counted when it starts), and `pending` again once its failure is recorded.
        let log = deliveries_until(&app, None, |log| {
            log.len() == 3 && log[0]["attempts"].as_i64() >= Some(3) && log[0]["status"] == "pending"
        })
        .await;
        assert!(log[0]["last_status"].is_null(), "{log:#?}");
        assert!(log[0]["last_error"].as_str().unwrap().contains("error"), "{log:#?}");
        assert!(log[1..].iter().all(|d| d["attempts"] == 0 && d["status"] == "pending"), "{log:#?}");

        // Then it answers 503 for a while: that fails too, and is logged.
        receiver.answer(Answer::Status(503));
        receiver.restart().await;
        deliveries_until(&app, None, |log| log[0]["last_status"].as_i64() == Some(503)).await;
        assert!(receiver.accepted().is_empty());

        receiver.answer(Answer::Status(200));
        let received = receiver.wait_for(3).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(receiver.accepted().len(), 3);
        once_each(&received);
        assert_eq!(by_booking(&received)[&id], ["booking.created", "booking.updated", "booking.canceled"]);
        for r in &received {
            verify(r, &endpoint.secret);
        }
        let log = deliveries(&app, None).await;
        assert!(log.iter().all(|d| d["status"] == "delivered" && d["last_status"] == 200), "{log:#?}");
        assert!(log[0]["attempts"].as_i64() > Some(3), "{log:#?}");
    }

    async fn a_delivery_is_dead_three_days_after_its_event_and_the_next_goes(app: TestApp) {
        let api = Api::new(&app).await;
        let receiver = Receiver::start().await;
        receiver.answer(Answer::Status(500));
        add(&app, &receiver.url("/hooks"), None).await;
        let id = book_update_cancel(&api, FREE).await;
        deliveries_until(&app, None, |log| log.len() == 3 && log[0]["attempts"].as_i64() >= Some(2)).await;
        // The creation's event is three days old: its next failure is its last.
        let three_days = 3 * 24 * 3600 * 1_000_000_i64;
        app.sql(&format!(
            "UPDATE webhook_deliveries SET created_at = created_at - {three_days} \
             WHERE id = (SELECT MIN(id) FROM webhook_deliveries)"
        ))
        .await;
        let log = deliveries_until(&app, None, |log| log[0]["status"] == "dead").await;
        assert_eq!(log[0]["last_status"], 500, "{log:#?}");
        receiver.answer(Answer::Status(200));
        let received = receiver.wait_for(2).await;
        assert_eq!(by_booking(&received)[&id], ["booking.updated", "booking.canceled"]);
    }

    async fn several_hosts_send_each_event_once(app: TestApp) {
        let peers = [app.start_peer().await, app.start_peer().await];
        let api = Api::new(&app).await;
        let receiver = Receiver::start().await;
        add(&app, &receiver.url("/hooks"), None).await;
        let mut ids = Vec::new();
        for n in 0..4 {
            ids.push(book_update_cancel(&api, FREE + 4 * n).await);
        }
        let received = receiver.wait_for(12).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(receiver.accepted().len(), 12);
        once_each(&received);
        let events = by_booking(&received);
        for id in ids {
            assert_eq!(events[&id], ["booking.created", "booking.updated", "booking.canceled"]);
        }
        drop(peers);
    }
}

/// Without `--webhook-allow-private`, a loopback endpoint, named by address or by name, is
/// refused at each attempt and never reached; the CLI refuses URLs that cannot be endpoints.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_addresses_are_refused_unless_the_operator_allows_them() {
    let mut options = options(Backend::Sqlite);
    options
        .serve_args
        .retain(|arg| arg != "--webhook-allow-private");
    let app = TestApp::spawn(options).await.unwrap();
    let api = Api::new(&app).await;
    let receiver = Receiver::start().await;
    add(&app, &receiver.url("/by-address"), None).await;
    add(
        &app,
        &format!("http://localhost:{}/by-name", receiver.port()),
        None,
    )
    .await;
    api.booked(&body(model(2), FREE, FREE + 2)).await;
    // Between two attempts a delivery is `pending`; while the sender holds it, `processing`.
    let log = deliveries_until(&app, None, |log| {
        log.len() == 2
            && log
                .iter()
                .all(|d| d["attempts"].as_i64() >= Some(2) && d["status"] == "pending")
    })
    .await;
    for d in &log {
        let error = d["last_error"].as_str().unwrap();
        assert!(error.contains("is not a public address"), "{error}");
    }
    assert!(receiver.received().is_empty());

    for (url, why) in [
        ("http://hooks.example.com/x", "unencrypted"),
        ("ftp://hooks.example.com/x", "https://"),
        ("https://user:pw@hooks.example.com/x", "credentials"),
        ("not a url", "not a URL"),
    ] {
        let out = app
            .cli(&["webhook", "add", "--tenant", TENANT, "--url", url], None)
            .await;
        assert!(!out.status.success(), "{url}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(why), "{url}: {stderr}");
    }
    let out = app
        .cli(
            &[
                "webhook",
                "add",
                "--tenant",
                TENANT,
                "--url",
                "https://hooks.example.com/x",
                "--events",
                "booking.deleted",
            ],
            None,
        )
        .await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown event type"));
    let out = app
        .cli(
            &[
                "webhook",
                "add",
                "--tenant",
                "nobody",
                "--url",
                "https://hooks.example.com/x",
            ],
            None,
        )
        .await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
}

/// A receiver that never answers costs its delivery one attempt of `--webhook-timeout-ms`,
/// and holds up no other endpoint's deliveries meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_never_answers_costs_one_attempt() {
    let app = TestApp::spawn(options(Backend::Sqlite)).await.unwrap();
    let api = Api::new(&app).await;
    let silent = Receiver::start().await;
    silent.answer(Answer::Never);
    let hung = add(&app, &silent.url("/silent"), None).await;
    let receiver = Receiver::start().await;
    add(&app, &receiver.url("/hooks"), None).await;
    book_update_cancel(&api, FREE).await;
    receiver.wait_for(3).await;
    let log = deliveries_until(&app, Some(&hung.id), |log| {
        log[0]["attempts"].as_i64() >= Some(2)
    })
    .await;
    assert_eq!(log[0]["last_error"], "no answer within 1000 ms", "{log:#?}");
    assert!(log[0]["last_status"].is_null());
}
