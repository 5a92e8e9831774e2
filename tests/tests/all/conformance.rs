//! The interface to the letter, on SQLite and on PostgreSQL: `null` in every request field,
//! texts in the requested language, one rule for query parameters, optional
//! `AppliedCoverageBrackets`, numeric Versions compared as numbers, and the contract's decisions
//! on promotions, a sent price of 0 and a date-only update of a booking with a car.

use chrono::Utc;
use rentald_tests::{on_both_backends, refused};
use reqwest::Method;
use serde_json::{Value, json};

use crate::booking::{Api, FREE, at};

const TENANT: &str = "demo";

/// A creation from `from` to `to` days ahead (as [`creation`]) with the top-level fields of
/// `change` set.
fn creation_with(from: u64, to: u64, change: &Value) -> Value {
    let mut body = creation(from, to);
    for (key, value) in change.as_object().unwrap() {
        body[key] = value.clone();
    }
    body
}

/// A creation for demo customer 3 of model 2 at Aeroparque, `from` to `to` days ahead.
fn creation(from: u64, to: u64) -> Value {
    json!({
        "Customer": {"Id": 3},
        "Car": {"Model": {"Id": 2}},
        "FromDate": at(from, 10),
        "ToDate": at(to, 10),
        "DeliveryPlace": {"Id": 1},
        "ReturnPlace": {"Id": 1},
    })
}

// ---------------------------------------------------------------------------------------------
// 1. `null` is "not given", in every field of every request model, read from the API document.

/// One step of a path into a JSON body.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// A field of a request body: where it is, whether its schema requires it, whether the
/// document says it may be null.
#[derive(Debug)]
struct Field {
    path: Vec<Step>,
    required: bool,
    nullable: bool,
}

fn path_text(path: &[Step]) -> String {
    path.iter()
        .map(|step| match step {
            Step::Key(key) => format!(".{key}"),
            Step::Index(index) => format!("[{index}]"),
        })
        .collect()
}

/// The schemas of the API document, with `$ref`, `allOf` and `anyOf` followed.
struct Schemas<'a>(&'a Value);

impl<'a> Schemas<'a> {
    fn named(&self, name: &str) -> &'a Value {
        let schema = &self.0["components"]["schemas"][name];
        assert!(schema.is_object(), "no schema {name}");
        schema
    }

    /// The object schemas `schema` stands for (itself, what it refers to, its parts).
    fn objects(&self, schema: &'a Value) -> Vec<&'a Value> {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.trim_start_matches("#/components/schemas/");
            return self.objects(self.named(name));
        }
        let mut objects = vec![schema];
        for key in ["allOf", "anyOf", "oneOf"] {
            for part in schema
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                objects.extend(self.objects(part));
            }
        }
        objects
    }

    /// Every property of `schema` with whether it is required.
    fn properties(&self, schema: &'a Value) -> Vec<(&'a str, &'a Value, bool)> {
        let mut properties = Vec::new();
        for object in self.objects(schema) {
            let required: Vec<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for (name, property) in object
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                properties.push((name.as_str(), property, required.contains(&name.as_str())));
            }
        }
        properties
    }

    /// Whether the document lets `property` be null: a `null` type, a `null` alternative, or
    /// no type at all (any value).
    fn nullable(&self, property: &Value) -> bool {
        let null_type = |schema: &Value| match &schema["type"] {
            Value::String(kind) => kind == "null",
            Value::Array(kinds) => kinds.iter().any(|kind| kind == "null"),
            _ => false,
        };
        let alternatives = ["anyOf", "oneOf"]
            .iter()
            .filter_map(|key| property.get(*key).and_then(Value::as_array))
            .flatten()
            .any(null_type);
        let untyped = ["type", "$ref", "anyOf", "oneOf", "allOf", "const"]
            .iter()
            .all(|key| property.get(*key).is_none());
        null_type(property) || alternatives || untyped
    }

    /// The schema of an array's items.
    fn items(&self, property: &'a Value) -> Option<&'a Value> {
        self.objects(property)
            .into_iter()
            .find_map(|schema| schema.get("items"))
    }

    /// Every field of `schema`, at `prefix`, going into the objects and the first item of the
    /// arrays that `body` has there.
    fn fields(&self, schema: &'a Value, body: &Value, prefix: &[Step], out: &mut Vec<Field>) {
        for (name, property, required) in self.properties(schema) {
            let mut path = prefix.to_vec();
            path.push(Step::Key(name.to_owned()));
            out.push(Field {
                path: path.clone(),
                required,
                nullable: self.nullable(property),
            });
            match body.get(name) {
                Some(Value::Object(_)) => self.fields(property, &body[name], &path, out),
                Some(Value::Array(items)) if items.first().is_some_and(Value::is_object) => {
                    if let Some(item) = self.items(property) {
                        path.push(Step::Index(0));
                        self.fields(item, &items[0], &path, out);
                    }
                }
                _ => {}
            }
        }
    }
}

