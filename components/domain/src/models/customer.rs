//! Customer (interface.md 2.3) with its credit cards and memberships.

use chrono::{DateTime, FixedOffset};
use serde::{Deserialize, Serialize};

use crate::json;

/// A customer: the renter or the company a booking is for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Customer {
    /// Tenant-wide customer number.
    #[serde(deserialize_with = "json::null_as_default")]
    pub id: i64,
    /// Unique identifier of the customer across systems (a UUID).
    pub global_id: Option<String>,
    /// Full name, or the company name.
    pub name: Option<String>,
    pub lastname: Option<String>,
    pub firstname: Option<String>,
    /// Identity document number.
    pub document_id: Option<String>,
    pub document_type_id: Option<i64>,
    pub email_address: Option<String>,
    pub cell_phone: Option<String>,
    pub address: Option<String>,
    pub address_number: Option<String>,
    pub address_department: Option<String>,
    pub zip_code: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub region: Option<String>,
    pub country: Option<String>,
    #[serde(with = "json::option_date_time")]
    pub birth_date: Option<DateTime<FixedOffset>>,
    pub birth_country: Option<String>,
    pub birth_state: Option<String>,
    pub age: Option<i64>,
    #[serde(deserialize_with = "json::null_as_default")]
    pub credit_cards: Vec<CreditCard>,
    #[serde(deserialize_with = "json::null_as_default")]
    pub memberships: Vec<Membership>,
    pub driver_licence_number: Option<String>,
    pub driver_licence_country: Option<String>,
    #[serde(with = "json::option_date_time")]
    pub driver_license_expiration: Option<DateTime<FixedOffset>>,
    #[serde(with = "json::option_date_time")]
    pub driver_license_issuance: Option<DateTime<FixedOffset>>,
    pub driver_license_renach_number: Option<String>,
    pub driver_license_category: Option<String>,
    pub driver_license_state: Option<String>,
    #[serde(with = "json::option_date_time")]
    pub document_id_issuance: Option<DateTime<FixedOffset>>,
    #[serde(with = "json::option_date_time")]
    pub document_id_expiration: Option<DateTime<FixedOffset>>,
    pub document_id_issuance_state: Option<String>,
    pub document_id_issuance_country: Option<String>,
    pub fiscal_condition_id: Option<i64>,
    pub notes: Option<String>,
    #[serde(deserialize_with = "json::null_as_default")]
    pub is_company: bool,
    #[serde(deserialize_with = "json::null_as_default")]
    pub is_agency: bool,
    #[serde(deserialize_with = "json::null_as_default")]
    pub is_provider: bool,
    #[serde(deserialize_with = "json::null_as_default")]
    pub is_hotel: bool,
    #[serde(deserialize_with = "json::null_as_default")]
    pub has_web_login: bool,
    /// Codes of the commercial agreements the customer may use.
    #[serde(deserialize_with = "json::null_as_default")]
    pub commercial_agreements: Vec<String>,
    #[serde(rename = "IATACode")]
    pub iata_code: Option<String>,
    pub personal_code: Option<String>,
    pub state_registration: Option<String>,
    pub municipal_registration: Option<String>,
}

/// A customer's credit card. The number is only ever written masked and the security code is
/// never written (always `null`), in responses and in storage alike.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CreditCard {
    /// Card brand, e.g. `VISA`.
    #[serde(rename = "Type")]
    pub kind: Option<String>,
    /// The card number; written masked (all but the last four characters as `*`).
    #[serde(serialize_with = "json::masked_card_number")]
    pub number: Option<String>,
    pub expiration_month: Option<i64>,
    pub expiration_year: Option<i64>,
    /// Accepted on input, never written.
    #[serde(serialize_with = "json::always_null")]
    pub security_code: Option<String>,
    pub card_holder_name: Option<String>,
}

/// A customer's membership of a loyalty or partner programme.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Membership {
    #[serde(deserialize_with = "json::null_as_default")]
    pub id: i64,
    /// Programme kind (values not shown by the interface).
    pub membership_type: Option<i64>,
    pub description: Option<String>,
    pub number: Option<String>,
    #[serde(with = "json::option_date_time")]
    pub expiration_date: Option<DateTime<FixedOffset>>,
    #[serde(deserialize_with = "json::null_as_default")]
    pub used_in_booking: bool,
    #[serde(deserialize_with = "json::null_as_default")]
    pub booking_brand_ids: Vec<i64>,
}
