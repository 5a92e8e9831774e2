//! Cancellation, delivery and return (contract.md "Booking statuses"): when each is allowed
//! and what it changes.
//!
//! - cancel: Quoted, Reserved or Confirmed -> Canceled, confirmed by the customer's last
//!   name;
//! - deliver: Reserved or Confirmed -> Delivered, from 24 hours before `FromDate`, with the
//!   car's odometer and fuel level;
//! - return: Delivered -> Closed; the return date is the close date the closed list reads.

use chrono::{DateTime, FixedOffset, TimeDelta};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::request::{Operation, fields};
use super::settings::BookingSettings;
use crate::error::{ApiError, ErrorCode};
use crate::json;
use crate::models::{Booking, BranchOffice, Car};
use crate::status::BookingStatus;

/// How long before `FromDate` a car may be delivered.
pub const EARLIEST_DELIVERY: TimeDelta = TimeDelta::hours(24);
/// How far in the future an operation's `Date` may be (clock skew between systems).
pub const FUTURE_TOLERANCE: TimeDelta = TimeDelta::minutes(5);
/// A full tank, in the eighths `Gasoline` counts.
pub const FULL_TANK: i64 = 8;

/// What was recorded at a delivery or a return: the booking's `DeliveryInfo` or
/// `DropoffInfo`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct OperationRecord {
    #[serde(with = "json::date_time")]
    pub date: DateTime<FixedOffset>,
    pub kilometers: i64,
    pub gasoline: i64,
    pub user_name: String,
}

/// Checks a cancellation of `booking` confirmed with `lastname`: it must be the customer's
/// `Lastname` (or, for a customer without one, its `Name`), in any case, else
/// [`ErrorCode::BookingNotFoundForCustomer`]; the booking must be Quoted, Reserved or
/// Confirmed, else [`ErrorCode::BookingStatusNotAllowCancel`].
pub fn check_cancel(booking: &Booking, lastname: &str) -> Result<(), ApiError> {
    let customer = &booking.customer;
    let expected = customer.lastname.as_deref().or(customer.name.as_deref());
    let matches = expected
        .is_some_and(|expected| expected.trim().to_lowercase() == lastname.trim().to_lowercase());
    if !matches {
        return Err(
            ApiError::new(ErrorCode::BookingNotFoundForCustomer).with_field(fields::LASTNAME)
        );
    }
    match booking.current_status {
        BookingStatus::Quoted | BookingStatus::Reserved | BookingStatus::Confirmed => Ok(()),
        _ => Err(ApiError::new(ErrorCode::BookingStatusNotAllowCancel)),
    }
}

/// `booking` canceled at `now` by `user`.
pub fn cancel(booking: &mut Booking, now: DateTime<FixedOffset>, user: &str) {
    set_status(booking, BookingStatus::Canceled, now, now, user);
}

/// Checks a delivery of `booking`, whose car is `car` as stored, at `now`:
///
/// - Delivered or Closed: [`ErrorCode::BookingAlreadyDelivered`]; Quoted or Canceled:
///   [`ErrorCode::BookingStatusNotAllowDelivery`]; no car assigned: [`ErrorCode::CarNotFound`];
/// - `Date` after now or more than 24 hours before `FromDate`: [`ErrorCode::InvlaidDates`];
/// - `Kilometers` below the car's: [`ErrorCode::InvalidCarKilometers`]; `Gasoline` outside 0
///   to 8: [`ErrorCode::InvalidCarGasoline`];
/// - a balance to pay when the tenant requires payment first
///   (`require_paid_before_delivery`): [`ErrorCode::CannotDeliverBookingWithBalance`].
pub fn check_delivery(
    booking: &Booking,
    car: Option<&Car>,
    operation: &Operation,
    settings: &BookingSettings,
    now: DateTime<FixedOffset>,
) -> Result<(), ApiError> {
    match booking.current_status {
        BookingStatus::Reserved | BookingStatus::Confirmed => {}
        BookingStatus::Delivered | BookingStatus::Closed => {
            return Err(ApiError::new(ErrorCode::BookingAlreadyDelivered));
        }
        BookingStatus::Quoted | BookingStatus::Canceled => {
            return Err(ApiError::new(ErrorCode::BookingStatusNotAllowDelivery));
        }
    }
    let car = car.ok_or_else(|| ApiError::new(ErrorCode::CarNotFound))?;
    check_date(operation.date, booking.from_date - EARLIEST_DELIVERY, now)?;
    check_readings(operation, car.current_kms)?;
    if settings.require_paid_before_delivery && booking.balance > Decimal::ZERO {
        return Err(ApiError::new(ErrorCode::CannotDeliverBookingWithBalance));
    }
    Ok(())
}

