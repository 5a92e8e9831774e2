//! `GET /api/availability`: what can be booked for a period and two places, priced as `book`
//! prices it (docs/contract.md, "Availability search").

use rentald_tests::{on_both_backends, refused};
use reqwest::Method;
use serde_json::{Value, json};

use crate::booking::{Api, FREE, at, body, category, model};
use crate::catalog::{export, import};

const TENANT: &str = "demo";

/// The search over `from` to `to` days ahead (10:00 to 10:00) at Aeroparque, with `extra`
/// query parameters.
fn search_path(from: u64, to: u64, extra: &str) -> String {
    format!(
        "/api/availability?from={}&to={}&deliveryPlace=1&returnPlace=1&limit=100{extra}",
        at(from, 10),
        at(to, 10)
    )
}

/// The offer for `model` (model-based) or, with `None`, for the category `category`.
fn offer(page: &Value, category: i64, model: Option<i64>) -> Option<&Value> {
    page["Results"].as_array().unwrap().iter().find(|item| {
        item["Category"]["Id"] == category
            && match model {
                Some(model) => item["Model"]["Id"] == model,
                None => item["Model"].is_null(),
            }
    })
}

/// What `POST /api/booking/price` answers for `vehicle` over the same period and places, with
/// no customer (as the search prices), in `language` (empty: the tenant's).
async fn price(api: &Api<'_>, vehicle: Value, from: u64, to: u64, language: &str) -> Value {
    let mut request = body(vehicle, from, to);
    request.as_object_mut().unwrap().remove("Customer");
    let path = format!("/api/booking/price?language={language}");
    let (status, quote) = api.call(Method::POST, &path, Some(&request)).await;
    assert_eq!(status, 200, "{quote}");
    quote
}

