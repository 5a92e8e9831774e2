use serde_json::json;

use super::*;
use crate::fixtures;
use crate::json::parse_body;

fn at(value: &str) -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339(value).unwrap()
}

const NOW: &str = "2030-01-05T12:00:00-03:00";

fn booking(status: BookingStatus) -> Booking {
    fixtures::booking(
        status,
        json!({
            "Id": 9,
            "Version": "1",
            "Customer": {"Id": 3, "Name": "Ana Gómez", "DocumentId": "old"},
            "Attributes": {"Canal": "API"}
        }),
    )
}

fn body() -> Value {
    json!({
        "BookingId": 9,
        "Version": 2,
        "MainDriver": {
            "Firstname": " Ana ", "Lastname": "Gómez",
            "DocumentId": "30111222", "DocumentTypeId": 1,
            "DocumentIdIssuance": "2020-01-01", "DocumentIdExpiration": "2035-01-01",
            "BirthDate": "1990-05-04", "BirthCountry": "AR",
            "Address": "Av. Corrientes", "AddressNumber": "1234", "City": "Buenos Aires",
            "Country": "AR", "EmailAddress": "ana@example.com", "CellPhone": "+54 11 5555-0000",
            "DriverLicenceNumber": "L-1", "DriverLicenceCountry": "AR",
            "DriverLicenseIssuance": "2015-01-01", "DriverLicenseExpiration": "2031-01-01",
            "DriverLicenseCategory": "B1"
        },
        "AdditionalDrivers": [{
            "Firstname": "Juan", "Lastname": "Pérez", "DocumentId": "20111222",
            "BirthDate": "1985-01-01", "DriverLicenceNumber": "L-2",
            "DriverLicenseIssuance": "2010-01-01", "DriverLicenseExpiration": "2030-01-12"
        }],
        "DeliveryTransportationId": "AR1234",
        "ReturnTransportationId": "AR1235",
        "TermsAccepted": true
    })
}

fn run(body: &Value, status: BookingStatus) -> Result<CheckIn, ApiError> {
    let request: SelfCheckinRequest = parse_body(body.to_string().as_bytes())?;
    let settings = BookingSettings::from_lookup("demo", |_| None).unwrap();
    check(&request, &booking(status), &settings, at(NOW))
}

fn error(body: &Value) -> (i32, Option<String>) {
    let error = run(body, BookingStatus::Reserved).unwrap_err();
    (error.code.code(), error.field)
}

#[test]
fn a_complete_check_in_fills_the_customer_and_the_booking() {
    let checkin = run(&body(), BookingStatus::Reserved).unwrap();
    let mut booking = booking(BookingStatus::Reserved);
    let comment = apply(&mut booking, &checkin, "api", at(NOW));
    let customer = &booking.customer;
    assert_eq!(customer.id, 3);
    assert_eq!(customer.name.as_deref(), Some("Ana Gómez"));
    assert_eq!(customer.firstname.as_deref(), Some("Ana"));
    assert_eq!(customer.document_id.as_deref(), Some("30111222"));
    assert_eq!(customer.driver_licence_number.as_deref(), Some("L-1"));
    assert_eq!(customer.driver_license_category.as_deref(), Some("B1"));
    assert_eq!(customer.age, Some(39));
    assert!(booking.is_self_checkin);
    assert_eq!(booking.version.as_deref(), Some("2"));
    assert_eq!(booking.updated_on, Some(at(NOW)));
    assert_eq!(booking.updated_by_user_name.as_deref(), Some("api"));
    assert_eq!(booking.delivery_transportation_id, Some(json!("AR1234")));
    assert_eq!(booking.return_transportation_id, Some(json!("AR1235")));
    assert_eq!(booking.attributes.get("Canal"), Some(&json!("API")));
    let drivers = additional_drivers(&booking);
    assert_eq!(drivers.len(), 1);
    assert_eq!(drivers[0].lastname.as_deref(), Some("Pérez"));
    assert!(
        comment.starts_with("api completed the self-check-in"),
        "{comment}"
    );
    assert!(comment.contains("1 additional driver"), "{comment}");

    // A second check-in corrects; without AdditionalDrivers they stay, [] removes them.
    let mut again = body();
    again["Version"] = json!(3);
    again["MainDriver"]["CellPhone"] = json!("+54 11 4444-0000");
    again.as_object_mut().unwrap().remove("AdditionalDrivers");
    let checkin = run(&again, BookingStatus::Reserved);
    let checkin = checkin.unwrap();
    let comment = apply(&mut booking, &checkin, "api", at(NOW));
    assert!(comment.starts_with("api corrected"), "{comment}");
    assert_eq!(
        booking.customer.cell_phone.as_deref(),
        Some("+54 11 4444-0000")
    );
    assert_eq!(additional_drivers(&booking).len(), 1);
    let mut none = again.clone();
    none["AdditionalDrivers"] = json!([]);
    none["Version"] = json!("x");
    let checkin = run(&none, BookingStatus::Reserved).unwrap();
    apply(&mut booking, &checkin, "api", at(NOW));
    assert!(additional_drivers(&booking).is_empty());
    assert!(!booking.attributes.contains_key(ADDITIONAL_DRIVERS));
}