/// `booking` and its `car` after the delivery `operation` by `user`, at `now`.
pub fn deliver(
    booking: &mut Booking,
    car: &mut Car,
    operation: &Operation,
    now: DateTime<FixedOffset>,
    user: &str,
) -> Result<(), serde_json::Error> {
    car.current_kms = operation.kilometers;
    car.gasoline = operation.gasoline;
    booking.car = Some(car.clone());
    booking.delivery_info = Some(record(operation, user)?);
    set_status(booking, BookingStatus::Delivered, operation.date, now, user);
    Ok(())
}

/// Checks a return of `booking` at `now`:
///
/// - Closed: [`ErrorCode::BookingAlreadyReturned`]; any other status but Delivered:
///   [`ErrorCode::BookingStatusNotAllowReturn`];
/// - `Date` after now or before the delivery: [`ErrorCode::InvlaidDates`];
/// - `Kilometers` below those at the delivery: [`ErrorCode::InvalidCarKilometers`];
///   `Gasoline` outside 0 to 8: [`ErrorCode::InvalidCarGasoline`].
pub fn check_return(
    booking: &Booking,
    operation: &Operation,
    now: DateTime<FixedOffset>,
) -> Result<(), ApiError> {
    match booking.current_status {
        BookingStatus::Delivered => {}
        BookingStatus::Closed => return Err(ApiError::new(ErrorCode::BookingAlreadyReturned)),
        _ => return Err(ApiError::new(ErrorCode::BookingStatusNotAllowReturn)),
    }
    check_date(operation.date, booking.current_status_date, now)?;
    let delivered_kms = delivery_record(booking)
        .map(|record| record.kilometers)
        .or(booking.car.as_ref().map(|car| car.current_kms))
        .unwrap_or(0);
    check_readings(operation, delivered_kms)
}

/// `booking` and its car (`car`, when it has one) after the return `operation` by `user` at
/// `now`: Closed at the operation's date, the car at the return place's office
/// (`return_office`).
pub fn return_car(
    booking: &mut Booking,
    car: Option<&mut Car>,
    return_office: Option<&BranchOffice>,
    operation: &Operation,
    now: DateTime<FixedOffset>,
    user: &str,
) -> Result<(), serde_json::Error> {
    if let Some(car) = car {
        car.current_kms = operation.kilometers;
        car.gasoline = operation.gasoline;
        car.last_return_date = Some(operation.date);
        if let Some(office) = return_office {
            car.current_branch_office_id = Some(office.id);
            car.current_branch_office = Some(office.name.clone());
        }
        booking.car = Some(car.clone());
    }
    booking.dropoff_info = Some(record(operation, user)?);
    set_status(booking, BookingStatus::Closed, operation.date, now, user);
    Ok(())
}

/// The record of the delivery of `booking`, when it has a readable one.
fn delivery_record(booking: &Booking) -> Option<OperationRecord> {
    serde_json::from_value(booking.delivery_info.clone()?).ok()
}

fn record(operation: &Operation, user: &str) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::to_value(OperationRecord {
        date: operation.date,
        kilometers: operation.kilometers,
        gasoline: operation.gasoline,
        user_name: user.to_owned(),
    })
}

