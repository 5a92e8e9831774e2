//! Self-check-in (`PUT /api/selfcheckin`, interface.md 4.6): the renter completes the driver
//! data of a booking before picking the car up. docs/selfcheckin.md describes the model, the
//! checks and the effect for clients.
//!
//! Pure, like the rest of the crate: the `selfcheckin` component parses the body with
//! [`crate::json::parse_body`] into a [`SelfCheckinRequest`], reads the booking, calls
//! [`check`] with the tenant's booking settings and the instant of the request, and writes what
//! [`apply`] and [`apply_to_customer`] make of the booking and the stored customer.
//!
//! It reuses the booking rules: the Version rule ([`rules::next_version`]), the driver-age
//! rule and its tenant settings ([`customer::check_driver_age`]) and the e-mail check.

use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::booking::customer;
use crate::booking::rules;
use crate::booking::settings::BookingSettings;
use crate::error::{ApiError, ErrorCode};
use crate::json;
use crate::models::{Booking, Customer};
use crate::status::BookingStatus;

/// The key of the booking's `Attributes` under which the additional drivers are kept (an array
/// of [`AdditionalDriver`]).
pub const ADDITIONAL_DRIVERS: &str = "AdditionalDrivers";

/// Field names, as the request spells them, used in error messages.
pub mod fields {
    pub const BOOKING_ID: &str = "BookingId";
    pub const MAIN_DRIVER: &str = "MainDriver";
    pub const TERMS_ACCEPTED: &str = "TermsAccepted";
}

/// The body of `PUT /api/selfcheckin` (SelfCheckinUpdateBookingModel). Every field is
/// optional when read; [`check`] says which are required.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct SelfCheckinRequest {
    /// The booking checked in; required.
    pub booking_id: Option<i64>,
    /// Optimistic version, with the booking update's rule (a string; an integer is accepted).
    #[serde(deserialize_with = "json::text_or_integer")]
    pub version: Option<String>,
    /// The main driver: the booking's customer; required.
    pub main_driver: Option<MainDriver>,
    /// The other drivers; when sent they replace the booking's (`[]` removes them), when absent
    /// the booking's stay.
    pub additional_drivers: Option<Vec<AdditionalDriver>>,
    /// Arrival flight (or other transport) number; kept when absent.
    pub delivery_transportation_id: Option<String>,
    /// Departure flight (or other transport) number; kept when absent.
    pub return_transportation_id: Option<String>,
    /// The renter accepts the rental terms; required and must be `true`.
    pub terms_accepted: Option<bool>,
}

/// The main driver's data, with the names of the Customer (interface.md 2.3).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct MainDriver {
    pub firstname: Option<String>,
    pub lastname: Option<String>,
    pub document_id: Option<String>,
    pub document_type_id: Option<i64>,
    #[serde(with = "json::option_date_time")]
    pub document_id_issuance: Option<DateTime<FixedOffset>>,
    #[serde(with = "json::option_date_time")]
    pub document_id_expiration: Option<DateTime<FixedOffset>>,
    pub document_id_issuance_state: Option<String>,
    pub document_id_issuance_country: Option<String>,
    #[serde(with = "json::option_date_time")]
    pub birth_date: Option<DateTime<FixedOffset>>,
    pub birth_country: Option<String>,
    pub birth_state: Option<String>,
    pub address: Option<String>,
    pub address_number: Option<String>,
    pub address_department: Option<String>,
    pub zip_code: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub region: Option<String>,
    pub country: Option<String>,
    pub email_address: Option<String>,
    pub cell_phone: Option<String>,
    pub driver_licence_number: Option<String>,
    pub driver_licence_country: Option<String>,
    #[serde(with = "json::option_date_time")]
    pub driver_license_issuance: Option<DateTime<FixedOffset>>,
    #[serde(with = "json::option_date_time")]
    pub driver_license_expiration: Option<DateTime<FixedOffset>>,
    pub driver_license_renach_number: Option<String>,
    pub driver_license_category: Option<String>,
    pub driver_license_state: Option<String>,
}

