//! The listing component over the demo tenant, on SQLite and on PostgreSQL.

use std::collections::BTreeSet;

use chrono::{DateTime, FixedOffset, NaiveDate};
use rentald_tests::{TestApp, on_both_backends};
use serde_json::Value;

const TENANT: &str = "demo";

fn ids(page: &Value) -> Vec<i64> {
    page["Results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["Id"].as_i64().unwrap())
        .collect()
}

/// Walks a booking list from offset 0 with `limit`, as a client should: next offset from
/// NextOffset, stop when a page is shorter than Limit. Returns every item and the first page.
async fn walk(app: &TestApp, token: &str, query: &str, limit: u32) -> (Vec<Value>, Value) {
    let mut offset = 0;
    let mut items = Vec::new();
    let mut first = None;
    for _ in 0..1000 {
        let page = app
            .get_json(
                TENANT,
                &format!("/api/bookings/list?{query}&limit={limit}&offset={offset}"),
                token,
            )
            .await;
        let results = page["Results"].as_array().unwrap().clone();
        assert_eq!(page["Offset"], offset);
        assert_eq!(page["Limit"], limit);
        let next = page["NextOffset"].as_i64().unwrap();
        match results.last() {
            Some(last) => assert_eq!(next, last["Id"].as_i64().unwrap()),
            None => assert_eq!(next, offset),
        }
        let done = results.len() < limit as usize;
        items.extend(results);
        first.get_or_insert(page);
        if done {
            return (items, first.unwrap());
        }
        offset = next;
    }
    panic!("the walk did not end");
}

fn date(value: &Value) -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339(value.as_str().unwrap()).unwrap()
}

