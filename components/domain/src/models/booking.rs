//! Bookings in their full (interface.md 2.1) and list (2.2) forms, and the comments recorded
//! on them.

use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{BookingAdditional, Car, Category, Customer, Model, Place, PriceItem};
use crate::json;
use crate::status::BookingStatus;

/// A booking in full form: what creation (full response), update, self-check-in and the
/// closed-bookings list return, and what the store keeps.
///
/// Required when read: `Id`, `Customer`, `Category`, `FromDate`, `ToDate`, `DeliveryPlace`,
/// `ReturnPlace`, `CurrentStatus`, `CurrentStatusDate` and `CreationDate`; every other field
/// takes its default when missing (legacy records have no `UpdatedOn`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Booking {
    pub id: i64,
    /// Optimistic version; compared as a number when numeric (interface.md 4.5).
    #[serde(default)]
    pub version: Option<String>,
    pub customer: Customer,
    /// What is still to be paid.
    #[serde(default)]
    pub balance: Decimal,
    #[serde(default)]
    pub total_payed: Decimal,
    #[serde(default)]
    pub extra: Option<serde_json::Value>,
    #[serde(default)]
    pub promotion: Option<serde_json::Value>,
    #[serde(default)]
    pub is_quotation: bool,
    /// The assigned car; `null` while none is assigned (category-based availability).
    #[serde(default)]
    pub car: Option<Car>,
    #[serde(default)]
    pub model: Option<Model>,
    pub category: Category,
    #[serde(with = "json::date_time")]
    pub from_date: DateTime<FixedOffset>,
    #[serde(with = "json::date_time")]
    pub to_date: DateTime<FixedOffset>,
    pub delivery_place: Place,
    pub return_place: Place,
    /// The rental length as text, e.g. `3 days`.
    #[serde(default)]
    pub total_days_string: String,
    #[serde(default)]
    pub total_days: Decimal,
    /// `CustomerPrice` + `AgencyPrice`.
    #[serde(default)]
    pub price: Decimal,
    /// The part of the price the agency pays.
    #[serde(default)]
    pub agency_price: Decimal,
    /// The part of the price the customer pays.
    #[serde(default)]
    pub customer_price: Decimal,
    /// Currency code of every amount.
    #[serde(default)]
    pub currency: String,
    #[serde(default)]
    pub franchise: Option<Decimal>,
    #[serde(default)]
    pub franchise_damage: Option<Decimal>,
    #[serde(default)]
    pub franchise_rollover: Option<Decimal>,
    #[serde(default)]
    pub franchise_theft: Option<Decimal>,
    #[serde(default)]
    pub franchise_hail: Option<Decimal>,
    /// Unlimited kilometres.
    #[serde(default)]
    pub ilimited_km: bool,
    #[serde(default)]
    pub max_allowed_distance: i64,
    #[serde(default)]
    pub max_allowed_distance_by_day: i64,
    #[serde(default)]
    pub distance_unit: String,
    #[serde(default)]
    pub has_franchise_modifiers: bool,
    #[serde(default)]
    pub will_leave_country: Option<serde_json::Value>,
    #[serde(default)]
    pub average_day_price: Decimal,
    #[serde(default)]
    pub price_items: Vec<PriceItem>,
    #[serde(default)]
    pub additionals: Vec<BookingAdditional>,
    #[serde(default)]
    pub available_promotions: Option<serde_json::Value>,
    pub current_status: BookingStatus,
    /// When the booking reached its current status; for a Closed booking, the close date.
    #[serde(with = "json::date_time")]
    pub current_status_date: DateTime<FixedOffset>,
    /// Flight or transport reference of the pick-up.
    #[serde(default)]
    pub delivery_transportation_id: Option<serde_json::Value>,
    /// Flight or transport reference of the return.
    #[serde(default)]
    pub return_transportation_id: Option<serde_json::Value>,
    #[serde(default)]
    pub is_customer_over25: bool,
    #[serde(default)]
    pub external_system_id: Option<serde_json::Value>,
    #[serde(default)]
    pub prepaid_amount: Decimal,
    #[serde(default, rename = "ElegibleSIPPCodeUpgrade")]
    pub elegible_sipp_code_upgrade: Option<serde_json::Value>,
    /// Free key/value attributes.
    #[serde(default)]
    pub attributes: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pub exchange_rate: Option<Decimal>,
    #[serde(default)]
    pub daily_rate: Decimal,
    #[serde(default)]
    pub hourly_rate: Decimal,
    #[serde(default)]
    pub extra_day_rate: Decimal,
    #[serde(default)]
    pub extra_hour_rate: Decimal,
    #[serde(default)]
    pub rate_plan: Option<serde_json::Value>,
    #[serde(default)]
    pub is_on_request: bool,
    #[serde(default)]
    pub delivery_info: Option<serde_json::Value>,
    #[serde(default)]
    pub dropoff_info: Option<serde_json::Value>,
    #[serde(default)]
    pub origin: Option<serde_json::Value>,
    #[serde(default)]
    pub brand: Option<serde_json::Value>,
    #[serde(default)]
    pub agency: Option<serde_json::Value>,
    #[serde(with = "json::date_time")]
    pub creation_date: DateTime<FixedOffset>,
    /// Last change; `null` on legacy records that predate auditing, which the booking list
    /// leaves out whenever `updatedSince` is used.
    #[serde(default, with = "json::option_date_time")]
    pub updated_on: Option<DateTime<FixedOffset>>,
    #[serde(default)]
    pub updated_by_user_name: Option<String>,
    #[serde(default)]
    pub payed_by_agency: Decimal,
    #[serde(default)]
    pub payed_by_customer: Decimal,
    #[serde(default)]
    pub commercial_agreement_code: Option<serde_json::Value>,
    #[serde(default)]
    pub purchase_order: Option<serde_json::Value>,
    #[serde(default)]
    pub sales_commision: Decimal,
    #[serde(default)]
    pub is_transfer: bool,
    #[serde(default)]
    pub price_details: PriceDetails,
    #[serde(default)]
    pub is_self_checkin: bool,
    #[serde(default)]
    pub links: Option<serde_json::Value>,
    /// The booking code, which payments quote as their title or reference.
    #[serde(default)]
    pub code: Option<String>,
}

