//! The bookings' change feed, `GET /api/bookings/changes` (docs/contract.md, "Change feed"),
//! on SQLite and on PostgreSQL: it begins with every booking stored, follows every write in the
//! order they committed, cancellations included, and a reader that polls it while writers on
//! several hosts commit side by side sees every change exactly once, in each booking's order.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;

use rentald_tests::{Backend, Options, TestApp, on_both_backends, refused};
use reqwest::Method;
use serde_json::{Value, json};
use tokio::task::JoinSet;

use crate::booking::{Api, FREE, body, model};

const TENANT: &str = "demo";
const FEED: &str = "/api/bookings/changes";

/// A page of the feed after `cursor` (none: from the first change), from host `host`.
async fn page(app: &TestApp, host: SocketAddr, token: &str, cursor: &str, limit: u32) -> Value {
    let path = match cursor {
        "" => format!("{FEED}?limit={limit}"),
        cursor => format!("{FEED}?cursor={cursor}&limit={limit}"),
    };
    let response = app
        .client
        .get(app.url_on(host, TENANT, &path))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{path}");
    rentald_tests::json_body(response, "a page of the feed").await
}

/// Every change after `cursor` until the feed has no more for now, and the cursor to go on
/// from.
async fn drain(app: &TestApp, host: SocketAddr, token: &str, cursor: &str) -> (Vec<Value>, String) {
    let mut cursor = cursor.to_owned();
    let mut changes = Vec::new();
    loop {
        let page = page(app, host, token, &cursor, 100).await;
        let read = page["Changes"].as_array().unwrap();
        if let Some(last) = read.last() {
            assert_eq!(
                page["Cursor"], last["Cursor"],
                "a page's cursor is its last change's"
            );
        } else {
            assert_eq!(
                page["Cursor"].as_str().unwrap(),
                if cursor.is_empty() { "0" } else { &cursor }
            );
        }
        changes.extend(read.iter().cloned());
        cursor = page["Cursor"].as_str().unwrap().to_owned();
        if page["HasMore"] == false {
            return (changes, cursor);
        }
        assert!(!read.is_empty(), "HasMore with an empty page");
    }
}

/// The list item of booking `id`, as `GET /api/bookings/list` shows it now.
async fn list_item(api: &Api<'_>, id: i64) -> Value {
    let page = api
        .get(&format!("/api/bookings/list?offset={}&limit=1", id - 1))
        .await;
    let item = page["Results"][0].clone();
    assert_eq!(item["Id"], id, "{page}");
    item
}

fn id_of(change: &Value) -> i64 {
    change["Id"].as_i64().unwrap()
}

