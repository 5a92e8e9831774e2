//! The self-check-in component (`PUT /api/selfcheckin`, docs/selfcheckin.md) over the demo
//! tenant, on SQLite and on PostgreSQL: a complete check-in, a correcting second one, each
//! rejection (which changes nothing), the booking list's `updatedSince`, the stored customer,
//! the permission and another tenant's booking.

use chrono::{Days, Utc};
use rentald_tests::{TestApp, on_both_backends, refused};
use reqwest::Method;
use serde_json::{Value, json};

const TENANT: &str = "demo";
/// The demo tenant's clock: Buenos Aires, UTC-3 all year.
const ZONE: chrono_tz::Tz = chrono_tz::America::Argentina::Buenos_Aires;

/// The date `days` from today (negative: before) on the tenant's clock, as `YYYY-MM-DD`.
fn day(days: i64) -> String {
    let today = Utc::now().with_timezone(&ZONE).date_naive();
    let date = if days >= 0 {
        today + Days::new(days.unsigned_abs())
    } else {
        today - Days::new(days.unsigned_abs())
    };
    date.to_string()
}

/// A user of the demo tenant with `token`.
struct Api<'a> {
    app: &'a TestApp,
    tenant: &'static str,
    token: String,
}

impl Api<'_> {
    async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> (u16, Value) {
        self.app
            .call(self.tenant, &self.token, method, path, body)
            .await
    }

    async fn check_in(&self, body: &Value) -> (u16, Value) {
        self.call(Method::PUT, "/api/selfcheckin", Some(body)).await
    }

    async fn booking(&self, id: &Value) -> Value {
        self.app.booking(self.tenant, &self.token, id).await
    }

    async fn history(&self, id: &Value) -> Vec<String> {
        self.app.booking_history(self.tenant, &self.token, id).await
    }

    /// The first booking of the list with `status`.
    async fn first_with_status(&self, status: i64) -> Value {
        let (code, list) = self
            .call(
                Method::GET,
                &format!("/api/bookings/list?limit=100&status={status}"),
                None,
            )
            .await;
        assert_eq!(code, 200, "{list}");
        let id = list["Results"][0]["Id"].clone();
        assert!(id.is_i64(), "a demo booking with status {status}: {list}");
        self.booking(&id).await
    }

    /// The stored customer `id`, from the customers list.
    async fn customer(&self, id: &Value) -> Value {
        let (status, page) = self
            .call(Method::GET, "/api/customers?limit=100", None)
            .await;
        assert_eq!(status, 200, "{page}");
        page["Results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|customer| customer["Id"] == *id)
            .cloned()
            .unwrap_or_else(|| panic!("customer {id} listed"))
    }
}

async fn demo(app: &TestApp) -> Api<'_> {
    let token = app.tenant_with_token(TENANT, true).await;
    Api {
        app,
        tenant: TENANT,
        token,
    }
}

/// The Version one greater than the booking's (none when it has no numeric one).
fn next_version(booking: &Value) -> Value {
    booking["Version"]
        .as_str()
        .and_then(|version| version.parse::<i64>().ok())
        .map_or(Value::Null, |version| json!((version + 1).to_string()))
}

