//! The request bodies of the booking endpoints, as sent, and what they ask for.
//!
//! Every field is optional when read (see [`crate::json::parse_body`]), so that a missing
//! required field is reported as [`ErrorCode::ModelNotValid`] naming it. The accessors below
//! apply the required-field rules: for a creation every required field must be there; for an
//! update a missing field keeps what the booking has (`stored`).
//!
//! Identifiers that .NET clients send as `0` or `""` for "none" are read as absent.

use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset};
use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::Value;

use crate::error::{ApiError, ErrorCode};
use crate::json;
use crate::models::{Additional, BookingAdditional, Customer, Place};

/// Field names, as the request spells them, used in error messages.
pub mod fields {
    pub const ID: &str = "Id";
    pub const CUSTOMER: &str = "Customer";
    pub const CAR_ID: &str = "Car.Id";
    pub const CAR_MODEL_ID: &str = "Car.Model.Id";
    pub const CATEGORY_ID: &str = "Category.Id";
    pub const FROM_DATE: &str = "FromDate";
    pub const TO_DATE: &str = "ToDate";
    pub const DELIVERY_PLACE_ID: &str = "DeliveryPlace.Id";
    pub const RETURN_PLACE_ID: &str = "ReturnPlace.Id";
    pub const PROMOTION_CODE: &str = "PromotionCode";
    pub const COMMERCIAL_AGREEMENT_CODE: &str = "CommercialAgreementCode";
    pub const AGENCY: &str = "Agency";
    pub const ILIMITED_KM: &str = "IlimitedKm";
    pub const BOOKING_ID: &str = "BookingId";
    pub const LASTNAME: &str = "Lastname";
    pub const KILOMETERS: &str = "Kilometers";
    pub const GASOLINE: &str = "Gasoline";
    pub const DATE: &str = "Date";
}

/// The body of `POST /api/booking/book` (SaveBookingModel), of `PUT /api/booking/update`
/// (UpdateBookingModel: the same fields plus `Id`) and of `POST /api/booking/price`.
///
/// Accepted and ignored, because the platform computes them: `PriceItems`, the `Franchise*`
/// amounts (from the car model), `DailyRate`, `HourlyRate`, `ExtraDayRate`, `ExtraHourRate`,
/// `Currency` (the tariff's), `CreationDate`, `IsFixedPrice`, `IsPriceAllInclusive`,
/// `ForceExchangeRate`; `CurrentLanguage` and `Language` (the `language` query parameter
/// decides).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct BookingRequest {
    /// The booking to update; required by the update, ignored elsewhere.
    pub id: Option<i64>,
    pub customer: Option<Customer>,
    pub car: Option<CarRef>,
    pub category: Option<IdRef>,
    #[serde(with = "json::option_date_time")]
    pub from_date: Option<DateTime<FixedOffset>>,
    #[serde(with = "json::option_date_time")]
    pub to_date: Option<DateTime<FixedOffset>>,
    pub delivery_place: Option<PlaceRef>,
    pub return_place: Option<PlaceRef>,
    /// Absent on an update: the booking's optional additionals stay as they are.
    pub additionals: Option<Vec<AdditionalRef>>,
    pub attributes: Option<BTreeMap<String, Value>>,
    #[serde(deserialize_with = "json::nullable")]
    pub origin: Option<Option<Value>>,
    #[serde(deserialize_with = "json::nullable")]
    pub brand: Option<Option<Value>>,
    /// The agency the booking comes through: `{"Id": <customer id of an agency>}`.
    #[serde(deserialize_with = "json::nullable")]
    pub agency: Option<Option<Value>>,
    /// The price the client expects; accepted within 1% of the computed one.
    pub price: Option<Decimal>,
    #[serde(deserialize_with = "json::nullable")]
    pub exchange_rate: Option<Option<Decimal>>,
    pub promotion: Option<Value>,
    pub promotion_code: Option<Value>,
    #[serde(deserialize_with = "json::nullable")]
    pub commercial_agreement_code: Option<Option<String>>,
    #[serde(deserialize_with = "json::nullable")]
    pub external_system_id: Option<Option<Value>>,
    pub prepaid_amount: Option<Decimal>,
    pub is_quotation: Option<bool>,
    pub is_on_request: Option<bool>,
    #[serde(deserialize_with = "json::nullable")]
    pub extra: Option<Option<Value>>,
    #[serde(deserialize_with = "json::nullable")]
    pub delivery_transportation_id: Option<Option<Value>>,
    #[serde(deserialize_with = "json::nullable")]
    pub return_transportation_id: Option<Option<Value>>,
    #[serde(
        rename = "ElegibleSIPPCodeUpgrade",
        deserialize_with = "json::nullable"
    )]
    pub elegible_sipp_code_upgrade: Option<Option<Value>>,
    pub ilimited_km: Option<bool>,
    pub max_allowed_distance_by_day: Option<i64>,
    pub max_allowed_distance: Option<i64>,
    pub distance_unit: Option<String>,
    #[serde(deserialize_with = "json::nullable")]
    pub rate_plan: Option<Option<Value>>,
    pub is_customer_over25: Option<bool>,
    /// Optimistic version (a string; a number is accepted too).
    #[serde(deserialize_with = "json::text_or_number")]
    pub version: Option<String>,
    /// True: answer with the full Booking; otherwise the BookingCreationResponse.
    pub full_response: Option<bool>,
}