on_both_backends! {
    async fn cursor_walks_return_every_booking_once(app: TestApp) {
        let token = app.tenant_with_token(TENANT, true).await;
        let (ascending, first) = walk(&app, &token, "sortDirectionAsc=true", 7).await;
        let up: Vec<i64> = ascending.iter().map(|b| b["Id"].as_i64().unwrap()).collect();
        assert!(up.len() >= 60);
        assert!(up.windows(2).all(|w| w[0] < w[1]), "strictly ascending, no repeats");
        assert_eq!(first["Total"], up.len());

        let (descending, first) = walk(&app, &token, "sortDirectionAsc=false", 9).await;
        let mut down: Vec<i64> = descending.iter().map(|b| b["Id"].as_i64().unwrap()).collect();
        assert_eq!(first["Total"], up.len());
        assert!(down.windows(2).all(|w| w[0] > w[1]), "strictly descending, no repeats");
        assert_eq!(down[0], *up.last().unwrap(), "offset 0 descending starts at the newest");
        down.reverse();
        assert_eq!(down, up);

        // The list form, not the full booking.
        let item = &ascending[0];
        for absent in ["PriceItems", "TotalDaysString", "DeliveryPlace", "Attributes", "Links"] {
            assert!(item.get(absent).is_none(), "{absent} is not in BookingDescription");
        }
        for present in ["IsFullBonus", "FeeNoShow", "DeliveryPlaceId", "ReturnPlaceId", "CurrentStatus"] {
            assert!(item.get(present).is_some(), "{present} is in BookingDescription");
        }
    }

    async fn limit_and_offset_are_clamped(app: TestApp) {
        let token = app.tenant_with_token(TENANT, true).await;
        let page = app.get_json(TENANT, "/api/bookings/list?limit=1000", &token).await;
        assert_eq!(page["Limit"], 100);
        let page = app.get_json(TENANT, "/api/bookings/list", &token).await;
        assert_eq!(page["Limit"], 30);
        assert_eq!(ids(&page).len(), 30);
        let page = app.get_json(TENANT, "/api/bookings/list?offset=-5&limit=3", &token).await;
        assert_eq!(page["Offset"], 0);
        assert_eq!(ids(&page), vec![1, 2, 3]);
        let bad = app.get(TENANT, "/api/bookings/list?limit=many", &token).await;
        assert_eq!(bad.status(), 400);
        let body: Value = bad.json().await.unwrap();
        assert_eq!(body["ErrorCode"], 98);
        assert!(body["ErrorMessage"].as_str().unwrap().contains("limit"));
    }

    async fn status_filter_partitions_the_bookings(app: TestApp) {
        let token = app.tenant_with_token(TENANT, true).await;
        let (all, _) = walk(&app, &token, "sortDirectionAsc=true", 100).await;
        let mut seen = BTreeSet::new();
        for status in 1..=6 {
            let (items, first) = walk(&app, &token, &format!("status={status}"), 5).await;
            assert!(!items.is_empty(), "the demo has bookings in status {status}");
            assert_eq!(first["Total"], items.len());
            for item in &items {
                assert_eq!(item["CurrentStatus"], status);
                assert!(seen.insert(item["Id"].as_i64().unwrap()));
            }
        }
        assert_eq!(seen.len(), all.len());
        let bad = app.get(TENANT, "/api/bookings/list?status=9", &token).await;
        assert_eq!(bad.status(), 400);
    }

    async fn updated_since_is_strictly_after_and_skips_legacy_rows(app: TestApp) {
        let token = app.tenant_with_token(TENANT, true).await;
        let (all, _) = walk(&app, &token, "sortDirectionAsc=true", 100).await;
        let legacy = all.iter().filter(|b| b["UpdatedOn"].is_null()).count();
        assert!(legacy > 0, "the demo has legacy bookings");
        let mut times: Vec<DateTime<FixedOffset>> =
            all.iter().filter(|b| !b["UpdatedOn"].is_null()).map(|b| date(&b["UpdatedOn"])).collect();
        times.sort();
        let since = times[times.len() / 2];
        let expected: BTreeSet<i64> = all
            .iter()
            .filter(|b| !b["UpdatedOn"].is_null() && date(&b["UpdatedOn"]) > since)
            .map(|b| b["Id"].as_i64().unwrap())
            .collect();
        let query = format!("updatedSince={}", urlencode(&since.to_rfc3339()));
        let (items, first) = walk(&app, &token, &query, 4).await;
        let got: BTreeSet<i64> = items.iter().map(|b| b["Id"].as_i64().unwrap()).collect();
        assert_eq!(got, expected, "strictly after {since}");
        assert_eq!(first["Total"], expected.len());

        // Combined with a status and descending.
        let status = items[0]["CurrentStatus"].as_i64().unwrap();
        let (items, _) = walk(&app, &token, &format!("{query}&status={status}&sortDirectionAsc=false"), 2).await;
        let got: Vec<i64> = items.iter().map(|b| b["Id"].as_i64().unwrap()).collect();
        let mut want: Vec<i64> = all
            .iter()
            .filter(|b| expected.contains(&b["Id"].as_i64().unwrap()) && b["CurrentStatus"] == status)
            .map(|b| b["Id"].as_i64().unwrap())
            .collect();
        want.reverse();
        assert_eq!(got, want);
    }

    async fn closed_list_by_close_date_in_the_tenant_time_zone(app: TestApp) {
        let token = app.tenant_with_token(TENANT, true).await;
        let (all, _) = walk(&app, &token, "sortDirectionAsc=true&status=5", 100).await;
        let today = chrono::Utc::now().date_naive();
        let from = today - chrono::Days::new(90);
        let zone: chrono_tz::Tz = "America/Argentina/Buenos_Aires".parse().unwrap();
        app.set_setting(TENANT, "time_zone", zone.name()).await;
        let in_range = |b: &&Value| {
            let day: NaiveDate = date(&b["CurrentStatusDate"]).with_timezone(&zone).date_naive();
            from <= day && day <= today
        };
        let expected: Vec<i64> = all.iter().filter(in_range).map(|b| b["Id"].as_i64().unwrap()).collect();
        assert!(expected.len() >= 10);

        let path = format!("/api/bookings/closed?fromDate={from}&toDate={today}T23:59:59");
        let mut got = Vec::new();
        let mut offset = 0;
        loop {
            let page = app.get_json(TENANT, &format!("{path}&limit=4&offset={offset}"), &token).await;
            assert_eq!(page["Total"], expected.len());
            let n = page["Results"].as_array().unwrap().len();
            assert_eq!(page["NextOffset"], offset + n);
            for booking in page["Results"].as_array().unwrap() {
                assert_eq!(booking["CurrentStatus"], 5);
                assert!(booking.get("PriceItems").is_some(), "the full Booking");
            }
            got.extend(ids(&page));
            if n < 4 {
                break;
            }
            offset += n;
        }
        assert_eq!(got, expected, "by Id ascending by default");

        let page = app.get_json(TENANT, &format!("{path}&limit=100&sortByCloseDate=true&sortDirectionAsc=false"), &token).await;
        let dates: Vec<_> = page["Results"].as_array().unwrap().iter().map(|b| date(&b["CurrentStatusDate"])).collect();
        assert_eq!(dates.len(), expected.len());
        assert!(dates.windows(2).all(|w| w[0] >= w[1]), "newest close date first");

        for (query, code) in [
            ("toDate=2026-01-10".to_owned(), 98),
            ("fromDate=2026-01-10".to_owned(), 98),
            ("fromDate=2026-01-10&toDate=2026-01-09".to_owned(), 13),
            ("fromDate=2026-01-01&toDate=2026-04-02".to_owned(), 13),
            ("fromDate=yesterday&toDate=2026-01-09".to_owned(), 98),
        ] {
            let response = app.get(TENANT, &format!("/api/bookings/closed?{query}"), &token).await;
            assert_eq!(response.status(), 400, "{query}");
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["ErrorCode"], code, "{query}");
        }
        let ok = app.get(TENANT, "/api/bookings/closed?fromDate=2026-01-01&toDate=2026-03-31", &token).await;
        assert_eq!(ok.status(), 200, "89 days is within the limit");
    }

    async fn catalog_lists(app: TestApp) {
        let token = app.tenant_with_token(TENANT, true).await;
        let offices = app.get_json(TENANT, "/api/branchoffices?language=es", &token).await;
        let offices = offices.as_array().expect("a JSON array");
        assert!(offices.len() >= 3);
        for office in offices {
            for field in ["Id", "Name", "Address", "City", "Country", "IATACode", "Latitude", "Longitude", "TimeZone"] {
                assert!(office.get(field).is_some(), "{field}");
            }
            assert!(!office["Places"].as_array().unwrap().is_empty());
        }

        for (path, minimum) in [("/api/cars", 30), ("/api/customers", 20)] {
            let mut seen = BTreeSet::new();
            let mut offset = 0;
            let total = loop {
                let page = app.get_json(TENANT, &format!("{path}?offset={offset}&limit=8"), &token).await;
                let results = page["Results"].as_array().unwrap();
                assert_eq!(page["NextOffset"], offset + results.len());
                for item in results {
                    assert!(seen.insert(item["Id"].to_string()), "{path}: no repeats");
                }
                if results.len() < 8 {
                    break page["Total"].as_u64().unwrap();
                }
                offset += results.len();
            };
            assert!(seen.len() >= minimum, "{path}");
            assert_eq!(total as usize, seen.len(), "{path}");
        }
        let page = app.get_json(TENANT, "/api/cars?limit=500&offset=-3", &token).await;
        assert_eq!(page["Limit"], 100);
        assert_eq!(page["Offset"], 0);
    }

    async fn bookings_stored_before_their_list_form_get_it_when_a_host_starts(app: TestApp) {
        let token = app.tenant_with_token(TENANT, true).await;
        let path = "/api/bookings/list?limit=100&sortDirectionAsc=false";
        let before = app.get(TENANT, path, &token).await.text().await.unwrap();
        let stored = app
            .sql_count("SELECT COUNT(*) FROM documents WHERE collection = 'bookings'")
            .await;
        assert_eq!(
            app.sql_count("SELECT COUNT(*) FROM documents WHERE collection = 'booking-items'")
                .await,
            stored,
            "every write renders its booking's list form"
        );
        // A database of a version that did not keep the list form: the migration that
        // declares it leaves every booking pending.
        app.sql(
            "DELETE FROM documents WHERE collection = 'booking-items'; \
             INSERT INTO views_pending (tenant, collection, id) \
             SELECT tenant, collection, id FROM documents WHERE collection = 'bookings'",
        )
        .await;
        let unrendered = app.get_json(TENANT, path, &token).await;
        assert_eq!(unrendered["Results"], serde_json::json!([]));

        let peer = app.start_peer().await;
        assert_eq!(app.sql_count("SELECT COUNT(*) FROM views_pending").await, 0);
        let on_peer = app.url_on(peer.addr, TENANT, path);
        let after = app.client.get(on_peer).bearer_auth(&token).send().await.unwrap();
        assert_eq!(after.status(), 200);
        assert_eq!(after.text().await.unwrap(), before);
        assert_eq!(app.get(TENANT, path, &token).await.text().await.unwrap(), before);
    }
}

fn urlencode(value: &str) -> String {
    value.replace('+', "%2B").replace(':', "%3A")
}