/// A complete, valid check-in of `booking`.
pub(crate) fn body(booking: &Value) -> Value {
    json!({
        "BookingId": booking["Id"],
        "Version": next_version(booking),
        "MainDriver": {
            "Firstname": "Lucía",
            "Lastname": "Martínez",
            "DocumentId": "30111222",
            "DocumentTypeId": 1,
            "DocumentIdIssuance": "2020-03-01",
            "DocumentIdExpiration": day(3650),
            "DocumentIdIssuanceCountry": "AR",
            "BirthDate": "1990-05-04",
            "BirthCountry": "AR",
            "Address": "Av. Corrientes",
            "AddressNumber": "1234",
            "City": "Buenos Aires",
            "State": "CABA",
            "ZipCode": "C1043",
            "Country": "AR",
            "EmailAddress": "lucia@example.com",
            "CellPhone": "+54 11 5555-0101",
            "DriverLicenceNumber": "LIC-778899",
            "DriverLicenceCountry": "AR",
            "DriverLicenseIssuance": "2012-06-01",
            "DriverLicenseExpiration": day(3650),
            "DriverLicenseCategory": "B1"
        },
        "AdditionalDrivers": [{
            "Firstname": "Pablo",
            "Lastname": "Martínez",
            "DocumentId": "28999111",
            "DocumentTypeId": 1,
            "BirthDate": "1988-01-20",
            "DriverLicenceNumber": "LIC-112233",
            "DriverLicenseIssuance": "2010-02-01",
            "DriverLicenseExpiration": day(3650)
        }],
        "DeliveryTransportationId": "AR1304",
        "ReturnTransportationId": "AR1305",
        "TermsAccepted": true
    })
}

fn urlencode(value: &str) -> String {
    value.replace('+', "%2B").replace(':', "%3A")
}