on_both_backends! {
    async fn the_feed_begins_with_every_booking_and_follows_each_write(app: TestApp) {
        let api = Api::new(&app).await;
        let (start, cursor) = drain(&app, app.addr, &api.token, "").await;
        let total = api.get("/api/bookings/list?limit=1").await["Total"].as_u64().unwrap();
        assert_eq!(start.len() as u64, total, "one change per stored booking");
        let ids: Vec<i64> = start.iter().map(id_of).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "the stored bookings in Id order");
        assert_eq!(start[0]["Cursor"], "1");
        assert_eq!(start[0]["Booking"], list_item(&api, ids[0]).await);
        assert!(start.iter().all(|c| c["Deleted"] == false && c["Revision"].as_u64() >= Some(1)));

        // Nothing new: an empty page that keeps the cursor.
        let (none, same) = drain(&app, app.addr, &api.token, &cursor).await;
        assert!(none.is_empty());
        assert_eq!(same, cursor);

        // A creation, then its cancellation: two changes, in that order, each with the
        // booking as that change left it.
        let booked = api.booked(&body(model(2), FREE, FREE + 2)).await;
        let id = booked["Id"].as_i64().unwrap();
        let (created, cursor) = drain(&app, app.addr, &api.token, &cursor).await;
        assert_eq!(created.len(), 1, "{created:?}");
        assert_eq!((id_of(&created[0]), created[0]["Revision"].as_u64()), (id, Some(1)));
        assert_eq!(created[0]["Booking"], list_item(&api, id).await);
        let cancel = json!({"BookingId": id, "Lastname": "Fernández"});
        let (status, canceled) = api.call(Method::POST, "/api/booking/cancel", Some(&cancel)).await;
        assert_eq!(status, 200, "{canceled}");
        let (after, _) = drain(&app, app.addr, &api.token, &cursor).await;
        assert_eq!(after.len(), 1, "{after:?}");
        assert_eq!((id_of(&after[0]), after[0]["Revision"].as_u64()), (id, Some(2)));
        assert_eq!(after[0]["Booking"]["CurrentStatus"], list_item(&api, id).await["CurrentStatus"]);
        assert_ne!(after[0]["Booking"], created[0]["Booking"], "each change has its own state");
        assert!(after[0]["Cursor"].as_str().unwrap().parse::<u64>().unwrap()
            > created[0]["Cursor"].as_str().unwrap().parse::<u64>().unwrap());

        // The first change, read again from its predecessor: the feed keeps it.
        let again = page(&app, app.addr, &api.token, "", 1).await;
        assert_eq!(again["Changes"][0], start[0]);
        assert_eq!(again["HasMore"], true);
    }

    async fn a_cursor_is_one_the_feed_returned(app: TestApp) {
        let api = Api::new(&app).await;
        for bad in ["abc", "-1", "1.5", "99999999999999999999"] {
            let answer = api.call(Method::GET, &format!("{FEED}?cursor={bad}"), None).await;
            let error = refused(answer, 98);
            assert!(error["ErrorMessage"].as_str().unwrap().contains("cursor"), "{error}");
        }
        let answer = api.call(Method::POST, FEED, Some(&json!({}))).await;
        assert_eq!(answer.0, 405);
        // A user without `bookings:read` may not read it.
        app.create_user(TENANT, "catalog", &["catalog:read"]).await;
        let catalog = app.token(TENANT, "catalog", rentald_tests::PASSWORD).await;
        let response = app.get(TENANT, FEED, &catalog).await;
        assert_eq!(response.status(), 403);
    }

    async fn a_reader_polling_while_writers_commit_on_several_hosts_sees_every_change_once(app: TestApp) {
        let api = Api::new(&app).await;
        let peer = app.start_peer().await;
        let (_, start) = drain(&app, peer.addr, &api.token, "").await;

        // Four writers, two on each host, each booking five times and canceling every other
        // booking, while a reader on the peer polls the feed.
        const WRITERS: u64 = 4;
        const BOOKINGS: u64 = 5;
        let mut writers = JoinSet::new();
        for writer in 0..WRITERS {
            let host = if writer % 2 == 0 { app.addr } else { peer.addr };
            let (client, token) = (app.client.clone(), api.token.clone());
            let book = app.url_on(host, TENANT, "/api/booking/book");
            let cancel = app.url_on(host, TENANT, "/api/booking/cancel");
            writers.spawn(async move {
                let mut written = Vec::new();
                for n in 0..BOOKINGS {
                    let from = FREE + 3 * (writer * BOOKINGS + n);
                    let response = client.post(&book).bearer_auth(&token)
                        .json(&body(model(2), from, from + 2)).send().await.unwrap();
                    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
                    let booked: Value = response.json().await.unwrap();
                    let id = booked["Id"].as_i64().unwrap();
                    written.push((id, 1));
                    if n % 2 == 0 {
                        let response = client.post(&cancel).bearer_auth(&token)
                            .json(&json!({"BookingId": id, "Lastname": "Fernández"}))
                            .send().await.unwrap();
                        assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
                        written.push((id, 2));
                    }
                }
                written
            });
        }
        let mut written = BTreeSet::new();
        let mut seen = Vec::new();
        let mut cursor = start;
        let mut polls = 0;
        while !writers.is_empty() {
            tokio::select! {
                done = writers.join_next() => written.extend(done.unwrap().unwrap()),
                page = drain(&app, peer.addr, &api.token, &cursor) => {
                    let (read, next) = page;
                    seen.extend(read);
                    cursor = next;
                    polls += 1;
                }
            }
        }
        let (rest, _) = drain(&app, peer.addr, &api.token, &cursor).await;
        seen.extend(rest);

        let changes: Vec<(i64, u64)> = seen
            .iter()
            .map(|change| (id_of(change), change["Revision"].as_u64().unwrap()))
            .collect();
        let distinct: BTreeSet<(i64, u64)> = changes.iter().copied().collect();
        assert_eq!(distinct.len(), changes.len(), "a change seen twice: {changes:?}");
        let cursors: Vec<u64> = seen
            .iter()
            .map(|change| change["Cursor"].as_str().unwrap().parse().unwrap())
            .collect();
        assert!(cursors.windows(2).all(|w| w[1] == w[0] + 1), "cursors follow one another: {cursors:?}");
        let mut order: BTreeMap<i64, Vec<u64>> = BTreeMap::new();
        for (id, revision) in &changes {
            order.entry(*id).or_default().push(*revision);
        }
        assert!(order.values().all(|revisions| revisions.windows(2).all(|w| w[0] < w[1])),
            "each booking's changes in its order: {order:?}");
        // What the reader saw is exactly what was written, and each booking's last change
        // shows it as it is now.
        assert_eq!(written.len() as u64, WRITERS * (BOOKINGS + BOOKINGS.div_ceil(2)));
        assert_eq!(distinct, written, "after {polls} polls");
        for id in order.keys() {
            let last = seen.iter().rev().find(|c| id_of(c) == *id).unwrap();
            assert_eq!(last["Booking"], list_item(&api, *id).await, "booking {id}");
        }
    }
}

/// PostgreSQL's writers may commit in another order than they wrote: a change written before
/// another one but committed after it, and after a reader has read the other, is read next,
/// not skipped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_committed_late_is_read_after_those_read_before() {
    let Some(app) = TestApp::spawn(Options::new(Backend::Postgres)).await else {
        return;
    };
    let api = Api::new(&app).await;
    let (_, cursor) = drain(&app, app.addr, &api.token, "").await;
    // A writer that has written its change (taking the lower row id) and not committed.
    let mut late = app.database().await;
    for statement in [
        "BEGIN",
        "INSERT INTO changes (tenant, collection, doc_id, revision, body, changed_at) \
         VALUES ('demo', 'booking-items', '1', 99, '{\"Id\":1}', 0)",
    ] {
        sqlx::raw_sql(statement).execute(&mut late).await.unwrap();
    }
    let booked = api.booked(&body(model(2), FREE, FREE + 2)).await;
    let (read, cursor) = drain(&app, app.addr, &api.token, &cursor).await;
    let ids: Vec<i64> = read.iter().map(id_of).collect();
    assert_eq!(ids, [booked["Id"].as_i64().unwrap()]);
    sqlx::raw_sql("COMMIT").execute(&mut late).await.unwrap();
    let (read, _) = drain(&app, app.addr, &api.token, &cursor).await;
    assert_eq!(read.len(), 1, "{read:?}");
    assert_eq!(
        (id_of(&read[0]), read[0]["Revision"].as_u64()),
        (1, Some(99))
    );
}