/// An additional driver: names, identity document, birth date and the licence fields of the
/// Customer. Stored as sent (trimmed) in the booking's `Attributes` under
/// [`ADDITIONAL_DRIVERS`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct AdditionalDriver {
    pub firstname: Option<String>,
    pub lastname: Option<String>,
    pub document_id: Option<String>,
    pub document_type_id: Option<i64>,
    #[serde(with = "json::option_date_time")]
    pub birth_date: Option<DateTime<FixedOffset>>,
    pub driver_licence_number: Option<String>,
    pub driver_licence_country: Option<String>,
    #[serde(with = "json::option_date_time")]
    pub driver_license_issuance: Option<DateTime<FixedOffset>>,
    #[serde(with = "json::option_date_time")]
    pub driver_license_expiration: Option<DateTime<FixedOffset>>,
    pub driver_license_renach_number: Option<String>,
    pub driver_license_category: Option<String>,
    pub driver_license_state: Option<String>,
}

/// A checked self-check-in: what [`apply`] writes.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckIn {
    /// The Version to store ([`rules::next_version`]).
    pub version: Option<String>,
    pub main_driver: MainDriver,
    pub additional_drivers: Option<Vec<AdditionalDriver>>,
    pub delivery_transportation_id: Option<String>,
    pub return_transportation_id: Option<String>,
}

impl SelfCheckinRequest {
    /// The booking checked in: `BookingId`, required (98 naming it).
    pub fn booking_id(&self) -> Result<i64, ApiError> {
        self.booking_id
            .filter(|id| *id > 0)
            .ok_or_else(|| ApiError::missing_field(fields::BOOKING_ID))
    }
}

