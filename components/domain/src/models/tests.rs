//! The models against the interface: JSON names pinned to `docs/interface.md`, decimals kept
//! exact, nullable fields written as `null`, stored documents read with missing fields.

use std::collections::BTreeSet;
use std::str::FromStr;

use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::{Value, json};

use super::*;
use crate::error::{ApiError, ErrorCode};
use crate::fixtures;
use crate::i18n::Language;
use crate::status::BookingStatus;

fn interface() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/interface.md");
    std::fs::read_to_string(path).unwrap()
}

/// Field names of a `| Field | Type |` table under `heading`, splitting `A, B` cells.
fn table_fields(heading: &str) -> BTreeSet<String> {
    let text = interface();
    let section = text
        .split(heading)
        .nth(1)
        .unwrap()
        .split("\n#")
        .next()
        .unwrap()
        .to_owned();
    let mut fields = BTreeSet::new();
    for line in section.lines().filter(|line| line.starts_with('|')) {
        let cell = line.split('|').nth(1).unwrap().trim();
        if cell == "Field" || cell.starts_with("---") {
            continue;
        }
        fields.extend(cell.split(',').map(|name| name.trim().to_owned()));
    }
    assert!(!fields.is_empty(), "no table under {heading}");
    fields
}

/// Field names of a prose definition `Name: A (type), B, C (type) and D (type).`
fn prose_fields(name: &str) -> BTreeSet<String> {
    let text = interface();
    let start = [format!("\n{name}: "), format!(". {name}: ")]
        .iter()
        .find_map(|marker| text.find(marker.as_str()).map(|at| at + marker.len()))
        .unwrap_or_else(|| panic!("no definition of {name}"));
    let line = text[start..].lines().next().unwrap();
    // Drop the parenthesised types, then stop at the end of the sentence.
    let mut plain = String::new();
    let mut depth = 0;
    for c in line.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    let sentence = plain.split(". ").next().unwrap().trim_end_matches('.');
    sentence
        .split(',')
        .flat_map(|part| part.split(" and "))
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .collect()
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|name| (*name).to_owned()).collect()
}

/// The keys of a value serialized as a JSON object.
fn keys(value: &impl Serialize) -> BTreeSet<String> {
    match serde_json::to_value(value).unwrap() {
        Value::Object(map) => map.keys().cloned().collect(),
        other => panic!("not an object: {other}"),
    }
}

fn decimal(text: &str) -> Decimal {
    Decimal::from_str(text).unwrap()
}

/// A stored booking with only the required fields.
fn minimal_booking() -> Value {
    fixtures::stored_booking(
        BookingStatus::Reserved,
        json!({
            "Id": 7,
            "Customer": {"Id": 3, "Name": "Ana Gómez"},
            "Category": {"Id": 2, "Name": "Economy"},
            "FromDate": "2024-03-01T10:00:00-03:00",
            "DeliveryPlace": {"Id": 11, "Name": "Aeroparque"},
            "ReturnPlace": {"Id": 12, "Name": "Ezeiza"}
        }),
    )
}

fn sample_booking() -> Booking {
    let mut value = minimal_booking();
    value["Model"] = json!({"Id": 5, "Name": "Onix", "SIPP": "ECMR", "Doors": 4});
    value["Car"] = json!({"Id": "AB123CD", "Model": {"Id": 5, "Name": "Onix", "SIPP": "ECMR"}});
    value["Price"] = json!(100.50);
    value["Code"] = json!("BK-7");
    value["UpdatedOn"] = json!("2024-02-21T09:00:00Z");
    serde_json::from_value(value).unwrap()
}

const BOOKING_ONLY: [&str; 9] = [
    "TotalDaysString",
    "HasFranchiseModifiers",
    "PriceItems",
    "AvailablePromotions",
    "Attributes",
    "Links",
    "DistanceUnit",
    "DeliveryPlace",
    "ReturnPlace",
];

const DESCRIPTION_ONLY: [&str; 4] = [
    "IsFullBonus",
    "FeeNoShow",
    "DeliveryPlaceId",
    "ReturnPlaceId",
];

#[test]
fn booking_fields_are_the_interface_table() {
    let expected = table_fields("### 2.1 Booking (full form)");
    assert_eq!(expected.len(), 70, "{expected:?}");
    assert_eq!(keys(&sample_booking()), expected);
}