/// `Car` of a request: a car by `Id`, or a model by `Model.Id`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CarRef {
    pub id: Option<String>,
    pub model: Option<IdRef>,
}

/// An object of a request that only matters by its integer `Id` (`Category`, `Car.Model`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct IdRef {
    pub id: Option<i64>,
}

/// `DeliveryPlace` or `ReturnPlace` of a request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct PlaceRef {
    pub id: Option<i64>,
    /// The customer's own address at the place (the place must accept custom addresses).
    #[serde(deserialize_with = "json::null_as_default")]
    pub is_custom_address: bool,
    pub address: Option<String>,
    pub city: Option<String>,
}

/// An item of `Additionals` in a request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct AdditionalRef {
    #[serde(deserialize_with = "json::null_as_default")]
    pub additional: IdRef,
    /// Units; 1 when absent.
    pub quantity: Option<i64>,
}

/// The vehicle a request asks for, the most specific one it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VehicleChoice {
    /// This car (`Car.Id`).
    Car(String),
    /// A car of this model (`Car.Model.Id`).
    Model(i64),
    /// A car of this category (`Category.Id`).
    Category(i64),
}

/// A rental period: from `from` (included) to `to` (excluded), `to` after `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    pub from: DateTime<FixedOffset>,
    pub to: DateTime<FixedOffset>,
}

impl Period {
    /// The period, when `to` is after `from`; otherwise [`ErrorCode::InvlaidDates`].
    pub fn new(from: DateTime<FixedOffset>, to: DateTime<FixedOffset>) -> Result<Self, ApiError> {
        if to <= from {
            return Err(ApiError::new(ErrorCode::InvlaidDates).with_field(fields::TO_DATE));
        }
        Ok(Self { from, to })
    }

    /// Whether the two periods share an instant (periods that only touch do not).
    pub fn overlaps(&self, other: &Period) -> bool {
        self.from < other.to && other.from < self.to
    }
}

/// A place a request asks for, with the customer's address when it is a custom address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlaceChoice {
    pub id: i64,
    pub custom_address: Option<CustomAddress>,
}

/// An address the customer gave at a place that accepts custom addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomAddress {
    pub address: Option<String>,
    pub city: Option<String>,
}

/// An id that counts: positive.
fn given(id: Option<i64>) -> Option<i64> {
    id.filter(|id| *id > 0)
}

/// A text that counts: not blank.
fn text(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|text| !text.is_empty())
}

