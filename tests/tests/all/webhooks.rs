//! The bank webhooks, the payment queue and its reconciliation, end to end: the real host with
//! the real components, a real TLS bank on loopback that requires a client certificate.

use std::str::FromStr as _;
use std::time::Duration;

use hmac::{Hmac, Mac as _};
use rentald_tests::bank::{Behaviour, Ca, TestBank};
use rentald_tests::{Backend, Options, TestApp, components_dir, on_both_backends, rentald_bin};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use sha2::Sha256;

const TENANT: &str = "demo";
const BANKONE_PATH: &str = "/api/bankone/webhooks";
const BANKTWO_PATH: &str = "/api/v1/banktwo/webhooks";
const SIGNING_SECRET: &str = "whsec_bankone_test";
const SHARED_SECRET: &str = "banktwo-shared-secret";

fn dec(value: &Value) -> Decimal {
    Decimal::from_str(&value.to_string().replace('"', "")).unwrap()
}

pub(crate) fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

pub(crate) fn signature(secret: &str, t: i64, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.{body}").as_bytes());
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

/// The demo tenant with bank one's secret; its API token.
async fn with_bankone(app: &TestApp) -> String {
    let token = app.tenant_with_token(TENANT, true).await;
    app.cli_ok(
        &[
            "secret",
            "set",
            "--tenant",
            TENANT,
            "bankone.signing_secret",
        ],
        Some(&format!("{SIGNING_SECRET}\n")),
    )
    .await;
    token
}

/// The demo tenant configured for the test bank as an operator would; its API token.
async fn with_banktwo(app: &TestApp, bank: &TestBank) -> String {
    let token = app.tenant_with_token(TENANT, true).await;
    let ca = bank.ca.pem();
    for (name, value) in [
        ("banktwo.shared_secret", SHARED_SECRET),
        ("banktwo.client_cert", bank.client.cert_pem.as_str()),
        ("banktwo.client_key", bank.client.key_pem.as_str()),
    ] {
        app.cli_ok(&["secret", "set", "--tenant", TENANT, name], Some(value))
            .await;
    }
    app.set_setting(TENANT, "banktwo.base_url", &bank.base_url())
        .await;
    app.set_setting(TENANT, "banktwo.ca_cert", &ca).await;
    token
}

/// A Reserved demo booking that still owes money.
async fn reserved_booking(app: &TestApp, token: &str) -> Value {
    let page = app
        .get_json(TENANT, "/api/bookings/list?status=2&limit=100", token)
        .await;
    page["Results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["Code"].is_string() && dec(&b["Balance"]) > Decimal::ONE)
        .cloned()
        .unwrap_or_else(|| panic!("no Reserved booking with a balance: {page}"))
}

/// The booking with this id, as the list shows it.
async fn booking(app: &TestApp, token: &str, id: i64) -> Value {
    let path = format!("/api/bookings/list?offset={}&limit=1", id - 1);
    let page = app.get_json(TENANT, &path, token).await;
    let item = page["Results"]
        .as_array()
        .and_then(|items| items.first())
        .cloned()
        .unwrap();
    assert_eq!(item["Id"], id, "{page}");
    item
}

/// Queues `payment.reconcile` messages of the tenant, each a payload and its dedupe key, due at
/// once: as the banks' webhooks queue them, staged so that a test decides when they are due.
async fn queue_payments(app: &TestApp, messages: impl IntoIterator<Item = (String, String)>) {
    let rows: Vec<String> = messages
        .into_iter()
        .map(|(payload, key)| {
            format!("('{TENANT}', 'payment.reconcile', '{payload}', '{key}', 0, 0)")
        })
        .collect();
    app.sql(&format!(
        "INSERT INTO queue (tenant, topic, payload, dedupe_key, available_at, created_at) \
         VALUES {}",
        rows.join(", ")
    ))
    .await;
}

fn payments(queue: &[Value]) -> Vec<&Value> {
    queue
        .iter()
        .filter(|m| m["topic"] == "payment.reconcile")
        .collect()
}

async fn comments_of(app: &TestApp, id: i64) -> i64 {
    app.sql_count(&format!(
        "SELECT COUNT(*) FROM documents WHERE tenant = '{TENANT}' \
         AND collection = 'booking-comments' AND id LIKE '{id}-%'"
    ))
    .await
}

async fn payment_records(app: &TestApp) -> i64 {
    app.sql_count(&format!(
        "SELECT COUNT(*) FROM documents WHERE tenant = '{TENANT}' AND collection = 'payments'"
    ))
    .await
}

pub(crate) fn bankone_event(event_id: &str, title: &str, amount: &str) -> String {
    json!({
        "EventId": event_id,
        "EventType": "payment.succeeded",
        "CreatedAt": "2026-01-01T10:00:00Z",
        "Payment": {
            "Id": format!("pay_{event_id}"),
            "Title": title,
            "Amount": amount,
            "Currency": "USD",
            "PaidAt": "2026-01-01T10:00:00Z"
        }
    })
    .to_string()
}

/// POSTs a webhook body with its authenticating header, when given; the status and body.
async fn post_webhook(
    app: &TestApp,
    path: &str,
    header: &str,
    value: Option<&str>,
    body: &str,
) -> (u16, String) {
    let headers: Vec<(&str, &str)> = value.map(|v| vec![(header, v)]).unwrap_or_default();
    let response = app.post_raw(TENANT, path, &headers, body).await;
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

pub(crate) async fn post_bankone(
    app: &TestApp,
    signature: Option<&str>,
    body: &str,
) -> (u16, String) {
    post_webhook(app, BANKONE_PATH, "BankOne-Signature", signature, body).await
}

fn banktwo_notification(settlement: &str, reference: &str, amount: &str) -> String {
    json!({
        "NotificationId": format!("n_{settlement}"),
        "Type": "settlement",
        "SettlementId": settlement,
        "Reference": reference,
        "Amount": amount,
        "Currency": "USD"
    })
    .to_string()
}

async fn post_banktwo(app: &TestApp, secret: Option<&str>, body: &str) -> (u16, String) {
    post_webhook(app, BANKTWO_PATH, "BankTwo-Secret", secret, body).await
}

on_both_backends! {
    async fn bankone_refuses_what_the_tenant_did_not_sign(app: TestApp) {
        let token = app.tenant_with_token(TENANT, true).await;
        let target = reserved_booking(&app, &token).await;
        let body = bankone_event("evt_1", target["Code"].as_str().unwrap(), "10.00");
        let t = now();

        // No secret configured yet: nothing is authentic.
        let signed = signature(SIGNING_SECRET, t, &body);
        assert_eq!(post_bankone(&app, Some(&signed), &body).await, (401, String::new()));

        app.cli_ok(
            &["secret", "set", "--tenant", TENANT, "bankone.signing_secret"],
            Some(SIGNING_SECRET),
        )
        .await;
        let tampered = body.replace("10.00", "1000.00");
        for (case, header) in [
            ("unsigned", None),
            ("garbage", Some("nonsense".to_owned())),
            ("wrong secret", Some(signature("another secret", t, &body))),
            // Well past the 300 s window (its exact edges are unit-tested in the component).
            ("stale", Some(signature(SIGNING_SECRET, t - 360, &body))),
            ("future", Some(signature(SIGNING_SECRET, t + 360, &body))),
            ("tampered body", Some(signature(SIGNING_SECRET, t, &body))),
        ] {
            let sent = if case == "tampered body" { &tampered } else { &body };
            let (status, text) = post_bankone(&app, header.as_deref(), sent).await;
            assert_eq!((status, text.as_str()), (401, ""), "{case}");
        }
        assert!(app.queue(TENANT).await.is_empty(), "nothing queued");
        let log = app.log();
        assert!(!log.contains(SIGNING_SECRET), "the secret is never logged");
    }

    async fn bankone_queues_a_payment_once_and_it_is_credited(app: TestApp) {
        let token = with_bankone(&app).await;
        let target = reserved_booking(&app, &token).await;
        let id = target["Id"].as_i64().unwrap();
        let code = target["Code"].as_str().unwrap();
        let balance = dec(&target["Balance"]);
        let paid = dec(&target["TotalPayed"]);
        let comments = comments_of(&app, id).await;
        let amount = balance.to_string();
        let body = bankone_event("evt_full", code, &amount);

        for _ in 0..3 {
            let signed = signature(SIGNING_SECRET, now(), &body);
            assert_eq!(post_bankone(&app, Some(&signed), &body).await, (200, String::new()));
        }
        let queue = app.settled_queue(TENANT).await;
        let messages = payments(&queue);
        assert_eq!(messages.len(), 1, "{queue:#?}");
        let message = messages[0];
        assert_eq!(message["dedupe_key"], "bankone:evt_full");
        assert_eq!(message["status"], "delivered", "{message}");
        let payload = &message["payload"];
        assert_eq!(payload["Bank"], "bankone");
        assert_eq!(payload["ExternalId"], "pay_evt_full");
        assert_eq!(payload["BookingId"], id);
        assert_eq!(payload["BookingCode"], code);
        assert_eq!(payload["Amount"], amount, "a decimal string");
        assert_eq!(payload["Currency"], "USD");
        assert!(payload["ReceivedAt"].is_string());

        let after = booking(&app, &token, id).await;
        assert_eq!(dec(&after["TotalPayed"]), paid + balance);
        assert_eq!(dec(&after["Balance"]), Decimal::ZERO);
        assert_eq!(after["CurrentStatus"], 3, "paid in full: Confirmed");
        assert!(after["UpdatedOn"].is_string());
        assert_eq!(comments_of(&app, id).await, comments + 1, "one comment");
        assert_eq!(payment_records(&app).await, 1);
    }

    async fn payments_and_the_api_number_a_bookings_comments_alike(app: TestApp) {
        let token = with_bankone(&app).await;
        let target = reserved_booking(&app, &token).await;
        let id = target["Id"].as_i64().unwrap();
        let code = target["Code"].as_str().unwrap();
        for event in ["evt_part_1", "evt_part_2"] {
            let body = bankone_event(event, code, "1.00");
            let signed = signature(SIGNING_SECRET, now(), &body);
            assert_eq!(post_bankone(&app, Some(&signed), &body).await.0, 200);
            app.settled_queue(TENANT).await;
        }
        // The API then comments the same booking: it must not take a number a payment took.
        let cancel = app
            .client
            .post(app.url(TENANT, "/api/booking/cancel"))
            .bearer_auth(&token)
            .json(&json!({"BookingId": id, "Lastname": target["Customer"]["Lastname"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(cancel.status(), 200, "{}", cancel.text().await.unwrap());
        let history = app
            .get_json(TENANT, &format!("/api/booking/{id}/history"), &token)
            .await;
        let seqs: Vec<i64> = history
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["Seq"].as_i64().unwrap())
            .collect();
        assert!(seqs.len() >= 3, "{history}");
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{history}");
    }

    async fn bankone_ignores_other_events_and_unknown_titles(app: TestApp) {
        let token = with_bankone(&app).await;
        let target = reserved_booking(&app, &token).await;
        let code = target["Code"].as_str().unwrap();
        let refund = bankone_event("evt_r", code, "10.00").replace("payment.succeeded", "payment.refunded");
        let unknown = bankone_event("evt_u", "NOT-A-BOOKING", "10.00");
        for body in [&refund, &unknown] {
            let signed = signature(SIGNING_SECRET, now(), body);
            assert_eq!(post_bankone(&app, Some(&signed), body).await, (200, String::new()));
        }
        let malformed = r#"{"EventId":"evt_m","EventType":"payment.succeeded","Payment":{"Id":"p"}}"#;
        let signed = signature(SIGNING_SECRET, now(), malformed);
        let (status, text) = post_bankone(&app, Some(&signed), malformed).await;
        assert_eq!(status, 400, "{text}");
        let error: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(error["ErrorCode"], 98, "{error}");
        assert!(app.queue(TENANT).await.is_empty(), "nothing queued");
        assert!(app.log().contains("NOT-A-BOOKING"), "the unknown title is logged");
    }

    async fn banktwo_wrong_secret_makes_no_bank_call(app: TestApp) {
        let bank = TestBank::start().await;
        let token = with_banktwo(&app, &bank).await;
        let target = reserved_booking(&app, &token).await;
        bank.settlement("st_1", target["Code"].as_str().unwrap(), "10.00", "USD", "settled");
        let body = banktwo_notification("st_1", target["Code"].as_str().unwrap(), "10.00");
        for secret in [None, Some(""), Some("guess"), Some("banktwo-shared-secre"), Some("banktwo-shared-secretx")] {
            assert_eq!(post_banktwo(&app, secret, &body).await, (401, String::new()), "{secret:?}");
        }
        assert_eq!(bank.calls(), 0, "no call to the bank");
        assert!(app.queue(TENANT).await.is_empty());
        assert!(!app.log().contains(SHARED_SECRET), "the secret is never logged");
    }

    async fn banktwo_credits_nothing_the_bank_does_not_confirm(app: TestApp) {
        let bank = TestBank::start().await;
        let token = with_banktwo(&app, &bank).await;
        let target = reserved_booking(&app, &token).await;
        let code = target["Code"].as_str().unwrap();
        bank.settlement("st_pending", code, "10.00", "USD", "pending");
        bank.settlement("st_elsewhere", "NOT-A-BOOKING", "10.00", "USD", "settled");
        for (settlement, reference) in [
            ("st_fabricated", code),
            ("st_pending", code),
            ("st_elsewhere", code),
        ] {
            let body = banktwo_notification(settlement, reference, "10.00");
            assert_eq!(
                post_banktwo(&app, Some(SHARED_SECRET), &body).await,
                (200, String::new()),
                "{settlement}"
            );
        }
        assert_eq!(bank.calls(), 3, "each settlement was asked about");
        assert!(app.queue(TENANT).await.is_empty(), "nothing queued");
        assert!(app.log().contains("SUSPICIOUS"), "logged as suspicious");
        let ignored = json!({"NotificationId": "n", "Type": "statement"}).to_string();
        assert_eq!(post_banktwo(&app, Some(SHARED_SECRET), &ignored).await.0, 200);
        assert_eq!(bank.calls(), 3, "other types are not asked about");
    }

    async fn banktwo_queues_the_banks_amount_not_the_payloads(app: TestApp) {
        let bank = TestBank::start().await;
        let token = with_banktwo(&app, &bank).await;
        let target = reserved_booking(&app, &token).await;
        let id = target["Id"].as_i64().unwrap();
        let code = target["Code"].as_str().unwrap();
        let paid = dec(&target["TotalPayed"]);
        let balance = dec(&target["Balance"]);
        bank.settlement("st_real", code, "0.50", "USD", "settled");
        let body = banktwo_notification("st_real", code, "99999.00");
        assert_eq!(post_banktwo(&app, Some(SHARED_SECRET), &body).await, (200, String::new()));
        assert_eq!(bank.calls(), 1);

        let queue = app.settled_queue(TENANT).await;
        let messages = payments(&queue);
        assert_eq!(messages.len(), 1, "{queue:#?}");
        assert_eq!(messages[0]["dedupe_key"], "banktwo:st_real");
        assert_eq!(messages[0]["payload"]["Amount"], "0.50");
        assert_eq!(messages[0]["payload"]["ExternalId"], "st_real");
        let after = booking(&app, &token, id).await;
        let half = Decimal::from_str("0.50").unwrap();
        assert_eq!(dec(&after["TotalPayed"]), paid + half);
        assert_eq!(dec(&after["Balance"]), balance - half);
        assert_eq!(after["CurrentStatus"], 2, "still owes: stays Reserved");
    }

    async fn banktwo_bank_down_is_503_and_a_retry_counts_once(app: TestApp) {
        let bank = TestBank::start().await;
        let token = with_banktwo(&app, &bank).await;
        let target = reserved_booking(&app, &token).await;
        let id = target["Id"].as_i64().unwrap();
        let code = target["Code"].as_str().unwrap();
        let paid = dec(&target["TotalPayed"]);
        bank.settlement("st_retry", code, "1.00", "USD", "settled");
        let body = banktwo_notification("st_retry", code, "1.00");

        bank.stop();
        assert_eq!(post_banktwo(&app, Some(SHARED_SECRET), &body).await.0, 503);
        assert!(app.queue(TENANT).await.is_empty(), "nothing queued while the bank is down");

        bank.restart().await;
        bank.behave(Behaviour::Fail(500));
        assert_eq!(post_banktwo(&app, Some(SHARED_SECRET), &body).await.0, 503);
        bank.behave(Behaviour::Hang);
        let started = std::time::Instant::now();
        assert_eq!(post_banktwo(&app, Some(SHARED_SECRET), &body).await.0, 503);
        assert!(started.elapsed() < Duration::from_secs(5), "answered before the deadline");
        assert!(app.queue(TENANT).await.is_empty(), "nothing queued while the bank fails");

        bank.behave(Behaviour::Normal);
        for _ in 0..2 {
            assert_eq!(post_banktwo(&app, Some(SHARED_SECRET), &body).await, (200, String::new()));
        }
        let queue = app.settled_queue(TENANT).await;
        assert_eq!(payments(&queue).len(), 1, "{queue:#?}");
        let after = booking(&app, &token, id).await;
        assert_eq!(dec(&after["TotalPayed"]), paid + Decimal::ONE, "credited once");
    }

    async fn a_message_delivered_twice_credits_once(app: TestApp) {
        let token = with_bankone(&app).await;
        let target = reserved_booking(&app, &token).await;
        let id = target["Id"].as_i64().unwrap();
        let paid = dec(&target["TotalPayed"]);
        let comments = comments_of(&app, id).await;
        let body = bankone_event("evt_twice", target["Code"].as_str().unwrap(), "2.00");
        let signed = signature(SIGNING_SECRET, now(), &body);
        assert_eq!(post_bankone(&app, Some(&signed), &body).await.0, 200);
        app.settled_queue(TENANT).await;

        // As after a consumer that credited and died before acknowledging.
        app.sql("UPDATE queue SET status = 'pending', available_at = 0").await;
        let queue = app.settled_queue(TENANT).await;
        let message = payments(&queue)[0];
        assert_eq!(message["status"], "delivered");
        assert_eq!(message["attempts"], 2, "delivered a second time");
        let after = booking(&app, &token, id).await;
        assert_eq!(dec(&after["TotalPayed"]), paid + Decimal::TWO, "credited once");
        assert_eq!(comments_of(&app, id).await, comments + 1);
        assert_eq!(payment_records(&app).await, 1);
    }

    async fn racing_consumers_credit_once(app: TestApp) {
        let token = with_bankone(&app).await;
        let target = reserved_booking(&app, &token).await;
        let id = target["Id"].as_i64().unwrap();
        let paid = dec(&target["TotalPayed"]);
        let _second_host = app.start_peer().await;
        // Twelve copies of one payment, as if the bank had sent it under twelve event ids,
        // due at once for two hosts' consumers.
        let payload = json!({
            "Bank": "bankone", "ExternalId": "pay_race", "BookingId": id,
            "BookingCode": target["Code"], "Amount": "3.00", "Currency": "USD",
            "ReceivedAt": "2026-01-01T10:00:00Z"
        })
        .to_string();
        queue_payments(&app, (0..12).map(|n| (payload.clone(), format!("copy-{n}")))).await;
        let queue = app.settled_queue(TENANT).await;
        assert!(
            payments(&queue).iter().all(|m| m["status"] == "delivered"),
            "{queue:#?}"
        );
        let after = booking(&app, &token, id).await;
        assert_eq!(dec(&after["TotalPayed"]), paid + Decimal::from(3), "credited once");
        assert_eq!(payment_records(&app).await, 1);
    }

    async fn a_consumer_killed_mid_batch_loses_nothing_and_credits_once(app: TestApp) {
        const MESSAGES: i64 = 400;
        let token = with_bankone(&app).await;
        // Four Reserved bookings that owe money, so that the payments do not all contend for
        // one booking's revision.
        let page = app
            .get_json(TENANT, "/api/bookings/list?status=2&limit=100", &token)
            .await;
        let targets: Vec<Value> = page["Results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["Code"].is_string() && dec(&b["Balance"]) > Decimal::ONE)
            .take(4)
            .cloned()
            .collect();
        assert!(targets.len() >= 2, "{page}");
        let mut before = Vec::new();
        for target in &targets {
            let id = target["Id"].as_i64().unwrap();
            before.push((id, booking(&app, &token, id).await, comments_of(&app, id).await));
        }
        let victim = app.start_peer().await;
        let _survivor = app.start_peer().await;

        // Distinct payments (their own event and payment ids), 1.00, 1.01, ... each, spread
        // over the bookings, due at once for the consumers of the three hosts.
        let mut owed = vec![(Decimal::ZERO, 0_i64); targets.len()];
        let messages = (0..MESSAGES)
            .map(|n| {
                let i = usize::try_from(n).unwrap() % targets.len();
                let amount = Decimal::new(100 + n, 2);
                owed[i].0 += amount;
                owed[i].1 += 1;
                let payload = json!({
                    "Bank": "bankone", "ExternalId": format!("pay_kill_{n}"),
                    "BookingId": targets[i]["Id"], "BookingCode": targets[i]["Code"],
                    "Amount": amount.to_string(), "Currency": "USD",
                    "ReceivedAt": "2026-01-01T10:00:00Z"
                });
                (payload.to_string(), format!("bankone:evt_kill_{n}"))
            })
            .collect::<Vec<_>>();
        queue_payments(&app, messages).await;

        // A consumer claims a batch of 16 in one statement, which gives them all one lease end
        // (`available_at`), and claims its next batch only when this one is settled: a host
        // holds at most one open batch. Three leases each with 2 to 15 messages still
        // `processing` are then the three hosts each in the middle of a batch (part of it
        // settled, part not), the victim included; it is killed with SIGKILL, by dropping it,
        // as soon as that is seen. (On SQLite the hosts take turns at the one writer, so all
        // three are rarely mid-batch at once: a narrower window may never be seen.)
        let mid_batch = "SELECT COUNT(*) FROM (SELECT available_at FROM queue \
                         WHERE status = 'processing' GROUP BY available_at \
                         HAVING COUNT(*) BETWEEN 2 AND 15) batches";
        let started = std::time::Instant::now();
        let mut looks = 0;
        while app.sql_count(mid_batch).await < 3 {
            looks += 1;
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "three hosts were never seen in the middle of a batch at once ({looks} looks)"
            );
        }
        drop(victim);
        let killed = std::time::Instant::now();
        app.sql(
            "CREATE TABLE claims_at_kill AS \
             SELECT id, attempts, available_at FROM queue WHERE status = 'processing'",
        )
        .await;

        // Its claims outlive it; the other hosts take them again when their lease ends.
        let queue = app.settled_queue(TENANT).await;
        let settled = killed.elapsed();
        let messages = payments(&queue);
        assert_eq!(messages.len(), usize::try_from(MESSAGES).unwrap());
        let unsettled: Vec<_> = messages.iter().filter(|m| m["status"] != "delivered").collect();
        assert!(unsettled.is_empty(), "none pending, none dead: {unsettled:#?}");

        // The kill landed mid-batch, shown by what became of the claims open at the kill. A
        // live consumer settles each of its claims within the lease; the dead host's were
        // delivered only on a later attempt, after their lease had run out, and are all of
        // one batch (one lease). That batch's messages the victim did deliver kept its lease.
        let abandoned = "FROM queue q JOIN claims_at_kill k ON q.id = k.id \
                         WHERE q.status = 'delivered' AND q.attempts > k.attempts \
                         AND q.delivered_at >= k.available_at";
        let unsettled_at_kill = app.sql_count(&format!("SELECT COUNT(*) {abandoned}")).await;
        let batches = app
            .sql_count(&format!("SELECT COUNT(DISTINCT k.available_at) {abandoned}"))
            .await;
        let delivered_before_kill = app
            .sql_count(&format!(
                "SELECT COUNT(*) FROM queue WHERE status = 'delivered' AND available_at = \
                 (SELECT MIN(k.available_at) {abandoned})"
            ))
            .await;
        let claimed_at_kill = app.sql_count("SELECT COUNT(*) FROM claims_at_kill").await;
        eprintln!(
            "killed {:?} after the messages were queued ({looks} looks), {claimed_at_kill} \
             claims open; the \
             killed host's batch: {delivered_before_kill} delivered, {unsettled_at_kill} \
             claimed and not settled; the queue settled {settled:?} after the kill",
            killed - started,
        );
        assert!(unsettled_at_kill >= 1, "the killed host held claims it had not settled");
        assert_eq!(batches, 1, "they are one host's batch");
        assert!(delivered_before_kill >= 1, "it had delivered part of that batch");

        // Nothing lost, nothing credited twice.
        for ((id, was, comments), (sum, count)) in before.iter().zip(&owed) {
            let after = booking(&app, &token, *id).await;
            assert_eq!(dec(&after["TotalPayed"]), dec(&was["TotalPayed"]) + sum, "{after}");
            assert_eq!(dec(&after["Balance"]), dec(&was["Balance"]) - sum, "{after}");
            assert_eq!(comments_of(&app, *id).await, comments + count, "one comment each");
        }
        assert_eq!(payment_records(&app).await, MESSAGES);
    }

    async fn a_payment_for_a_missing_booking_is_dead_lettered(app: TestApp) {
        with_bankone(&app).await;
        let payload = json!({
            "Bank": "bankone", "ExternalId": "pay_lost", "BookingId": 99_999_999,
            "BookingCode": "GONE-1", "Amount": "3.00", "Currency": "USD",
            "ReceivedAt": "2026-01-01T10:00:00Z"
        });
        queue_payments(&app, [(payload.to_string(), "lost".to_owned())]).await;
        let queue = app.settled_queue(TENANT).await;
        let message = payments(&queue)[0];
        assert_eq!(message["status"], "dead", "{message}");
        assert_eq!(message["attempts"], 1, "a permanent failure is not retried");
        let reason = message["last_error"].as_str().unwrap();
        assert!(reason.contains("99999999") && reason.contains("does not exist"), "{reason}");
        assert_eq!(payment_records(&app).await, 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_test_bank_requires_a_client_certificate_from_its_ca() {
    let bank = TestBank::start().await;
    let stranger = Ca::new("Some Other CA").client("stranger");
    assert!(
        bank.get_as(None, "/settlements/x").await.is_err(),
        "no certificate"
    );
    assert!(
        bank.get_as(Some(&stranger), "/settlements/x")
            .await
            .is_err(),
        "a certificate from another CA"
    );
    assert_eq!(bank.calls(), 0, "refused before any request");
    assert_eq!(
        bank.get_as(Some(&bank.client), "/settlements/x").await,
        Ok(404)
    );
    assert_eq!(bank.calls(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_without_the_right_certificate_is_refused_by_the_bank() {
    let app = TestApp::spawn(Options::new(Backend::Sqlite)).await.unwrap();
    let bank = TestBank::start().await;
    let token = with_banktwo(&app, &bank).await;
    let target = reserved_booking(&app, &token).await;
    let code = target["Code"].as_str().unwrap();
    bank.settlement("st_1", code, "1.00", "USD", "settled");
    let body = banktwo_notification("st_1", code, "1.00");

    let stranger = Ca::new("Some Other CA").client("stranger");
    for (name, value) in [
        ("banktwo.client_cert", stranger.cert_pem.as_str()),
        ("banktwo.client_key", stranger.key_pem.as_str()),
    ] {
        app.cli_ok(&["secret", "set", "--tenant", TENANT, name], Some(value))
            .await;
    }
    assert_eq!(post_banktwo(&app, Some(SHARED_SECRET), &body).await.0, 503);
    assert_eq!(bank.calls(), 0, "the bank refused the handshake");

    // A bank whose certificate is not from the configured CA is not trusted either.
    let impostor = TestBank::start().await;
    with_identity(&app, &bank.client).await;
    app.set_setting(TENANT, "banktwo.base_url", &impostor.base_url())
        .await;
    assert_eq!(post_banktwo(&app, Some(SHARED_SECRET), &body).await.0, 503);
    assert_eq!(impostor.calls(), 0);

    app.set_setting(TENANT, "banktwo.base_url", &bank.base_url())
        .await;
    assert_eq!(
        post_banktwo(&app, Some(SHARED_SECRET), &body).await,
        (200, String::new())
    );
    assert_eq!(bank.calls(), 1, "the host's certificate is accepted");
    let log = app.log();
    assert!(!log.contains("PRIVATE KEY"), "no key material in the log");
}

async fn with_identity(app: &TestApp, identity: &rentald_tests::bank::Identity) {
    for (name, value) in [
        ("banktwo.client_cert", identity.cert_pem.as_str()),
        ("banktwo.client_key", identity.key_pem.as_str()),
    ] {
        app.cli_ok(&["secret", "set", "--tenant", TENANT, name], Some(value))
            .await;
    }
}

#[test]
fn an_api_component_that_imports_the_bank_does_not_load() {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(components_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "wasm") {
            std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    // banktwo's code in the place of an API component.
    std::fs::copy(
        components_dir().join("banktwo.wasm"),
        dir.path().join("listing.wasm"),
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(rentald_bin())
        .arg("--data-dir")
        .arg(data.path())
        .args(["serve", "--plain-http", "--listen", "127.0.0.1:0"])
        .arg("--components-dir")
        .arg(dir.path())
        .env_remove("RENTALD_DATABASE_URL")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{text}");
    assert!(
        text.contains("component listing imports what this host does not offer to `listing`"),
        "{text}"
    );
    assert!(
        text.contains("`rental:platform/bank@0.1.0`: the platform offers `bank` to the bank webhook components"),
        "names the import and who has it: {text}"
    );
    assert!(
        !text.contains("build the components first"),
        "a refused file is not a missing one: {text}"
    );
}
