use std::collections::BTreeSet;

use http::StatusCode;
use http::header::ALLOW;
use rental_domain::ErrorCode;
use serde::Serialize;
use serde_json::json;

use super::*;

fn document() -> Value {
    parse(SOURCE).expect("docs/openapi.yaml parses")
}

#[test]
fn the_document_is_openapi_3_1_and_loads() {
    let document = document();
    assert!(str_of(&document, "openapi").starts_with("3.1."));
    let docs = ApiDocs::load().expect("loads");
    let served: Value = serde_json::from_slice(&docs.json).expect("JSON");
    assert_eq!(served, document);
}

#[test]
fn every_route_is_documented_and_every_operation_has_a_route() {
    let served: BTreeSet<(String, String)> = rental_platform::routes::ROUTES
        .iter()
        .map(|r| (r.method.as_str().to_owned(), r.path.to_owned()))
        .chain(
            routes::HOST_ROUTES
                .iter()
                .map(|(m, p)| (m.as_str().to_owned(), (*p).to_owned())),
        )
        .collect();
    let document = document();
    let documented: BTreeSet<(String, String)> = operations(&document)
        .into_iter()
        .map(|(m, p, _)| (m.to_uppercase(), p.to_owned()))
        .collect();
    let undocumented: Vec<_> = served.difference(&documented).collect();
    let unrouted: Vec<_> = documented.difference(&served).collect();
    assert!(
        undocumented.is_empty() && unrouted.is_empty(),
        "routes missing from docs/openapi.yaml: {undocumented:?}; \
         documented operations with no route: {unrouted:?}"
    );
}

fn references<'a>(value: &'a Value, found: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                found.push(reference);
            }
            map.values().for_each(|v| references(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| references(v, found)),
        _ => {}
    }
}

#[test]
fn every_reference_resolves() {
    let document = document();
    let mut found = Vec::new();
    references(&document, &mut found);
    assert!(found.len() > 100);
    let broken: Vec<_> = found
        .into_iter()
        .filter(|r| {
            r.strip_prefix('#')
                .and_then(|pointer| document.pointer(pointer))
                .is_none()
        })
        .collect();
    assert!(broken.is_empty(), "unresolved references: {broken:?}");
}

#[test]
fn every_operation_has_an_id_a_declared_tag_and_responses() {
    let document = document();
    let tags: Vec<&str> = document["tags"]
        .as_array()
        .expect("tags")
        .iter()
        .map(|t| str_of(t, "name"))
        .collect();
    let mut ids = BTreeSet::new();
    for (method, path, op) in operations(&document) {
        let id = str_of(op, "operationId");
        assert!(!id.is_empty(), "{method} {path}: no operationId");
        assert!(ids.insert(id), "{method} {path}: operationId {id} twice");
        let tag = op["tags"][0].as_str().unwrap_or_default();
        assert!(
            tags.contains(&tag),
            "{method} {path}: undeclared tag {tag:?}"
        );
        assert!(
            op["responses"].as_object().is_some_and(|r| !r.is_empty()),
            "{method} {path}: no response"
        );
        assert!(op.get("security").is_some(), "{method} {path}: no security");
    }
}

#[test]
fn the_error_codes_are_the_interfaces() {
    let document = document();
    let schema = &document["components"]["schemas"][ERROR_CODES];
    let documented: Vec<(i64, &str)> = schema["enum"]
        .as_array()
        .expect("enum")
        .iter()
        .zip(schema["x-enum-varnames"].as_array().expect("names"))
        .map(|(code, name)| {
            (
                code.as_i64().expect("integer"),
                name.as_str().expect("name"),
            )
        })
        .collect();
    let ours: Vec<(i64, &str)> = ErrorCode::ALL
        .iter()
        .map(|code| (i64::from(code.code()), code.name()))
        .collect();
    assert_eq!(documented, ours);
    assert_eq!(
        schema["x-enum-descriptions"].as_array().map(Vec::len),
        Some(ours.len())
    );
}

/// The JSON field names `value` is written with.
fn written_fields(value: impl Serialize) -> BTreeSet<String> {
    serde_json::to_value(value)
        .expect("serializes")
        .as_object()
        .expect("an object")
        .keys()
        .cloned()
        .collect()
}

fn read<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("reads")
}