impl BookingRequest {
    /// The booking an update is for: `Id`, required.
    pub fn booking_id(&self) -> Result<i64, ApiError> {
        given(self.id).ok_or_else(|| ApiError::missing_field(fields::ID))
    }

    /// The customer of a creation: `Customer`, required.
    pub fn required_customer(&self) -> Result<&Customer, ApiError> {
        self.customer
            .as_ref()
            .ok_or_else(|| ApiError::missing_field(fields::CUSTOMER))
    }

    /// The vehicle of a creation or a price: [`BookingRequest::vehicle`], required (98 naming
    /// `Category.Id`, the least a request must name).
    pub fn required_vehicle(&self) -> Result<VehicleChoice, ApiError> {
        self.vehicle()
            .ok_or_else(|| ApiError::missing_field(fields::CATEGORY_ID))
    }

    /// The vehicle asked for, if any: `Car.Id`, else `Car.Model.Id`, else `Category.Id`.
    pub fn vehicle(&self) -> Option<VehicleChoice> {
        let car = self.car.as_ref();
        if let Some(id) = text(car.and_then(|car| car.id.as_deref())) {
            return Some(VehicleChoice::Car(id.to_owned()));
        }
        if let Some(model) = given(car.and_then(|car| car.model).and_then(|model| model.id)) {
            return Some(VehicleChoice::Model(model));
        }
        given(self.category.and_then(|category| category.id)).map(VehicleChoice::Category)
    }

    /// The period asked for; a missing date is the `stored` one (`None` on creation: the date
    /// is required). [`ErrorCode::InvlaidDates`] when `ToDate` is not after `FromDate`.
    pub fn period(&self, stored: Option<Period>) -> Result<Period, ApiError> {
        let from = self
            .from_date
            .or(stored.map(|period| period.from))
            .ok_or_else(|| ApiError::missing_field(fields::FROM_DATE))?;
        let to = self
            .to_date
            .or(stored.map(|period| period.to))
            .ok_or_else(|| ApiError::missing_field(fields::TO_DATE))?;
        Period::new(from, to)
    }

    /// The delivery place asked for, or the `stored` one.
    pub fn delivery_place(&self, stored: Option<&Place>) -> Result<PlaceChoice, ApiError> {
        place_choice(
            self.delivery_place.as_ref(),
            stored,
            fields::DELIVERY_PLACE_ID,
        )
    }

    /// The return place asked for, or the `stored` one.
    pub fn return_place(&self, stored: Option<&Place>) -> Result<PlaceChoice, ApiError> {
        place_choice(self.return_place.as_ref(), stored, fields::RETURN_PLACE_ID)
    }

    /// The additionals asked for, as pricing takes them (only `Additional.Id` and `Quantity`
    /// set; a missing quantity is 1), `None` when the request has no `Additionals`. Pricing
    /// checks them against the catalogue.
    ///
    /// Errors: an item that names no additional (`Additional` or its `Id` missing, `null` or
    /// 0) is [`ErrorCode::ModelNotValid`] naming `Additionals[i].Additional.Id`.
    pub fn additionals(&self) -> Result<Option<Vec<BookingAdditional>>, ApiError> {
        let Some(items) = &self.additionals else {
            return Ok(None);
        };
        items
            .iter()
            .enumerate()
            .map(|(position, item)| {
                let id = given(item.additional.id).ok_or_else(|| {
                    ApiError::missing_field(format!("Additionals[{position}].Additional.Id"))
                })?;
                Ok(BookingAdditional {
                    additional: Additional {
                        id,
                        ..Additional::default()
                    },
                    quantity: item.quantity.unwrap_or(1),
                })
            })
            .collect::<Result<_, _>>()
            .map(Some)
    }

