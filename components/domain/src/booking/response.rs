//! What the booking endpoints answer besides the full Booking.

use chrono::{DateTime, FixedOffset};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::i18n::Language;
use crate::json;
use crate::models::{Booking, PriceItem};
use crate::pricing::{self, Quote};
use crate::status::BookingStatus;

/// The simplified answer of `POST /api/booking/book` and `PUT /api/booking/update` when
/// `FullResponse` is not true (interface.md 4.4 leaves its fields open; docs/booking.md lists
/// them). It never carries price lines, so never `AppliedCoverageBrackets` either.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BookingCreationResponse {
    /// The booking's Id, for `GET /api/booking/{id}` and updates.
    pub id: i64,
    /// The booking code, which payments quote.
    pub code: Option<String>,
    /// The Version to send greater with the next update.
    pub version: Option<String>,
    pub current_status: BookingStatus,
    #[serde(with = "json::date_time")]
    pub current_status_date: DateTime<FixedOffset>,
    /// The booking's customer (a new customer's Id when the request created one).
    pub customer_id: i64,
    /// The car assigned; `null` when none is (category-based availability).
    pub car_id: Option<String>,
    pub model_id: Option<i64>,
    pub category_id: i64,
    #[serde(with = "json::date_time")]
    pub from_date: DateTime<FixedOffset>,
    #[serde(with = "json::date_time")]
    pub to_date: DateTime<FixedOffset>,
    pub delivery_place_id: i64,
    pub return_place_id: i64,
    pub total_days: Decimal,
    pub price: Decimal,
    pub customer_price: Decimal,
    pub agency_price: Decimal,
    /// What is still to be paid.
    pub balance: Decimal,
    pub currency: String,
    #[serde(with = "json::date_time")]
    pub creation_date: DateTime<FixedOffset>,
    #[serde(with = "json::option_date_time")]
    pub updated_on: Option<DateTime<FixedOffset>>,
}

impl From<&Booking> for BookingCreationResponse {
    fn from(booking: &Booking) -> Self {
        Self {
            id: booking.id,
            code: booking.code.clone(),
            version: booking.version.clone(),
            current_status: booking.current_status,
            current_status_date: booking.current_status_date,
            customer_id: booking.customer.id,
            car_id: booking.car.as_ref().map(|car| car.id.clone()),
            model_id: booking.model.as_ref().map(|model| model.id),
            category_id: booking.category.id,
            from_date: booking.from_date,
            to_date: booking.to_date,
            delivery_place_id: booking.delivery_place.id,
            return_place_id: booking.return_place.id,
            total_days: booking.total_days,
            price: booking.price,
            customer_price: booking.customer_price,
            agency_price: booking.agency_price,
            balance: booking.balance,
            currency: booking.currency.clone(),
            creation_date: booking.creation_date,
            updated_on: booking.updated_on,
        }
    }
}

/// The answer of `POST /api/booking/price`: the quote a booking with the same body would get.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PriceResponse {
    pub price_items: Vec<PriceItem>,
    pub price: Decimal,
    pub customer_price: Decimal,
    pub agency_price: Decimal,
    pub total_days: Decimal,
    pub currency: String,
}

impl PriceResponse {
    /// The answer for `quote`, its lines written in `language`.
    pub fn new(mut quote: Quote, language: Language) -> Self {
        pricing::localize(&mut quote.lines, language);
        Self {
            price_items: quote.lines,
            price: quote.price,
            customer_price: quote.customer_price,
            agency_price: quote.agency_price,
            total_days: Decimal::from(quote.total_days),
            currency: quote.currency,
        }
    }
}

/// A booking as a full response shows it, in `language`: `AppliedCoverageBrackets` only when
/// its lines can still be traced back to their day ranges
/// ([`pricing::coverage_is_traceable`]), the lines' descriptions and `TotalDaysString` written
/// in `language` ([`pricing::localize`]).
///
/// Every answer that carries a whole booking (creation, update, read, operations,
/// self-check-in, the closed list) goes through here.
pub fn full(mut booking: Booking, language: Language) -> Booking {
    if !pricing::coverage_is_traceable(&booking.price_items) {
        pricing::strip_coverage_brackets(&mut booking.price_items);
    }
    pricing::localize(&mut booking.price_items, language);
    if let Some(text) = pricing::total_days_string(booking.total_days, language) {
        booking.total_days_string = text;
    }
    booking
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::fixtures;

    #[test]
    fn the_simplified_response_summarises_the_booking() {
        let booking = fixtures::booking(
            BookingStatus::Reserved,
            json!({
                "Id": 42,
                "Code": "DEMO-000042",
                "Version": "1",
                "Customer": {"Id": 3},
                "Car": {"Id": "AA100AA"},
                "Model": {"Id": 2},
                "ReturnPlace": {"Id": 3},
                "Price": 100.5,
                "Balance": 100.5,
                "Currency": "USD",
                "PriceItems": [{"Id": 1, "AppliedCoverageBrackets": [{"DaysFrom": 1, "DaysTo": 3}]}]
            }),
        );
        let response = serde_json::to_value(BookingCreationResponse::from(&booking)).unwrap();
        assert_eq!(response["Id"], json!(42));
        assert_eq!(response["Code"], json!("DEMO-000042"));
        assert_eq!(response["CustomerId"], json!(3));
        assert_eq!(response["CarId"], json!("AA100AA"));
        assert_eq!(response["CurrentStatus"], json!(2));
        assert_eq!(response["Price"], json!(100.5));
        assert!(response.get("PriceItems").is_none());
        assert!(!response.to_string().contains("AppliedCoverageBrackets"));
    }
}
