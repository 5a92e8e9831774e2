//! The demo tenant of `rentald tenant create <slug> --demo`: a small Argentine rental company
//! with its catalogue (branch offices and places, categories, models, cars, additionals,
//! tariffs), customers and a booking history around the instant the caller passes in.
//!
//! The catalogue is a catalogue file (`demo/catalog.jsonl`, docs/catalog.md) read by
//! [`catalog::import`], with the cars, whose plates and dates follow from today, imported over
//! it ([`fleet`]). Customers are built from a table ([`customers`]). Bookings are created by
//! the booking rules the API's creation runs, over the catalogue as stored, with the demo's
//! own settings read the way the API reads a tenant's, so their prices are the API's
//! ([`bookings`]).
//!
//! Everything is derived from the file, the tables and indices: the same `now` always gives
//! the same tenant, and the shape of the data (statuses, counts, who rents which car) depends
//! only on day offsets from the tenant's current date, not on the time of day of `now`.
//!
//! The bookings are laid out car by car on a timeline from about 125 days ago to 40 days
//! ahead, with gaps between rentals, so that no two bookings ever hold the same car over
//! overlapping periods. Their status follows from where they fall: returned rentals are
//! Closed, running ones Delivered, future ones Reserved, Confirmed or Quoted, and a few of
//! each are Canceled. Ids follow the creation date. Bookings last touched before auditing
//! began (59 days ago) are legacy records without `UpdatedOn`.

mod bookings;
mod customers;
mod fleet;
mod history;
#[cfg(test)]
mod tests;

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, NaiveTime, TimeDelta, Utc};
use chrono_tz::Tz;
use rust_decimal::Decimal;
use serde::de::DeserializeOwned;

use crate::booking::settings::BookingSettings;
use crate::catalog::{self, Catalog, InvalidCatalog};
use crate::collections::{self, BranchOfficeDoc, CustomerDoc};
use crate::dates::start_of_day;
use crate::error::ApiError;
use crate::models::{Additional, Booking, Car, Category, Model, Tariff};
use crate::pricing::{self, PricingSettings};
use crate::store::{Record, Stored};

pub use history::PastBookings;

/// The demo tenant: its settings and every document to write.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoTenant {
    /// Tenant settings, as `(key, value)`.
    pub settings: Vec<(String, String)>,
    /// The catalogue (branch offices, categories, models, cars, additionals, tariffs, as
    /// import writes them), then customers and bookings.
    pub records: Vec<Record>,
}