/// A text that counts: trimmed, not blank.
fn text(value: Option<&str>) -> Option<String> {
    value
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

/// The trimmed texts of a driver, blanks as absent.
fn trim(value: &mut Option<String>) {
    *value = text(value.as_deref());
}

/// Checks the self-check-in `request` of the booking `stored`, for a tenant with `settings`,
/// at the instant `now` (the tenant's clock). In this order:
///
/// 1. status: Quoted, Reserved and Confirmed may check in; Delivered, Closed and Canceled are
///    [`ErrorCode::BookingStatusNotAllowUpdate`] (26);
/// 2. the Version rule of an update (35);
/// 3. `TermsAccepted`: missing is 98; anything but `true` is 98 naming it;
/// 4. the main driver: missing required fields are 98 naming them (`MainDriver.BirthDate`);
///    a bad e-mail is [`ErrorCode::CustomerDataNotValid`] (5); an identity document expired
///    before today or issued after today is 5; the licence (missing number or dates, expired
///    before `ToDate`, issued after today) is [`ErrorCode::DriverLicenseInvalid`] (41); the
///    age on `FromDate` outside the tenant's range is [`ErrorCode::DriverAgeNotAllowed`] (34);
/// 5. each additional driver, with the same rules (`AdditionalDrivers[0].Lastname`).
pub fn check(
    request: &SelfCheckinRequest,
    stored: &Booking,
    settings: &BookingSettings,
    now: DateTime<FixedOffset>,
) -> Result<CheckIn, ApiError> {
    if matches!(
        stored.current_status,
        BookingStatus::Delivered | BookingStatus::Closed | BookingStatus::Canceled
    ) {
        return Err(rules::not_allowed());
    }
    let version = rules::next_version(stored.version.as_deref(), request.version.as_deref())?;
    match request.terms_accepted {
        None => return Err(ApiError::missing_field(fields::TERMS_ACCEPTED)),
        Some(false) => {
            return Err(ApiError::invalid_field(
                fields::TERMS_ACCEPTED,
                "must be true",
            ));
        }
        Some(true) => {}
    }
    let mut main = request
        .main_driver
        .clone()
        .ok_or_else(|| ApiError::missing_field(fields::MAIN_DRIVER))?;
    trim_main(&mut main);
    check_main(&main, stored, settings, now)?;
    let additional_drivers = match &request.additional_drivers {
        None => None,
        Some(drivers) => {
            let mut checked = Vec::with_capacity(drivers.len());
            for (index, driver) in drivers.iter().enumerate() {
                let mut driver = driver.clone();
                trim_additional(&mut driver);
                check_additional(&driver, index, stored, settings, now)?;
                checked.push(driver);
            }
            Some(checked)
        }
    };
    Ok(CheckIn {
        version,
        main_driver: main,
        additional_drivers,
        delivery_transportation_id: text(request.delivery_transportation_id.as_deref()),
        return_transportation_id: text(request.return_transportation_id.as_deref()),
    })
}

fn trim_main(main: &mut MainDriver) {
    for value in [
        &mut main.firstname,
        &mut main.lastname,
        &mut main.document_id,
        &mut main.document_id_issuance_state,
        &mut main.document_id_issuance_country,
        &mut main.birth_country,
        &mut main.birth_state,
        &mut main.address,
        &mut main.address_number,
        &mut main.address_department,
        &mut main.zip_code,
        &mut main.city,
        &mut main.state,
        &mut main.region,
        &mut main.country,
        &mut main.email_address,
        &mut main.cell_phone,
        &mut main.driver_licence_number,
        &mut main.driver_licence_country,
        &mut main.driver_license_renach_number,
        &mut main.driver_license_category,
        &mut main.driver_license_state,
    ] {
        trim(value);
    }
}

fn trim_additional(driver: &mut AdditionalDriver) {
    for value in [
        &mut driver.firstname,
        &mut driver.lastname,
        &mut driver.document_id,
        &mut driver.driver_licence_number,
        &mut driver.driver_licence_country,
        &mut driver.driver_license_renach_number,
        &mut driver.driver_license_category,
        &mut driver.driver_license_state,
    ] {
        trim(value);
    }
}

/// 98 naming `prefix.field` when `present` is false.
fn require(present: bool, prefix: &str, field: &str) -> Result<(), ApiError> {
    if present {
        Ok(())
    } else {
        Err(ApiError::missing_field(format!("{prefix}.{field}")))
    }
}

fn check_main(
    main: &MainDriver,
    stored: &Booking,
    settings: &BookingSettings,
    now: DateTime<FixedOffset>,
) -> Result<(), ApiError> {
    let p = fields::MAIN_DRIVER;
    for (present, field) in [
        (main.firstname.is_some(), "Firstname"),
        (main.lastname.is_some(), "Lastname"),
        (main.document_id.is_some(), "DocumentId"),
        (
            main.document_type_id.is_some_and(|id| id > 0),
            "DocumentTypeId",
        ),
        (main.birth_date.is_some(), "BirthDate"),
        (main.birth_country.is_some(), "BirthCountry"),
        (main.address.is_some(), "Address"),
        (main.city.is_some(), "City"),
        (main.country.is_some(), "Country"),
        (main.email_address.is_some(), "EmailAddress"),
        (main.cell_phone.is_some(), "CellPhone"),
    ] {
        require(present, p, field)?;
    }
    customer::check_email_field(main.email_address.as_deref(), &format!("{p}.EmailAddress"))?;
    check_document(
        main.document_id_issuance,
        main.document_id_expiration,
        p,
        now,
    )?;
    check_licence(
        main.driver_licence_number.as_deref(),
        main.driver_license_issuance,
        main.driver_license_expiration,
        p,
        stored,
        now,
    )?;
    check_age(main.birth_date, stored, settings)
}

fn check_additional(
    driver: &AdditionalDriver,
    index: usize,
    stored: &Booking,
    settings: &BookingSettings,
    now: DateTime<FixedOffset>,
) -> Result<(), ApiError> {
    let p = format!("AdditionalDrivers[{index}]");
    for (present, field) in [
        (driver.firstname.is_some(), "Firstname"),
        (driver.lastname.is_some(), "Lastname"),
        (driver.document_id.is_some(), "DocumentId"),
        (driver.birth_date.is_some(), "BirthDate"),
    ] {
        require(present, &p, field)?;
    }
    check_licence(
        driver.driver_licence_number.as_deref(),
        driver.driver_license_issuance,
        driver.driver_license_expiration,
        &p,
        stored,
        now,
    )?;
    check_age(driver.birth_date, stored, settings)
}

/// An identity document issued after today or expired before today (the tenant's dates) is
/// [`ErrorCode::CustomerDataNotValid`] naming the date.
fn check_document(
    issuance: Option<DateTime<FixedOffset>>,
    expiration: Option<DateTime<FixedOffset>>,
    prefix: &str,
    now: DateTime<FixedOffset>,
) -> Result<(), ApiError> {
    let today = now.date_naive();
    if issuance.is_some_and(|issued| issued.date_naive() > today) {
        return Err(ApiError::new(ErrorCode::CustomerDataNotValid)
            .with_field(format!("{prefix}.DocumentIdIssuance")));
    }
    if expiration.is_some_and(|expires| expires.date_naive() < today) {
        return Err(ApiError::new(ErrorCode::CustomerDataNotValid)
            .with_field(format!("{prefix}.DocumentIdExpiration")));
    }
    Ok(())
}

/// The licence: a number, an issuance date not after today and an expiration date not before
/// the booking's `ToDate` (by date); otherwise [`ErrorCode::DriverLicenseInvalid`] naming the
/// field.
fn check_licence(
    number: Option<&str>,
    issuance: Option<DateTime<FixedOffset>>,
    expiration: Option<DateTime<FixedOffset>>,
    prefix: &str,
    stored: &Booking,
    now: DateTime<FixedOffset>,
) -> Result<(), ApiError> {
    let invalid = |field: &str| {
        ApiError::new(ErrorCode::DriverLicenseInvalid).with_field(format!("{prefix}.{field}"))
    };
    if number.is_none() {
        return Err(invalid("DriverLicenceNumber"));
    }
    match issuance {
        Some(issued) if issued.date_naive() <= now.date_naive() => {}
        _ => return Err(invalid("DriverLicenseIssuance")),
    }
    match expiration {
        Some(expires) if expires.date_naive() >= stored.to_date.date_naive() => {}
        _ => return Err(invalid("DriverLicenseExpiration")),
    }
    Ok(())
}

/// The driver's age on the booking's `FromDate`, with the booking rule and its settings.
fn check_age(
    birth_date: Option<DateTime<FixedOffset>>,
    stored: &Booking,
    settings: &BookingSettings,
) -> Result<(), ApiError> {
    let driver = Customer {
        birth_date,
        ..Customer::default()
    };
    customer::check_driver_age(&driver, settings, stored.from_date)
}

/// The main driver's data written over `target` (the booking's customer or the stored one):
/// every field the request has replaces the stored one, `Name` becomes `Firstname Lastname`
/// and `Age` the age at `now`; fields the request leaves out stay.
pub fn apply_to_customer(target: &mut Customer, main: &MainDriver, now: DateTime<FixedOffset>) {
    fn set<T: Clone>(target: &mut Option<T>, value: &Option<T>) {
        if value.is_some() {
            target.clone_from(value);
        }
    }
    set(&mut target.firstname, &main.firstname);
    set(&mut target.lastname, &main.lastname);
    if let (Some(first), Some(last)) = (&main.firstname, &main.lastname) {
        target.name = Some(format!("{first} {last}"));
    }
    set(&mut target.document_id, &main.document_id);
    set(&mut target.document_type_id, &main.document_type_id);
    set(&mut target.document_id_issuance, &main.document_id_issuance);
    set(
        &mut target.document_id_expiration,
        &main.document_id_expiration,
    );
    set(
        &mut target.document_id_issuance_state,
        &main.document_id_issuance_state,
    );
    set(
        &mut target.document_id_issuance_country,
        &main.document_id_issuance_country,
    );
    set(&mut target.birth_date, &main.birth_date);
    set(&mut target.birth_country, &main.birth_country);
    set(&mut target.birth_state, &main.birth_state);
    set(&mut target.address, &main.address);
    set(&mut target.address_number, &main.address_number);
    set(&mut target.address_department, &main.address_department);
    set(&mut target.zip_code, &main.zip_code);
    set(&mut target.city, &main.city);
    set(&mut target.state, &main.state);
    set(&mut target.region, &main.region);
    set(&mut target.country, &main.country);
    set(&mut target.email_address, &main.email_address);
    set(&mut target.cell_phone, &main.cell_phone);
    set(
        &mut target.driver_licence_number,
        &main.driver_licence_number,
    );
    set(
        &mut target.driver_licence_country,
        &main.driver_licence_country,
    );
    set(
        &mut target.driver_license_issuance,
        &main.driver_license_issuance,
    );
    set(
        &mut target.driver_license_expiration,
        &main.driver_license_expiration,
    );
    set(
        &mut target.driver_license_renach_number,
        &main.driver_license_renach_number,
    );
    set(
        &mut target.driver_license_category,
        &main.driver_license_category,
    );
    set(&mut target.driver_license_state, &main.driver_license_state);
    if let Some(age) = customer::age_at(target, now) {
        target.age = Some(age);
    }
}

/// The checked self-check-in written over `booking` by `user` at `now`: the customer's driver
/// data ([`apply_to_customer`]), the additional drivers (when sent), the transportation ids
/// (when sent), the Version, `IsSelfCheckin`, `UpdatedOn` and `UpdatedByUserName`. Returns the
/// comment to record.
pub fn apply(
    booking: &mut Booking,
    checkin: &CheckIn,
    user: &str,
    now: DateTime<FixedOffset>,
) -> String {
    let again = booking.is_self_checkin;
    apply_to_customer(&mut booking.customer, &checkin.main_driver, now);
    if let Some(drivers) = &checkin.additional_drivers {
        if drivers.is_empty() {
            booking.attributes.remove(ADDITIONAL_DRIVERS);
        } else {
            booking.attributes.insert(
                ADDITIONAL_DRIVERS.to_owned(),
                serde_json::to_value(drivers).unwrap_or(Value::Null),
            );
        }
    }
    if let Some(id) = &checkin.delivery_transportation_id {
        booking.delivery_transportation_id = Some(Value::String(id.clone()));
    }
    if let Some(id) = &checkin.return_transportation_id {
        booking.return_transportation_id = Some(Value::String(id.clone()));
    }
    booking.version.clone_from(&checkin.version);
    booking.is_self_checkin = true;
    booking.updated_on = Some(now);
    booking.updated_by_user_name = Some(user.to_owned());
    let drivers = additional_drivers(booking).len();
    format!(
        "{user} {} the self-check-in: main driver {}, document {}, licence {}; {drivers} additional driver(s); terms accepted",
        if again { "corrected" } else { "completed" },
        booking.customer.name.as_deref().unwrap_or_default(),
        booking.customer.document_id.as_deref().unwrap_or_default(),
        booking
            .customer
            .driver_licence_number
            .as_deref()
            .unwrap_or_default(),
    )
}

/// The `Attributes` of a booking whose stored ones are `stored` after a booking creation or
/// update sends `sent`: the sent ones, except that [`ADDITIONAL_DRIVERS`] belongs to the
/// self-check-in, so the stored value stays and a sent one is ignored.
pub fn sent_attributes(
    stored: &BTreeMap<String, Value>,
    sent: &BTreeMap<String, Value>,
) -> BTreeMap<String, Value> {
    let mut attributes = sent.clone();
    attributes.remove(ADDITIONAL_DRIVERS);
    if let Some(drivers) = stored.get(ADDITIONAL_DRIVERS) {
        attributes.insert(ADDITIONAL_DRIVERS.to_owned(), drivers.clone());
    }
    attributes
}

/// The additional drivers stored on `booking` (none when there are none or they do not read).
pub fn additional_drivers(booking: &Booking) -> Vec<AdditionalDriver> {
    booking
        .attributes
        .get(ADDITIONAL_DRIVERS)
        .and_then(|value| serde_json::from_value(value.clone()).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::json::parse_body;

    fn at(value: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(value).unwrap()
    }

    const NOW: &str = "2030-01-05T12:00:00-03:00";

    fn booking(status: BookingStatus) -> Booking {
        serde_json::from_value(json!({
            "Id": 9,
            "Version": "1",
            "Customer": {"Id": 3, "Name": "Ana Gómez", "DocumentId": "old"},
            "Category": {"Id": 1},
            "FromDate": "2030-01-10T10:00:00-03:00",
            "ToDate": "2030-01-12T10:00:00-03:00",
            "DeliveryPlace": {"Id": 1},
            "ReturnPlace": {"Id": 1},
            "CurrentStatus": status.code(),
            "CurrentStatusDate": "2030-01-01T10:00:00Z",
            "CreationDate": "2030-01-01T10:00:00Z",
            "Attributes": {"Canal": "API"}
        }))
        .unwrap()
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
}