/// An operation's date: not before `earliest`, not after `now` (with a small tolerance).
fn check_date(
    date: DateTime<FixedOffset>,
    earliest: DateTime<FixedOffset>,
    now: DateTime<FixedOffset>,
) -> Result<(), ApiError> {
    if date < earliest || date > now + FUTURE_TOLERANCE {
        return Err(ApiError::new(ErrorCode::InvlaidDates).with_field(fields::DATE));
    }
    Ok(())
}

/// An operation's odometer (not below `kilometers`) and fuel level (0 to 8).
fn check_readings(operation: &Operation, kilometers: i64) -> Result<(), ApiError> {
    if operation.kilometers < kilometers.max(0) {
        return Err(ApiError::new(ErrorCode::InvalidCarKilometers).with_field(fields::KILOMETERS));
    }
    if !(0..=FULL_TANK).contains(&operation.gasoline) {
        return Err(ApiError::new(ErrorCode::InvalidCarGasoline).with_field(fields::GASOLINE));
    }
    Ok(())
}

/// Moves `booking` to `status` as of `at`, changed by `user` at `now`.
fn set_status(
    booking: &mut Booking,
    status: BookingStatus,
    at: DateTime<FixedOffset>,
    now: DateTime<FixedOffset>,
    user: &str,
) {
    booking.current_status = status;
    booking.current_status_date = at;
    booking.updated_on = Some(now);
    booking.updated_by_user_name = Some(user.to_owned());
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::fixtures;

    fn at(value: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(value).unwrap()
    }

    fn booking(status: BookingStatus) -> Booking {
        fixtures::booking(
            status,
            json!({
                "Customer": {"Id": 1, "Name": "Ana Souza", "Lastname": "Souza"},
                "Car": {"Id": "AA100AA", "CurrentKms": 1000, "Gasoline": 8},
                "FromDate": "2030-01-10T10:00:00Z",
                "ToDate": "2030-01-12T10:00:00Z",
                "CurrentStatusDate": "2030-01-10T10:05:00Z",
                "Balance": 10
            }),
        )
    }

    fn operation(date: &str, kilometers: i64, gasoline: i64) -> Operation {
        Operation {
            booking_id: 1,
            kilometers,
            gasoline,
            date: at(date),
        }
    }

    fn settings() -> BookingSettings {
        BookingSettings::from_lookup("demo", |_| None).unwrap()
    }

    fn code(result: Result<(), ApiError>) -> i32 {
        result.unwrap_err().code.code()
    }

    #[test]
    fn cancellation_needs_the_last_name_and_an_active_status() {
        use BookingStatus as S;
        assert!(check_cancel(&booking(S::Reserved), "souza").is_ok());
        assert!(check_cancel(&booking(S::Quoted), " SOUZA ").is_ok());
        assert_eq!(code(check_cancel(&booking(S::Reserved), "Silva")), 8);
        for status in [S::Delivered, S::Closed, S::Canceled] {
            assert_eq!(code(check_cancel(&booking(status), "Souza")), 9, "{status}");
        }
        let mut company = booking(S::Confirmed);
        company.customer.lastname = None;
        assert!(check_cancel(&company, "ana souza").is_ok());

        let now = at("2030-01-02T10:00:00Z");
        let mut canceled = booking(S::Reserved);
        cancel(&mut canceled, now, "api");
        assert_eq!(canceled.current_status, S::Canceled);
        assert_eq!(canceled.current_status_date, now);
        assert_eq!(canceled.updated_by_user_name.as_deref(), Some("api"));
    }

    #[test]
    fn delivery_rules() {
        use BookingStatus as S;
        let now = at("2030-01-10T09:00:00Z");
        let reserved = booking(S::Reserved);
        let car = reserved.car.clone().unwrap();
        let ok = operation("2030-01-10T09:00:00Z", 1000, 8);
        assert!(check_delivery(&reserved, Some(&car), &ok, &settings(), now).is_ok());
        let check = |booking: &Booking, operation: &Operation| {
            code(check_delivery(
                booking,
                Some(&car),
                operation,
                &settings(),
                now,
            ))
        };
        assert_eq!(check(&booking(S::Delivered), &ok), 36);
        assert_eq!(check(&booking(S::Closed), &ok), 36);
        assert_eq!(check(&booking(S::Quoted), &ok), 40);
        assert_eq!(check(&booking(S::Canceled), &ok), 40);
        assert_eq!(
            code(check_delivery(&reserved, None, &ok, &settings(), now)),
            2
        );
        assert_eq!(
            check(&reserved, &operation("2030-01-09T09:59:00Z", 1000, 8)),
            13
        );
        assert!(
            check_delivery(
                &reserved,
                Some(&car),
                &operation("2030-01-09T10:00:00Z", 1000, 8),
                &settings(),
                now
            )
            .is_ok(),
            "24 hours before FromDate is allowed"
        );
        assert_eq!(
            check(&reserved, &operation("2030-01-10T09:06:00Z", 1000, 8)),
            13
        );
        assert_eq!(
            check(&reserved, &operation("2030-01-10T09:00:00Z", 999, 8)),
            39
        );
        assert_eq!(
            check(&reserved, &operation("2030-01-10T09:00:00Z", 1000, 9)),
            72
        );
        assert_eq!(
            check(&reserved, &operation("2030-01-10T09:00:00Z", 1000, -1)),
            72
        );
        let mut strict = settings();
        strict.require_paid_before_delivery = true;
        assert_eq!(
            code(check_delivery(&reserved, Some(&car), &ok, &strict, now)),
            73
        );

        let mut delivered = reserved.clone();
        let mut car = car.clone();
        let operation = operation("2030-01-10T09:00:00Z", 1200, 7);
        deliver(&mut delivered, &mut car, &operation, now, "api").unwrap();
        assert_eq!(delivered.current_status, S::Delivered);
        assert_eq!(delivered.current_status_date, operation.date);
        assert_eq!(car.current_kms, 1200);
        assert_eq!(delivered.car.as_ref().unwrap().gasoline, 7);
        assert_eq!(
            delivered.delivery_info.as_ref().unwrap()["Kilometers"],
            json!(1200)
        );
    }

    #[test]
    fn return_rules() {
        use BookingStatus as S;
        let now = at("2030-01-12T12:00:00Z");
        let mut delivered = booking(S::Delivered);
        let mut car = delivered.car.clone().unwrap();
        let delivery = operation("2030-01-10T10:05:00Z", 1200, 8);
        deliver(&mut delivered, &mut car, &delivery, delivery.date, "api").unwrap();

        let ok = operation("2030-01-12T11:00:00Z", 1500, 6);
        assert!(check_return(&delivered, &ok, now).is_ok());
        assert_eq!(code(check_return(&booking(S::Closed), &ok, now)), 37);
        for status in [S::Quoted, S::Reserved, S::Confirmed, S::Canceled] {
            assert_eq!(
                code(check_return(&booking(status), &ok, now)),
                42,
                "{status}"
            );
        }
        assert_eq!(
            code(check_return(
                &delivered,
                &operation("2030-01-10T10:00:00Z", 1500, 6),
                now
            )),
            13
        );
        assert_eq!(
            code(check_return(
                &delivered,
                &operation("2030-01-12T13:00:00Z", 1500, 6),
                now
            )),
            13
        );
        assert_eq!(
            code(check_return(
                &delivered,
                &operation("2030-01-12T11:00:00Z", 1199, 6),
                now
            )),
            39,
            "the odometer cannot go back from the delivery's"
        );

        let office = BranchOffice {
            id: 2,
            name: "Córdoba".to_owned(),
            ..BranchOffice::default()
        };
        let mut closed = delivered.clone();
        return_car(&mut closed, Some(&mut car), Some(&office), &ok, now, "api").unwrap();
        assert_eq!(closed.current_status, S::Closed);
        assert_eq!(closed.current_status_date, ok.date, "the close date");
        assert_eq!(car.last_return_date, Some(ok.date));
        assert_eq!(car.current_branch_office_id, Some(2));
        assert_eq!(closed.dropoff_info.as_ref().unwrap()["Gasoline"], json!(6));
    }
}