/// Why the demo tenant could not be built: never, with the demo's own file, tables and rules.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A document could not be serialized or read back.
    #[error("a demo document cannot be serialized: {0}")]
    Serialize(#[from] serde_json::Error),
    /// The catalogue file, or the cars imported over it, were refused.
    #[error("the demo catalogue cannot be imported: {0}")]
    Catalog(#[from] InvalidCatalog),
    /// A car of the fleet is not in the imported catalogue.
    #[error("car {0} is not in the demo catalogue")]
    MissingCar(String),
    /// A setting or a booking was refused by the booking rules.
    #[error("a demo booking cannot be created: {0}")]
    Booking(#[from] ApiError),
}

/// The demo tenant for the instant `now`: deterministic, the same `now` gives the same tenant.
///
/// Errors: only when the catalogue is refused, a document cannot be serialized or a booking
/// is refused by the booking rules, which the demo's file and tables never cause.
pub fn demo_tenant(now: DateTime<Utc>) -> Result<DemoTenant, DemoError> {
    Ok(Demo::build(now)?.into_tenant()?)
}

/// The catalogue file: branch offices, places, categories, models, additionals and tariffs.
const CATALOG: &str = include_str!("demo/catalog.jsonl");

/// The tenant's IANA time zone.
const TIME_ZONE: Tz = chrono_tz::America::Argentina::Buenos_Aires;
/// The currency of every amount.
const CURRENCY: &str = "USD";
/// Minutes after a whole day that are not charged as another day.
const GRACE_MINUTES: u32 = 59;
/// Opening hours of every office (no demo rental starts or ends outside them).
const OFFICE_HOURS: &str = "08:00-20:00";
/// Surcharge for returning a car to another office (no demo rental does).
const ONE_WAY_SURCHARGE: &str = "40.00";
/// Surcharge per pick-up or return outside office hours.
const OUT_OF_HOURS_SURCHARGE: &str = "15.00";
/// Daily surcharge for drivers under 25.
const YOUNG_DRIVER_SURCHARGE: &str = "6.00";
/// The slug whose booking codes the demo's bookings have (`DEMO-000001`), whatever the
/// tenant's.
const CODE_SLUG: &str = "demo";
/// Days before today when auditing began: bookings last touched earlier have no `UpdatedOn`.
const AUDIT_START_DAYS_AGO: i64 = 59;
/// The timeline of a car starts between this many days ago and 18 days later.
const TIMELINE_START_DAYS_AGO: i64 = 125;
/// No booking starts more than this many days ahead.
const HORIZON_DAYS: i64 = 40;
/// Cars of the fleet.
const CAR_COUNT: usize = 30;
/// Offices where cars are based: the active ones, the first three of the file.
const ACTIVE_OFFICES: usize = 3;

/// Ids of the file's additionals that bookings take.
const FULL_INSURANCE: i64 = 2;
const GPS: i64 = 3;
const CHILD_SEAT: i64 = 4;
const ADDITIONAL_DRIVER: i64 = 5;
const SNOW_CHAINS: i64 = 6;

/// The travel agency some bookings come through.
const AGENCY_CUSTOMER_ID: i64 = 24;
const AGENCY_NAME: &str = "Viajes del Sur S.A.";

/// An amount rounded to the currency's minor unit, half away from zero.
fn round(amount: Decimal) -> Decimal {
    pricing::round_money(amount, pricing::minor_units(CURRENCY))
}

fn text(value: &str) -> Option<String> {
    Some(value.to_owned())
}

/// Instants relative to the tenant's current date.
struct Clock {
    today: NaiveDate,
}

impl Clock {
    fn new(now: DateTime<Utc>) -> Self {
        Self {
            today: now.with_timezone(&TIME_ZONE).date_naive(),
        }
    }

    /// `hour:minute` local time, `day` days from today, in the tenant's offset.
    fn at(&self, day: i64, hour: i64, minute: i64) -> DateTime<FixedOffset> {
        let date = self.today + TimeDelta::days(day);
        (start_of_day(TIME_ZONE, date) + TimeDelta::hours(hour) + TimeDelta::minutes(minute))
            .with_timezone(&TIME_ZONE)
            .fixed_offset()
    }

    /// `day` days from today.
    fn date(&self, day: i64) -> NaiveDate {
        self.today + TimeDelta::days(day)
    }
}

/// A calendar date as a date-time: midnight UTC, as birth and document dates are written.
fn calendar(date: NaiveDate) -> DateTime<FixedOffset> {
    date.and_time(NaiveTime::MIN).and_utc().fixed_offset()
}

/// Whole years from `from` to `to`.
fn years_between(from: NaiveDate, to: NaiveDate) -> i64 {
    let mut years = i64::from(to.year() - from.year());
    if (to.month(), to.day()) < (from.month(), from.day()) {
        years -= 1;
    }
    years
}

/// A well-mixed 64-bit value of `seed` (SplitMix64).
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A UUID-shaped (version 4, RFC 4122 variant) identifier derived from `index`.
fn global_id(index: u64) -> String {
    let high = (mix(index.wrapping_mul(2).wrapping_add(0xD3E0)) & !0xF000) | 0x4000;
    let low = (mix(index.wrapping_mul(2).wrapping_add(0xD3E1)) & !(0b11 << 62)) | (0b10 << 62);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xFFFF,
        high & 0xFFFF,
        low >> 48,
        low & 0xFFFF_FFFF_FFFF
    )
}

/// `value` with the accented letters of the demo's names replaced by plain ones, lowercase.
fn ascii_lower(value: &str) -> String {
    value
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| match c {
            'á' | 'Á' | 'ã' => 'a',
            'é' | 'É' => 'e',
            'í' | 'Í' => 'i',
            'ó' | 'Ó' => 'o',
            'ú' | 'Ú' | 'ü' => 'u',
            'ñ' | 'Ñ' => 'n',
            'ç' => 'c',
            other => other.to_ascii_lowercase(),
        })
        .collect()
}