#[test]
fn booking_description_fields_follow_section_2_2() {
    let description = BookingDescription::from(&sample_booking());
    let mut expected = table_fields("### 2.1 Booking (full form)");
    for name in BOOKING_ONLY {
        assert!(expected.remove(name), "{name}");
    }
    expected.extend(names(&DESCRIPTION_ONLY));
    assert_eq!(keys(&description), expected);
    assert_eq!(
        keys(description.model.as_ref().unwrap()),
        names(&["Id", "Name", "SIPP"])
    );
    assert_eq!(keys(&description.category), names(&["Id", "Name"]));
}

#[test]
fn booking_description_carries_the_booking() {
    let booking = sample_booking();
    let description = BookingDescription::from(&booking);
    assert_eq!(description.id, 7);
    assert_eq!(description.delivery_place_id, 11);
    assert_eq!(description.return_place_id, 12);
    assert_eq!(
        description.model,
        Some(ModelSummary {
            id: 5,
            name: "Onix".to_owned(),
            sipp: "ECMR".to_owned()
        })
    );
    assert_eq!(description.category.name, "Economy");
    assert_eq!(description.customer.as_ref().unwrap().id, 3);
    assert_eq!(description.car.as_ref().unwrap().id, "AB123CD");
    assert_eq!(description.price, decimal("100.50"));
    assert_eq!(description.current_status, BookingStatus::Reserved);
    assert_eq!(description.updated_on, booking.updated_on);
    assert_eq!(description.code.as_deref(), Some("BK-7"));
    assert!(!description.is_full_bonus);
    assert_eq!(description.fee_no_show, Decimal::ZERO);

    let json = serde_json::to_value(&description).unwrap();
    assert_eq!(
        json["Model"],
        json!({"Id": 5, "Name": "Onix", "SIPP": "ECMR"})
    );
    assert_eq!(json["DeliveryPlaceId"], json!(11));
}

#[test]
fn booking_description_round_trips() {
    let description = BookingDescription::from(&sample_booking());
    let text = serde_json::to_string(&description).unwrap();
    let back: BookingDescription = serde_json::from_str(&text).unwrap();
    assert_eq!(back, description);
}

#[test]
fn customer_fields_are_the_interface_table() {
    assert_eq!(keys(&Customer::default()), table_fields("### 2.3 Customer"));
}

#[test]
fn prose_models_match_the_interface() {
    assert_eq!(keys(&CreditCard::default()), prose_fields("CreditCard"));
    assert_eq!(keys(&Membership::default()), prose_fields("Membership"));
    assert_eq!(keys(&Car::default()), prose_fields("Car"));
    assert_eq!(keys(&Model::default()), prose_fields("Model"));
    assert_eq!(
        keys(&ModelAttribute::default()),
        prose_fields("ModelAttribute")
    );
    assert_eq!(keys(&Category::default()), prose_fields("Category"));
    assert_eq!(keys(&Place::default()), prose_fields("Place"));
    let rental_line = PriceItem {
        applied_coverage_brackets: Some(Vec::new()),
        ..PriceItem::default()
    };
    assert_eq!(keys(&rental_line), prose_fields("PriceItem"));
    let mut other_line = prose_fields("PriceItem");
    other_line.remove("AppliedCoverageBrackets");
    assert_eq!(
        keys(&PriceItem::default()),
        other_line,
        "an optional field, left out rather than null"
    );
    assert_eq!(
        keys(&AppliedCoverageBracket::default()),
        prose_fields("AppliedCoverageBracket")
    );
    assert_eq!(
        keys(&BookingAdditional::default()),
        prose_fields("BookingAdditional")
    );
    let mut additional = prose_fields("Additional");
    additional.insert("IsRequired".to_owned());
    assert_eq!(keys(&Additional::default()), additional);
}

#[test]
fn nested_objects_match_the_interface() {
    assert_eq!(
        keys(&CarPlate::default()),
        names(&["Id", "IssuingCountry", "IssuingState"])
    );
    assert_eq!(keys(&ModelBrand::default()), names(&["Name"]));
    assert_eq!(
        keys(&PriceDetails::default()),
        names(&[
            "Price",
            "CustomerPrice",
            "AgencyPrice",
            "SalesCommission",
            "Currency"
        ])
    );
}

#[test]
fn envelopes_match_the_interface() {
    let page = PagedResult::<i64> {
        offset: 0,
        limit: 30,
        total: 0,
        results: None,
        next_offset: 0,
    };
    assert_eq!(keys(&page), table_fields("### 2.6 PagedResult"));
    let error = ErrorResponse::new(&ApiError::new(ErrorCode::Unknown), Language::En, None);
    assert_eq!(
        keys(&error),
        table_fields("### 2.7 Error response (WebApiErrorResponse)")
    );
}