on_both_backends! {
    async fn models_are_offered_with_their_free_cars_priced_as_book(app: TestApp) {
        let api = Api::new(&app).await;
        let cars = api.cars_of(2).await;
        assert!(cars.len() >= 2, "the demo has several cars of model 2");
        let page = api.get(&search_path(FREE, FREE + 3, "")).await;
        let results = page["Results"].as_array().unwrap();
        assert_eq!(page["Total"], results.len());
        assert!(results.iter().all(|item| item["Model"]["Id"].is_i64()));
        let two = offer(&page, 1, Some(2)).expect("model 2 is offered");
        assert_eq!(two["Model"]["Name"], "Chevrolet Onix");
        assert_eq!(two["Category"]["Name"], "Económico");
        assert_eq!(two["Category"]["Models"], json!([]), "the model is not repeated");
        assert_eq!(two["Available"], cars.len());
        // The same pricing code as book: every figure and line of the price endpoint.
        assert_eq!(two["Price"], price(&api, model(2), FREE, FREE + 3, "").await);

        // Each booking over the period takes one car; one that ends as the period starts
        // takes none.
        api.booked(&body(model(2), FREE - 3, FREE)).await;
        let mut ids = Vec::new();
        for taken in 1..cars.len() {
            ids.push(api.booked(&body(model(2), FREE + 1, FREE + 2)).await["Id"].clone());
            let page = api.get(&search_path(FREE, FREE + 3, "")).await;
            assert_eq!(offer(&page, 1, Some(2)).unwrap()["Available"], cars.len() - taken);
        }
        api.booked(&body(model(2), FREE + 1, FREE + 4)).await;
        let page = api.get(&search_path(FREE, FREE + 3, "")).await;
        assert!(offer(&page, 1, Some(2)).is_none(), "no car of model 2 is left");
        assert_eq!(page["Total"], results.len() - 1);
        // Later dates are untouched.
        let later = api.get(&search_path(FREE + 5, FREE + 8, "")).await;
        assert_eq!(offer(&later, 1, Some(2)).unwrap()["Available"], cars.len());

        // A canceled booking frees its car, on every host of the database.
        let (status, canceled) = api
            .call(
                Method::POST,
                "/api/booking/cancel",
                Some(&json!({"BookingId": ids[0], "Lastname": "Fernández"})),
            )
            .await;
        assert_eq!(status, 200, "{canceled}");
        let peer = app.start_peer().await;
        let response = rentald_tests::client()
            .get(app.url_on(peer.addr, TENANT, &search_path(FREE, FREE + 3, "")))
            .bearer_auth(&api.token)
            .send()
            .await
            .unwrap();
        let page = rentald_tests::json_body(response, "the search on a peer").await;
        assert_eq!(offer(&page, 1, Some(2)).unwrap()["Available"], 1);
    }

    async fn categories_are_offered_with_the_room_in_their_quota(app: TestApp) {
        let api = Api::new(&app).await;
        api.setting("availability_mode", "category").await;
        let page = api.get(&search_path(FREE, FREE + 3, "")).await;
        assert!(page["Results"].as_array().unwrap().iter().all(|item| item["Model"].is_null()));
        // Category 4 (SUV) has 6 cars.
        let suv = offer(&page, 4, None).expect("category 4 is offered");
        assert_eq!(suv["Available"], 6);
        assert_eq!(suv["Price"], price(&api, category(4), FREE, FREE + 3, "").await);

        // Two bookings one after the other use one place; a third beside them another.
        api.booked(&body(category(4), FREE, FREE + 1)).await;
        api.booked(&body(category(4), FREE + 1, FREE + 3)).await;
        let page = api.get(&search_path(FREE, FREE + 3, "")).await;
        assert_eq!(offer(&page, 4, None).unwrap()["Available"], 5);
        api.booked(&body(category(4), FREE + 2, FREE + 6)).await;
        let page = api.get(&search_path(FREE, FREE + 3, "")).await;
        assert_eq!(offer(&page, 4, None).unwrap()["Available"], 4);
        for _ in 0..4 {
            api.booked(&body(category(4), FREE, FREE + 3)).await;
        }
        let page = api.get(&search_path(FREE, FREE + 3, "")).await;
        assert!(offer(&page, 4, None).is_none(), "category 4 is full");
    }

    async fn the_search_pages_and_speaks_the_requests_language(app: TestApp) {
        let api = Api::new(&app).await;
        let whole = api.get(&search_path(FREE, FREE + 3, "")).await;
        let results = whole["Results"].as_array().unwrap();
        assert!(results.len() >= 3, "the demo offers several models");
        let first = api.get(&search_path(FREE, FREE + 3, "&limit=2")).await;
        assert_eq!(first["Results"].as_array().unwrap()[..], results[..2]);
        assert_eq!((first["Total"].clone(), first["NextOffset"].clone()), (json!(results.len()), json!(2)));
        let next = api.get(&search_path(FREE, FREE + 3, "&limit=2&offset=2")).await;
        assert_eq!(next["Results"].as_array().unwrap()[0], results[2]);

        // The demo tenant speaks Spanish unless the request asks otherwise.
        let english = api.get(&search_path(FREE, FREE + 3, "&language=en")).await;
        let two = offer(&english, 1, Some(2)).unwrap();
        let spanish = offer(&whole, 1, Some(2)).unwrap();
        assert_ne!(two["Price"]["PriceItems"], spanish["Price"]["PriceItems"]);
        assert_eq!(two["Price"], price(&api, model(2), FREE, FREE + 3, "en").await);
    }

    async fn a_bad_search_is_refused_naming_its_parameter(app: TestApp) {
        let api = Api::new(&app).await;
        let named = |(status, body): (u16, Value), code: i64, name: &str| {
            let error = refused((status, body), code);
            assert!(error["ErrorMessage"].as_str().unwrap().contains(name), "{error}");
        };
        let get = |path: String| {
            let api = &api;
            async move { api.call(Method::GET, &path, None).await }
        };
        let ok = search_path(FREE, FREE + 3, "");
        named(get(ok.replace("&deliveryPlace=1", "")).await, 98, "deliveryPlace");
        named(get(ok.replace("from=", "from=soon&x=")).await, 98, "from");
        named(get(ok.replace("returnPlace=1", "returnPlace=one")).await, 98, "returnPlace");
        // The rules of a creation, naming the query's parameters.
        named(get(search_path(FREE + 3, FREE, "")).await, 13, "to");
        named(get(ok.replace("deliveryPlace=1", "deliveryPlace=999")).await, 25, "deliveryPlace");

        let reader = api.other("catalog-only", &["catalog:read"]).await;
        assert_eq!(reader.call(Method::GET, &ok, None).await.0, 403);
        assert_eq!(api.call(Method::POST, &ok, Some(&json!({}))).await.0, 405);
    }

    async fn a_car_counts_while_it_is_in_the_fleet(app: TestApp) {
        let api = Api::new(&app).await;
        let cars = api.cars_of(2).await;
        let page = api.get(&search_path(FREE, FREE + 3, "")).await;
        assert_eq!(offer(&page, 1, Some(2)).unwrap()["Available"], cars.len());

        // Every car of model 2 but one leaves the fleet during the period, one more car joins
        // it: a catalogue import, which writes each car's slot with the car.
        let catalogue = export(&app, TENANT).await;
        let leaving = at(FREE + 2, 10);
        let mut changed: Vec<String> = catalogue
            .lines()
            .map(|line| {
                let mut record: Value = serde_json::from_str(line).unwrap();
                if record["Kind"] == "Car" && cars[1..].iter().any(|id| record["Id"] == *id) {
                    record["InactiveDate"] = json!(leaving);
                }
                record.to_string()
            })
            .collect();
        let mut joining: Value = serde_json::from_str(
            catalogue.lines().find(|line| line.contains(&format!("\"Id\":\"{}\"", cars[0]))).unwrap(),
        )
        .unwrap();
        joining["Id"] = json!("NEW-001");
        changed.push(joining.to_string());
        let output = import(&app, TENANT, &(changed.join("\n") + "\n")).await;
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));

        let page = api.get(&search_path(FREE, FREE + 3, "")).await;
        assert_eq!(offer(&page, 1, Some(2)).unwrap()["Available"], 2);
        // Before the cars leave, they are all there.
        let page = api.get(&search_path(FREE - 3, FREE + 2, "")).await;
        assert_eq!(offer(&page, 1, Some(2)).unwrap()["Available"], cars.len() + 1);
    }

    async fn cars_stored_before_their_slots_get_them_when_a_host_starts(app: TestApp) {
        let api = Api::new(&app).await;
        let path = search_path(FREE, FREE + 3, "");
        let before = api.get(&path).await;
        assert_eq!(
            app.sql_count("SELECT COUNT(*) FROM documents WHERE collection = 'car-slots'").await,
            app.sql_count("SELECT COUNT(*) FROM documents WHERE collection = 'cars'").await,
            "every write of a car renders its slot"
        );
        // A database of a version without slots, as the migration that declares them finds it.
        app.sql("DELETE FROM documents WHERE collection = 'car-slots'").await;
        app.sql(include_str!("../../../host/migrations/sqlite/0009_car_slots.sql")).await;
        let unrendered = api.get(&path).await;
        assert_eq!(unrendered["Total"], 0, "no slot, no car");

        let peer = app.start_peer().await;
        assert_eq!(app.sql_count("SELECT COUNT(*) FROM views_pending").await, 0);
        let response = rentald_tests::client()
            .get(app.url_on(peer.addr, TENANT, &path))
            .bearer_auth(&api.token)
            .send()
            .await
            .unwrap();
        assert_eq!(rentald_tests::json_body(response, "the search on a peer").await, before);
        assert_eq!(api.get(&path).await, before);
    }

    async fn a_fleet_of_several_pages_of_cars_is_counted_whole(app: TestApp) {
        let api = Api::new(&app).await;
        let cars = api.cars_of(2).await;
        // 2,500 more cars of model 2: the slots are read 1,000 at a time.
        let catalogue = export(&app, TENANT).await;
        let template = catalogue
            .lines()
            .find(|line| line.contains(&format!("\"Id\":\"{}\"", cars[0])))
            .unwrap();
        let mut lines: Vec<String> = catalogue.lines().map(str::to_owned).collect();
        for n in 0..2_500 {
            let mut car: Value = serde_json::from_str(template).unwrap();
            car["Id"] = json!(format!("FLEET-{n:04}"));
            lines.push(car.to_string());
        }
        let output = import(&app, TENANT, &(lines.join("\n") + "\n")).await;
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let page = api.get(&search_path(FREE, FREE + 3, "")).await;
        assert_eq!(offer(&page, 1, Some(2)).unwrap()["Available"], cars.len() + 2_500);
    }
}
