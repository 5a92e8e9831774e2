//! Places of pick-up and return (interface.md 2.4) and the branch offices that own them
//! (contract.md "Pagination", `GET /api/branchoffices`).

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// A place where a car is delivered (picked up) or returned: a branch office's counter, an
/// airport, a hotel, or a custom address.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Place {
    pub id: i64,
    /// What delivering or returning at this place costs.
    pub price: Decimal,
    pub name: String,
    pub category: Option<String>,
    pub address: Option<String>,
    pub city: Option<String>,
    pub country: Option<String>,
    pub branch_office_id: i64,
    pub branch_office_name: Option<String>,
    #[serde(rename = "BranchOfficeIATACode")]
    pub branch_office_iata_code: Option<String>,
    pub is_franchise: bool,
    pub latitude: Option<Decimal>,
    pub longitude: Option<Decimal>,
    pub can_add_custom_address: bool,
    /// Whether the place is an address the customer gave rather than a catalogue place.
    pub is_custom_address: bool,
    pub available_operation_options: Option<serde_json::Value>,
    pub available_return_places: Option<serde_json::Value>,
    pub available_brand_codes: Option<serde_json::Value>,
}

/// A branch office with its places, as `GET /api/branchoffices` lists it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct BranchOffice {
    pub id: i64,
    pub name: String,
    pub address: Option<String>,
    pub city: Option<String>,
    pub country: Option<String>,
    #[serde(rename = "IATACode")]
    pub iata_code: Option<String>,
    pub latitude: Option<Decimal>,
    pub longitude: Option<Decimal>,
    /// IANA time-zone name of the office, e.g. `America/Argentina/Buenos_Aires`.
    pub time_zone: Option<String>,
    pub places: Vec<Place>,
}
