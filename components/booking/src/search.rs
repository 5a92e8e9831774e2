//! `GET /api/availability`: what can be booked over a period between two places, each offer
//! priced as `book` would price it (`rental_domain::booking::search`).
//!
//! One read-only transaction reads the catalogue (categories, models, and each car as its
//! slot: its model and when it leaves the fleet) and, in one call, every entry of the
//! availability index of the tenant's mode: `car-period` model-based, `category-period`
//! category-based, and `car` or `category` for bookings stored before those and not written
//! since. Those indexes hold only bookings that hold capacity, one entry each, so the read
//! grows with the tenant's active bookings and fleet, not with its history. Only the offers of
//! the requested page are priced, reading the price lists once ([`PriceBook`]).

use std::collections::HashMap;

use rental_domain::booking::availability::Occupancy;
use rental_domain::booking::response::PriceResponse;
use rental_domain::booking::search::{self, AvailabilityItem, AvailabilityQuery, Fleet, Offer};
use rental_domain::booking::settings::AvailabilityMode;
use rental_domain::booking::terms::{self, Terms, Vehicle};
use rental_domain::collections::{bookings, car_models, cars, categories};
use rental_domain::{Booking, Category, Customer, KeyPart, Model, PagedResult, Stored};
use rental_guest::store::{Mode, Range, Transaction};
use rental_guest::{Error, Request, Response, context, json, retry_on_conflict};

use crate::Rules;
use crate::availability::occupied_by;
use crate::catalog::{self, PriceBook};
use crate::env::Env;
use crate::shared::agency;

/// `GET /api/availability`: a page of the offers, in the request's language.
pub fn availability(request: &Request, custom: &dyn Rules) -> Result<Response, Error> {
    let query = AvailabilityQuery::parse(
        request
            .query
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str())),
    )?;
    let env = Env::load()?;
    let page = retry_on_conflict(|| search(&query, &env, custom))?;
    Ok(json(200, &page))
}

/// One attempt at the search, in one read-only transaction.
fn search(
    query: &AvailabilityQuery,
    env: &Env,
    custom: &dyn Rules,
) -> Result<PagedResult<AvailabilityItem>, Error> {
    let tx = Transaction::begin(Mode::ReadOnly)?;
    let rules = env.rules();
    let offices = catalog::offices(&tx)?;
    let agency = agency(&tx, &query.request, None, env)?;
    let terms = terms::check(
        &query.request,
        None,
        &Customer::default(),
        agency.as_ref(),
        &offices,
        &rules,
    )
    .map_err(search::in_query_terms)?;

    let categories = all::<Category>(&tx, categories::BY_ID)?;
    let models = all::<Model>(&tx, car_models::BY_ID)?;
    let cars = catalog::car_slots(&tx, cars::BY_ID, &[])?;
    let fleet = Fleet {
        categories: &categories,
        models: &models,
        cars: &cars,
    };
    let offers = match env.settings.availability {
        AvailabilityMode::Model => {
            let indexes = [bookings::BY_CAR_PERIOD, bookings::BY_CAR];
            let occupied = holders(&tx, indexes, |holder| match holder {
                KeyPart::Text(car) => Some(car),
                _ => None,
            })?;
            search::model_offers(fleet, &occupied, terms.period)
        }
        AvailabilityMode::Category => {
            let indexes = [bookings::BY_CATEGORY_PERIOD, bookings::BY_CATEGORY];
            let occupied = holders(&tx, indexes, |holder| match holder {
                KeyPart::Int(category) => Some(category),
                _ => None,
            })?;
            search::category_offers(fleet, &occupied, terms.period)
        }
    };

    let total = i64::try_from(offers.len()).unwrap_or(i64::MAX);
    let skip = usize::try_from(query.page.offset).unwrap_or(usize::MAX);
    let take = usize::try_from(query.page.limit).unwrap_or(0);
    let mut prices = PriceBook::new(&tx);
    let items = offers
        .into_iter()
        .skip(skip)
        .take(take)
        .map(|offer| item(&mut prices, &offer, fleet, query, &terms, &rules, custom))
        .collect::<Result<_, _>>()?;
    Ok(PagedResult::by_skip(query.page, total, items))
}

/// The offer with its catalogue entries, priced as a booking of it would be.
fn item(
    prices: &mut PriceBook<'_>,
    offer: &Offer,
    fleet: Fleet<'_>,
    query: &AvailabilityQuery,
    terms: &Terms<'_>,
    rules: &terms::Rules<'_>,
    custom: &dyn Rules,
) -> Result<AvailabilityItem, Error> {
    let mut category = fleet
        .categories
        .iter()
        .find(|category| category.id == offer.category)
        .cloned()
        .ok_or_else(|| Error::internal("an offer of a category the search did not read"))?;
    // The offer names its model itself.
    category.models.clear();
    let model = offer
        .model
        .and_then(|id| fleet.models.iter().find(|model| model.id == id).cloned());
    let vehicle = Vehicle {
        car: None,
        model,
        category,
    };
    let quote = prices.price(terms, &vehicle, &[], &query.request, rules, custom)?;
    Ok(AvailabilityItem {
        category: vehicle.category,
        model: vehicle.model,
        available: offer.available,
        price: PriceResponse::new(quote, context::language()),
    })
}

/// Every value of `T`, in the order of `index`.
fn all<T: Stored>(tx: &Transaction, index: &'static str) -> Result<Vec<T>, Error> {
    Ok(tx
        .scan_all(&Range::<T>::all(index))?
        .into_iter()
        .map(|document| document.value)
        .collect())
}

/// What the bookings of whole availability indexes occupy (one of bookings as written now and
/// the one it replaced, which holds only bookings not written since: each booking is in one),
/// by the holder `holder` reads from the first part of each entry's key.
fn holders<H: Eq + std::hash::Hash>(
    tx: &Transaction,
    indexes: [&'static str; 2],
    holder: impl Fn(KeyPart) -> Option<H>,
) -> Result<HashMap<H, Vec<Occupancy>>, Error> {
    let mut by_holder: HashMap<H, Vec<Occupancy>> = HashMap::new();
    for index in indexes {
        for (part, occupancy) in occupied_by(tx, &Range::<Booking>::all(index))? {
            if let Some(key) = holder(part) {
                by_holder.entry(key).or_default().push(occupancy);
            }
        }
    }
    Ok(by_holder)
}