/// The price summary of a booking. Note `SalesCommission` here, `SalesCommision` on the
/// booking: both spellings are the interface's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct PriceDetails {
    pub price: Decimal,
    pub customer_price: Decimal,
    pub agency_price: Decimal,
    pub sales_commission: Decimal,
    pub currency: String,
}

/// A booking in list form: an item of `GET /api/bookings/list`. Built from a [`Booking`] with
/// `BookingDescription::from(&booking)`.
///
/// It differs from [`Booking`] as interface.md 2.2 says: no `TotalDaysString`,
/// `HasFranchiseModifiers`, `PriceItems`, `AvailablePromotions`, `Attributes`, `Links` nor
/// `DistanceUnit`; a small `Model` and `Category`; `DeliveryPlaceId` and `ReturnPlaceId`
/// instead of the places; nullable `Customer` and `Car`; and `IsFullBonus` and `FeeNoShow`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BookingDescription {
    pub id: i64,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub customer: Option<Customer>,
    #[serde(default)]
    pub balance: Decimal,
    #[serde(default)]
    pub total_payed: Decimal,
    #[serde(default)]
    pub extra: Option<serde_json::Value>,
    #[serde(default)]
    pub promotion: Option<serde_json::Value>,
    #[serde(default)]
    pub is_quotation: bool,
    #[serde(default)]
    pub car: Option<Car>,
    #[serde(default)]
    pub model: Option<ModelSummary>,
    pub category: CategorySummary,
    #[serde(with = "json::date_time")]
    pub from_date: DateTime<FixedOffset>,
    #[serde(with = "json::date_time")]
    pub to_date: DateTime<FixedOffset>,
    pub delivery_place_id: i64,
    pub return_place_id: i64,
    #[serde(default)]
    pub total_days: Decimal,
    #[serde(default)]
    pub price: Decimal,
    #[serde(default)]
    pub agency_price: Decimal,
    #[serde(default)]
    pub customer_price: Decimal,
    #[serde(default)]
    pub currency: String,
    #[serde(default)]
    pub franchise: Option<Decimal>,
    #[serde(default)]
    pub franchise_damage: Option<Decimal>,
    #[serde(default)]
    pub franchise_rollover: Option<Decimal>,
    #[serde(default)]
    pub franchise_theft: Option<Decimal>,
    #[serde(default)]
    pub franchise_hail: Option<Decimal>,
    #[serde(default)]
    pub ilimited_km: bool,
    #[serde(default)]
    pub max_allowed_distance: i64,
    #[serde(default)]
    pub max_allowed_distance_by_day: i64,
    #[serde(default)]
    pub will_leave_country: Option<serde_json::Value>,
    #[serde(default)]
    pub average_day_price: Decimal,
    #[serde(default)]
    pub additionals: Vec<BookingAdditional>,
    pub current_status: BookingStatus,
    #[serde(with = "json::date_time")]
    pub current_status_date: DateTime<FixedOffset>,
    #[serde(default)]
    pub delivery_transportation_id: Option<serde_json::Value>,
    #[serde(default)]
    pub return_transportation_id: Option<serde_json::Value>,
    #[serde(default)]
    pub is_customer_over25: bool,
    #[serde(default)]
    pub external_system_id: Option<serde_json::Value>,
    #[serde(default)]
    pub prepaid_amount: Decimal,
    #[serde(default, rename = "ElegibleSIPPCodeUpgrade")]
    pub elegible_sipp_code_upgrade: Option<serde_json::Value>,
    #[serde(default)]
    pub exchange_rate: Option<Decimal>,
    #[serde(default)]
    pub daily_rate: Decimal,
    #[serde(default)]
    pub hourly_rate: Decimal,
    #[serde(default)]
    pub extra_day_rate: Decimal,
    #[serde(default)]
    pub extra_hour_rate: Decimal,
    #[serde(default)]
    pub rate_plan: Option<serde_json::Value>,
    #[serde(default)]
    pub is_on_request: bool,
    #[serde(default)]
    pub delivery_info: Option<serde_json::Value>,
    #[serde(default)]
    pub dropoff_info: Option<serde_json::Value>,
    #[serde(default)]
    pub origin: Option<serde_json::Value>,
    #[serde(default)]
    pub brand: Option<serde_json::Value>,
    #[serde(default)]
    pub agency: Option<serde_json::Value>,
    #[serde(with = "json::date_time")]
    pub creation_date: DateTime<FixedOffset>,
    #[serde(default, with = "json::option_date_time")]
    pub updated_on: Option<DateTime<FixedOffset>>,
    #[serde(default)]
    pub updated_by_user_name: Option<String>,
    #[serde(default)]
    pub payed_by_agency: Decimal,
    #[serde(default)]
    pub payed_by_customer: Decimal,
    #[serde(default)]
    pub commercial_agreement_code: Option<serde_json::Value>,
    #[serde(default)]
    pub purchase_order: Option<serde_json::Value>,
    #[serde(default)]
    pub sales_commision: Decimal,
    #[serde(default)]
    pub is_transfer: bool,
    #[serde(default)]
    pub price_details: PriceDetails,
    #[serde(default)]
    pub is_self_checkin: bool,
    #[serde(default)]
    pub code: Option<String>,
    /// Whether the booking is fully paid with a bonus. The platform has no bonuses: always
    /// false.
    #[serde(default)]
    pub is_full_bonus: bool,
    /// The no-show fee. The platform charges none: always 0.
    #[serde(default)]
    pub fee_no_show: Decimal,
}

