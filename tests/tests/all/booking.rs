//! The booking component over the demo tenant, on SQLite and on PostgreSQL: creation, pricing,
//! update rules, operations, every error code the demo catalogue and the tenant settings make
//! reachable, and the two races (one car, one Version), on one host and spread over three.

use std::collections::BTreeSet;
use std::net::SocketAddr;

use chrono::{Days, NaiveTime, Utc};
use rental_domain::store::KeyPart;
use rental_store_sql::keys;
use rentald_tests::{TestApp, on_both_backends, refused};
use reqwest::Method;
use serde_json::{Value, json};
use tokio::task::JoinSet;

const TENANT: &str = "demo";
/// The demo tenant's clock: Buenos Aires, UTC-3 all year.
const ZONE: chrono_tz::Tz = chrono_tz::America::Argentina::Buenos_Aires;

/// Days ahead where the demo has no booking (its bookings start at most 40 days ahead and
/// last at most 10 days).
pub(crate) const FREE: u64 = 70;

/// `hour`:00 on the tenant's clock, `days` from today, as the API writes it.
pub(crate) fn at(days: u64, hour: u32) -> String {
    let date = Utc::now().with_timezone(&ZONE).date_naive() + Days::new(days);
    let time = NaiveTime::from_hms_opt(hour, 0, 0).unwrap();
    format!("{}T{}-03:00", date, time.format("%H:%M:%S"))
}

/// A creation for demo customer 3 (Valentina Fernández, 29) at Aeroparque, from `from` to
/// `to` days ahead, 10:00 to 10:00.
pub(crate) fn body(vehicle: Value, from: u64, to: u64) -> Value {
    let mut body = json!({
        "Customer": {"Id": 3},
        "FromDate": at(from, 10),
        "ToDate": at(to, 10),
        "DeliveryPlace": {"Id": 1},
        "ReturnPlace": {"Id": 1},
    });
    for (key, value) in vehicle.as_object().unwrap() {
        body[key] = value.clone();
    }
    body
}

pub(crate) fn car(id: &str) -> Value {
    json!({"Car": {"Id": id}})
}

pub(crate) fn model(id: i64) -> Value {
    json!({"Car": {"Model": {"Id": id}}})
}

pub(crate) fn category(id: i64) -> Value {
    json!({"Category": {"Id": id}})
}

/// The demo tenant with an API user holding every permission.
pub(crate) struct Api<'a> {
    app: &'a TestApp,
    pub(crate) token: String,
}

impl<'a> Api<'a> {
    pub(crate) async fn new(app: &'a TestApp) -> Self {
        let token = app.tenant_with_token(TENANT, true).await;
        Self { app, token }
    }

    /// Another API user of the tenant, with `permissions`.
    pub(crate) async fn other(&self, name: &str, permissions: &[&str]) -> Api<'a> {
        self.app.create_user(TENANT, name, permissions).await;
        let token = self.app.token(TENANT, name, rentald_tests::PASSWORD).await;
        Api {
            app: self.app,
            token,
        }
    }

    pub(crate) async fn setting(&self, key: &str, value: &str) {
        self.app.set_setting(TENANT, key, value).await;
    }

    /// Any call: the status and the body (`null` when empty).
    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        self.app.call(TENANT, &self.token, method, path, body).await
    }

    async fn book(&self, body: &Value) -> (u16, Value) {
        self.call(Method::POST, "/api/booking/book", Some(body))
            .await
    }

    async fn update(&self, body: &Value) -> (u16, Value) {
        self.call(Method::PUT, "/api/booking/update", Some(body))
            .await
    }

    /// A creation that must succeed; the full booking.
    pub(crate) async fn booked(&self, body: &Value) -> Value {
        let mut body = body.clone();
        body["FullResponse"] = json!(true);
        let (status, booking) = self.book(&body).await;
        assert_eq!(status, 200, "{booking}");
        booking
    }

    /// An update that must succeed; the full booking.
    async fn updated(&self, body: Value) -> Value {
        let mut body = body;
        body["FullResponse"] = json!(true);
        let (status, booking) = self.update(&body).await;
        assert_eq!(status, 200, "{booking}");
        booking
    }

    /// A GET that must answer 200 with JSON.
    pub(crate) async fn get(&self, path: &str) -> Value {
        self.app.get_json(TENANT, path, &self.token).await
    }

    pub(crate) async fn booking(&self, id: &Value) -> Value {
        self.app.booking(TENANT, &self.token, id).await
    }

    /// The texts of a booking's comments, oldest first.
    async fn history(&self, id: &Value) -> Vec<String> {
        self.app.booking_history(TENANT, &self.token, id).await
    }

    /// The ids of the demo's cars of a model.
    pub(crate) async fn cars_of(&self, model: i64) -> Vec<String> {
        let page = self.get("/api/cars?limit=100").await;
        page["Results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|car| car["Model"]["Id"] == model)
            .map(|car| car["Id"].as_str().unwrap().to_owned())
            .collect()
    }

    pub(crate) async fn bookings_total(&self) -> i64 {
        let page = self.get("/api/bookings/list?limit=1").await;
        page["Total"].as_i64().unwrap()
    }
}

/// Price lines by `Type` and `TypeId` (docs/pricing.md): the adjustment to a sent price and
/// two surcharges. Their descriptions follow the response language.
const ADJUSTMENT: (i64, i64) = (5, 0);
const ONE_WAY: (i64, i64) = (4, 1);
const OUT_OF_HOURS: (i64, i64) = (4, 2);

/// Whether `booking` has a price line of `(Type, TypeId)`.
fn has_line(booking: &Value, (kind, type_id): (i64, i64)) -> bool {
    booking["PriceItems"]
        .as_array()
        .unwrap()
        .iter()
        .any(|line| line["Type"] == kind && line["TypeId"] == type_id)
}

fn comment_about(history: &[String], needle: &str) -> bool {
    history.iter().any(|text| text.contains(needle))
}

