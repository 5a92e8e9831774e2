//! What the tests of the crate share: one stored booking that each test changes where its
//! assertions depend on it, and tariffs by their brackets.

use rust_decimal::Decimal;
use serde_json::{Value, json};

use crate::models::{Booking, Tariff, TariffBracket};
use crate::status::BookingStatus;

/// A stored booking in `status` with only the required fields (booking 1 of customer 1, in
/// category 1, delivered and returned at place 1, from 2030-01-10 10:00 to 2030-01-12 10:00
/// at -03:00, created on 2030-01-01), each top-level key of `changes` replacing its own.
pub(crate) fn stored_booking(status: BookingStatus, changes: Value) -> Value {
    let mut value = json!({
        "Id": 1,
        "Customer": {"Id": 1},
        "Category": {"Id": 1},
        "FromDate": "2030-01-10T10:00:00-03:00",
        "ToDate": "2030-01-12T10:00:00-03:00",
        "DeliveryPlace": {"Id": 1},
        "ReturnPlace": {"Id": 1},
        "CurrentStatus": status.code(),
        "CurrentStatusDate": "2030-01-01T10:00:00Z",
        "CreationDate": "2030-01-01T10:00:00Z"
    });
    let Value::Object(changes) = changes else {
        panic!("the changes of a booking are an object: {changes}");
    };
    value.as_object_mut().unwrap().extend(changes);
    value
}

/// [`stored_booking`] read as a [`Booking`].
pub(crate) fn booking(status: BookingStatus, changes: Value) -> Booking {
    serde_json::from_value(stored_booking(status, changes)).unwrap()
}

/// A USD tariff of `category` (no model) with brackets (first day, last day, daily amount).
pub(crate) fn tariff(id: i64, name: &str, category: i64, brackets: &[(i64, i64, &str)]) -> Tariff {
    Tariff {
        id,
        name: name.to_owned(),
        category_id: category,
        model_id: None,
        currency: "USD".to_owned(),
        brackets: brackets
            .iter()
            .map(|&(days_from, days_to, amount)| TariffBracket {
                days_from,
                days_to,
                daily_amount: amount.parse::<Decimal>().unwrap(),
            })
            .collect(),
    }
}
