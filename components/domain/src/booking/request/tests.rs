use serde_json::json;

use super::*;
use crate::json::parse_body;

fn request(value: Value) -> BookingRequest {
    parse_body(value.to_string().as_bytes()).unwrap()
}

fn at(value: &str) -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339(value).unwrap()
}

#[test]
fn a_full_body_reads() {
    let request = request(json!({
        "Customer": {"Id": 3, "Name": "Ana"},
        "Car": {"Id": "AB123CD", "Model": {"Id": 2, "Name": "Onix", "SIPP": "ECMR"}},
        "Category": {"Id": 1, "Name": "Económico"},
        "FromDate": "2030-01-10T10:00:00-03:00",
        "ToDate": "2030-01-12T10:00:00-03:00",
        "DeliveryPlace": {"Id": 3, "IsCustomAddress": true, "Address": "Florida 100", "City": "CABA"},
        "ReturnPlace": {"Id": 1},
        "Additionals": [{"Additional": {"Id": 3}, "Quantity": 1}, {"Additional": {"Id": 4}}],
        "Price": 123.45,
        "Version": 7,
        "FullResponse": true,
        "PriceItems": [{"Id": 1}],
        "Franchise": 100,
        "DeliveryTransportationId": null,
        "CurrentLanguage": "es"
    }));
    assert_eq!(
        request.vehicle(),
        Some(VehicleChoice::Car("AB123CD".to_owned()))
    );
    assert_eq!(request.price, Some(Decimal::new(12345, 2)));
    assert_eq!(request.version.as_deref(), Some("7"));
    assert!(request.full_response());
    assert_eq!(request.delivery_transportation_id, Some(None));
    assert_eq!(request.return_transportation_id, None);
    let delivery = request.delivery_place(None).unwrap();
    assert_eq!(delivery.id, 3);
    assert_eq!(
        delivery.custom_address,
        Some(CustomAddress {
            address: Some("Florida 100".to_owned()),
            city: Some("CABA".to_owned())
        })
    );
    assert_eq!(request.return_place(None).unwrap().custom_address, None);
    let additionals: Vec<(i64, i64)> = request
        .additionals()
        .unwrap()
        .unwrap()
        .iter()
        .map(|taken| (taken.additional.id, taken.quantity))
        .collect();
    assert_eq!(additionals, [(3, 1), (4, 1)]);
    let period = request.period(None).unwrap();
    assert_eq!(period.from, at("2030-01-10T10:00:00-03:00"));
}

#[test]
fn the_most_specific_vehicle_wins_and_zero_ids_are_absent() {
    let vehicle = |value: Value| request(value).vehicle();
    assert_eq!(
        vehicle(json!({"Car": {"Id": "", "Model": {"Id": 4}}, "Category": {"Id": 2}})),
        Some(VehicleChoice::Model(4))
    );
    assert_eq!(
        vehicle(json!({"Car": {"Id": "  ", "Model": {"Id": 0}}, "Category": {"Id": 2}})),
        Some(VehicleChoice::Category(2))
    );
    assert_eq!(vehicle(json!({"Category": {"Id": 0}})), None);
    assert_eq!(vehicle(json!({})), None);
    assert_eq!(
        request(json!({})).required_vehicle().unwrap_err(),
        ApiError::missing_field("Category.Id")
    );
    assert_eq!(
        request(json!({})).required_customer().unwrap_err(),
        ApiError::missing_field("Customer")
    );
}

