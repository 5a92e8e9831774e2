//! The pricing engine (contract.md "Pricing"; the model, the settings and a worked example are
//! in `docs/pricing.md`): rental days, tariff brackets, additionals, place prices, surcharges,
//! payers, rounding, and the 1% tolerance on a price the client sends.
//!
//! Pure: no I/O and no clock. The caller reads the catalogue (tariffs, additionals, places,
//! branch offices) and the tenant's settings, and passes them in. Money is
//! [`rust_decimal::Decimal`], rounded at one named point: each price line's total
//! ([`round_money`]); every total is a sum of rounded lines.
//!
//! Creating or updating a booking prices it in five steps:
//!
//! 1. [`PricingSettings::from_lookup`] reads the tenant's settings;
//! 2. [`select_tariff`] picks the tariff of the booked model or category;
//! 3. [`LocalTimes::at_offices`] and [`is_young_driver`] (or the request's `IsCustomerOver25`)
//!    turn the dates into the facts the surcharges need;
//! 4. [`quote`] computes the price lines and totals of a [`QuoteRequest`];
//! 5. [`accept_sent_price`] checks a `Price` the client sent against the quote.
//!
//! A response writes the lines' descriptions and `TotalDaysString` in the request's language
//! ([`localize`], [`total_days_string`]): the lines keep what they say as a [`LineText`].
//!
//! The response then drops `AppliedCoverageBrackets` with [`strip_coverage_brackets`] when it
//! is the simplified one, or when [`coverage_is_traceable`] says the stored lines no longer
//! map onto their day ranges (interface.md 4.4).

mod additionals;
mod codes;
mod coverage;
mod facts;
#[cfg(test)]
mod fixtures;
mod lines;
mod quote;
mod settings;
mod tariffs;
mod texts;

pub use codes::{Payer, PriceItemType, SurchargeKind};
pub use coverage::{coverage_is_traceable, strip_coverage_brackets};
pub use facts::{LocalTimes, YOUNG_DRIVER_AGE, is_young_driver, office_zone};
pub use quote::{
    Adjustment, PRICE_TOLERANCE_PERCENT, Quote, QuoteRequest, accept_sent_price, adjust, quote,
};
pub use settings::{
    DEFAULT_GRACE_MINUTES, InvalidSetting, OfficeHours, PricingSettings, Surcharges, setting,
};
pub use tariffs::{minor_units, ordered_brackets, rental_days, round_money, select_tariff};
pub use texts::{LineText, Translations, localize, total_days_string, total_days_text};

/// Request fields the errors name, as the booking models spell them.
const TO_DATE: &str = "ToDate";
const ADDITIONALS: &str = "Additionals";
const PRICE: &str = "Price";
