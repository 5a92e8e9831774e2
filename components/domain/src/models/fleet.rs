//! The fleet: cars, car models and categories (interface.md 2.4).

use chrono::{DateTime, FixedOffset};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::json;

/// A car of the fleet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Car {
    /// The car's identifier (a string, usually its internal number or plate).
    pub id: String,
    pub model: Model,
    pub current_branch_office_id: Option<i64>,
    /// Name of the branch office where the car is.
    pub current_branch_office: Option<String>,
    /// Name of the branch office that owns the car.
    pub branch_office_owner: Option<String>,
    pub current_kms: i64,
    pub fuel_type: Option<String>,
    /// Fuel level.
    pub gasoline: i64,
    pub friendly_name: Option<String>,
    pub current_plate_id: Option<String>,
    pub chassis_identification: Option<String>,
    pub current_plate: Option<CarPlate>,
    pub color: Option<String>,
    pub year: Option<i64>,
    pub toll_device_id: Option<String>,
    pub battery_number: Option<String>,
    #[serde(with = "json::option_date_time")]
    pub creation_date: Option<DateTime<FixedOffset>>,
    /// When the car left the fleet; `null` while it is in service.
    #[serde(with = "json::option_date_time")]
    pub inactive_date: Option<DateTime<FixedOffset>>,
    pub leased_to_company: Option<String>,
    pub supplier_full_name: Option<String>,
    #[serde(with = "json::option_date_time")]
    pub last_return_date: Option<DateTime<FixedOffset>>,
}

/// The licence plate a car currently carries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CarPlate {
    /// The plate's text.
    pub id: String,
    pub issuing_country: Option<String>,
    pub issuing_state: Option<String>,
}

/// A car model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Model {
    pub id: i64,
    pub name: String,
    /// Vehicle class code (ACRISS / SIPP), e.g. `ECMR`.
    #[serde(rename = "SIPP")]
    pub sipp: String,
    pub description: Option<String>,
    pub image_path: Option<String>,
    pub franchise: Option<Decimal>,
    pub franchise_damage: Option<Decimal>,
    pub franchise_rollover: Option<Decimal>,
    pub franchise_theft: Option<Decimal>,
    pub franchise_hail: Option<Decimal>,
    pub brand: Option<ModelBrand>,
    pub doors: i64,
    pub passengers: i64,
    pub big_luggage: i64,
    pub small_luggage: i64,
    pub steering: Option<String>,
    pub gearbox: Option<String>,
    pub multimedia: Option<String>,
    pub air_conditioner: Option<String>,
    /// Values not shown by the interface.
    pub steering_type: Option<i64>,
    /// Values not shown by the interface.
    pub transmission_type: Option<i64>,
    /// Values not shown by the interface.
    pub air_conditioner_type: Option<i64>,
    pub fuel_type: Option<String>,
    pub daily_price: Option<Decimal>,
    pub lower_price: Option<Decimal>,
    pub model_attributes: Vec<ModelAttribute>,
    /// The category the model belongs to.
    pub category: Option<Category>,
}

/// The brand (maker) of a car model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ModelBrand {
    pub name: String,
}

/// A named attribute of a car model (e.g. engine size).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ModelAttribute {
    pub id: i64,
    pub name: Option<String>,
    pub description: Option<String>,
    pub unit: Option<String>,
    pub value: Option<String>,
    /// Values not shown by the interface.
    #[serde(rename = "Type")]
    pub kind: i64,
    pub model_id: i64,
}

/// A car category: what a booking reserves when no particular model or car is chosen.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct Category {
    pub id: i64,
    pub name: String,
    /// Display order.
    pub order: Decimal,
    pub principal_model_id: Option<i64>,
    pub franchise: Option<Decimal>,
    pub franchise_damage: Option<Decimal>,
    pub franchise_rollover: Option<Decimal>,
    pub franchise_theft: Option<Decimal>,
    pub franchise_hail: Option<Decimal>,
    pub image_path: Option<String>,
    pub models: Vec<Model>,
}
