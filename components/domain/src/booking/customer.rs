//! The customer of a booking: who it is on creation (by `Id`, by `GlobalId`, or a new one),
//! whether it may book, and what an update may change of it (interface.md 4.5 rule 6).

use chrono::{DateTime, Datelike, FixedOffset};

use super::settings::BookingSettings;
use crate::collections::CustomerDoc;
use crate::error::{ApiError, ErrorCode};
use crate::models::Customer;

/// How the customer of a new booking is found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CustomerLookup {
    /// An existing customer by `Customer.Id`.
    ById(i64),
    /// An existing customer by `Customer.GlobalId` (when no `Id` is sent).
    ByGlobalId(String),
    /// Neither is sent: a new customer made of the request's fields.
    New,
}

impl CustomerLookup {
    /// How to find the customer `sent` with a creation.
    pub fn of(sent: &Customer) -> Self {
        if sent.id > 0 {
            return CustomerLookup::ById(sent.id);
        }
        match sent.global_id.as_deref().map(str::trim) {
            Some(global_id) if !global_id.is_empty() => {
                CustomerLookup::ByGlobalId(global_id.to_owned())
            }
            _ => CustomerLookup::New,
        }
    }
}

/// The one customer found for a `GlobalId` among `found` (at most two need be read):
/// [`ErrorCode::CustomerNotFound`] for none, [`ErrorCode::DuplicateCustomerGlobalId`] for
/// more than one.
pub fn single_by_global_id<T>(mut found: Vec<T>) -> Result<T, ApiError> {
    match found.len() {
        0 => Err(ApiError::new(ErrorCode::CustomerNotFound).with_field("Customer.GlobalId")),
        1 => found
            .pop()
            .ok_or_else(|| ApiError::new(ErrorCode::CustomerNotFound)),
        _ => Err(ApiError::new(ErrorCode::DuplicateCustomerGlobalId)),
    }
}

/// A new customer made of the request's `sent` customer, identified across systems by
/// `global_id`, owned by the API user `created_by` (who alone may later change its name and
/// e-mail). Its `Id` is 0 until the caller numbers it, when it stores it.
///
/// It needs a name: `Name`, or `Firstname` and `Lastname` (then `Name` is both). An
/// `EmailAddress`, when sent, must look like one. Otherwise
/// [`ErrorCode::CustomerDataNotValid`].
pub fn new_customer(
    sent: &Customer,
    global_id: String,
    created_by: i64,
) -> Result<CustomerDoc, ApiError> {
    let name = trimmed(sent.name.as_deref())
        .map(str::to_owned)
        .or_else(|| {
            let first = trimmed(sent.firstname.as_deref())?;
            let last = trimmed(sent.lastname.as_deref())?;
            Some(format!("{first} {last}"))
        })
        .ok_or_else(|| invalid_customer("Customer.Name"))?;
    check_email(sent.email_address.as_deref())?;
    Ok(CustomerDoc {
        customer: Customer {
            id: 0,
            global_id: Some(global_id),
            name: Some(name),
            ..sent.clone()
        },
        created_by_user_id: Some(created_by),
    })
}

/// Rule 6 of an update: the customer `stored` with the `Name` and `EmailAddress` of `sent`,
/// when the caller (`caller_id`) is the API user who created the customer and either
/// changes; `None` when nothing is to change. Every other field of `sent` is ignored, and so
/// is everything when another user calls. A blank `Name` or an `EmailAddress` that does not
/// look like one is [`ErrorCode::CustomerDataNotValid`].
pub fn contact_changes(
    stored: &CustomerDoc,
    sent: Option<&Customer>,
    caller_id: i64,
) -> Result<Option<Customer>, ApiError> {
    let Some(sent) = sent else {
        return Ok(None);
    };
    if stored.created_by_user_id != Some(caller_id) {
        return Ok(None);
    }
    let mut customer = stored.customer.clone();
    if let Some(name) = &sent.name {
        let name = trimmed(Some(name)).ok_or_else(|| invalid_customer("Customer.Name"))?;
        customer.name = Some(name.to_owned());
    }
    if let Some(email) = &sent.email_address {
        check_email(Some(email))?;
        customer.email_address = Some(email.trim().to_owned());
    }
    Ok((customer != stored.customer).then_some(customer))
}

/// Whether `customer` may book a rental starting at `start`: not blocked by the tenant (setting
/// `blocked_customers`: [`ErrorCode::BlockedCustomerToBook`]) and of an allowed age
/// (`min_driver_age`, `max_driver_age`: [`ErrorCode::DriverAgeNotAllowed`]; a customer of
/// unknown age passes).
pub fn check_may_book(
    customer: &Customer,
    settings: &BookingSettings,
    start: DateTime<FixedOffset>,
) -> Result<(), ApiError> {
    if settings.blocked_customers.contains(&customer.id) {
        return Err(ApiError::new(ErrorCode::BlockedCustomerToBook));
    }
    check_driver_age(customer, settings, start)
}

/// Whether `driver` is of an allowed age on the date of `start` (settings `min_driver_age`,
/// `max_driver_age`): [`ErrorCode::DriverAgeNotAllowed`] otherwise; a driver of unknown age
/// passes. Booking creation and self-check-in share it.
pub fn check_driver_age(
    driver: &Customer,
    settings: &BookingSettings,
    start: DateTime<FixedOffset>,
) -> Result<(), ApiError> {
    if let Some(age) = age_at(driver, start) {
        let too_young = settings.min_driver_age.is_some_and(|min| age < min);
        let too_old = settings.max_driver_age.is_some_and(|max| age > max);
        if too_young || too_old {
            return Err(ApiError::new(ErrorCode::DriverAgeNotAllowed));
        }
    }
    Ok(())
}

/// The customer's age in whole years on the date of `at`: from `BirthDate` when known, else
/// `Age` as stored; `None` when neither is.
pub fn age_at(customer: &Customer, at: DateTime<FixedOffset>) -> Option<i64> {
    let Some(birth) = customer.birth_date else {
        return customer.age;
    };
    let (birth, at) = (birth.date_naive(), at.date_naive());
    let mut years = i64::from(at.year() - birth.year());
    if (at.month(), at.day()) < (birth.month(), birth.day()) {
        years -= 1;
    }
    Some(years)
}

/// A random (version 4) UUID made of 16 random bytes, as a new customer's `GlobalId`.
pub fn uuid_v4(mut bytes: [u8; 16]) -> String {
    bytes[6] = (bytes[6] & 0x0F) | 0x40;
    bytes[8] = (bytes[8] & 0x3F) | 0x80;
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

fn trimmed(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|value| !value.is_empty())
}

fn invalid_customer(field: &str) -> ApiError {
    ApiError::new(ErrorCode::CustomerDataNotValid).with_field(field)
}

/// An e-mail address, when there is one, must have one `@` between a local part and a domain
/// with a dot, and no spaces.
fn check_email(email: Option<&str>) -> Result<(), ApiError> {
    check_email_field(email, "Customer.EmailAddress")
}

/// [`check_email`] for a request that names the field otherwise: the error names `field`.
pub(crate) fn check_email_field(email: Option<&str>, field: &str) -> Result<(), ApiError> {
    let Some(email) = email.map(str::trim).filter(|email| !email.is_empty()) else {
        return Ok(());
    };
    let valid = match email.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.contains('@')
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !email.contains(char::is_whitespace)
        }
        None => false,
    };
    if valid {
        Ok(())
    } else {
        Err(invalid_customer(field))
    }
}

#[cfg(test)]
mod tests;