/// `body` with the field at `path` set to `null` (`Some`) or left out (`None`).
fn with_field(body: &Value, path: &[Step], value: Option<Value>) -> Value {
    let mut body = body.clone();
    let (last, parents) = path.split_last().unwrap();
    let mut parent = &mut body;
    for step in parents {
        parent = match step {
            Step::Key(key) => &mut parent[key.as_str()],
            Step::Index(index) => &mut parent[*index],
        };
    }
    let Step::Key(key) = last else {
        unreachable!("paths end with a key")
    };
    let object = parent.as_object_mut().unwrap();
    match value {
        Some(value) => object.insert(key.clone(), value),
        None => object.remove(key),
    };
    body
}

/// What an answer says, for comparing two: the status and the error code, and the whole body
/// when `whole` (an error's without its correlation `Id`).
fn gist((status, mut body): (u16, Value), whole: bool) -> Value {
    if status != 200
        && let Some(error) = body.as_object_mut()
    {
        error.remove("Id");
    }
    if whole {
        json!([status, body])
    } else {
        json!([status, body["ErrorCode"]])
    }
}

impl Api<'_> {
    /// Sends `base` with each field of `schema`, one at a time, as `null` and left out, and
    /// checks that both get the same answer; checks that the document marks every field that
    /// is not required as nullable. Returns how many fields were tried.
    async fn null_is_absent(
        &self,
        document: &Value,
        schema: &str,
        (method, path): (Method, &str),
        base: &Value,
        whole: bool,
    ) -> usize {
        let schemas = Schemas(document);
        let mut fields = Vec::new();
        schemas.fields(schemas.named(schema), base, &[], &mut fields);
        for field in &fields {
            let name = path_text(&field.path);
            assert!(
                field.required || field.nullable,
                "{schema}{name}: the document must say it may be null"
            );
            let null = with_field(base, &field.path, Some(Value::Null));
            let absent = with_field(base, &field.path, None);
            let answer_null = gist(self.call(method.clone(), path, Some(&null)).await, whole);
            let answer_absent = gist(self.call(method.clone(), path, Some(&absent)).await, whole);
            assert_eq!(
                answer_null, answer_absent,
                "{schema}{name}: null must read as not given"
            );
        }
        fields.len()
    }
}

/// Every part of a request the base bodies fill in, so that every nested model is walked.
fn customer_with_everything() -> Value {
    json!({
        "Id": 3,
        "CreditCards": [{"Type": "VISA", "Number": "4111111111111234", "ExpirationMonth": 12,
                         "ExpirationYear": 2031, "SecurityCode": "123", "CardHolderName": "V F"}],
        "Memberships": [{"Id": 1, "MembershipType": 1, "Description": "Club", "Number": "77",
                         "UsedInBooking": false, "BookingBrandIds": [1]}],
        "CommercialAgreements": [],
    })
}