on_both_backends! {
    async fn a_complete_check_in_then_a_correction(app: TestApp) {
        let api = demo(&app).await;
        let booking = api.first_with_status(2).await;
        let id = booking["Id"].clone();
        let before_history = api.history(&id).await.len();
        let since = Utc::now().with_timezone(&ZONE).to_rfc3339();

        let (status, checked) = api.check_in(&body(&booking)).await;
        assert_eq!(status, 200, "{checked}");
        assert_eq!(checked["Id"], id);
        assert_eq!(checked["IsSelfCheckin"], json!(true));
        assert_eq!(checked["CurrentStatus"], json!(2), "the status stays");
        assert_eq!(checked["Version"], next_version(&booking));
        assert_eq!(checked["UpdatedByUserName"], json!("api"));
        assert_ne!(checked["UpdatedOn"], booking["UpdatedOn"]);
        let customer = &checked["Customer"];
        assert_eq!(customer["Id"], booking["Customer"]["Id"], "the customer stays the same");
        assert_eq!(customer["Name"], json!("Lucía Martínez"));
        assert_eq!(customer["DocumentId"], json!("30111222"));
        assert_eq!(customer["DocumentTypeId"], json!(1));
        assert_eq!(customer["DriverLicenceNumber"], json!("LIC-778899"));
        assert_eq!(customer["DriverLicenseCategory"], json!("B1"));
        assert_eq!(customer["EmailAddress"], json!("lucia@example.com"));
        assert_eq!(customer["BirthCountry"], json!("AR"));
        assert!(customer["DriverLicenseExpiration"].is_string());
        assert_eq!(checked["DeliveryTransportationId"], json!("AR1304"));
        assert_eq!(checked["ReturnTransportationId"], json!("AR1305"));
        let drivers = &checked["Attributes"]["AdditionalDrivers"];
        assert_eq!(drivers.as_array().map(Vec::len), Some(1), "{checked}");
        assert_eq!(drivers[0]["DriverLicenceNumber"], json!("LIC-112233"));
        // The price and the rest of the booking are not touched.
        for field in ["Price", "FromDate", "ToDate", "Car", "PriceItems", "Balance"] {
            assert_eq!(checked[field], booking[field], "{field}");
        }

        // What is answered is what is stored, with its comment.
        assert_eq!(api.booking(&id).await, checked);
        let history = api.history(&id).await;
        assert_eq!(history.len(), before_history + 1, "{history:?}");
        assert!(history.last().unwrap().starts_with("api completed the self-check-in"), "{history:?}");

        // The stored customer is completed too.
        let stored = api.customer(&booking["Customer"]["Id"]).await;
        assert_eq!(stored["DocumentId"], json!("30111222"));
        assert_eq!(stored["DriverLicenceNumber"], json!("LIC-778899"));

        // The booking list's updatedSince sees the change, and the list form is unaffected.
        let (status, list) = api
            .call(Method::GET, &format!("/api/bookings/list?limit=100&updatedSince={}", urlencode(&since)), None)
            .await;
        assert_eq!(status, 200, "{list}");
        let item = list["Results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|item| item["Id"] == id)
            .unwrap_or_else(|| panic!("{id} in {list}"));
        assert_eq!(item["IsSelfCheckin"], json!(true));
        assert!(item.get("Attributes").is_none());

        // A second check-in corrects a field; without AdditionalDrivers they stay.
        let mut again = body(&checked);
        again["MainDriver"]["CellPhone"] = json!("+54 11 5555-0202");
        again.as_object_mut().unwrap().remove("AdditionalDrivers");
        let (status, corrected) = api.check_in(&again).await;
        assert_eq!(status, 200, "{corrected}");
        assert_eq!(corrected["Customer"]["CellPhone"], json!("+54 11 5555-0202"));
        assert_eq!(corrected["Version"], next_version(&checked));
        assert_eq!(corrected["Attributes"]["AdditionalDrivers"], *drivers);
        let history = api.history(&id).await;
        assert!(history.last().unwrap().starts_with("api corrected the self-check-in"), "{history:?}");
        assert_eq!(api.customer(&booking["Customer"]["Id"]).await["CellPhone"], json!("+54 11 5555-0202"));

        // The same Version again is 35.
        refused(api.check_in(&again).await, 35);

        // A booking update that sends Attributes keeps the additional drivers.
        let (status, updated) = api
            .call(Method::PUT, "/api/booking/update", Some(&json!({
                "Id": id, "Attributes": {"Canal": "Web", "AdditionalDrivers": []}, "FullResponse": true
            })))
            .await;
        assert_eq!(status, 200, "{updated}");
        assert_eq!(updated["Attributes"]["Canal"], json!("Web"));
        assert_eq!(updated["Attributes"]["AdditionalDrivers"], *drivers);
        assert_eq!(updated["IsSelfCheckin"], json!(true));
    }

    async fn each_rejection_changes_nothing(app: TestApp) {
        let api = demo(&app).await;
        let booking = api.first_with_status(2).await;
        let id = booking["Id"].clone();
        let customer_before = api.customer(&booking["Customer"]["Id"]).await;
        let history_before = api.history(&id).await;
        let ok = body(&booking);

        let with = |path: &[&str], value: Value| {
            let mut body = ok.clone();
            let mut target = &mut body;
            for key in &path[..path.len() - 1] {
                target = &mut target[*key];
            }
            let last = path[path.len() - 1];
            if value.is_null() {
                target.as_object_mut().unwrap().remove(last);
            } else {
                target[last] = value;
            }
            body
        };
        let cases: Vec<(Value, i64, Option<&str>)> = vec![
            (with(&["MainDriver", "DriverLicenceNumber"], Value::Null), 41, Some("MainDriver.DriverLicenceNumber")),
            (with(&["MainDriver", "DriverLicenseExpiration"], json!(day(-1))), 41, Some("MainDriver.DriverLicenseExpiration")),
            (with(&["MainDriver", "DriverLicenseIssuance"], json!(day(2))), 41, Some("MainDriver.DriverLicenseIssuance")),
            (with(&["MainDriver", "DocumentIdExpiration"], json!(day(-1))), 5, Some("MainDriver.DocumentIdExpiration")),
            (with(&["MainDriver", "BirthDate"], json!(day(-3650))), 34, None),
            (with(&["TermsAccepted"], json!(false)), 98, Some("TermsAccepted")),
            (with(&["TermsAccepted"], Value::Null), 98, Some("TermsAccepted")),
            (with(&["MainDriver", "EmailAddress"], json!("lucia@example")), 5, Some("MainDriver.EmailAddress")),
            (with(&["MainDriver", "BirthDate"], Value::Null), 98, Some("MainDriver.BirthDate")),
            (with(&["MainDriver", "DocumentTypeId"], json!("one")), 98, Some("MainDriver.DocumentTypeId")),
            (with(&["BookingId"], Value::Null), 98, Some("BookingId")),
            (with(&["BookingId"], json!(987_654)), 22, None),
            (with(&["Version"], booking["Version"].clone()), 35, None),
            (json!("check-in"), 98, Some("body")),
        ];
        for (request, code, field) in cases {
            let (status, error) = api.check_in(&request).await;
            assert_eq!((status, &error["ErrorCode"]), (400, &json!(code)), "{request}: {error}");
            assert!(error["Id"].is_string());
            if let Some(field) = field {
                let message = error["ErrorMessage"].as_str().unwrap();
                assert!(message.contains(field), "{code}: {message}");
            }
        }
        // Additional drivers follow the same rules.
        let mut young = ok.clone();
        young["AdditionalDrivers"][0]["BirthDate"] = json!(day(-3650));
        refused(api.check_in(&young).await, 34);
        let mut unlicensed = ok.clone();
        unlicensed["AdditionalDrivers"][0]["DriverLicenseExpiration"] = json!(day(-1));
        let error = refused(api.check_in(&unlicensed).await, 41);
        assert!(error["ErrorMessage"].as_str().unwrap().contains("AdditionalDrivers[0].DriverLicenseExpiration"));

        // Messages are translated (the demo tenant speaks Spanish by default).
        let (status, spanish) = api
            .call(Method::PUT, "/api/selfcheckin?language=es", Some(&with(&["MainDriver", "DriverLicenceNumber"], Value::Null)))
            .await;
        assert_eq!(status, 400);
        let (_, english) = api
            .call(Method::PUT, "/api/selfcheckin?language=en", Some(&with(&["MainDriver", "DriverLicenceNumber"], Value::Null)))
            .await;
        assert_eq!(spanish["ErrorCode"], json!(41));
        assert_ne!(spanish["ErrorMessage"], english["ErrorMessage"]);
        assert!(spanish["ErrorMessage"].as_str().unwrap().contains("campo"), "{spanish}");

        // Statuses that do not allow it: 26.
        for status in [4, 5, 6] {
            let other = api.first_with_status(status).await;
            let error = refused(api.check_in(&body(&other)).await, 26);
            assert!(!error["ErrorMessage"].as_str().unwrap().is_empty());
            assert_eq!(api.booking(&other["Id"]).await, other, "status {status}: unchanged");
        }

        // Nothing changed: the booking, its history, the stored customer.
        assert_eq!(api.booking(&id).await, booking);
        assert_eq!(api.history(&id).await, history_before);
        assert_eq!(api.customer(&booking["Customer"]["Id"]).await, customer_before);

        // The permission is selfcheckin:write.
        app.create_user(TENANT, "desk", &["bookings:read", "bookings:write"]).await;
        let token = app.token(TENANT, "desk", rentald_tests::PASSWORD).await;
        let desk = Api { app: &app, tenant: TENANT, token };
        let (status, body) = desk.check_in(&ok).await;
        assert_eq!((status, body), (403, Value::Null));
        app.create_user(TENANT, "kiosk", &["selfcheckin:write"]).await;
        let token = app.token(TENANT, "kiosk", rentald_tests::PASSWORD).await;
        let kiosk = Api { app: &app, tenant: TENANT, token };
        let (status, checked) = kiosk.check_in(&ok).await;
        assert_eq!(status, 200, "{checked}");
        assert_eq!(checked["UpdatedByUserName"], json!("kiosk"));
    }

    async fn another_tenants_booking_is_not_found(app: TestApp) {
        let api = demo(&app).await;
        let booking = api.first_with_status(2).await;
        let token = app.tenant_with_token("acme", false).await;
        let acme = Api { app: &app, tenant: "acme", token };
        refused(acme.check_in(&body(&booking)).await, 22);
        assert_eq!(api.booking(&booking["Id"]).await, booking);
    }
}