#[test]
fn contract_and_catalog_models() {
    assert_eq!(
        keys(&BranchOffice::default()),
        names(&[
            "Id",
            "Name",
            "Address",
            "City",
            "Country",
            "IATACode",
            "Latitude",
            "Longitude",
            "TimeZone",
            "Places"
        ])
    );
    assert_eq!(
        keys(&Tariff::default()),
        names(&[
            "Id",
            "Name",
            "CategoryId",
            "ModelId",
            "Currency",
            "Brackets"
        ])
    );
    assert_eq!(
        keys(&TariffBracket::default()),
        names(&["DaysFrom", "DaysTo", "DailyAmount"])
    );
    let comment: BookingComment = serde_json::from_value(json!({
        "BookingId": 7, "Seq": 1, "Date": "2024-02-20T09:00:00Z", "Text": "Dates changed"
    }))
    .unwrap();
    assert_eq!(comment.user_name, None);
    assert_eq!(
        keys(&comment),
        names(&["BookingId", "Seq", "Date", "UserName", "Text"])
    );
}

#[test]
fn decimals_are_exact_json_numbers() {
    let parts: Vec<Additional> =
        serde_json::from_str(r#"[{"Id": 1, "Price": 0.1}, {"Id": 2, "Price": 0.2}]"#).unwrap();
    let sum: Decimal = parts.iter().map(|part| part.price).sum();
    assert_eq!(sum, decimal("0.3"));

    let details = PriceDetails {
        price: sum,
        customer_price: decimal("12345678901234.56"),
        agency_price: decimal("10.50"),
        sales_commission: Decimal::ZERO,
        currency: "ARS".to_owned(),
    };
    let text = serde_json::to_string(&details).unwrap();
    assert_eq!(
        text,
        r#"{"Price":0.3,"CustomerPrice":12345678901234.56,"AgencyPrice":10.50,"SalesCommission":0,"Currency":"ARS"}"#
    );
    let back: PriceDetails = serde_json::from_str(&text).unwrap();
    assert_eq!(back, details);
}

#[test]
fn decimals_survive_a_trip_through_a_json_value() {
    let value: Value = serde_json::from_str(
        r#"{"Price": 12345678901234.56, "Latitude": -34.6037345, "Longitude": -58.3815704}"#,
    )
    .unwrap();
    let place: Place = serde_json::from_value(value).unwrap();
    assert_eq!(place.price, decimal("12345678901234.56"));
    assert_eq!(place.latitude, Some(decimal("-34.6037345")));
    assert_eq!(place.longitude, Some(decimal("-58.3815704")));
    let again = serde_json::to_value(&place).unwrap();
    assert_eq!(again["Price"].to_string(), "12345678901234.56");
}

#[test]
fn nullable_fields_are_written_as_null() {
    let json = serde_json::to_value(sample_booking()).unwrap();
    assert_eq!(json["Version"], Value::Null);
    assert_eq!(json["Franchise"], Value::Null);
    assert_eq!(json["Links"], Value::Null);
    assert_eq!(json["Customer"]["BirthDate"], Value::Null);
    assert_eq!(json["Car"]["CurrentPlate"], Value::Null);
    assert_eq!(json["Attributes"], json!({}));
    assert_eq!(json["PriceItems"], json!([]));
    assert_eq!(json["CurrentStatus"], json!(2));
}

#[test]
fn a_minimal_stored_booking_reads_with_defaults() {
    let booking: Booking = serde_json::from_value(minimal_booking()).unwrap();
    assert_eq!(booking.updated_on, None);
    assert_eq!(booking.car, None);
    assert_eq!(booking.model, None);
    assert_eq!(booking.price, Decimal::ZERO);
    assert_eq!(booking.price_details, PriceDetails::default());
    assert!(booking.additionals.is_empty());
    assert_eq!(booking.from_date.offset().local_minus_utc(), -3 * 3600);

    let text = serde_json::to_string(&booking).unwrap();
    let back: Booking = serde_json::from_str(&text).unwrap();
    assert_eq!(back, booking);
}

#[test]
fn a_booking_without_a_required_field_is_refused() {
    for field in ["Id", "FromDate", "CurrentStatus", "Category"] {
        let mut value = minimal_booking();
        value.as_object_mut().unwrap().remove(field);
        let error = serde_json::from_value::<Booking>(value).unwrap_err();
        assert!(error.to_string().contains(field), "{field}: {error}");
    }
}

#[test]
fn dates_keep_their_offset_and_accept_no_offset() {
    let booking = sample_booking();
    let json = serde_json::to_value(&booking).unwrap();
    assert_eq!(json["FromDate"], json!("2024-03-01T10:00:00-03:00"));
    assert_eq!(json["UpdatedOn"], json!("2024-02-21T09:00:00Z"));

    let customer: Customer = serde_json::from_value(json!({
        "Id": 1,
        "BirthDate": "1980-05-01",
        "DriverLicenseExpiration": "2030-01-31T00:00:00",
        "DocumentIdExpiration": null
    }))
    .unwrap();
    assert_eq!(
        serde_json::to_value(&customer).unwrap()["BirthDate"],
        json!("1980-05-01T00:00:00Z")
    );
    assert_eq!(
        serde_json::to_value(&customer).unwrap()["DriverLicenseExpiration"],
        json!("2030-01-31T00:00:00Z")
    );
    assert_eq!(customer.document_id_expiration, None);

    let error = serde_json::from_value::<Customer>(json!({"BirthDate": "someday"})).unwrap_err();
    assert!(error.to_string().contains("someday"), "{error}");
}

#[test]
fn card_numbers_are_masked_and_security_codes_never_written() {
    let card: CreditCard = serde_json::from_value(json!({
        "Type": "VISA",
        "Number": "4111 1111 1111 1234",
        "SecurityCode": "123",
        "ExpirationMonth": 12,
        "ExpirationYear": 2030
    }))
    .unwrap();
    assert_eq!(card.security_code.as_deref(), Some("123"));
    let json = serde_json::to_value(&card).unwrap();
    assert_eq!(json["Number"], json!("************1234"));
    assert_eq!(json["SecurityCode"], Value::Null);
    assert_eq!(json["Type"], json!("VISA"));
}

#[test]
fn request_additionals_need_only_an_id() {
    let additionals: Vec<BookingAdditional> =
        serde_json::from_value(json!([{"Additional": {"Id": 4}, "Quantity": 2}])).unwrap();
    assert_eq!(additionals[0].additional.id, 4);
    assert_eq!(additionals[0].quantity, 2);
    assert!(!additionals[0].additional.is_required);
}

#[test]
fn error_response_body() {
    let error = ApiError::invalid_field("limit", "must be an integer");
    let body = ErrorResponse::new(&error, Language::Es, Some("c0ffee".to_owned()));
    assert_eq!(
        serde_json::to_value(&body).unwrap(),
        json!({
            "ErrorMessage": "El campo 'limit' no es válido: must be an integer",
            "ErrorCode": 98,
            "Id": "c0ffee"
        })
    );
    let back: ErrorResponse = serde_json::from_value(json!({"ErrorCode": 13})).unwrap();
    assert_eq!(back.error_code, ErrorCode::InvlaidDates);
    assert_eq!(back.error_message, None);
}

#[test]
fn paged_result_writes_every_field() {
    let page = PagedResult {
        offset: 0,
        limit: 30,
        total: 1,
        results: Some(vec![json!({"Id": 1})]),
        next_offset: 1,
    };
    assert_eq!(
        serde_json::to_value(&page).unwrap(),
        json!({"Offset": 0, "Limit": 30, "Total": 1, "Results": [{"Id": 1}], "NextOffset": 1})
    );
}

/// Every field of `model`'s JSON form, one at a time, sent as `null`: read exactly as the same
/// object without that field (interface.md 2: a field can be null unless said otherwise).
fn null_is_absent<T>(model: &T)
where
    T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let full = serde_json::to_value(model).unwrap();
    let fields = full.as_object().unwrap();
    assert!(!fields.is_empty());
    for name in fields.keys() {
        let mut with_null = full.clone();
        with_null[name] = Value::Null;
        let mut without = full.clone();
        without.as_object_mut().unwrap().remove(name);
        let read: T = crate::json::parse_body(with_null.to_string().as_bytes())
            .unwrap_or_else(|error| panic!("{name}: null refused: {error:?}"));
        let absent: T = crate::json::parse_body(without.to_string().as_bytes()).unwrap();
        assert_eq!(read, absent, "{name}: null differs from absent");
    }
}

#[test]
fn null_means_not_given_in_every_field_of_the_request_models() {
    let customer: Customer = serde_json::from_value(json!({
        "Id": 3, "Name": "Ana", "IsCompany": true, "HasWebLogin": true,
        "CreditCards": [{"Type": "VISA", "Number": "4111111111111234"}],
        "Memberships": [{"Id": 2, "UsedInBooking": true, "BookingBrandIds": [1]}],
        "CommercialAgreements": ["AGENCIAS-10"]
    }))
    .unwrap();
    null_is_absent(&customer);
    null_is_absent(&customer.credit_cards[0]);
    null_is_absent(&customer.memberships[0]);
}