    /// The promotion code sent, if any: the platform has no promotions, so a sent code is
    /// [`ErrorCode::PromotionNotFound`].
    pub fn check_promotion(&self) -> Result<(), ApiError> {
        let sent = |value: &Option<Value>| match value {
            None | Some(Value::Null) => false,
            Some(Value::String(code)) => !code.trim().is_empty(),
            Some(_) => true,
        };
        if sent(&self.promotion_code) || sent(&self.promotion) {
            return Err(
                ApiError::new(ErrorCode::PromotionNotFound).with_field(fields::PROMOTION_CODE)
            );
        }
        Ok(())
    }

    /// The agency id of `Agency` (`{"Id": n}` or a bare number), when the request names one.
    pub fn agency_id(&self) -> Option<i64> {
        match self.agency.as_ref()?.as_ref()? {
            Value::Object(agency) => given(agency.get("Id").and_then(Value::as_i64)),
            other => given(other.as_i64()),
        }
    }

    /// Whether the full Booking is asked for (`FullResponse`).
    pub fn full_response(&self) -> bool {
        self.full_response.unwrap_or(false)
    }
}

/// A place of the request, or the stored one when the request has none.
fn place_choice(
    sent: Option<&PlaceRef>,
    stored: Option<&Place>,
    field: &str,
) -> Result<PlaceChoice, ApiError> {
    if let Some(id) = given(sent.and_then(|place| place.id)) {
        let custom_address =
            sent.filter(|place| place.is_custom_address)
                .map(|place| CustomAddress {
                    address: text(place.address.as_deref()).map(str::to_owned),
                    city: text(place.city.as_deref()).map(str::to_owned),
                });
        return Ok(PlaceChoice { id, custom_address });
    }
    let stored = stored.ok_or_else(|| ApiError::missing_field(field))?;
    Ok(PlaceChoice {
        id: stored.id,
        custom_address: stored.is_custom_address.then(|| CustomAddress {
            address: stored.address.clone(),
            city: stored.city.clone(),
        }),
    })
}

/// The body of `POST /api/booking/cancel`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct CancelRequest {
    pub booking_id: Option<i64>,
    /// The customer's last name (or, for a company, its name), as a confirmation.
    pub lastname: Option<String>,
}

impl CancelRequest {
    /// `BookingId`, required.
    pub fn booking_id(&self) -> Result<i64, ApiError> {
        given(self.booking_id).ok_or_else(|| ApiError::missing_field(fields::BOOKING_ID))
    }

    /// `Lastname`, required.
    pub fn lastname(&self) -> Result<&str, ApiError> {
        text(self.lastname.as_deref()).ok_or_else(|| ApiError::missing_field(fields::LASTNAME))
    }
}

/// The body of `POST /api/operations/deliver` and `POST /api/operations/return`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct OperationRequest {
    pub booking_id: Option<i64>,
    /// The car's odometer at the operation.
    pub kilometers: Option<i64>,
    /// The car's fuel level at the operation, in eighths of a tank (0 to 8).
    pub gasoline: Option<i64>,
    /// When the operation happened; now when absent.
    #[serde(with = "json::option_date_time")]
    pub date: Option<DateTime<FixedOffset>>,
}

/// What an operation request says, checked for presence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    pub booking_id: i64,
    pub kilometers: i64,
    pub gasoline: i64,
    pub date: DateTime<FixedOffset>,
}

impl OperationRequest {
    /// The operation, with `now` as the date when none is sent. `BookingId`, `Kilometers` and
    /// `Gasoline` are required.
    pub fn operation(&self, now: DateTime<FixedOffset>) -> Result<Operation, ApiError> {
        Ok(Operation {
            booking_id: given(self.booking_id)
                .ok_or_else(|| ApiError::missing_field(fields::BOOKING_ID))?,
            kilometers: self
                .kilometers
                .ok_or_else(|| ApiError::missing_field(fields::KILOMETERS))?,
            gasoline: self
                .gasoline
                .ok_or_else(|| ApiError::missing_field(fields::GASOLINE))?,
            date: self.date.unwrap_or(now),
        })
    }
}

#[cfg(test)]
mod tests;