/// The car model of a [`BookingDescription`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ModelSummary {
    pub id: i64,
    pub name: String,
    #[serde(rename = "SIPP")]
    pub sipp: String,
}

/// The category of a [`BookingDescription`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CategorySummary {
    pub id: i64,
    pub name: String,
}

impl From<&Model> for ModelSummary {
    fn from(model: &Model) -> Self {
        Self {
            id: model.id,
            name: model.name.clone(),
            sipp: model.sipp.clone(),
        }
    }
}

impl From<&Category> for CategorySummary {
    fn from(category: &Category) -> Self {
        Self {
            id: category.id,
            name: category.name.clone(),
        }
    }
}

impl From<&Booking> for BookingDescription {
    fn from(booking: &Booking) -> Self {
        Self {
            id: booking.id,
            version: booking.version.clone(),
            customer: Some(booking.customer.clone()),
            balance: booking.balance,
            total_payed: booking.total_payed,
            extra: booking.extra.clone(),
            promotion: booking.promotion.clone(),
            is_quotation: booking.is_quotation,
            car: booking.car.clone(),
            model: booking.model.as_ref().map(ModelSummary::from),
            category: CategorySummary::from(&booking.category),
            from_date: booking.from_date,
            to_date: booking.to_date,
            delivery_place_id: booking.delivery_place.id,
            return_place_id: booking.return_place.id,
            total_days: booking.total_days,
            price: booking.price,
            agency_price: booking.agency_price,
            customer_price: booking.customer_price,
            currency: booking.currency.clone(),
            franchise: booking.franchise,
            franchise_damage: booking.franchise_damage,
            franchise_rollover: booking.franchise_rollover,
            franchise_theft: booking.franchise_theft,
            franchise_hail: booking.franchise_hail,
            ilimited_km: booking.ilimited_km,
            max_allowed_distance: booking.max_allowed_distance,
            max_allowed_distance_by_day: booking.max_allowed_distance_by_day,
            will_leave_country: booking.will_leave_country.clone(),
            average_day_price: booking.average_day_price,
            additionals: booking.additionals.clone(),
            current_status: booking.current_status,
            current_status_date: booking.current_status_date,
            delivery_transportation_id: booking.delivery_transportation_id.clone(),
            return_transportation_id: booking.return_transportation_id.clone(),
            is_customer_over25: booking.is_customer_over25,
            external_system_id: booking.external_system_id.clone(),
            prepaid_amount: booking.prepaid_amount,
            elegible_sipp_code_upgrade: booking.elegible_sipp_code_upgrade.clone(),
            exchange_rate: booking.exchange_rate,
            daily_rate: booking.daily_rate,
            hourly_rate: booking.hourly_rate,
            extra_day_rate: booking.extra_day_rate,
            extra_hour_rate: booking.extra_hour_rate,
            rate_plan: booking.rate_plan.clone(),
            is_on_request: booking.is_on_request,
            delivery_info: booking.delivery_info.clone(),
            dropoff_info: booking.dropoff_info.clone(),
            origin: booking.origin.clone(),
            brand: booking.brand.clone(),
            agency: booking.agency.clone(),
            creation_date: booking.creation_date,
            updated_on: booking.updated_on,
            updated_by_user_name: booking.updated_by_user_name.clone(),
            payed_by_agency: booking.payed_by_agency,
            payed_by_customer: booking.payed_by_customer,
            commercial_agreement_code: booking.commercial_agreement_code.clone(),
            purchase_order: booking.purchase_order.clone(),
            sales_commision: booking.sales_commision,
            is_transfer: booking.is_transfer,
            price_details: booking.price_details.clone(),
            is_self_checkin: booking.is_self_checkin,
            code: booking.code.clone(),
            is_full_bonus: false,
            fee_no_show: Decimal::ZERO,
        }
    }
}

/// A comment recorded on a booking: the changes of an update, or a warning such as a refused
/// update of a Delivered or Closed booking. `GET /api/booking/{id}/history` lists them oldest
/// first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BookingComment {
    pub booking_id: i64,
    /// Position of the comment among the booking's comments, from 1.
    pub seq: i64,
    #[serde(with = "json::date_time")]
    pub date: DateTime<FixedOffset>,
    /// The API user whose request recorded the comment; `null` for the system.
    #[serde(default)]
    pub user_name: Option<String>,
    pub text: String,
}