#[test]
fn the_schemas_name_the_fields_the_models_write() {
    use rental_domain::booking::response::{BookingCreationResponse, PriceResponse};
    use rental_domain::booking::search::AvailabilityItem;
    use rental_domain::{
        Additional, ApiError, AppliedCoverageBracket, Booking, BookingAdditional, BookingComment,
        BookingDescription, BranchOffice, Car, CarPlate, Category, CategorySummary, CreditCard,
        Customer, ErrorResponse, Language, Membership, Model, ModelAttribute, ModelBrand,
        ModelSummary, PagedResult, Place, PriceDetails, PriceItem,
    };

    let instant = "2026-01-01T10:00:00Z";
    let booking: Booking = read(json!({
        "Id": 1, "Customer": {}, "Category": {}, "FromDate": instant, "ToDate": instant,
        "DeliveryPlace": {}, "ReturnPlace": {}, "CurrentStatus": 2,
        "CurrentStatusDate": instant, "CreationDate": instant,
    }));
    let models: Vec<(&str, BTreeSet<String>)> = vec![
        ("Booking", written_fields(&booking)),
        (
            "BookingDescription",
            written_fields(BookingDescription::from(&booking)),
        ),
        (
            "BookingCreationResponse",
            written_fields(BookingCreationResponse::from(&booking)),
        ),
        (
            "PriceResponse",
            written_fields(read::<PriceResponse>(json!({
                "PriceItems": [], "Price": 0, "CustomerPrice": 0, "AgencyPrice": 0,
                "TotalDays": 1, "Currency": "USD",
            }))),
        ),
        (
            "BookingComment",
            written_fields(read::<BookingComment>(json!({
                "BookingId": 1, "Seq": 1, "Date": instant, "Text": "x",
            }))),
        ),
        (
            "WebApiErrorResponse",
            written_fields(ErrorResponse::new(
                &ApiError::new(ErrorCode::Unknown),
                Language::En,
                None,
            )),
        ),
        (
            "PagedResultOfBooking",
            written_fields(read::<PagedResult<Value>>(json!({
                "Offset": 0, "Limit": 30, "Total": 0, "NextOffset": 0,
            }))),
        ),
        (
            "AvailabilityItem",
            written_fields(AvailabilityItem {
                category: Category::default(),
                model: None,
                available: 1,
                price: read::<PriceResponse>(json!({
                    "PriceItems": [], "Price": 0, "CustomerPrice": 0, "AgencyPrice": 0,
                    "TotalDays": 1, "Currency": "USD",
                })),
            }),
        ),
        ("PriceDetails", written_fields(PriceDetails::default())),
        ("ModelSummary", written_fields(ModelSummary::default())),
        (
            "CategorySummary",
            written_fields(CategorySummary::default()),
        ),
        ("Customer", written_fields(Customer::default())),
        ("CreditCard", written_fields(CreditCard::default())),
        ("Membership", written_fields(Membership::default())),
        ("Car", written_fields(Car::default())),
        ("CarPlate", written_fields(CarPlate::default())),
        ("Model", written_fields(Model::default())),
        ("ModelBrand", written_fields(ModelBrand::default())),
        ("ModelAttribute", written_fields(ModelAttribute::default())),
        ("Category", written_fields(Category::default())),
        ("Place", written_fields(Place::default())),
        ("BranchOffice", written_fields(BranchOffice::default())),
        (
            "PriceItem",
            written_fields(PriceItem {
                applied_coverage_brackets: Some(Vec::new()),
                ..PriceItem::default()
            }),
        ),
        (
            "AppliedCoverageBracket",
            written_fields(AppliedCoverageBracket::default()),
        ),
        (
            "BookingAdditional",
            written_fields(BookingAdditional::default()),
        ),
        ("Additional", written_fields(Additional::default())),
    ];
    let document = document();
    for (name, fields) in models {
        let documented: BTreeSet<String> = document["components"]["schemas"][name]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("schema {name} has no properties"))
            .keys()
            .cloned()
            .collect();
        assert_eq!(documented, fields, "schema {name}");
    }
}

#[test]
fn the_page_shows_every_operation_and_schema() {
    let document = document();
    let html = render(&document);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script"), "no scripts");
    for (method, path, op) in operations(&document) {
        assert!(
            html.contains(&format!(
                "{}</span> <code>{}</code>",
                method.to_uppercase(),
                escape(path)
            )),
            "{method} {path}"
        );
        assert!(html.contains(&operation_anchor(op)));
    }
    for name in document["components"]["schemas"]
        .as_object()
        .expect("schemas")
        .keys()
    {
        assert!(html.contains(&format!("id=\"{}\"", schema_anchor(name))));
    }
    assert!(html.contains("<td><code>1111</code></td><td>PriceAgreementNotFound</td>"));
}

#[test]
fn text_is_escaped() {
    assert_eq!(
        escape("<a href=\"x\">'&'</a>"),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
    assert_eq!(
        prose("a `<b>` c\nd\n\n<i>"),
        "<p>a <code>&lt;b&gt;</code> c d</p>\n<p>&lt;i&gt;</p>\n"
    );
    let schema = json!({"type": ["string", "null"], "format": "date-time"});
    assert_eq!(type_html(&schema), "string (date-time) or null");
    let schema = json!({"type": "array", "items": {"$ref": "#/components/schemas/A<B"}});
    assert_eq!(
        type_html(&schema),
        "array of <a href=\"#schema-A&lt;B\">A&lt;B</a>"
    );
}

#[test]
fn documents_answer_get_only() {
    let docs = ApiDocs::load().expect("loads");
    let ok = docs
        .answer(&Method::GET, routes::DOCS_PATH)
        .expect("answered");
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(ok.headers()[CONTENT_TYPE], "text/html; charset=utf-8");
    let wrong = docs
        .answer(&Method::POST, routes::OPENAPI_PATH)
        .expect("answered");
    assert_eq!(wrong.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(wrong.headers()[ALLOW], "GET");
    assert!(docs.answer(&Method::GET, "/api/cars").is_none());
}
