//! Price lines, additionals (interface.md 2.5) and the tariffs prices are computed from
//! (contract.md "Pricing").

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::pricing::LineText;

/// One line of a booking's price.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct PriceItem {
    pub id: i64,
    /// Whether the line is part of the booking's price (as opposed to informative).
    pub is_booking_price: bool,
    pub description: Option<String>,
    /// The line's total.
    pub price: Decimal,
    /// Kind of line (values not shown by the interface).
    #[serde(rename = "Type")]
    pub kind: i64,
    /// Identifier of what the line charges for, within its kind.
    pub type_id: i64,
    pub unit_price: Decimal,
    pub quantity: i64,
    /// Who pays the line (values not shown by the interface).
    pub payer: i64,
    pub tariff_name: Option<String>,
    /// The day ranges the line was priced by; left out when the line is not a rental line
    /// billed per day, or when it cannot be traced back to its ranges (interface.md 4.4: an
    /// optional field).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied_coverage_brackets: Option<Vec<AppliedCoverageBracket>>,
    /// What `Description` says, kept with a stored booking so that a response can write it in
    /// its own language ([`crate::pricing::localize`]); never part of a response.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<LineText>,
}

/// A day range a rental line was priced by, with the line's whole price.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct AppliedCoverageBracket {
    pub days_from: i64,
    pub days_to: i64,
    pub amount: Decimal,
}

/// An additional (extra) taken with a booking.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct BookingAdditional {
    /// The additional; a request only needs its `Id`.
    pub additional: Additional,
    pub quantity: i64,
}

/// An additional (extra) of the catalogue: child seat, GPS, insurance...
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Additional {
    pub id: i64,
    pub name: String,
    pub description: Option<String>,
    pub image_path: Option<String>,
    /// Whether `Price` is per rental day rather than per booking.
    pub is_price_by_day: bool,
    pub price: Decimal,
    pub max_quantity_per_booking: i64,
    /// Kind of additional (values not shown by the interface).
    #[serde(rename = "Type")]
    pub kind: i64,
    pub stock: i64,
    /// Display order.
    pub order: Decimal,
    /// Ours, beyond the interface: a required additional (e.g. a basic insurance) is applied
    /// to every booking, even when the request omits it.
    pub is_required: bool,
}

/// A tariff: daily amounts by rental length for a category, or for one model of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Tariff {
    pub id: i64,
    pub name: String,
    pub category_id: i64,
    /// The model the tariff is for, overriding the category's; `null` for the category's.
    pub model_id: Option<i64>,
    /// Currency code of the amounts.
    pub currency: String,
    pub brackets: Vec<TariffBracket>,
}

/// A day range of a tariff and its daily amount.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct TariffBracket {
    /// First rental day of the range (1-based, included).
    pub days_from: i64,
    /// Last rental day of the range (included).
    pub days_to: i64,
    pub daily_amount: Decimal,
}