#[test]
fn wrong_types_name_the_field_by_its_path() {
    let error = parse_body::<BookingRequest>(br#"{"Customer": {"BirthDate": 12}}"#).unwrap_err();
    assert_eq!(error.code, ErrorCode::ModelNotValid);
    assert_eq!(error.field.as_deref(), Some("Customer.BirthDate"));
    let error = parse_body::<BookingRequest>(
        br#"{"Additionals": [{"Additional": {"Id": 1}}, {"Quantity": "two"}]}"#,
    )
    .unwrap_err();
    assert_eq!(error.field.as_deref(), Some("Additionals[1].Quantity"));
    let error = parse_body::<BookingRequest>(br#"{"FromDate": "next tuesday"}"#).unwrap_err();
    assert_eq!(error.field.as_deref(), Some("FromDate"));
    let error = parse_body::<BookingRequest>(br#"{"Price": "cheap"}"#).unwrap_err();
    assert_eq!(error.field.as_deref(), Some("Price"));
    let error = parse_body::<BookingRequest>(br#"{"Version": true}"#).unwrap_err();
    assert_eq!(error.field.as_deref(), Some("Version"));
}

#[test]
fn bodies_that_are_not_an_object_name_the_body() {
    for body in [&b""[..], b"null", b"7", b"{\"Id\": 1} trailing", b"{"] {
        let error = parse_body::<BookingRequest>(body).unwrap_err();
        assert_eq!(error.code, ErrorCode::ModelNotValid, "{body:?}");
        assert_eq!(error.field.as_deref(), Some(json::BODY), "{body:?}");
    }
}

#[test]
fn missing_dates_and_places_are_required_on_creation_only() {
    let empty = request(json!({}));
    assert_eq!(
        empty.period(None).unwrap_err(),
        ApiError::missing_field(fields::FROM_DATE)
    );
    assert_eq!(
        empty.delivery_place(None).unwrap_err(),
        ApiError::missing_field(fields::DELIVERY_PLACE_ID)
    );
    let stored = Period {
        from: at("2030-01-10T10:00:00Z"),
        to: at("2030-01-12T10:00:00Z"),
    };
    assert_eq!(empty.period(Some(stored)).unwrap(), stored);
    let later = request(json!({"ToDate": "2030-01-15T10:00:00Z"}));
    assert_eq!(
        later.period(Some(stored)).unwrap().to,
        at("2030-01-15T10:00:00Z")
    );
    let place = Place {
        id: 3,
        is_custom_address: true,
        address: Some("Florida 100".to_owned()),
        ..Place::default()
    };
    let kept = empty.return_place(Some(&place)).unwrap();
    assert_eq!(kept.id, 3);
    assert_eq!(
        kept.custom_address
            .and_then(|custom| custom.address)
            .as_deref(),
        Some("Florida 100")
    );
}

#[test]
fn the_return_must_come_after_the_delivery() {
    for (from, to) in [
        ("2030-01-10T10:00:00Z", "2030-01-10T10:00:00Z"),
        ("2030-01-10T10:00:00Z", "2030-01-09T10:00:00Z"),
    ] {
        let error = Period::new(at(from), at(to)).unwrap_err();
        assert_eq!(error.code, ErrorCode::InvlaidDates);
    }
}

#[test]
fn periods_that_touch_do_not_overlap() {
    let period = |from: &str, to: &str| Period::new(at(from), at(to)).unwrap();
    let a = period("2030-01-10T10:00:00Z", "2030-01-12T10:00:00Z");
    assert!(!a.overlaps(&period("2030-01-12T10:00:00Z", "2030-01-13T10:00:00Z")));
    assert!(!a.overlaps(&period("2030-01-09T10:00:00Z", "2030-01-10T10:00:00Z")));
    assert!(a.overlaps(&period("2030-01-12T09:59:00Z", "2030-01-13T10:00:00Z")));
    assert!(a.overlaps(&period("2030-01-09T10:00:00Z", "2030-01-15T10:00:00Z")));
    assert!(a.overlaps(&period("2030-01-11T10:00:00Z", "2030-01-11T12:00:00Z")));
}

#[test]
fn absent_additionals_are_none() {
    assert_eq!(request(json!({})).additionals(), Ok(None));
    assert_eq!(
        request(json!({"Additionals": []})).additionals(),
        Ok(Some(Vec::new()))
    );
}

#[test]
fn an_additional_item_must_name_its_additional() {
    for item in [
        json!({"Quantity": 1}),
        json!({"Additional": null}),
        json!({"Additional": {"Id": null}}),
        json!({"Additional": {"Id": 0}}),
    ] {
        let body = json!({"Additionals": [{"Additional": {"Id": 3}}, item]});
        let error = request(body).additionals().unwrap_err();
        assert_eq!(error.code, ErrorCode::ModelNotValid, "{item}");
        assert_eq!(error.field.as_deref(), Some("Additionals[1].Additional.Id"));
    }
}

#[test]
fn promotions_and_agencies() {
    assert!(
        request(json!({"PromotionCode": null}))
            .check_promotion()
            .is_ok()
    );
    assert!(
        request(json!({"PromotionCode": " "}))
            .check_promotion()
            .is_ok()
    );
    assert_eq!(
        request(json!({"PromotionCode": "SUMMER"}))
            .check_promotion()
            .unwrap_err()
            .code,
        ErrorCode::PromotionNotFound
    );
    assert_eq!(
        request(json!({"Agency": {"Id": 24, "Name": "x"}})).agency_id(),
        Some(24)
    );
    assert_eq!(request(json!({"Agency": 24})).agency_id(), Some(24));
    assert_eq!(request(json!({"Agency": null})).agency_id(), None);
    assert_eq!(request(json!({"Agency": {"Id": 0}})).agency_id(), None);
}

#[test]
fn cancel_and_operation_bodies() {
    let cancel: CancelRequest = parse_body(br#"{"BookingId": 4, "Lastname": " Silva "}"#).unwrap();
    assert_eq!(cancel.booking_id().unwrap(), 4);
    assert_eq!(cancel.lastname().unwrap(), "Silva");
    let cancel: CancelRequest = parse_body(br#"{"BookingId": 4}"#).unwrap();
    assert_eq!(
        cancel.lastname().unwrap_err(),
        ApiError::missing_field("Lastname")
    );

    let now = at("2030-01-10T10:00:00Z");
    let operation: OperationRequest =
        parse_body(br#"{"BookingId": 4, "Kilometers": 1200, "Gasoline": 8}"#).unwrap();
    assert_eq!(
        operation.operation(now).unwrap(),
        Operation {
            booking_id: 4,
            kilometers: 1200,
            gasoline: 8,
            date: now
        }
    );
    let operation: OperationRequest = parse_body(br#"{"BookingId": 4, "Gasoline": 8}"#).unwrap();
    assert_eq!(
        operation.operation(now).unwrap_err(),
        ApiError::missing_field("Kilometers")
    );
}