/// The tenant's settings, as `(key, value)`.
fn settings() -> Vec<(String, String)> {
    [
        ("time_zone", TIME_ZONE.name().to_owned()),
        ("default_language", "es".to_owned()),
        ("availability_mode", "model".to_owned()),
        (pricing::setting::CURRENCY, CURRENCY.to_owned()),
        (pricing::setting::GRACE_MINUTES, GRACE_MINUTES.to_string()),
        (pricing::setting::OFFICE_HOURS, OFFICE_HOURS.to_owned()),
        (pricing::setting::ONE_WAY, ONE_WAY_SURCHARGE.to_owned()),
        (
            pricing::setting::OUT_OF_HOURS,
            OUT_OF_HOURS_SURCHARGE.to_owned(),
        ),
        (
            pricing::setting::YOUNG_DRIVER,
            YOUNG_DRIVER_SURCHARGE.to_owned(),
        ),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect()
}

/// The setting `key` of [`settings`], as the API's lookup returns it.
fn setting(key: &str) -> Option<String> {
    settings()
        .into_iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value)
}

/// The pricing settings of [`settings`], read as the API reads a tenant's.
fn pricing_settings() -> Result<PricingSettings, ApiError> {
    Ok(PricingSettings::from_lookup(setting)?)
}

/// The booking settings of [`settings`], read as the API reads a tenant's.
fn booking_settings() -> Result<BookingSettings, ApiError> {
    Ok(BookingSettings::from_lookup(CODE_SLUG, setting)?)
}

/// The documents of `collection` among `records`, read back as the API reads them.
fn stored<T: DeserializeOwned>(
    records: &[Record],
    collection: &str,
) -> Result<Vec<T>, serde_json::Error> {
    records
        .iter()
        .filter(|record| record.collection == collection)
        .map(|record| serde_json::from_str(&record.body))
        .collect()
}

/// The demo's documents, typed, as stored.
struct Demo {
    /// The catalogue's documents, as import writes them.
    catalog: Vec<Record>,
    offices: Vec<BranchOfficeDoc>,
    categories: Vec<Category>,
    /// The cars in fleet order (car `i` of the bookings' timelines), not in plate order.
    cars: Vec<Car>,
    additionals: Vec<Additional>,
    tariffs: Vec<Tariff>,
    customers: Vec<CustomerDoc>,
    bookings: Vec<Booking>,
}

impl Demo {
    fn build(now: DateTime<Utc>) -> Result<Self, DemoError> {
        let clock = Clock::new(now);
        let plans = bookings::plans(&clock);

        let file = catalog::import(CATALOG, Catalog::default())?;
        let listed = file.records()?;
        let offices: Vec<BranchOfficeDoc> =
            stored(&listed, collections::branch_offices::COLLECTION)?;
        let models: Vec<Model> = stored(&listed, collections::car_models::COLLECTION)?;
        let fleet = fleet::cars(&clock, &models, &offices, &plans);
        let plates: Vec<String> = fleet.iter().map(|car| car.id.clone()).collect();
        let catalog = catalog::import(&catalog::cars_file(fleet)?, file)?.records()?;

        let stored_cars: Vec<Car> = stored(&catalog, collections::cars::COLLECTION)?;
        let cars = plates
            .into_iter()
            .map(|plate| {
                stored_cars
                    .iter()
                    .find(|car| car.id == plate)
                    .cloned()
                    .ok_or(DemoError::MissingCar(plate))
            })
            .collect::<Result<_, _>>()?;
        let mut demo = Demo {
            offices: stored(&catalog, collections::branch_offices::COLLECTION)?,
            categories: stored(&catalog, collections::categories::COLLECTION)?,
            cars,
            additionals: stored(&catalog, collections::additionals::COLLECTION)?,
            tariffs: stored(&catalog, collections::tariffs::COLLECTION)?,
            customers: customers::customers(&clock),
            bookings: Vec::new(),
            catalog,
        };
        demo.bookings = bookings::bookings(
            &demo,
            &clock,
            &booking_settings()?,
            &pricing_settings()?,
            &plans,
        )?;
        Ok(demo)
    }

    fn into_tenant(self) -> Result<DemoTenant, serde_json::Error> {
        let mut records = self.catalog;
        for customer in &self.customers {
            records.push(customer.record()?);
        }
        for booking in &self.bookings {
            records.push(booking.record()?);
        }
        Ok(DemoTenant {
            settings: settings(),
            records,
        })
    }
}
