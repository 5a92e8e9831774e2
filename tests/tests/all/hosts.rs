//! Several hosts on one database: one of them killed under load.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rentald_tests::on_both_backends;
use serde_json::Value;
use tokio::task::JoinSet;

use crate::booking::{Api, FREE, body, model};

/// The bookings acknowledged (200) through each host, by the host's place in the list, and
/// when.
type Acknowledged = Arc<Mutex<Vec<(usize, Value, Instant)>>>;

/// Books model `host + 1` for two days in every third-day slot from `FREE`, one request after
/// another, through the host at `url`, until `stop` is set or the host stops answering.
async fn book_until_stopped(
    client: reqwest::Client,
    (host, url): (usize, String),
    token: String,
    stop: Arc<AtomicBool>,
    acknowledged: Acknowledged,
) {
    let model_id = i64::try_from(host).unwrap() + 1;
    for slot in 0.. {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let from = FREE + 3 * slot;
        let request = body(model(model_id), from, from + 2);
        let Ok(response) = client
            .post(&url)
            .bearer_auth(&token)
            .json(&request)
            .send()
            .await
        else {
            return; // the host is gone: whatever that request did is not acknowledged
        };
        let status = response.status().as_u16();
        let Ok(answer) = response.json::<Value>().await else {
            return;
        };
        assert_eq!(status, 200, "{answer}");
        acknowledged
            .lock()
            .unwrap()
            .push((host, answer["Id"].clone(), Instant::now()));
    }
}

on_both_backends! {
    async fn a_host_killed_under_load_loses_nothing(app: TestApp) {
        let api = Api::new(&app).await;
        let mut peers = vec![app.start_peer().await, app.start_peer().await];
        let hosts = [peers[0].addr, app.addr, peers[1].addr];
        let stop = Arc::new(AtomicBool::new(false));
        let acknowledged = Acknowledged::default();
        let mut clients = JoinSet::new();
        for (index, host) in hosts.into_iter().enumerate() {
            let url = app.url_on(host, "demo", "/api/booking/book");
            clients.spawn(book_until_stopped(app.client.clone(), (index, url), api.token.clone(), Arc::clone(&stop), Arc::clone(&acknowledged)));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        drop(peers.remove(0)); // hosts[0], SIGKILL, wherever it is
        let killed = Instant::now();
        // The two other hosts keep booking: wait (at most 30 s) for one booking of each.
        loop {
            let served: BTreeSet<usize> = acknowledged.lock().unwrap().iter()
                .filter(|(_, _, at)| *at > killed)
                .map(|(host, _, _)| *host)
                .collect();
            assert!(!served.contains(&0), "a killed host answered");
            if served.len() == 2 {
                break;
            }
            assert!(killed.elapsed() < Duration::from_secs(30), "only {served:?} served after the kill");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        stop.store(true, Ordering::Relaxed);
        while let Some(client) = clients.join_next().await {
            client.unwrap();
        }
        let acknowledged: Vec<Value> = acknowledged.lock().unwrap().iter().map(|(_, id, _)| id.clone()).collect();
        for id in &acknowledged {
            assert_eq!(api.booking(id).await["Id"], *id, "acknowledged, then lost");
        }

        // Started again on the same database, as an operator's supervisor would: it serves
        // at once, with nothing to repair first.
        let restarted = app.start_peer().await;
        let list = app
            .client
            .get(app.url_on(restarted.addr, "demo", "/api/bookings/list?limit=1"))
            .bearer_auth(&api.token)
            .send()
            .await
            .unwrap();
        assert_eq!(list.status(), 200);
        let total = list.json::<Value>().await.unwrap()["Total"].as_u64().unwrap();
        assert!(total >= 124 + acknowledged.len() as u64, "{total}");
    }
}
