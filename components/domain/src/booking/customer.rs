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
mod tests {
    use super::*;

    fn at(value: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(value).unwrap()
    }

    fn settings() -> BookingSettings {
        BookingSettings::from_lookup("demo", |_| None).unwrap()
    }

    fn stored(created_by: Option<i64>) -> CustomerDoc {
        CustomerDoc {
            customer: Customer {
                id: 30,
                name: Some("Ana Souza".to_owned()),
                email_address: Some("ana@example.com".to_owned()),
                cell_phone: Some("+55 11 5555-0000".to_owned()),
                ..Customer::default()
            },
            created_by_user_id: created_by,
        }
    }

    #[test]
    fn lookup_by_id_then_global_id() {
        let mut sent = Customer {
            id: 7,
            global_id: Some("abc".to_owned()),
            ..Customer::default()
        };
        assert_eq!(CustomerLookup::of(&sent), CustomerLookup::ById(7));
        sent.id = 0;
        assert_eq!(
            CustomerLookup::of(&sent),
            CustomerLookup::ByGlobalId("abc".to_owned())
        );
        sent.global_id = Some(" ".to_owned());
        assert_eq!(CustomerLookup::of(&sent), CustomerLookup::New);
    }

    #[test]
    fn a_global_id_must_name_exactly_one_customer() {
        assert_eq!(
            single_by_global_id(Vec::<u8>::new()).unwrap_err().code,
            ErrorCode::CustomerNotFound
        );
        assert_eq!(single_by_global_id(vec![4]).unwrap(), 4);
        assert_eq!(
            single_by_global_id(vec![4, 5]).unwrap_err().code,
            ErrorCode::DuplicateCustomerGlobalId
        );
    }

    #[test]
    fn new_customers_need_a_name_and_a_valid_email() {
        let sent = Customer {
            id: 0,
            firstname: Some("Ana".to_owned()),
            lastname: Some("Souza".to_owned()),
            email_address: Some("ana@example.com".to_owned()),
            ..Customer::default()
        };
        let doc = new_customer(&sent, "g".to_owned(), 4).unwrap();
        assert_eq!(doc.customer.id, 0);
        assert_eq!(doc.customer.name.as_deref(), Some("Ana Souza"));
        assert_eq!(doc.customer.global_id.as_deref(), Some("g"));
        assert_eq!(doc.created_by_user_id, Some(4));

        let nameless = Customer {
            lastname: Some("Souza".to_owned()),
            ..Customer::default()
        };
        let error = new_customer(&nameless, "g".to_owned(), 4).unwrap_err();
        assert_eq!(error.code, ErrorCode::CustomerDataNotValid);
        assert_eq!(error.field.as_deref(), Some("Customer.Name"));

        for email in [
            "ana",
            "ana@",
            "@example.com",
            "ana@example",
            "a na@example.com",
            "a@b@c.com",
        ] {
            let bad = Customer {
                name: Some("Ana".to_owned()),
                email_address: Some(email.to_owned()),
                ..Customer::default()
            };
            let error = new_customer(&bad, "g".to_owned(), 4).unwrap_err();
            assert_eq!(
                error.field.as_deref(),
                Some("Customer.EmailAddress"),
                "{email}"
            );
        }
    }

    #[test]
    fn rule_6_only_name_and_email_only_for_the_creator() {
        let sent = Customer {
            id: 30,
            name: Some(" Ana S. Souza ".to_owned()),
            email_address: Some("ana.souza@example.org".to_owned()),
            cell_phone: Some("changed".to_owned()),
            document_id: Some("changed".to_owned()),
            ..Customer::default()
        };
        let changed = contact_changes(&stored(Some(4)), Some(&sent), 4)
            .unwrap()
            .unwrap();
        assert_eq!(changed.name.as_deref(), Some("Ana S. Souza"));
        assert_eq!(
            changed.email_address.as_deref(),
            Some("ana.souza@example.org")
        );
        assert_eq!(changed.cell_phone.as_deref(), Some("+55 11 5555-0000"));
        assert_eq!(changed.document_id, None);

        assert_eq!(
            contact_changes(&stored(Some(4)), Some(&sent), 5).unwrap(),
            None
        );
        assert_eq!(
            contact_changes(&stored(None), Some(&sent), 4).unwrap(),
            None
        );
        assert_eq!(contact_changes(&stored(Some(4)), None, 4).unwrap(), None);
        let same = Customer {
            name: Some("Ana Souza".to_owned()),
            ..Customer::default()
        };
        assert_eq!(
            contact_changes(&stored(Some(4)), Some(&same), 4).unwrap(),
            None
        );

        let blank = Customer {
            name: Some("  ".to_owned()),
            ..Customer::default()
        };
        assert_eq!(
            contact_changes(&stored(Some(4)), Some(&blank), 4)
                .unwrap_err()
                .code,
            ErrorCode::CustomerDataNotValid
        );
        // Another user's invalid data is ignored, not refused.
        assert_eq!(
            contact_changes(&stored(Some(4)), Some(&blank), 5).unwrap(),
            None
        );
    }

    #[test]
    fn ages_from_the_birth_date_at_the_start() {
        let customer = Customer {
            birth_date: Some(at("2000-06-15T00:00:00Z")),
            age: Some(99),
            ..Customer::default()
        };
        assert_eq!(age_at(&customer, at("2025-06-14T23:00:00Z")), Some(24));
        assert_eq!(age_at(&customer, at("2025-06-15T08:00:00Z")), Some(25));
        let stored_age = Customer {
            age: Some(30),
            ..Customer::default()
        };
        assert_eq!(age_at(&stored_age, at("2025-06-14T23:00:00Z")), Some(30));
        assert_eq!(
            age_at(&Customer::default(), at("2025-06-14T23:00:00Z")),
            None
        );
    }

    #[test]
    fn blocked_customers_and_driver_ages() {
        let start = at("2025-06-15T10:00:00Z");
        let customer = Customer {
            id: 3,
            age: Some(20),
            ..Customer::default()
        };
        assert!(check_may_book(&customer, &settings(), start).is_ok());
        let mut strict = settings();
        strict.min_driver_age = Some(21);
        assert_eq!(
            check_may_book(&customer, &strict, start).unwrap_err().code,
            ErrorCode::DriverAgeNotAllowed
        );
        let mut capped = settings();
        capped.max_driver_age = Some(19);
        assert_eq!(
            check_may_book(&customer, &capped, start).unwrap_err().code,
            ErrorCode::DriverAgeNotAllowed
        );
        let mut blocked = settings();
        blocked.blocked_customers.insert(3);
        assert_eq!(
            check_may_book(&customer, &blocked, start).unwrap_err().code,
            ErrorCode::BlockedCustomerToBook
        );
        let unknown_age = Customer {
            id: 4,
            ..Customer::default()
        };
        assert!(check_may_book(&unknown_age, &strict, start).is_ok());
    }

    #[test]
    fn uuids_are_version_4() {
        let uuid = uuid_v4([0xFF; 16]);
        assert_eq!(uuid, "ffffffff-ffff-4fff-bfff-ffffffffffff");
        assert_eq!(uuid_v4([0; 16]), "00000000-0000-4000-8000-000000000000");
    }
}