on_both_backends! {
    async fn book_get_price_and_history(app: TestApp) {
        let api = Api::new(&app).await;
        let before = api.bookings_total().await;

        // The price endpoint stores nothing and prices as the booking will be priced.
        let request = body(model(2), FREE, FREE + 3);
        let (status, quote) = api.call(Method::POST, "/api/booking/price", Some(&request)).await;
        assert_eq!(status, 200, "{quote}");
        assert_eq!(quote["TotalDays"], 3);
        assert!(quote["PriceItems"].as_array().unwrap().len() >= 3);
        assert_eq!(api.bookings_total().await, before);

        // Simplified response by default.
        let (status, created) = api.book(&request).await;
        assert_eq!(status, 200, "{created}");
        let id = created["Id"].clone();
        assert!(id.as_i64().unwrap() > before, "after the demo's ids");
        assert_eq!(created["Code"], format!("DEMO-{:06}", id.as_i64().unwrap()));
        assert_eq!(created["Version"], "1");
        assert_eq!(created["CurrentStatus"], 2);
        assert_eq!(created["Price"], quote["Price"]);
        assert_eq!(created["CustomerId"], 3);
        assert!(created["CarId"].is_string());
        assert!(created.get("PriceItems").is_none());
        assert!(!created.to_string().contains("AppliedCoverageBrackets"));
        assert_eq!(api.bookings_total().await, before + 1);

        // The full booking.
        let booking = api.booking(&id).await;
        assert_eq!(booking["Price"], quote["Price"]);
        assert_eq!(booking["PriceItems"], quote["PriceItems"]);
        assert_eq!(booking["CurrentStatus"], 2);
        assert_eq!(booking["UpdatedByUserName"], "api");
        assert!(booking["CreationDate"].is_string() && booking["UpdatedOn"].is_string());
        assert_eq!(booking["Model"]["Id"], 2);
        assert_eq!(booking["Category"]["Id"], 1);
        assert!(booking.to_string().contains("AppliedCoverageBrackets"));
        let additionals: Vec<i64> = booking["Additionals"].as_array().unwrap().iter()
            .map(|a| a["Additional"]["Id"].as_i64().unwrap()).collect();
        assert_eq!(additionals, [1], "the required basic insurance");
        assert_eq!(api.history(&id).await, ["api created the booking (Reserved)"]);

        // A quotation, in full, with a new customer owned by the caller.
        let mut quotation = body(model(2), FREE + 5, FREE + 6);
        quotation["IsQuotation"] = json!(true);
        quotation["Customer"] = json!({"Name": "Ana Souza", "EmailAddress": "ana@example.com", "CellPhone": "+55 11 5555-0000"});
        let quoted = api.booked(&quotation).await;
        assert_eq!(quoted["CurrentStatus"], 1);
        assert!(quoted["IsQuotation"].as_bool().unwrap());
        assert!(quoted["Customer"]["Id"].as_i64().unwrap() > 24, "a new customer");
        assert_eq!(quoted["Customer"]["GlobalId"].as_str().unwrap().len(), 36);
        assert_eq!(quoted["Customer"]["CellPhone"], "+55 11 5555-0000");

        // The booking code prefix is a setting.
        api.setting("booking_code_prefix", "RNT").await;
        let renamed = api.booked(&body(model(2), FREE + 10, FREE + 12)).await;
        assert_eq!(renamed["Code"], format!("RNT-{:06}", renamed["Id"].as_i64().unwrap()));

        // Unknown bookings.
        for path in ["/api/booking/999999", "/api/booking/999999/history", "/api/booking/abc"] {
            let (status, body) = api.call(Method::GET, path, None).await;
            assert_eq!((status, body), (404, Value::Null), "{path}");
        }
    }

    async fn validation_codes_from_the_catalog(app: TestApp) {
        let api = Api::new(&app).await;
        let ok = body(model(2), FREE, FREE + 3);
        let with = |change: Value| {
            let mut request = ok.clone();
            for (key, value) in change.as_object().unwrap() {
                request[key] = value.clone();
            }
            request
        };

        // 98: missing or mistyped fields, named.
        let mut missing = ok.clone();
        missing.as_object_mut().unwrap().remove("FromDate");
        let error = refused(api.book(&missing).await, 98);
        assert!(error["ErrorMessage"].as_str().unwrap().contains("FromDate"));
        let error = refused(api.book(&with(json!({"Customer": {"Id": 3, "BirthDate": 5}}))).await, 98);
        assert!(error["ErrorMessage"].as_str().unwrap().contains("Customer.BirthDate"));
        let error = refused(api.book(&with(json!({"Additionals": [{"Additional": {"Id": 3}, "Quantity": "one"}]}))).await, 98);
        assert!(error["ErrorMessage"].as_str().unwrap().contains("Additionals[0].Quantity"));
        let mut no_vehicle = ok.clone();
        no_vehicle.as_object_mut().unwrap().remove("Car");
        refused(api.book(&no_vehicle).await, 98);
        let (status, error) = api.call(Method::POST, "/api/booking/book", None).await;
        assert_eq!((status, &error["ErrorCode"]), (400, &json!(98)));

        // Customers: 1 by Id or GlobalId, 5 for a new one without name or with a bad e-mail.
        refused(api.book(&with(json!({"Customer": {"Id": 9999}}))).await, 1);
        refused(api.book(&with(json!({"Customer": {"GlobalId": "00000000-0000-4000-8000-000000000000"}}))).await, 1);
        refused(api.book(&with(json!({"Customer": {"Lastname": "Souza"}}))).await, 5);
        refused(api.book(&with(json!({"Customer": {"Name": "Ana", "EmailAddress": "ana@"}}))).await, 5);

        // 2: the vehicle.
        refused(api.book(&with(car("ZZ999ZZ"))).await, 2);
        refused(api.book(&body(model(99), FREE, FREE + 3)).await, 2);
        refused(api.book(&body(category(99), FREE, FREE + 3)).await, 2);

        // 13: dates.
        refused(api.book(&with(json!({"ToDate": at(FREE, 10)}))).await, 13);
        refused(api.book(&with(json!({"ToDate": at(FREE - 1, 10)}))).await, 13);
        let mut past = ok.clone();
        past["FromDate"] = json!((Utc::now() - chrono::Duration::days(2)).to_rfc3339());
        refused(api.book(&past).await, 13);

        // Places: 25, 23, 75 and 76 (Bariloche's office is closed), 74.
        refused(api.book(&with(json!({"DeliveryPlace": {"Id": 99}}))).await, 25);
        refused(api.book(&with(json!({"ReturnPlace": {"Id": 99}}))).await, 23);
        refused(api.book(&with(json!({"DeliveryPlace": {"Id": 9}}))).await, 75);
        refused(api.book(&with(json!({"ReturnPlace": {"Id": 10}}))).await, 76);
        refused(api.book(&with(json!({"DeliveryPlace": {"Id": 1, "IsCustomAddress": true, "Address": "Florida 100"}}))).await, 74);
        let custom = api.booked(&with(json!({"DeliveryPlace": {"Id": 3, "IsCustomAddress": true, "Address": "Florida 100"}}))).await;
        assert_eq!(custom["DeliveryPlace"]["IsCustomAddress"], true);
        assert_eq!(custom["DeliveryPlace"]["Address"], "Florida 100");

        // Additionals: 31, 32 (one GPS at most).
        refused(api.book(&with(json!({"Additionals": [{"Additional": {"Id": 99}, "Quantity": 1}]}))).await, 31);
        refused(api.book(&with(json!({"Additionals": [{"Additional": {"Id": 3}, "Quantity": 2}]}))).await, 32);

        // 24: the platform has no promotions.
        refused(api.book(&with(json!({"PromotionCode": "SUMMER"}))).await, 24);

        // Agreements: 110 without an agency, 51 with one that lacks the agreement.
        refused(api.book(&with(json!({"CommercialAgreementCode": "AGENCIAS-10"}))).await, 110);
        refused(api.book(&with(json!({"Agency": {"Id": 3}}))).await, 110);
        refused(api.book(&with(json!({"Agency": {"Id": 24}, "CommercialAgreementCode": "OTHER"}))).await, 51);
        let agency = api.booked(&with(json!({"Agency": {"Id": 24}, "CommercialAgreementCode": "AGENCIAS-10"}))).await;
        assert_eq!(agency["Agency"]["Id"], 24);
        assert!(agency["AgencyPrice"].as_f64().unwrap() > 0.0, "the agency pays the rental");

        // 4: a price more than 1% away; within 1% it is kept with an adjustment line.
        let quote = api.call(Method::POST, "/api/booking/price", Some(&body(model(2), FREE + 20, FREE + 23))).await.1;
        let price = quote["Price"].as_f64().unwrap();
        refused(api.book(&{ let mut b = body(model(2), FREE + 20, FREE + 23); b["Price"] = json!(price * 1.02); b }).await, 4);
        let mut near = body(model(2), FREE + 20, FREE + 23);
        near["Price"] = json!(((price * 0.995) * 100.0).round() / 100.0);
        let kept = api.booked(&near).await;
        let sent = near["Price"].as_f64().unwrap();
        assert!((kept["Price"].as_f64().unwrap() - sent).abs() < 0.001, "the sent price is kept");
        let lines: f64 = kept["PriceItems"].as_array().unwrap().iter().map(|l| l["Price"].as_f64().unwrap()).sum();
        assert!((lines - sent).abs() < 0.001, "the lines sum to the price");
        assert!(has_line(&kept, ADJUSTMENT), "the adjustment line");
    }

    async fn validation_codes_from_tenant_settings(app: TestApp) {
        let api = Api::new(&app).await;
        let ok = body(model(2), FREE, FREE + 3);

        api.setting("min_booking_days", "5").await;
        refused(api.book(&ok).await, 29);
        api.setting("min_booking_days", "1").await;
        api.setting("max_booking_days", "2").await;
        refused(api.book(&ok).await, 30);
        api.setting("max_booking_days", "30").await;

        // Customer 20 is 21 years old.
        api.setting("min_driver_age", "22").await;
        let mut young = ok.clone();
        young["Customer"] = json!({"Id": 20});
        refused(api.book(&young).await, 34);
        api.setting("min_driver_age", "18").await;
        api.setting("blocked_customers", "7, 3").await;
        refused(api.book(&ok).await, 49);
        api.setting("blocked_customers", "").await;

        api.setting("unlimited_km_enabled", "false").await;
        let mut unlimited = ok.clone();
        unlimited["IlimitedKm"] = json!(true);
        refused(api.book(&unlimited).await, 27);
        api.setting("unlimited_km_enabled", "true").await;
        api.setting("limited_km_enabled", "false").await;
        let mut limited = ok.clone();
        limited["IlimitedKm"] = json!(false);
        refused(api.book(&limited).await, 28);
        let booking = api.booked(&ok).await;
        assert_eq!(booking["IlimitedKm"], true, "unlimited by default when limited is off");
        api.setting("limited_km_enabled", "true").await;

        api.setting("one_way_allowed", "false").await;
        let mut one_way = body(model(2), FREE + 10, FREE + 13);
        one_way["ReturnPlace"] = json!({"Id": 4});
        refused(api.book(&one_way).await, 46);
        api.setting("one_way_allowed", "true").await;
        let booking = api.booked(&one_way).await;
        assert!(has_line(&booking, ONE_WAY), "the one-way surcharge");

        api.setting("out_of_hours_allowed", "false").await;
        let mut late = body(model(2), FREE + 20, FREE + 23);
        late["ToDate"] = json!(at(FREE + 23, 23));
        refused(api.book(&late).await, 47);
        api.setting("out_of_hours_allowed", "true").await;
        let booking = api.booked(&late).await;
        assert!(has_line(&booking, OUT_OF_HOURS), "the out-of-hours surcharge");

        // A setting that does not read is the operator's mistake: 105 naming it.
        api.setting("availability_mode", "fleet").await;
        let error = refused(api.book(&ok).await, 105);
        assert!(error["ErrorMessage"].as_str().unwrap().contains("availability_mode"));
    }

    async fn status_rules_of_an_update(app: TestApp) {
        let api = Api::new(&app).await;
        let list = app.get_json(TENANT, "/api/bookings/list?limit=100&status=4", &api.token).await;
        let delivered = list["Results"][0]["Id"].clone();
        let list = app.get_json(TENANT, "/api/bookings/list?limit=100&status=5", &api.token).await;
        let closed = list["Results"][0]["Id"].clone();

        // Delivered and Closed: 26, nothing changes but a warning comment.
        for (id, status) in [(&delivered, "Delivered"), (&closed, "Closed")] {
            let before = api.booking(id).await;
            let error = refused(api.update(&json!({"Id": id, "Version": "9", "ToDate": at(FREE, 10)})).await, 26);
            assert!(error["ErrorMessage"].as_str().unwrap().len() > 10);
            assert_eq!(api.booking(id).await, before, "{status}: unchanged");
            let history = api.history(id).await;
            assert_eq!(history.len(), 1);
            assert!(history[0].starts_with("Warning: api tried to update"), "{history:?}");
            assert!(history[0].contains(status));
        }

        // Canceled and its car free: active again, as Reserved.
        let cars = api.cars_of(7).await;
        assert_eq!(cars.len(), 3);
        let first = api.booked(&body(car(&cars[0]), FREE, FREE + 3)).await;
        let id = first["Id"].clone();
        let (status, _) = api.call(Method::POST, "/api/booking/cancel", Some(&json!({"BookingId": id, "Lastname": "Fernández"}))).await;
        assert_eq!(status, 200);
        let again = api.updated(json!({"Id": id})).await;
        assert_eq!(again["CurrentStatus"], 2);
        assert!(comment_about(&api.history(&id).await, "changed CurrentStatus from Canceled to Reserved"));

        // Canceled and every car of its model taken (model-based): 26, still Canceled.
        let (status, _) = api.call(Method::POST, "/api/booking/cancel", Some(&json!({"BookingId": id, "Lastname": "Fernández"}))).await;
        assert_eq!(status, 200);
        for _ in 0..3 {
            api.booked(&body(model(7), FREE, FREE + 3)).await;
        }
        refused(api.book(&body(model(7), FREE, FREE + 3)).await, 3);
        refused(api.update(&json!({"Id": id})).await, 26);
        assert_eq!(api.booking(&id).await["CurrentStatus"], 6);

        // A rejected update changes nothing, not even a reactivation (our stricter rule).
        let later = api.booked(&body(model(2), FREE + 20, FREE + 23)).await;
        let later_id = later["Id"].clone();
        api.call(Method::POST, "/api/booking/cancel", Some(&json!({"BookingId": later_id, "Lastname": "fernández"}))).await;
        let canceled = api.booking(&later_id).await;
        refused(api.update(&json!({"Id": later_id, "Version": "1", "ToDate": at(FREE + 25, 10)})).await, 35);
        assert_eq!(api.booking(&later_id).await, canceled);

        // A quotation accepted by an update becomes a reservation.
        let mut quotation = body(model(2), FREE + 40, FREE + 42);
        quotation["IsQuotation"] = json!(true);
        let quoted = api.booked(&quotation).await;
        let accepted = api.updated(json!({"Id": quoted["Id"], "IsQuotation": false})).await;
        assert_eq!(accepted["CurrentStatus"], 2);
        assert_eq!(accepted["IsQuotation"], false);
    }

    async fn version_rule(app: TestApp) {
        let api = Api::new(&app).await;
        let booking = api.booked(&body(model(2), FREE, FREE + 3)).await;
        let id = booking["Id"].clone();
        assert_eq!(booking["Version"], "1");
        refused(api.update(&json!({"Id": id, "Version": "1"})).await, 35);
        refused(api.update(&json!({"Id": id, "Version": "0"})).await, 35);
        assert_eq!(api.updated(json!({"Id": id, "Version": "3"})).await["Version"], "3");
        assert_eq!(api.updated(json!({"Id": id, "Version": 10})).await["Version"], "10", "a number is read");
        assert_eq!(api.updated(json!({"Id": id})).await["Version"], "10", "absent: no check, kept");
        assert_eq!(api.updated(json!({"Id": id, "Version": "abc"})).await["Version"], "10", "not numeric: kept");
        refused(api.update(&json!({"Id": id, "Version": "9"})).await, 35);
        refused(api.update(&json!({"Id": 999_999})).await, 22);
        refused(api.update(&json!({"Version": "11"})).await, 98);
    }

    async fn customer_rule_6(app: TestApp) {
        let api = Api::new(&app).await;
        let mut request = body(model(2), FREE, FREE + 3);
        request["Customer"] = json!({"Name": "Ana Souza", "EmailAddress": "ana@example.com", "CellPhone": "1"});
        let booking = api.booked(&request).await;
        let id = booking["Id"].clone();
        let customer = booking["Customer"]["Id"].clone();

        // Another user: ignored.
        let other = api.other("other", &["bookings:read", "bookings:write"]).await;
        let (status, changed) = other.update(&json!({"Id": id, "FullResponse": true, "Customer": {"Name": "Mallory"}})).await;
        assert_eq!(status, 200, "{changed}");
        assert_eq!(changed["Customer"]["Name"], "Ana Souza");

        // The creator: name and e-mail only.
        let changed = api.updated(json!({"Id": id, "Customer": {
            "Id": customer, "Name": "Ana S. Souza", "EmailAddress": "ana.souza@example.org",
            "CellPhone": "2", "DocumentId": "X1"
        }})).await;
        assert_eq!(changed["Customer"]["Name"], "Ana S. Souza");
        assert_eq!(changed["Customer"]["EmailAddress"], "ana.souza@example.org");
        assert_eq!(changed["Customer"]["CellPhone"], "1");
        assert!(changed["Customer"]["DocumentId"].is_null());
        refused(api.update(&json!({"Id": id, "Customer": {"EmailAddress": "not an address"}})).await, 5);

        // The stored customer changed too: a new booking by Id carries the new name.
        let mut again = body(model(2), FREE + 10, FREE + 12);
        again["Customer"] = json!({"Id": customer});
        assert_eq!(api.booked(&again).await["Customer"]["Name"], "Ana S. Souza");

        // A customer nobody created through the API is never changed.
        let demo = api.booked(&body(model(2), FREE + 20, FREE + 22)).await;
        let kept = api.updated(json!({"Id": demo["Id"], "Customer": {"Name": "Someone Else"}})).await;
        assert_eq!(kept["Customer"]["Name"], "Valentina Fernández");
    }

    async fn additionals_rule_7(app: TestApp) {
        let api = Api::new(&app).await;
        let mut request = body(model(2), FREE, FREE + 3);
        request["Additionals"] = json!([
            {"Additional": {"Id": 3}, "Quantity": 1},
            {"Additional": {"Id": 4}, "Quantity": 2}
        ]);
        let booking = api.booked(&request).await;
        let id = booking["Id"].clone();
        let taken = |booking: &Value| -> BTreeSet<(i64, i64)> {
            booking["Additionals"].as_array().unwrap().iter()
                .map(|a| (a["Additional"]["Id"].as_i64().unwrap(), a["Quantity"].as_i64().unwrap()))
                .collect()
        };
        assert_eq!(taken(&booking), BTreeSet::from([(1, 1), (3, 1), (4, 2)]));

        // No Additionals: kept as they are.
        let kept = api.updated(json!({"Id": id, "ToDate": at(FREE + 4, 10)})).await;
        assert_eq!(taken(&kept), BTreeSet::from([(1, 1), (3, 1), (4, 2)]));
        // The GPS left out is removed; the required insurance comes back.
        let synced = api.updated(json!({"Id": id, "Additionals": [{"Additional": {"Id": 4}, "Quantity": 1}]})).await;
        assert_eq!(taken(&synced), BTreeSet::from([(1, 1), (4, 1)]));
        let none = api.updated(json!({"Id": id, "Additionals": []})).await;
        assert_eq!(taken(&none), BTreeSet::from([(1, 1)]));

        // The system's after-hours charge comes with a return at 23:00 and back with any
        // update while it applies, and goes when the return moves into office hours.
        let late = api.updated(json!({"Id": id, "ToDate": at(FREE + 4, 23)})).await;
        assert!(has_line(&late, OUT_OF_HOURS));
        let again = api.updated(json!({"Id": id, "Additionals": []})).await;
        assert!(has_line(&again, OUT_OF_HOURS));
        let back = api.updated(json!({"Id": id, "ToDate": at(FREE + 4, 12)})).await;
        assert!(!has_line(&back, OUT_OF_HOURS));
    }

    async fn main_changes_are_recorded(app: TestApp) {
        let api = Api::new(&app).await;
        let cars = api.cars_of(2).await;
        let booking = api.booked(&body(car(&cars[0]), FREE, FREE + 3)).await;
        let id = booking["Id"].clone();
        api.updated(json!({
            "Id": id,
            "FromDate": at(FREE + 1, 10),
            "ToDate": at(FREE + 5, 10),
            "ReturnPlace": {"Id": 2},
            "Car": {"Id": cars[1]},
            "IlimitedKm": true,
            "DeliveryTransportationId": "AR1234",
            "Agency": {"Id": 24},
            "CommercialAgreementCode": "AGENCIAS-10"
        })).await;
        let history = api.history(&id).await;
        for needle in [
            format!("api changed FromDate from {} to {}", at(FREE, 10), at(FREE + 1, 10)),
            format!("api changed ToDate from {} to {}", at(FREE + 3, 10), at(FREE + 5, 10)),
            "api changed ReturnPlace from Aeroparque Jorge Newbery (AEP) (1) to Aeropuerto Internacional Ezeiza (EZE) (2)".to_owned(),
            format!("api changed Car from {} to {}", cars[0], cars[1]),
            "api changed Distance from 750 km (250 a day) to unlimited".to_owned(),
            "api changed DeliveryTransportationId from none to AR1234".to_owned(),
            "api changed Agency from none to Viajes del Sur S.A.".to_owned(),
            "api changed CommercialAgreementCode from none to AGENCIAS-10".to_owned(),
            "api changed Price from".to_owned(),
        ] {
            assert!(comment_about(&history, &needle), "{needle}: {history:#?}");
        }
    }

    async fn model_based_availability(app: TestApp) {
        let api = Api::new(&app).await;
        let cars = api.cars_of(2).await;
        let first = api.booked(&body(model(2), FREE, FREE + 3)).await;
        let held = first["Car"]["Id"].as_str().unwrap().to_owned();
        assert!(cars.contains(&held));

        // The car itself is now taken for overlapping dates, not for touching ones.
        refused(api.book(&body(car(&held), FREE + 2, FREE + 4)).await, 3);
        let touching = api.booked(&body(car(&held), FREE + 3, FREE + 5)).await;
        assert_eq!(touching["Car"]["Id"], held.as_str());

        // New dates where the car is free: kept.
        let moved = api.updated(json!({"Id": first["Id"], "FromDate": at(FREE - 2, 10), "ToDate": at(FREE + 2, 10)})).await;
        assert_eq!(moved["Car"]["Id"], held.as_str());
        // New dates that collide with the car's next booking: another car of the model.
        let moved = api.updated(json!({"Id": first["Id"], "ToDate": at(FREE + 4, 10)})).await;
        assert_ne!(moved["Car"]["Id"], held.as_str());
        assert_eq!(moved["Model"]["Id"], 2);
        // A car asked for by Id that is taken: 3, and the booking is unchanged.
        let before = api.booking(&first["Id"]).await;
        refused(api.update(&json!({"Id": first["Id"], "Car": {"Id": held}})).await, 3);
        assert_eq!(api.booking(&first["Id"]).await, before);
        // Canceled bookings free their car.
        api.call(Method::POST, "/api/booking/cancel", Some(&json!({"BookingId": touching["Id"], "Lastname": "Fernández"}))).await;
        api.booked(&body(car(&held), FREE + 3, FREE + 5)).await;
    }

    async fn category_based_availability(app: TestApp) {
        let api = Api::new(&app).await;
        api.setting("availability_mode", "category").await;
        // Category 4 (SUV) has 6 cars.
        let mut ids = Vec::new();
        for _ in 0..6 {
            let booking = api.booked(&body(category(4), FREE, FREE + 3)).await;
            assert!(booking["Car"].is_null(), "no car is assigned");
            ids.push(booking["Id"].clone());
        }
        refused(api.book(&body(category(4), FREE + 1, FREE + 2)).await, 3);
        api.booked(&body(category(4), FREE + 3, FREE + 5)).await;

        // A date-only change is not checked against the quota; a new category is.
        api.updated(json!({"Id": ids[0], "ToDate": at(FREE + 4, 10)})).await;
        let other = api.booked(&body(category(1), FREE, FREE + 3)).await;
        refused(api.update(&json!({"Id": other["Id"], "Category": {"Id": 4}})).await, 3);
        let moved = api.updated(json!({"Id": other["Id"], "Category": {"Id": 3}})).await;
        assert_eq!(moved["Category"]["Id"], 3);

        // A canceled booking without a car is reactivated without a check.
        api.call(Method::POST, "/api/booking/cancel", Some(&json!({"BookingId": ids[1], "Lastname": "Fernández"}))).await;
        api.booked(&body(category(4), FREE, FREE + 3)).await;
        assert_eq!(api.updated(json!({"Id": ids[1]})).await["CurrentStatus"], 2);

        // A car asked for by Id is held as in model-based availability.
        let cars = api.cars_of(2).await;
        api.booked(&body(car(&cars[0]), FREE + 10, FREE + 12)).await;
        refused(api.book(&body(car(&cars[0]), FREE + 11, FREE + 13)).await, 3);
    }

    async fn a_booking_stored_before_the_day_indexes_still_holds_its_car(app: TestApp) {
        let api = Api::new(&app).await;
        let booking = api.booked(&body(model(2), FREE, FREE + 3)).await;
        let held = booking["Car"]["Id"].as_str().unwrap().to_owned();
        let id = booking["Id"].as_i64().unwrap();
        let current = "index_name IN ('car-period', 'category-period', 'car-day', 'category-day')";
        let of_booking =
            format!("tenant = '{TENANT}' AND collection = 'bookings' AND doc_id = '{id}'");
        // What a version without the day indexes wrote: one entry of the whole period each.
        app.sql(&format!("DELETE FROM doc_index WHERE {of_booking} AND {current}")).await;
        let time = |field: &str| {
            let instant = chrono::DateTime::parse_from_rfc3339(booking[field].as_str().unwrap());
            KeyPart::Time(instant.unwrap().timestamp_micros())
        };
        let period = [time("ToDate"), time("FromDate"), KeyPart::Int(id)];
        let category = KeyPart::Int(booking["Category"]["Id"].as_i64().unwrap());
        for (index, owner) in [("car", KeyPart::Text(held.clone())), ("category", category)] {
            let key = keys::encode(&[[owner].as_slice(), &period].concat());
            sqlx::query(
                "INSERT INTO doc_index (tenant, collection, index_name, key, doc_id) \
                 VALUES ($1, 'bookings', $2, $3, $4)",
            )
            .bind(TENANT)
            .bind(index)
            .bind(key)
            .bind(id.to_string())
            .execute(&mut app.database().await)
            .await
            .unwrap();
        }

        refused(api.book(&body(car(&held), FREE + 2, FREE + 4)).await, 3);
        // Written again, it has today's entries (one per index and one per day and index) and
        // none of the earlier ones.
        let moved = api.updated(json!({"Id": id, "ToDate": at(FREE + 4, 10)})).await;
        assert_eq!(moved["Car"]["Id"], held.as_str());
        let count =
            |which: &str| format!("SELECT COUNT(*) FROM doc_index WHERE {of_booking} AND {which}");
        assert_eq!(app.sql_count(&count("index_name IN ('car', 'category')")).await, 0);
        assert_eq!(app.sql_count(&count(current)).await, 2 + 2 * 5);
        refused(api.book(&body(car(&held), FREE + 3, FREE + 5)).await, 3);
    }

    async fn parallel_creates_of_one_car_make_one_booking(app: TestApp) {
        creates_of_one_car(&Api::new(&app).await, &[app.addr]).await;
    }

    async fn parallel_updates_with_one_version_make_one_change(app: TestApp) {
        updates_with_one_version(&Api::new(&app).await, &[app.addr]).await;
    }

    async fn parallel_updates_of_one_booking_number_its_comments_in_turn(app: TestApp) {
        // Four updates of one booking at once, each to another return date, without a
        // `Version`: all are applied, one after the other (a loser of a race runs again),
        // and the history numbers every comment 1, 2, ... with no gap and no number twice.
        let api = Api::new(&app).await;
        let booking = api.booked(&body(model(2), FREE + 20, FREE + 23)).await;
        let requests = (0..4_u64)
            .map(|extra| json!({"Id": booking["Id"], "ToDate": at(FREE + 24 + extra, 10)}))
            .collect();
        for (status, answer) in
            at_once(&api, &[app.addr], Method::PUT, "/api/booking/update", requests).await
        {
            assert_eq!(status, 200, "{answer}");
        }
        let history = api.get(&format!("/api/booking/{}/history", booking["Id"])).await;
        let comments = history.as_array().unwrap();
        let seqs: Vec<i64> = comments.iter().map(|c| c["Seq"].as_i64().unwrap()).collect();
        let numbers = i64::try_from(seqs.len()).unwrap();
        assert_eq!(seqs, (1..=numbers).collect::<Vec<i64>>(), "{history}");
        let moves = comments
            .iter()
            .filter(|c| c["Text"].as_str().unwrap().contains("changed ToDate"))
            .count();
        assert_eq!(moves, 4, "{history}");
    }

    async fn the_races_spread_over_three_hosts_end_the_same(app: TestApp) {
        // Their requests spread over three hosts on one database, as a load balancer spreads
        // them: the hosts share nothing but the database, which alone decides.
        let peers = [app.start_peer().await, app.start_peer().await];
        let hosts = [app.addr, peers[0].addr, peers[1].addr];
        let api = Api::new(&app).await;
        creates_of_one_car(&api, &hosts).await;
        updates_with_one_version(&api, &hosts).await;
    }

    async fn cancel_deliver_and_return(app: TestApp) {
        let api = Api::new(&app).await;
        // Starting in two hours, so that it can be delivered now.
        let now = Utc::now().with_timezone(&ZONE);
        let mut request = body(model(2), FREE, FREE + 3);
        request["FromDate"] = json!((now + chrono::Duration::hours(2)).fixed_offset().to_rfc3339());
        request["ToDate"] = json!((now + chrono::Duration::hours(50)).fixed_offset().to_rfc3339());
        let booking = api.booked(&request).await;
        let id = booking["Id"].clone();
        let kms = booking["Car"]["CurrentKms"].as_i64().unwrap();
        let operate = |path: &'static str, body: Value| {
            let api = &api;
            async move { api.call(Method::POST, path, Some(&body)).await }
        };
        let deliver = "/api/operations/deliver";
        let give_back = "/api/operations/return";

        refused(operate(give_back, json!({"BookingId": id, "Kilometers": kms, "Gasoline": 8})).await, 42);
        refused(operate(deliver, json!({"BookingId": 999_999, "Kilometers": kms, "Gasoline": 8})).await, 22);
        refused(operate(deliver, json!({"BookingId": id, "Gasoline": 8})).await, 98);
        refused(operate(deliver, json!({"BookingId": id, "Kilometers": kms - 1, "Gasoline": 8})).await, 39);
        refused(operate(deliver, json!({"BookingId": id, "Kilometers": kms, "Gasoline": 9})).await, 72);
        let early = (now - chrono::Duration::hours(23)).fixed_offset().to_rfc3339();
        refused(operate(deliver, json!({"BookingId": id, "Kilometers": kms, "Gasoline": 8, "Date": early})).await, 13);
        api.setting("require_paid_before_delivery", "true").await;
        refused(operate(deliver, json!({"BookingId": id, "Kilometers": kms, "Gasoline": 8})).await, 73);
        api.setting("require_paid_before_delivery", "false").await;

        let (status, delivered) = operate(deliver, json!({"BookingId": id, "Kilometers": kms + 10, "Gasoline": 7})).await;
        assert_eq!(status, 200, "{delivered}");
        assert_eq!(delivered["CurrentStatus"], 4);
        assert_eq!(delivered["Car"]["CurrentKms"], kms + 10);
        refused(operate(deliver, json!({"BookingId": id, "Kilometers": kms + 10, "Gasoline": 7})).await, 36);
        refused(api.call(Method::POST, "/api/booking/cancel", Some(&json!({"BookingId": id, "Lastname": "Fernández"}))).await, 9);
        refused(operate(give_back, json!({"BookingId": id, "Kilometers": kms + 9, "Gasoline": 7})).await, 39);

        let (status, closed) = operate(give_back, json!({"BookingId": id, "Kilometers": kms + 250, "Gasoline": 6})).await;
        assert_eq!(status, 200, "{closed}");
        assert_eq!(closed["CurrentStatus"], 5);
        refused(operate(give_back, json!({"BookingId": id, "Kilometers": kms + 250, "Gasoline": 6})).await, 37);
        let history = api.history(&id).await;
        assert!(comment_about(&history, "changed CurrentStatus from Reserved to Delivered"));
        assert!(comment_about(&history, "changed CurrentStatus from Delivered to Closed"));

        // The return date is the close date the closed list reads.
        let today = now.date_naive();
        let page = app.get_json(TENANT, &format!("/api/bookings/closed?fromDate={today}&toDate={today}&limit=100"), &api.token).await;
        assert!(page["Results"].as_array().unwrap().iter().any(|b| b["Id"] == id), "{page}");
        // The fleet knows the car's new reading.
        let cars = app.get_json(TENANT, "/api/cars?limit=100", &api.token).await;
        let car = cars["Results"].as_array().unwrap().iter().find(|c| c["Id"] == closed["Car"]["Id"]).unwrap();
        assert_eq!(car["CurrentKms"], kms + 250);

        // Cancel: 8 for another last name, 22 for no booking, 9 when not active.
        let other = api.booked(&body(model(2), FREE + 10, FREE + 12)).await;
        let cancel = |body: Value| {
            let api = &api;
            async move { api.call(Method::POST, "/api/booking/cancel", Some(&body)).await }
        };
        refused(cancel(json!({"BookingId": other["Id"], "Lastname": "Silva"})).await, 8);
        refused(cancel(json!({"BookingId": 999_999, "Lastname": "Silva"})).await, 22);
        refused(cancel(json!({"BookingId": other["Id"]})).await, 98);
        let (status, canceled) = cancel(json!({"BookingId": other["Id"], "Lastname": "FERNÁNDEZ"})).await;
        assert_eq!((status, &canceled["CurrentStatus"]), (200, &json!(6)));
        refused(cancel(json!({"BookingId": other["Id"], "Lastname": "Fernández"})).await, 9);
        let list = app.get_json(TENANT, "/api/bookings/list?limit=100&status=4", &api.token).await;
        let running = list["Results"][0]["Id"].clone();
        refused(operate(deliver, json!({"BookingId": running, "Kilometers": 999_999, "Gasoline": 8})).await, 36);
        let list = app.get_json(TENANT, "/api/bookings/list?limit=100&status=1", &api.token).await;
        let quoted = list["Results"][0]["Id"].clone();
        refused(operate(deliver, json!({"BookingId": quoted, "Kilometers": 999_999, "Gasoline": 8})).await, 40);
    }
}