#[test]
fn booking_updates_keep_the_additional_drivers() {
    let stored: BTreeMap<String, Value> = serde_json::from_value(json!({
        "Canal": "API", "AdditionalDrivers": [{"Lastname": "Pérez"}]
    }))
    .unwrap();
    let sent: BTreeMap<String, Value> = serde_json::from_value(json!({
        "Canal": "Web", "AdditionalDrivers": []
    }))
    .unwrap();
    assert_eq!(
        serde_json::to_value(sent_attributes(&stored, &sent)).unwrap(),
        json!({"Canal": "Web", "AdditionalDrivers": [{"Lastname": "Pérez"}]})
    );
    assert_eq!(
        serde_json::to_value(sent_attributes(&BTreeMap::new(), &sent)).unwrap(),
        json!({"Canal": "Web"})
    );
}

#[test]
fn statuses_and_versions() {
    for status in [
        BookingStatus::Quoted,
        BookingStatus::Reserved,
        BookingStatus::Confirmed,
    ] {
        assert!(run(&body(), status).is_ok(), "{status}");
    }
    for status in [
        BookingStatus::Delivered,
        BookingStatus::Closed,
        BookingStatus::Canceled,
    ] {
        assert_eq!(
            run(&body(), status).unwrap_err().code.code(),
            26,
            "{status}"
        );
    }
    let mut stale = body();
    stale["Version"] = json!("1");
    assert_eq!(error(&stale).0, 35);
    stale.as_object_mut().unwrap().remove("Version");
    assert_eq!(
        run(&stale, BookingStatus::Reserved)
            .unwrap()
            .version
            .as_deref(),
        Some("1")
    );
}

#[test]
fn each_rejection_names_its_field() {
    let case = |path: &[&str], value: Value| {
        let mut body = body();
        let mut target = &mut body;
        for key in &path[..path.len() - 1] {
            target = if let Ok(index) = key.parse::<usize>() {
                &mut target[index]
            } else {
                &mut target[*key]
            };
        }
        let last = path[path.len() - 1];
        if value.is_null() {
            target.as_object_mut().unwrap().remove(last);
        } else {
            target[last] = value;
        }
        error(&body)
    };
    let named = |code: i32, field: &str| (code, Some(field.to_owned()));
    let request: SelfCheckinRequest = parse_body(br#"{"BookingId": 0}"#).unwrap();
    assert_eq!(
        request.booking_id().unwrap_err(),
        ApiError::missing_field("BookingId")
    );
    assert_eq!(
        case(&["TermsAccepted"], Value::Null),
        named(98, "TermsAccepted")
    );
    assert_eq!(
        case(&["TermsAccepted"], json!(false)),
        named(98, "TermsAccepted")
    );
    assert_eq!(
        case(&["TermsAccepted"], json!("yes")),
        named(98, "TermsAccepted")
    );
    assert_eq!(case(&["MainDriver"], Value::Null), named(98, "MainDriver"));
    assert_eq!(
        case(&["MainDriver", "BirthDate"], Value::Null),
        named(98, "MainDriver.BirthDate")
    );
    assert_eq!(
        case(&["MainDriver", "BirthDate"], json!("yesterday")),
        named(98, "MainDriver.BirthDate")
    );
    assert_eq!(
        case(&["MainDriver", "Lastname"], json!("  ")),
        named(98, "MainDriver.Lastname")
    );
    assert_eq!(
        case(&["MainDriver", "EmailAddress"], json!("ana@")),
        named(5, "MainDriver.EmailAddress")
    );
    assert_eq!(
        case(&["MainDriver", "DocumentIdExpiration"], json!("2030-01-04")),
        named(5, "MainDriver.DocumentIdExpiration")
    );
    assert_eq!(
        case(&["MainDriver", "DriverLicenceNumber"], Value::Null),
        named(41, "MainDriver.DriverLicenceNumber")
    );
    assert_eq!(
        case(
            &["MainDriver", "DriverLicenseExpiration"],
            json!("2030-01-11")
        ),
        named(41, "MainDriver.DriverLicenseExpiration")
    );
    assert_eq!(
        case(
            &["MainDriver", "DriverLicenseIssuance"],
            json!("2030-01-06")
        ),
        named(41, "MainDriver.DriverLicenseIssuance")
    );
    assert_eq!(
        case(&["MainDriver", "BirthDate"], json!("2012-01-11")),
        (34, None)
    );
    assert_eq!(
        case(
            &["AdditionalDrivers", "0", "DriverLicenseExpiration"],
            Value::Null
        ),
        named(41, "AdditionalDrivers[0].DriverLicenseExpiration")
    );
    assert_eq!(
        case(&["AdditionalDrivers", "0", "Lastname"], Value::Null),
        named(98, "AdditionalDrivers[0].Lastname")
    );
    assert_eq!(
        case(
            &["AdditionalDrivers", "0", "BirthDate"],
            json!("2013-01-01")
        ),
        (34, None)
    );
}