on_both_backends! {
    async fn null_means_not_given_in_every_request_field(app: TestApp) {
        let api = Api::new(&app).await;
        let document: Value = app
            .client
            .get(format!("http://{}/openapi.json", app.addr))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();

        let mut full = creation(FREE, FREE + 3);
        full["Customer"] = customer_with_everything();
        full["Car"] = json!({"Model": {"Id": 2, "Name": "Gol"}});
        full["Category"] = json!({"Id": 1});
        full["DeliveryPlace"] = json!({"Id": 1, "IsCustomAddress": false});
        full["Additionals"] = json!([{"Additional": {"Id": 3}, "Quantity": 1}]);
        let price = "/api/booking/price";
        let tried = api
            .null_is_absent(&document, "SaveBookingModel", (Method::POST, price), &full, true)
            .await;
        assert!(tried > 80, "{tried} fields of a creation");

        let booking = api.booked(&creation(FREE + 10, FREE + 13)).await;
        let mut update = full.clone();
        update["Id"] = booking["Id"].clone();
        update["FromDate"] = booking["FromDate"].clone();
        update["ToDate"] = booking["ToDate"].clone();
        update["Category"] = json!({"Id": booking["Category"]["Id"]});
        api.null_is_absent(&document, "UpdateBookingModel", (Method::PUT, "/api/booking/update"), &update, false)
            .await;

        let mut check_in = crate::selfcheckin::body(&booking);
        check_in.as_object_mut().unwrap().remove("Version");
        api.null_is_absent(&document, "SelfCheckinUpdateBookingModel", (Method::PUT, "/api/selfcheckin"), &check_in, false)
            .await;

        let cancel = json!({"BookingId": booking["Id"], "Lastname": "Nobody"});
        api.null_is_absent(&document, "CancelBookingModel", (Method::POST, "/api/booking/cancel"), &cancel, false)
            .await;
        let deliver = json!({"BookingId": booking["Id"], "Kilometers": 100000, "Gasoline": 8,
                             "Date": Utc::now().to_rfc3339()});
        api.null_is_absent(&document, "BookingOperationModel", (Method::POST, "/api/operations/deliver"), &deliver, false)
            .await;

        // The cases the interface's users send first.
        for change in [
            json!({"Customer": {"Id": 3, "CreditCards": null, "Memberships": null, "IsCompany": null,
                                "HasWebLogin": null, "CommercialAgreements": null}}),
            json!({"Customer": {"Id": null, "Name": "Ana Null", "EmailAddress": "ana@example.com"}}),
            json!({"DeliveryPlace": {"Id": 1, "IsCustomAddress": null}}),
        ] {
            let body = creation_with(FREE + 20, FREE + 22, &change);
            let (status, answer) = api.call(Method::POST, price, Some(&body)).await;
            assert_eq!(status, 200, "{change}: {answer}");
        }
        // A required value sent as null is the documented error for a missing one.
        for (change, field) in [
            (json!({"Customer": null}), "Customer"),
            (json!({"FromDate": null}), "FromDate"),
            (json!({"Additionals": [{"Additional": null, "Quantity": 1}]}), "Additionals[0].Additional.Id"),
        ] {
            let body = creation_with(FREE + 20, FREE + 22, &change);
            let error = refused(api.call(Method::POST, "/api/booking/book", Some(&body)).await, 98);
            assert!(error["ErrorMessage"].as_str().unwrap().contains(field), "{change}: {error}");
        }
        // A number no decimal holds is named by its field, without the JSON reader's insides.
        let body = creation_with(FREE + 20, FREE + 22, &json!({"Price": 1e300}));
        let error = refused(api.call(Method::POST, "/api/booking/book", Some(&body)).await, 98);
        let message = error["ErrorMessage"].as_str().unwrap();
        assert!(message.contains("Price") && !message.contains("serde_json"), "{error}");
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Every text written for a person follows `language`, else the tenant's default.

/// The descriptions of a booking's (or a quote's) price lines of `kind`.
fn descriptions(answer: &Value, kind: i64) -> Vec<String> {
    answer["PriceItems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|line| line["Type"] == kind)
        .map(|line| line["Description"].as_str().unwrap().to_owned())
        .collect()
}

/// No price line of `answer` shows the stored form of its description.
fn no_stored_text(answer: &Value) {
    for line in answer["PriceItems"].as_array().unwrap() {
        assert!(
            line.get("Text").is_none(),
            "stored form in a response: {line}"
        );
    }
}

on_both_backends! {
    async fn texts_follow_the_requested_language(app: TestApp) {
        let api = &Api::new(&app).await;
        // A price sent 0.5% below the quote adds an adjustment line.
        let mut body = creation(FREE, FREE + 3);
        body["Additionals"] = json!([{"Additional": {"Id": 3}, "Quantity": 1}]);
        let quote = api.call(Method::POST, "/api/booking/price?language=es", Some(&body)).await;
        assert_eq!(quote.0, 200, "{}", quote.1);
        let quote = quote.1;
        no_stored_text(&quote);
        let rental_es = descriptions(&quote, 1);
        assert!(!rental_es.is_empty() && rental_es.iter().all(|text| text.contains("días 1 a 3")), "{rental_es:?}");
        let price = quote["Price"].as_f64().unwrap();
        body["Price"] = json!(((price * 0.995) * 100.0).round() / 100.0);
        body["FullResponse"] = json!(true);
        let (status, booked) = api.call(Method::POST, "/api/booking/book?language=pt", Some(&body)).await;
        assert_eq!(status, 200, "{booked}");
        no_stored_text(&booked);
        assert_eq!(booked["TotalDaysString"], "3 dias");
        assert_eq!(descriptions(&booked, 5), ["Ajuste ao preço enviado"]);
        assert!(descriptions(&booked, 1).iter().all(|text| text.contains("dias 1 a 3")));

        // The stored booking reads in every language, whichever it was written in.
        let id = &booked["Id"];
        let read = |language: &'static str| {
            let path = format!("/api/booking/{id}?language={language}");
            async move { api.get(&path).await }
        };
        let (en, es, pt) = (read("en").await, read("es").await, read("pt-BR").await);
        assert_eq!(en["TotalDaysString"], "3 days");
        assert_eq!(es["TotalDaysString"], "3 días");
        assert_eq!(pt["TotalDaysString"], "3 dias");
        assert_eq!(descriptions(&en, 5), ["Adjustment to the price sent"]);
        assert_eq!(descriptions(&es, 5), ["Ajuste al precio enviado"]);
        for kind in [1, 3, 4, 5] {
            let (en, es, pt) = (descriptions(&en, kind), descriptions(&es, kind), descriptions(&pt, kind));
            for ((en, es), pt) in en.iter().zip(&es).zip(&pt) {
                assert!(en != es && es != pt && en != pt, "line type {kind}: {en} / {es} / {pt}");
            }
        }
        let without_texts = |answer: &Value| {
            let mut answer = answer.clone();
            for line in answer["PriceItems"].as_array_mut().unwrap() {
                line.as_object_mut().unwrap().remove("Description");
            }
            answer.as_object_mut().unwrap().remove("TotalDaysString");
            answer
        };
        for answer in [&en, &es, &pt] {
            no_stored_text(answer);
            assert_eq!(without_texts(answer), without_texts(&en), "only the texts differ");
        }

        // Without `language`, the tenant's default.
        app.set_setting(TENANT, "default_language", "es").await;
        let default = api.get(&format!("/api/booking/{id}")).await;
        assert_eq!(default["TotalDaysString"], "3 días");
        assert_eq!(descriptions(&default, 5), ["Ajuste al precio enviado"]);
    }
}

// ---------------------------------------------------------------------------------------------
// 3. One rule for every query parameter: the last occurrence decides, empty is absent.

on_both_backends! {
    async fn empty_parameters_are_absent_and_the_last_one_counts(app: TestApp) {
        let api = Api::new(&app).await;
        app.set_setting(TENANT, "default_language", "es").await;
        let message = |answer: (u16, Value)| {
            let error = refused(answer, 98);
            error["ErrorMessage"].as_str().unwrap().to_owned()
        };
        let list = |query: &str| format!("/api/bookings/list?limit=x&{query}");
        // Empty: the tenant's default, as if it were not there (before: 400, ErrorCode 6).
        for query in ["language=", "language=%20", "language=pt&language="] {
            let text = message(api.call(Method::GET, &list(query), None).await);
            assert!(text.starts_with("El campo"), "{query}: {text}");
        }
        // Repeated: the last one.
        let text = message(api.call(Method::GET, &list("language=en&language=pt"), None).await);
        assert!(text.starts_with("O campo"), "{text}");
        let text = message(api.call(Method::GET, &list("language=&language=en"), None).await);
        assert!(text.starts_with("The field"), "{text}");
        let (status, error) = api.call(Method::GET, &list("language=pt&language=xx"), None).await;
        assert_eq!((status, &error["ErrorCode"]), (400, &json!(6)), "{error}");

        // The components' parameters follow the same rule.
        let page = api.get("/api/bookings/list?limit=&offset=&status=&updatedSince=&sortDirectionAsc=").await;
        assert_eq!(page["Limit"], 30);
        let page = api.get("/api/bookings/list?limit=2&limit=").await;
        assert_eq!(page["Limit"], 30, "the last occurrence, empty, is absent");
        let page = api.get("/api/bookings/list?limit=&limit=2").await;
        assert_eq!(page["Limit"], 2);
        let page = api.get("/api/cars?limit=5&limit=3").await;
        assert_eq!(page["Limit"], 3);
    }
}

// ---------------------------------------------------------------------------------------------
// 4. `AppliedCoverageBrackets` is optional: left out, not null; the closed list applies the
//    full responses' rule.

on_both_backends! {
    async fn coverage_brackets_are_left_out_where_they_do_not_apply(app: TestApp) {
        let api = Api::new(&app).await;
        let mut body = creation(FREE, FREE + 3);
        body["Additionals"] = json!([{"Additional": {"Id": 3}, "Quantity": 1}]);
        let booked = api.booked(&body).await;
        let lines = booked["PriceItems"].as_array().unwrap();
        assert!(lines.iter().any(|line| line["Type"] != 1), "{booked}");
        for line in lines {
            let rental = line["Type"] == 1;
            assert_eq!(line.get("AppliedCoverageBrackets").is_some(), rental, "{line}");
            assert!(!line.get("AppliedCoverageBrackets").is_some_and(Value::is_null), "{line}");
        }

        // The closed list shows each booking as `GET /api/booking/{id}` does, in its language.
        let today = Utc::now().date_naive();
        let path = format!(
            "/api/bookings/closed?fromDate={}&toDate={today}T23:59:59&limit=100&language=es",
            today - chrono::Days::new(90)
        );
        let closed = api.get(&path).await;
        let results = closed["Results"].as_array().unwrap();
        assert!(!results.is_empty());
        // One closed booking whose lines can no longer be traced to their day ranges.
        let untraceable = &results[0]["Id"];
        app.sql(&format!(
            "UPDATE documents SET body = REPLACE(body, '\"DaysFrom\":1,', '\"DaysFrom\":0,') \
             WHERE tenant = '{TENANT}' AND collection = 'bookings' AND id = '{untraceable}'"
        ))
        .await;
        let closed = api.get(&path).await;
        let mut stripped = 0;
        for booking in closed["Results"].as_array().unwrap() {
            let one = api.get(&format!("/api/booking/{}?language=es", booking["Id"])).await;
            assert_eq!(booking, &one, "the closed list writes a booking as its full response does");
            if booking["Id"] == *untraceable {
                assert!(!booking.to_string().contains("AppliedCoverageBrackets"), "{booking}");
                stripped += 1;
            }
        }
        assert_eq!(stripped, 1);
    }
}

// ---------------------------------------------------------------------------------------------
// 5. A numeric Version is compared as a number: `1.5` is one.

on_both_backends! {
    async fn numeric_versions_are_compared_as_decimals(app: TestApp) {
        let api = &Api::new(&app).await;
        let booked = api.booked(&creation(FREE, FREE + 3)).await;
        assert_eq!(booked["Version"], "1");
        let update = |version: Value| json!({"Id": booked["Id"], "Version": version, "FullResponse": true});
        let put = |body: Value| async move { api.call(Method::PUT, "/api/booking/update", Some(&body)).await };

        let (status, updated) = put(update(json!("1.5"))).await;
        assert_eq!((status, &updated["Version"]), (200, &json!("1.5")), "{updated}");
        refused(put(update(json!("1.25"))).await, 35);
        refused(put(update(json!("1.50"))).await, 35);
        let (status, updated) = put(update(json!(1.75))).await;
        assert_eq!((status, &updated["Version"]), (200, &json!("1.75")), "a JSON number, as written");
        let (status, updated) = put(update(json!(2))).await;
        assert_eq!((status, &updated["Version"]), (200, &json!("2")));
        // Not a number: no check, the stored Version is kept.
        let (status, updated) = put(update(json!("v1"))).await;
        assert_eq!((status, &updated["Version"]), (200, &json!("2")));
    }
}

// ---------------------------------------------------------------------------------------------
// 6. The contract's decisions that clients see.

on_both_backends! {
    async fn promotions_a_price_of_zero_and_date_only_updates(app: TestApp) {
        let api = &Api::new(&app).await;
        let book = |body: Value| async move { api.call(Method::POST, "/api/booking/book", Some(&body)).await };
        let with = |change: Value| creation_with(FREE, FREE + 3, &change);
        // Any promotion but null or a blank text is 24: the platform has none.
        for promotion in [
            json!({"PromotionCode": "SUMMER"}),
            json!({"PromotionCode": 7}),
            json!({"Promotion": {"Code": "SUMMER"}}),
            json!({"Promotion": "SUMMER"}),
        ] {
            refused(book(with(promotion)).await, 24);
        }
        for promotion in [json!({"Promotion": null, "PromotionCode": null}), json!({"Promotion": "", "PromotionCode": " "})] {
            let (status, answer) = api.call(Method::POST, "/api/booking/price", Some(&with(promotion))).await;
            assert_eq!(status, 200, "{answer}");
        }

        // A sent Price of 0 is checked like any other: far from the computed price, 4.
        refused(book(with(json!({"Price": 0}))).await, 4);

        // A date-only update of a booking with a car re-checks that car, in category-based
        // availability too: another booking holds it for the new dates, 3.
        app.set_setting(TENANT, "availability_mode", "category").await;
        let car = api.get("/api/cars?limit=1").await["Results"][0]["Id"].clone();
        assert!(car.is_string(), "{car}");
        let first = api.booked(&{ let mut b = creation(FREE + 40, FREE + 42); b["Car"] = json!({"Id": car}); b }).await;
        let second = api.booked(&{ let mut b = creation(FREE + 45, FREE + 47); b["Car"] = json!({"Id": car}); b }).await;
        assert_eq!(second["Car"]["Id"], car);
        let (status, answer) = api
            .call(Method::PUT, "/api/booking/update", Some(&json!({"Id": first["Id"], "ToDate": at(FREE + 46, 10)})))
            .await;
        refused((status, answer), 3);
        let (status, answer) = api
            .call(Method::PUT, "/api/booking/update", Some(&json!({"Id": first["Id"], "ToDate": at(FREE + 44, 10)})))
            .await;
        assert_eq!(status, 200, "free dates: {answer}");
    }
}