/// Sends each of `bodies` at once with `method` to `path`, to `hosts` in turn, and returns
/// each answer's status and body, in the order they arrived.
async fn at_once(
    api: &Api<'_>,
    hosts: &[SocketAddr],
    method: Method,
    path: &str,
    bodies: Vec<Value>,
) -> Vec<(u16, Value)> {
    let mut tasks = JoinSet::new();
    for (request, host) in bodies.into_iter().zip(hosts.iter().cycle()) {
        let call = api
            .app
            .client
            .request(method.clone(), api.app.url_on(*host, TENANT, path))
            .bearer_auth(&api.token)
            .json(&request);
        tasks.spawn(async move {
            let response = call.send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap())
        });
    }
    let mut answers = Vec::new();
    while let Some(answer) = tasks.join_next().await {
        answers.push(answer.unwrap());
    }
    answers
}

/// Twelve creations of one car for the same dates at once, sent to `hosts` in turn: one is
/// booked, every other is refused with 3 CarNotAvailable, and the car holds one booking then.
async fn creates_of_one_car(api: &Api<'_>, hosts: &[SocketAddr]) {
    let car_id = api.cars_of(3).await[0].clone();
    let request = body(car(&car_id), FREE, FREE + 3);
    let mut created = 0;
    for answer in at_once(
        api,
        hosts,
        Method::POST,
        "/api/booking/book",
        vec![request.clone(); 12],
    )
    .await
    {
        match answer {
            (200, _) => created += 1,
            (400, body) => assert_eq!(body["ErrorCode"], 3, "{body}"),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(created, 1);
    let list = api
        .app
        .get_json(
            TENANT,
            "/api/bookings/list?limit=100&sortDirectionAsc=false",
            &api.token,
        )
        .await;
    let holding = list["Results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["Car"]["Id"] == car_id.as_str() && b["FromDate"] == request["FromDate"])
        .count();
    assert_eq!(holding, 1);
}

/// Eight updates of one booking with the same `Version` at once, sent to `hosts` in turn: one
/// is applied, every other is refused with 35, and the booking is the winner's.
async fn updates_with_one_version(api: &Api<'_>, hosts: &[SocketAddr]) {
    let booking = api.booked(&body(model(2), FREE, FREE + 3)).await;
    let requests = (0..8_u64)
        .map(|extra| json!({"Id": booking["Id"], "Version": "2", "ToDate": at(FREE + 4 + extra, 10)}))
        .collect();
    let mut winners = Vec::new();
    for answer in at_once(api, hosts, Method::PUT, "/api/booking/update", requests).await {
        match answer {
            (200, body) => winners.push(body),
            (400, body) => assert_eq!(body["ErrorCode"], 35, "{body}"),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1);
    let stored = api.booking(&booking["Id"]).await;
    assert_eq!(stored["Version"], "2");
    assert_eq!(stored["ToDate"], winners[0]["ToDate"]);
}

/// Error messages come in the request's language (en, es, pt).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_messages_are_translated() {
    let app = TestApp::spawn(rentald_tests::Options::new(rentald_tests::Backend::Sqlite))
        .await
        .unwrap();
    let api = Api::new(&app).await;
    let booking = api.booked(&body(model(2), FREE, FREE + 3)).await;
    let taken = body(car(booking["Car"]["Id"].as_str().unwrap()), FREE, FREE + 3);
    let mut no_dates = taken.clone();
    no_dates.as_object_mut().unwrap().remove("FromDate");
    for (language, car_taken, missing, place) in [
        (
            "en",
            "The car is not available for the requested dates",
            "The field 'FromDate' is not valid: is required",
            "The delivery place was not found (field: DeliveryPlace.Id)",
        ),
        (
            "es-AR",
            "El vehículo no está disponible para las fechas solicitadas",
            "El campo 'FromDate' no es válido: is required",
            "No se encontró el lugar de entrega (campo: DeliveryPlace.Id)",
        ),
        (
            "pt",
            "O veículo não está disponível para as datas solicitadas",
            "O campo 'FromDate' não é válido: is required",
            "O local de entrega não foi encontrado (campo: DeliveryPlace.Id)",
        ),
    ] {
        let path = format!("/api/booking/book?language={language}");
        let error = refused(api.call(Method::POST, &path, Some(&taken)).await, 3);
        assert_eq!(error["ErrorMessage"], car_taken);
        let error = refused(api.call(Method::POST, &path, Some(&no_dates)).await, 98);
        assert_eq!(error["ErrorMessage"], missing);
        let mut nowhere = taken.clone();
        nowhere["DeliveryPlace"] = json!({"Id": 99});
        let error = refused(api.call(Method::POST, &path, Some(&nowhere)).await, 25);
        assert_eq!(error["ErrorMessage"], place);
    }
}

/// Writes need `bookings:write`; reading and pricing need `bookings:read`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permissions() {
    let app = TestApp::spawn(rentald_tests::Options::new(rentald_tests::Backend::Sqlite))
        .await
        .unwrap();
    let api = Api::new(&app).await;
    let reader = api.other("reader", &["bookings:read"]).await;
    let request = body(model(2), FREE, FREE + 3);
    assert_eq!(reader.book(&request).await, (403, Value::Null));
    assert_eq!(reader.update(&json!({"Id": 1})).await, (403, Value::Null));
    for path in [
        "/api/booking/cancel",
        "/api/operations/deliver",
        "/api/operations/return",
    ] {
        assert_eq!(
            reader.call(Method::POST, path, Some(&json!({}))).await,
            (403, Value::Null),
            "{path}"
        );
    }
    assert_eq!(
        reader.call(Method::GET, "/api/booking/1", None).await.0,
        200
    );
    assert_eq!(
        reader
            .call(Method::GET, "/api/booking/1/history", None)
            .await
            .0,
        200
    );
    assert_eq!(
        reader
            .call(Method::POST, "/api/booking/price", Some(&request))
            .await
            .0,
        200
    );
    let writer = api.other("writer", &["bookings:write"]).await;
    assert_eq!(
        writer.call(Method::GET, "/api/booking/1", None).await,
        (403, Value::Null)
    );
}
