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
    /// Optimistic version, with the booking update's rule (a string; a number is accepted).
    #[serde(deserialize_with = "json::text_or_number")]
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
mod tests;
