//! Availability search (`GET /api/availability`, contract.md "Availability search"): what can
//! be booked over a period between two places, by model or by category as the tenant's
//! availability mode says ([`super::settings::AvailabilityMode`]).
//!
//! The search asks the questions a creation asks, without holding anything:
//! - the period and the places pass the rules of a creation ([`super::terms::check`], on the
//!   [`BookingRequest`] that [`AvailabilityQuery::request`] builds), and their errors name the
//!   query's parameters ([`in_query_terms`]);
//! - model-based, a model is offered when one of its cars is in service over the period and
//!   free ([`car_is_free`]), with how many are ([`model_offers`]);
//! - category-based, a category is offered when its quota has room ([`category_offers`]),
//!   with how much;
//! - each offer of the page is priced as `book` would price a booking of it.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::availability::{Occupancy, car_is_free, in_fleet, peak};
use super::request::{BookingRequest, Period, PlaceRef, fields};
use super::response::PriceResponse;
use crate::collections::CarSlot;
use crate::error::ApiError;
use crate::models::{Category, Model};
use crate::paging::{self, Page, parse_date_time, parse_int};
use crate::query::QueryParams;

/// Query parameter: the start of the period (a creation's `FromDate`).
pub const FROM: &str = "from";
/// Query parameter: the end of the period (`ToDate`).
pub const TO: &str = "to";
/// Query parameter: the place of delivery (`DeliveryPlace.Id`).
pub const DELIVERY_PLACE: &str = "deliveryPlace";
/// Query parameter: the place of return (`ReturnPlace.Id`).
pub const RETURN_PLACE: &str = "returnPlace";

/// The query of `GET /api/availability`, read.
#[derive(Debug, Clone, PartialEq)]
pub struct AvailabilityQuery {
    /// What a creation for the period and places would send, with no vehicle or customer.
    pub request: BookingRequest,
    /// Which offers to answer (a skip count over the offers, as the catalogue lists).
    pub page: Page,
}

impl AvailabilityQuery {
    /// Reads a query string's decoded pairs. The four parameters of the period and places are
    /// required: a missing or malformed one is 98 ModelNotValid naming it.
    pub fn parse<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Self, ApiError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let params = QueryParams::collect(pairs);
        let date = |name: &str| {
            params
                .get(name, parse_date_time)?
                .ok_or_else(|| ApiError::missing_field(name))
        };
        let place = |name: &str| {
            Ok::<_, ApiError>(PlaceRef {
                id: Some(
                    params
                        .get(name, parse_int)?
                        .ok_or_else(|| ApiError::missing_field(name))?,
                ),
                ..PlaceRef::default()
            })
        };
        let request = BookingRequest {
            from_date: Some(date(FROM)?),
            to_date: Some(date(TO)?),
            delivery_place: Some(place(DELIVERY_PLACE)?),
            return_place: Some(place(RETURN_PLACE)?),
            ..BookingRequest::default()
        };
        Ok(Self {
            request,
            page: paging::page(&params)?,
        })
    }
}

/// An error of the creation rules as the search reports it: naming the query parameter
/// (`from`) where the rules name the body field it stands for (`FromDate`).
pub fn in_query_terms(mut error: ApiError) -> ApiError {
    let renamed = match error.field.as_deref() {
        Some(fields::FROM_DATE) => Some(FROM),
        Some(fields::TO_DATE) => Some(TO),
        Some(fields::DELIVERY_PLACE_ID) => Some(DELIVERY_PLACE),
        Some(fields::RETURN_PLACE_ID) => Some(RETURN_PLACE),
        _ => None,
    };
    if let Some(name) = renamed {
        error.field = Some(name.to_owned());
    }
    error
}

/// Something that can be booked over the period: a model (model-based availability) or a
/// category, and how many bookings of it would still fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub category: i64,
    /// The model offered; `None` category-based.
    pub model: Option<i64>,
    /// Model-based, its free cars; category-based, the room left in the category's quota.
    pub available: usize,
}

/// What the search reads of the tenant's fleet: the catalogue's categories and models, and
/// every car as its slot (`collections::CAR_SLOTS`).
#[derive(Debug, Clone, Copy)]
pub struct Fleet<'a> {
    pub categories: &'a [Category],
    pub models: &'a [Model],
    pub cars: &'a [CarSlot],
}

impl Fleet<'_> {
    /// The catalogue's category of each model that has one.
    fn category_of_model(&self) -> HashMap<i64, i64> {
        self.models
            .iter()
            .filter_map(|model| Some((model.id, model.category.as_ref()?.id)))
            .collect()
    }

    /// Offers in the order the search answers them: by the category's display `Order`, then
    /// the category's Id, then the model's.
    fn in_order(&self, mut offers: Vec<Offer>) -> Vec<Offer> {
        let rank: HashMap<i64, _> = self
            .categories
            .iter()
            .map(|category| (category.id, category.order))
            .collect();
        offers.sort_by_key(|offer| {
            (
                rank.get(&offer.category).copied(),
                offer.category,
                offer.model,
            )
        });
        offers
    }
}

/// Model-based availability: each model of the catalogue with a category that has at least
/// one car in service over `period` and free of every booking `occupied` holds against it
/// (by car Id), with the number of such cars.
pub fn model_offers(
    fleet: Fleet<'_>,
    occupied: &HashMap<String, Vec<Occupancy>>,
    period: Period,
) -> Vec<Offer> {
    let category_of = fleet.category_of_model();
    let mut free: BTreeMap<i64, usize> = BTreeMap::new();
    for car in fleet.cars {
        let holds = occupied.get(&car.id).map_or(&[][..], Vec::as_slice);
        if category_of.contains_key(&car.model_id)
            && in_fleet(car.inactive_date, period)
            && car_is_free(holds, period, None)
        {
            *free.entry(car.model_id).or_default() += 1;
        }
    }
    let offers = free
        .into_iter()
        .map(|(model, available)| Offer {
            category: category_of[&model],
            model: Some(model),
            available,
        })
        .collect();
    fleet.in_order(offers)
}

/// Category-based availability: each category of the catalogue whose quota (its cars in
/// service over `period`) exceeds the most bookings `occupied` holds against it (by category
/// Id) at once within the period, with the difference.
pub fn category_offers(
    fleet: Fleet<'_>,
    occupied: &HashMap<i64, Vec<Occupancy>>,
    period: Period,
) -> Vec<Offer> {
    let category_of = fleet.category_of_model();
    let mut capacity: HashMap<i64, usize> = HashMap::new();
    for car in fleet
        .cars
        .iter()
        .filter(|car| in_fleet(car.inactive_date, period))
    {
        if let Some(&category) = category_of.get(&car.model_id) {
            *capacity.entry(category).or_default() += 1;
        }
    }
    let offers = fleet
        .categories
        .iter()
        .filter_map(|category| {
            let cars = capacity.get(&category.id).copied().unwrap_or(0);
            let used = occupied
                .get(&category.id)
                .map_or(0, |holds| peak(holds, period, None));
            let available = cars.saturating_sub(used);
            (available > 0).then_some(Offer {
                category: category.id,
                model: None,
                available,
            })
        })
        .collect();
    fleet.in_order(offers)
}

/// One item of the search's answer: an [`Offer`] with its catalogue entries and its price.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AvailabilityItem {
    /// The category as the catalogue has it, without its `Models`.
    pub category: Category,
    /// The model offered; `null` category-based.
    pub model: Option<Model>,
    /// [`Offer::available`].
    pub available: usize,
    /// What `POST /api/booking/price` answers for a booking of it over the period and places.
    pub price: PriceResponse,
}

#[cfg(test)]
mod tests;
