//! The demo tenant of `rentald tenant create <slug> --demo`: a small Argentine rental company
//! with its catalogue (branch offices and places, categories, models, cars, additionals,
//! tariffs), customers and a booking history around the instant the caller passes in.
//!
//! Everything is derived from table data and from indices: the same `now` always gives the
//! same tenant, and the shape of the data (statuses, counts, who rents which car) depends only
//! on day offsets from the tenant's current date, not on the time of day of `now`.
//!
//! The bookings are laid out car by car on a timeline from about 125 days ago to 40 days
//! ahead, with gaps between rentals, so that no two bookings ever hold the same car over
//! overlapping periods. Their status follows from where they fall: returned rentals are
//! Closed, running ones Delivered, future ones Reserved, Confirmed or Quoted, and a few of
//! each are Canceled. Ids follow the creation date. Bookings last touched before auditing
//! began (59 days ago) are legacy records without `UpdatedOn`.
//!
//! Bookings are priced by [`crate::pricing`] from the demo's own settings, read back the way
//! the API reads them, so that their stored prices are the ones the API would compute.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, NaiveTime, TimeDelta, Utc};
use chrono_tz::Tz;
use rust_decimal::Decimal;
use serde_json::json;

use crate::collections::{BranchOfficeDoc, CustomerDoc};
use crate::dates::start_of_day;
use crate::error::ApiError;
use crate::json::mask_card_number;
use crate::models::{
    Additional, Booking, BookingAdditional, BranchOffice, Car, CarPlate, Category, CreditCard,
    Customer, Membership, Model, ModelAttribute, ModelBrand, Place, PriceDetails, Tariff,
    TariffBracket,
};
use crate::pricing::{
    self, LocalTimes, PriceItemType, PricingSettings, QuoteRequest, is_young_driver, office_zone,
    select_tariff,
};
use crate::status::BookingStatus;
use crate::store::{Record, Stored};

/// The demo tenant: its settings and every document to write.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoTenant {
    /// Tenant settings, as `(key, value)`.
    pub settings: Vec<(String, String)>,
    /// Branch offices, categories, models, cars, additionals, tariffs, customers and bookings,
    /// in that order.
    pub records: Vec<Record>,
}

/// Why the demo tenant could not be built: never, with the demo's own tables and models.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A document could not be serialized.
    #[error("a demo document cannot be serialized: {0}")]
    Serialize(#[from] serde_json::Error),
    /// A setting or a booking was refused by the pricing rules.
    #[error("a demo booking cannot be priced: {0}")]
    Pricing(#[from] ApiError),
}

/// The demo tenant for the instant `now`: deterministic, the same `now` gives the same tenant.
///
/// Errors: only when a document cannot be serialized or a booking cannot be priced, which the
/// demo's tables never cause.
pub fn demo_tenant(now: DateTime<Utc>) -> Result<DemoTenant, DemoError> {
    Ok(Demo::build(now)?.into_tenant()?)
}

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
/// Days before today when auditing began: bookings last touched earlier have no `UpdatedOn`.
const AUDIT_START_DAYS_AGO: i64 = 59;
/// The timeline of a car starts between this many days ago and 18 days later.
const TIMELINE_START_DAYS_AGO: i64 = 125;
/// No booking starts more than this many days ahead.
const HORIZON_DAYS: i64 = 40;
/// Cars of the fleet.
const CAR_COUNT: usize = 30;

// Additional kinds (`Additional.Type`), not shown by the interface either.
const ADDITIONAL_INSURANCE: i64 = 1;
const ADDITIONAL_EQUIPMENT: i64 = 2;
const ADDITIONAL_SERVICE: i64 = 3;

/// Ids of the demo's additionals.
const BASIC_INSURANCE: i64 = 1;
const FULL_INSURANCE: i64 = 2;
const GPS: i64 = 3;
const CHILD_SEAT: i64 = 4;
const ADDITIONAL_DRIVER: i64 = 5;
const SNOW_CHAINS: i64 = 6;

/// Share of the agency's part kept as sales commission.
const AGENCY_COMMISSION_PERCENT: i64 = 10;
/// Share of the customer's part paid as a deposit when booking.
const DEPOSIT_PERCENT: i64 = 20;

/// The travel agency some bookings come through.
const AGENCY_CUSTOMER_ID: i64 = 24;
const AGENCY_NAME: &str = "Viajes del Sur S.A.";

/// An amount in cents.
fn money(cents: i64) -> Decimal {
    Decimal::new(cents, 2)
}

/// A coordinate in ten-thousandths of a degree.
fn degrees(ten_thousandths: i64) -> Decimal {
    Decimal::new(ten_thousandths, 4)
}

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

// ---------------------------------------------------------------------------------------------
// Catalogue tables.

struct PlaceSpec {
    id: i64,
    name: &'static str,
    category: &'static str,
    address: &'static str,
    price_cents: i64,
    latitude: i64,
    longitude: i64,
}

struct OfficeSpec {
    id: i64,
    name: &'static str,
    address: &'static str,
    city: &'static str,
    iata: &'static str,
    latitude: i64,
    longitude: i64,
    time_zone: &'static str,
    active: bool,
    places: &'static [PlaceSpec],
}

const OFFICES: [OfficeSpec; 4] = [
    OfficeSpec {
        id: 1,
        name: "Buenos Aires",
        address: "Av. Córdoba 1234",
        city: "Ciudad Autónoma de Buenos Aires",
        iata: "BUE",
        latitude: -345_997,
        longitude: -583_819,
        time_zone: "America/Argentina/Buenos_Aires",
        active: true,
        places: &[
            PlaceSpec {
                id: 1,
                name: "Aeroparque Jorge Newbery (AEP)",
                category: "Aeropuerto",
                address: "Av. Costanera Rafael Obligado s/n",
                price_cents: 1500,
                latitude: -345_592,
                longitude: -584_156,
            },
            PlaceSpec {
                id: 2,
                name: "Aeropuerto Internacional Ezeiza (EZE)",
                category: "Aeropuerto",
                address: "Autopista Tte. Gral. Pablo Riccheri Km 33,5",
                price_cents: 2500,
                latitude: -348_222,
                longitude: -585_358,
            },
            PlaceSpec {
                id: 3,
                name: "Centro - Av. Córdoba",
                category: "Centro",
                address: "Av. Córdoba 1234",
                price_cents: 0,
                latitude: -345_997,
                longitude: -583_819,
            },
        ],
    },
    OfficeSpec {
        id: 2,
        name: "Córdoba",
        address: "Bv. San Juan 450",
        city: "Córdoba",
        iata: "COR",
        latitude: -314_201,
        longitude: -641_888,
        time_zone: "America/Argentina/Cordoba",
        active: true,
        places: &[
            PlaceSpec {
                id: 4,
                name: "Aeropuerto Ingeniero Taravella (COR)",
                category: "Aeropuerto",
                address: "Av. La Voz del Interior 8500",
                price_cents: 1200,
                latitude: -313_236,
                longitude: -642_080,
            },
            PlaceSpec {
                id: 5,
                name: "Centro - Bv. San Juan",
                category: "Centro",
                address: "Bv. San Juan 450",
                price_cents: 0,
                latitude: -314_201,
                longitude: -641_888,
            },
        ],
    },
    OfficeSpec {
        id: 3,
        name: "Mendoza",
        address: "Av. San Martín 1020",
        city: "Mendoza",
        iata: "MDZ",
        latitude: -328_895,
        longitude: -688_458,
        time_zone: "America/Argentina/Mendoza",
        active: true,
        places: &[
            PlaceSpec {
                id: 6,
                name: "Aeropuerto El Plumerillo (MDZ)",
                category: "Aeropuerto",
                address: "Acceso Norte s/n, Las Heras",
                price_cents: 1200,
                latitude: -328_317,
                longitude: -687_929,
            },
            PlaceSpec {
                id: 7,
                name: "Centro - Av. San Martín",
                category: "Centro",
                address: "Av. San Martín 1020",
                price_cents: 0,
                latitude: -328_895,
                longitude: -688_458,
            },
            PlaceSpec {
                id: 8,
                name: "Chacras de Coria - Hotel",
                category: "Hotel",
                address: "Viamonte 5100, Luján de Cuyo",
                price_cents: 800,
                latitude: -329_862,
                longitude: -688_770,
            },
        ],
    },
    // Seasonal office, closed for now: stored but not listed, and no car is based there.
    OfficeSpec {
        id: 4,
        name: "San Carlos de Bariloche",
        address: "Mitre 340",
        city: "San Carlos de Bariloche",
        iata: "BRC",
        latitude: -411_335,
        longitude: -713_103,
        time_zone: "America/Argentina/Salta",
        active: false,
        places: &[
            PlaceSpec {
                id: 9,
                name: "Aeropuerto Teniente Candelaria (BRC)",
                category: "Aeropuerto",
                address: "Ruta Nacional 237 Km 1",
                price_cents: 1500,
                latitude: -411_512,
                longitude: -711_578,
            },
            PlaceSpec {
                id: 10,
                name: "Centro Cívico",
                category: "Centro",
                address: "Mitre 340",
                price_cents: 0,
                latitude: -411_335,
                longitude: -713_103,
            },
        ],
    },
];

/// Offices where cars are based: the active ones, the first three.
const ACTIVE_OFFICES: usize = 3;

struct CategorySpec {
    id: i64,
    name: &'static str,
    principal_model_id: i64,
    franchise_cents: i64,
    image: &'static str,
}

const CATEGORIES: [CategorySpec; 4] = [
    CategorySpec {
        id: 1,
        name: "Económico",
        principal_model_id: 2,
        franchise_cents: 80_000,
        image: "/images/categories/economico.png",
    },
    CategorySpec {
        id: 2,
        name: "Compacto",
        principal_model_id: 3,
        franchise_cents: 95_000,
        image: "/images/categories/compacto.png",
    },
    CategorySpec {
        id: 3,
        name: "Intermedio",
        principal_model_id: 5,
        franchise_cents: 130_000,
        image: "/images/categories/intermedio.png",
    },
    CategorySpec {
        id: 4,
        name: "SUV",
        principal_model_id: 7,
        franchise_cents: 180_000,
        image: "/images/categories/suv.png",
    },
];

struct ModelSpec {
    id: i64,
    name: &'static str,
    sipp: &'static str,
    brand: &'static str,
    /// World manufacturer identifier that starts the chassis numbers.
    wmi: &'static str,
    category_id: i64,
    doors: i64,
    passengers: i64,
    big_luggage: i64,
    small_luggage: i64,
    automatic: bool,
    fuel: &'static str,
    engine: &'static str,
    daily_cents: i64,
    lower_cents: i64,
    franchise_cents: i64,
}

const MODELS: [ModelSpec; 8] = [
    ModelSpec {
        id: 1,
        name: "Fiat Mobi",
        sipp: "MCMR",
        brand: "Fiat",
        wmi: "8AP",
        category_id: 1,
        doors: 5,
        passengers: 4,
        big_luggage: 1,
        small_luggage: 1,
        automatic: false,
        fuel: "Nafta",
        engine: "1.0",
        daily_cents: 3_800,
        lower_cents: 2_900,
        franchise_cents: 75_000,
    },
    ModelSpec {
        id: 2,
        name: "Chevrolet Onix",
        sipp: "ECMR",
        brand: "Chevrolet",
        wmi: "9BG",
        category_id: 1,
        doors: 5,
        passengers: 5,
        big_luggage: 1,
        small_luggage: 2,
        automatic: false,
        fuel: "Nafta",
        engine: "1.2",
        daily_cents: 4_000,
        lower_cents: 3_100,
        franchise_cents: 80_000,
    },
    ModelSpec {
        id: 3,
        name: "Fiat Cronos",
        sipp: "CDMR",
        brand: "Fiat",
        wmi: "8AP",
        category_id: 2,
        doors: 4,
        passengers: 5,
        big_luggage: 2,
        small_luggage: 1,
        automatic: false,
        fuel: "Nafta",
        engine: "1.3",
        daily_cents: 4_600,
        lower_cents: 3_600,
        franchise_cents: 95_000,
    },
    ModelSpec {
        id: 4,
        name: "Volkswagen Virtus",
        sipp: "CDAR",
        brand: "Volkswagen",
        wmi: "9BW",
        category_id: 2,
        doors: 4,
        passengers: 5,
        big_luggage: 2,
        small_luggage: 1,
        automatic: true,
        fuel: "Nafta",
        engine: "1.6",
        daily_cents: 5_000,
        lower_cents: 3_800,
        franchise_cents: 100_000,
    },
    ModelSpec {
        id: 5,
        name: "Toyota Corolla",
        sipp: "IDAR",
        brand: "Toyota",
        wmi: "9BR",
        category_id: 3,
        doors: 4,
        passengers: 5,
        big_luggage: 2,
        small_luggage: 2,
        automatic: true,
        fuel: "Híbrido",
        engine: "1.8",
        daily_cents: 6_200,
        lower_cents: 4_850,
        franchise_cents: 130_000,
    },
    ModelSpec {
        id: 6,
        name: "Jeep Renegade",
        sipp: "IFAR",
        brand: "Jeep",
        wmi: "988",
        category_id: 3,
        doors: 5,
        passengers: 5,
        big_luggage: 2,
        small_luggage: 1,
        automatic: true,
        fuel: "Nafta",
        engine: "1.3",
        daily_cents: 6_600,
        lower_cents: 5_000,
        franchise_cents: 140_000,
    },
    ModelSpec {
        id: 7,
        name: "Volkswagen Taos",
        sipp: "SFAR",
        brand: "Volkswagen",
        wmi: "8AW",
        category_id: 4,
        doors: 5,
        passengers: 5,
        big_luggage: 3,
        small_luggage: 2,
        automatic: true,
        fuel: "Nafta",
        engine: "1.4",
        daily_cents: 8_900,
        lower_cents: 6_900,
        franchise_cents: 180_000,
    },
    ModelSpec {
        id: 8,
        name: "Toyota SW4",
        sipp: "FFAD",
        brand: "Toyota",
        wmi: "8AJ",
        category_id: 4,
        doors: 5,
        passengers: 7,
        big_luggage: 3,
        small_luggage: 3,
        automatic: true,
        fuel: "Diésel",
        engine: "2.8",
        daily_cents: 11_000,
        lower_cents: 8_500,
        franchise_cents: 220_000,
    },
];

struct AdditionalSpec {
    id: i64,
    name: &'static str,
    description: &'static str,
    by_day: bool,
    price_cents: i64,
    max_quantity: i64,
    kind: i64,
    stock: i64,
    required: bool,
}

const ADDITIONALS: [AdditionalSpec; 6] = [
    AdditionalSpec {
        id: BASIC_INSURANCE,
        name: "Seguro básico",
        description: "Responsabilidad civil y daños al vehículo con la franquicia del modelo",
        by_day: true,
        price_cents: 1_200,
        max_quantity: 1,
        kind: ADDITIONAL_INSURANCE,
        stock: 9_999,
        required: true,
    },
    AdditionalSpec {
        id: FULL_INSURANCE,
        name: "Seguro total",
        description: "Reduce la franquicia por daños, vuelco y robo a la mitad",
        by_day: true,
        price_cents: 1_850,
        max_quantity: 1,
        kind: ADDITIONAL_INSURANCE,
        stock: 9_999,
        required: false,
    },
    AdditionalSpec {
        id: GPS,
        name: "GPS",
        description: "Navegador con mapas de Argentina, Chile y Uruguay",
        by_day: true,
        price_cents: 500,
        max_quantity: 1,
        kind: ADDITIONAL_EQUIPMENT,
        stock: 10,
        required: false,
    },
    AdditionalSpec {
        id: CHILD_SEAT,
        name: "Silla para niños",
        description: "Butaca homologada para niños de 9 a 36 kg",
        by_day: true,
        price_cents: 450,
        max_quantity: 2,
        kind: ADDITIONAL_EQUIPMENT,
        stock: 12,
        required: false,
    },
    AdditionalSpec {
        id: ADDITIONAL_DRIVER,
        name: "Conductor adicional",
        description: "Habilita a otra persona con licencia vigente a conducir el vehículo",
        by_day: false,
        price_cents: 2_000,
        max_quantity: 2,
        kind: ADDITIONAL_SERVICE,
        stock: 9_999,
        required: false,
    },
    AdditionalSpec {
        id: SNOW_CHAINS,
        name: "Cadenas para nieve",
        description: "Obligatorias en pasos cordilleranos durante el invierno",
        by_day: false,
        price_cents: 1_500,
        max_quantity: 1,
        kind: ADDITIONAL_EQUIPMENT,
        stock: 6,
        required: false,
    },
];

struct TariffSpec {
    id: i64,
    name: &'static str,
    category_id: i64,
    model_id: Option<i64>,
    /// Daily amounts, in cents, for days 1-3, 4-7 and 8-30.
    daily_cents: [i64; 3],
}

/// Day ranges of every tariff.
const BRACKETS: [(i64, i64); 3] = [(1, 3), (4, 7), (8, 30)];

const TARIFFS: [TariffSpec; 5] = [
    TariffSpec {
        id: 1,
        name: "Tarifa Económico",
        category_id: 1,
        model_id: None,
        daily_cents: [3_800, 3_400, 2_900],
    },
    TariffSpec {
        id: 2,
        name: "Tarifa Compacto",
        category_id: 2,
        model_id: None,
        daily_cents: [4_600, 4_150, 3_600],
    },
    TariffSpec {
        id: 3,
        name: "Tarifa Intermedio",
        category_id: 3,
        model_id: None,
        daily_cents: [6_200, 5_600, 4_850],
    },
    TariffSpec {
        id: 4,
        name: "Tarifa SUV",
        category_id: 4,
        model_id: None,
        daily_cents: [8_900, 8_000, 6_900],
    },
    // The SW4 overrides its category's tariff.
    TariffSpec {
        id: 5,
        name: "Tarifa Toyota SW4",
        category_id: 4,
        model_id: Some(8),
        daily_cents: [11_000, 9_900, 8_500],
    },
];

struct PersonSpec {
    first: &'static str,
    last: &'static str,
    street: &'static str,
    number: &'static str,
    zip: &'static str,
    city: &'static str,
    state: &'static str,
    country: &'static str,
    /// ISO 3166 alpha-2 code of the country.
    iso: &'static str,
    phone: &'static str,
    age: i64,
}

const PEOPLE: [PersonSpec; 22] = [
    PersonSpec {
        first: "Martina",
        last: "González",
        street: "Av. Santa Fe",
        number: "2450",
        zip: "C1123",
        city: "Ciudad Autónoma de Buenos Aires",
        state: "CABA",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 11 5412-3308",
        age: 34,
    },
    PersonSpec {
        first: "Santiago",
        last: "Rodríguez",
        street: "Av. Colón",
        number: "1120",
        zip: "X5000",
        city: "Córdoba",
        state: "Córdoba",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 351 622-4471",
        age: 41,
    },
    PersonSpec {
        first: "Valentina",
        last: "Fernández",
        street: "Bv. Oroño",
        number: "845",
        zip: "S2000",
        city: "Rosario",
        state: "Santa Fe",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 341 455-9012",
        age: 29,
    },
    PersonSpec {
        first: "Mateo",
        last: "López",
        street: "Calle Belgrano",
        number: "1530",
        zip: "M5500",
        city: "Mendoza",
        state: "Mendoza",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 261 533-7120",
        age: 52,
    },
    PersonSpec {
        first: "Camila",
        last: "Martínez",
        street: "Calle 7",
        number: "918",
        zip: "B1900",
        city: "La Plata",
        state: "Buenos Aires",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 221 480-2235",
        age: 23,
    },
    PersonSpec {
        first: "Benjamín",
        last: "García",
        street: "Av. Cabildo",
        number: "3011",
        zip: "C1429",
        city: "Ciudad Autónoma de Buenos Aires",
        state: "CABA",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 11 6023-1189",
        age: 38,
    },
    PersonSpec {
        first: "Sofía",
        last: "Pérez",
        street: "Calle Caseros",
        number: "655",
        zip: "A4400",
        city: "Salta",
        state: "Salta",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 387 511-8864",
        age: 45,
    },
    PersonSpec {
        first: "Joaquín",
        last: "Sánchez",
        street: "Av. Argentina",
        number: "230",
        zip: "Q8300",
        city: "Neuquén",
        state: "Neuquén",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 299 577-3021",
        age: 31,
    },
    PersonSpec {
        first: "Lucía",
        last: "Romero",
        street: "Av. Colón",
        number: "2780",
        zip: "B7600",
        city: "Mar del Plata",
        state: "Buenos Aires",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 223 590-4413",
        age: 27,
    },
    PersonSpec {
        first: "Tomás",
        last: "Díaz",
        street: "Calle 25 de Mayo",
        number: "410",
        zip: "T4000",
        city: "San Miguel de Tucumán",
        state: "Tucumán",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 381 430-6657",
        age: 60,
    },
    PersonSpec {
        first: "Isabella",
        last: "Álvarez",
        street: "Av. Rivadavia",
        number: "5120",
        zip: "C1424",
        city: "Ciudad Autónoma de Buenos Aires",
        state: "CABA",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 11 4987-2210",
        age: 36,
    },
    PersonSpec {
        first: "João",
        last: "Silva",
        street: "Rua Augusta",
        number: "1508",
        zip: "01304-001",
        city: "São Paulo",
        state: "SP",
        country: "Brasil",
        iso: "BR",
        phone: "+55 11 98765-4321",
        age: 36,
    },
    PersonSpec {
        first: "Ana",
        last: "Souza",
        street: "Rua Visconde de Pirajá",
        number: "330",
        zip: "22410-002",
        city: "Rio de Janeiro",
        state: "RJ",
        country: "Brasil",
        iso: "BR",
        phone: "+55 21 99654-1200",
        age: 42,
    },
    PersonSpec {
        first: "Carlos",
        last: "Muñoz",
        street: "Av. Providencia",
        number: "1760",
        zip: "7500000",
        city: "Santiago",
        state: "Región Metropolitana",
        country: "Chile",
        iso: "CL",
        phone: "+56 9 8765 4312",
        age: 48,
    },
    PersonSpec {
        first: "Francisca",
        last: "Rojas",
        street: "Av. Brasil",
        number: "2950",
        zip: "2340000",
        city: "Valparaíso",
        state: "Valparaíso",
        country: "Chile",
        iso: "CL",
        phone: "+56 9 7123 8890",
        age: 33,
    },
    PersonSpec {
        first: "Emily",
        last: "Johnson",
        street: "Congress Ave",
        number: "901",
        zip: "78701",
        city: "Austin",
        state: "TX",
        country: "United States",
        iso: "US",
        phone: "+1 512 555 0148",
        age: 39,
    },
    PersonSpec {
        first: "Michael",
        last: "Brown",
        street: "Larimer St",
        number: "1450",
        zip: "80202",
        city: "Denver",
        state: "CO",
        country: "United States",
        iso: "US",
        phone: "+1 303 555 0172",
        age: 55,
    },
    PersonSpec {
        first: "Laura",
        last: "Gómez",
        street: "Calle de Alcalá",
        number: "118",
        zip: "28009",
        city: "Madrid",
        state: "Madrid",
        country: "España",
        iso: "ES",
        phone: "+34 612 345 678",
        age: 44,
    },
    PersonSpec {
        first: "Diego",
        last: "Herrera",
        street: "Av. 18 de Julio",
        number: "1333",
        zip: "11100",
        city: "Montevideo",
        state: "Montevideo",
        country: "Uruguay",
        iso: "UY",
        phone: "+598 94 123 456",
        age: 37,
    },
    PersonSpec {
        first: "Agustina",
        last: "Torres",
        street: "Calle Alsina",
        number: "77",
        zip: "B8000",
        city: "Bahía Blanca",
        state: "Buenos Aires",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 291 441-7765",
        age: 21,
    },
    PersonSpec {
        first: "Nicolás",
        last: "Castro",
        street: "Av. Corrientes",
        number: "4120",
        zip: "C1195",
        city: "Ciudad Autónoma de Buenos Aires",
        state: "CABA",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 11 3344-9921",
        age: 26,
    },
    PersonSpec {
        first: "Florencia",
        last: "Ruiz",
        street: "Av. Hipólito Yrigoyen",
        number: "360",
        zip: "X5000",
        city: "Córdoba",
        state: "Córdoba",
        country: "Argentina",
        iso: "AR",
        phone: "+54 9 351 700-1458",
        age: 31,
    },
];

/// Who makes the last change of a booking, by channel.
const ORIGINS: [(&str, &str); 4] = [
    ("Web", "reservas.web"),
    ("Mostrador", "mostrador"),
    ("Teléfono", "call.center"),
    ("API", "api.integracion"),
];

const COLORS: [&str; 6] = [
    "Blanco",
    "Gris Plata",
    "Negro",
    "Rojo",
    "Azul",
    "Gris Oscuro",
];

const AIRLINES: [&str; 4] = ["AR", "LA", "FO", "G3"];

// ---------------------------------------------------------------------------------------------
// The tenant.

/// The demo's documents, typed.
struct Demo {
    offices: Vec<BranchOfficeDoc>,
    categories: Vec<Category>,
    models: Vec<Model>,
    cars: Vec<Car>,
    additionals: Vec<Additional>,
    tariffs: Vec<Tariff>,
    customers: Vec<CustomerDoc>,
    bookings: Vec<Booking>,
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

/// The pricing settings of [`settings`], read as the API reads a tenant's.
fn pricing_settings() -> Result<PricingSettings, ApiError> {
    let settings = settings();
    Ok(PricingSettings::from_lookup(|key| {
        settings
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.clone())
    })?)
}

impl Demo {
    fn build(now: DateTime<Utc>) -> Result<Self, ApiError> {
        let clock = Clock::new(now);
        let offices = offices();
        let (categories, models) = categories_and_models();
        let additionals = additionals();
        let tariffs = tariffs();
        let customers = customers(&clock);
        let plans = plans(&clock);
        let cars = cars(&clock, &models, &offices, &plans);
        let mut demo = Demo {
            offices,
            categories,
            models,
            cars,
            additionals,
            tariffs,
            customers,
            bookings: Vec::new(),
        };
        demo.bookings = bookings(&demo, &clock, &pricing_settings()?, plans)?;
        Ok(demo)
    }

    fn into_tenant(self) -> Result<DemoTenant, serde_json::Error> {
        let settings = settings();
        let mut records = Vec::new();
        for office in &self.offices {
            records.push(office.record()?);
        }
        for category in &self.categories {
            records.push(category.record()?);
        }
        for model in &self.models {
            records.push(model.record()?);
        }
        for car in &self.cars {
            records.push(car.record()?);
        }
        for additional in &self.additionals {
            records.push(additional.record()?);
        }
        for tariff in &self.tariffs {
            records.push(tariff.record()?);
        }
        for customer in &self.customers {
            records.push(customer.record()?);
        }
        for booking in &self.bookings {
            records.push(booking.record()?);
        }
        Ok(DemoTenant { settings, records })
    }
}

fn offices() -> Vec<BranchOfficeDoc> {
    OFFICES
        .iter()
        .map(|spec| {
            let places = spec
                .places
                .iter()
                .map(|place| Place {
                    id: place.id,
                    price: money(place.price_cents),
                    name: place.name.to_owned(),
                    category: text(place.category),
                    address: text(place.address),
                    city: text(spec.city),
                    country: text("Argentina"),
                    branch_office_id: spec.id,
                    branch_office_name: text(spec.name),
                    branch_office_iata_code: text(spec.iata),
                    is_franchise: false,
                    latitude: Some(degrees(place.latitude)),
                    longitude: Some(degrees(place.longitude)),
                    can_add_custom_address: place.category == "Centro",
                    is_custom_address: false,
                    available_operation_options: None,
                    available_return_places: None,
                    available_brand_codes: None,
                })
                .collect();
            BranchOfficeDoc {
                office: BranchOffice {
                    id: spec.id,
                    name: spec.name.to_owned(),
                    address: text(spec.address),
                    city: text(spec.city),
                    country: text("Argentina"),
                    iata_code: text(spec.iata),
                    latitude: Some(degrees(spec.latitude)),
                    longitude: Some(degrees(spec.longitude)),
                    time_zone: text(spec.time_zone),
                    places,
                },
                active: spec.active,
            }
        })
        .collect()
}

/// The four franchise amounts of a base franchise: damage as the base, rollover 2.5 times,
/// theft twice, hail half.
fn franchises(cents: i64) -> [Option<Decimal>; 5] {
    [
        Some(money(cents)),
        Some(money(cents)),
        Some(money(cents * 5 / 2)),
        Some(money(cents * 2)),
        Some(money(cents / 2)),
    ]
}

/// Categories with their models, and models with their category (each without the other's
/// nested list).
fn categories_and_models() -> (Vec<Category>, Vec<Model>) {
    let bare_categories: Vec<Category> = CATEGORIES
        .iter()
        .map(|spec| {
            let [franchise, damage, rollover, theft, hail] = franchises(spec.franchise_cents);
            Category {
                id: spec.id,
                name: spec.name.to_owned(),
                order: Decimal::from(spec.id),
                principal_model_id: Some(spec.principal_model_id),
                franchise,
                franchise_damage: damage,
                franchise_rollover: rollover,
                franchise_theft: theft,
                franchise_hail: hail,
                image_path: text(spec.image),
                models: Vec::new(),
            }
        })
        .collect();
    let models: Vec<Model> = MODELS
        .iter()
        .map(|spec| {
            let [franchise, damage, rollover, theft, hail] = franchises(spec.franchise_cents);
            let gearbox = if spec.automatic {
                "Automática"
            } else {
                "Manual"
            };
            let seats = spec.passengers;
            Model {
                id: spec.id,
                name: spec.name.to_owned(),
                sipp: spec.sipp.to_owned(),
                description: Some(format!(
                    "{} {} {gearbox}, {} puertas, {seats} pasajeros",
                    spec.name, spec.engine, spec.doors
                )),
                image_path: Some(format!("/images/models/{}.png", spec.sipp.to_lowercase())),
                franchise,
                franchise_damage: damage,
                franchise_rollover: rollover,
                franchise_theft: theft,
                franchise_hail: hail,
                brand: Some(ModelBrand {
                    name: spec.brand.to_owned(),
                }),
                doors: spec.doors,
                passengers: spec.passengers,
                big_luggage: spec.big_luggage,
                small_luggage: spec.small_luggage,
                steering: text("Eléctrica"),
                gearbox: text(gearbox),
                multimedia: text(if spec.category_id >= 3 {
                    "Pantalla táctil con Android Auto y Apple CarPlay"
                } else {
                    "Radio con Bluetooth y USB"
                }),
                air_conditioner: text(if spec.category_id >= 3 {
                    "Climatizador automático"
                } else {
                    "Aire acondicionado"
                }),
                steering_type: Some(2),
                transmission_type: Some(if spec.automatic { 2 } else { 1 }),
                air_conditioner_type: Some(if spec.category_id >= 3 { 2 } else { 1 }),
                fuel_type: text(spec.fuel),
                daily_price: Some(money(spec.daily_cents)),
                lower_price: Some(money(spec.lower_cents)),
                model_attributes: vec![
                    ModelAttribute {
                        id: spec.id * 10 + 1,
                        name: text("Motor"),
                        description: text("Cilindrada"),
                        unit: text("l"),
                        value: text(spec.engine),
                        kind: 1,
                        model_id: spec.id,
                    },
                    ModelAttribute {
                        id: spec.id * 10 + 2,
                        name: text("Baúl"),
                        description: text("Valijas grandes"),
                        unit: None,
                        value: Some(spec.big_luggage.to_string()),
                        kind: 2,
                        model_id: spec.id,
                    },
                ],
                category: bare_categories
                    .iter()
                    .find(|category| category.id == spec.category_id)
                    .cloned(),
            }
        })
        .collect();
    let categories = bare_categories
        .into_iter()
        .map(|mut category| {
            category.models = models
                .iter()
                .filter(|model| model.category.as_ref().map(|c| c.id) == Some(category.id))
                .map(|model| Model {
                    category: None,
                    ..model.clone()
                })
                .collect();
            category
        })
        .collect();
    (categories, models)
}

fn additionals() -> Vec<Additional> {
    ADDITIONALS
        .iter()
        .map(|spec| Additional {
            id: spec.id,
            name: spec.name.to_owned(),
            description: text(spec.description),
            image_path: Some(format!("/images/additionals/{}.png", spec.id)),
            is_price_by_day: spec.by_day,
            price: money(spec.price_cents),
            max_quantity_per_booking: spec.max_quantity,
            kind: spec.kind,
            stock: spec.stock,
            order: Decimal::from(spec.id),
            is_required: spec.required,
        })
        .collect()
}

fn tariffs() -> Vec<Tariff> {
    TARIFFS
        .iter()
        .map(|spec| Tariff {
            id: spec.id,
            name: spec.name.to_owned(),
            category_id: spec.category_id,
            model_id: spec.model_id,
            currency: CURRENCY.to_owned(),
            brackets: BRACKETS
                .iter()
                .zip(spec.daily_cents)
                .map(|(&(days_from, days_to), cents)| TariffBracket {
                    days_from,
                    days_to,
                    daily_amount: money(cents),
                })
                .collect(),
        })
        .collect()
}

fn customers(clock: &Clock) -> Vec<CustomerDoc> {
    let mut customers: Vec<CustomerDoc> = PEOPLE
        .iter()
        .zip(1_i64..)
        .map(|(person, id)| person_customer(clock, person, id))
        .collect();
    customers.push(company_customer(
        clock,
        23,
        "Bodega Los Andes S.A.",
        "30-71234567-9",
        ("Ruta Provincial 15", "4800", "M5509"),
        ("Luján de Cuyo", "Mendoza"),
        "+54 261 498-2200",
        false,
    ));
    customers.push(company_customer(
        clock,
        AGENCY_CUSTOMER_ID,
        AGENCY_NAME,
        "30-70987654-1",
        ("Florida", "537", "C1005"),
        ("Ciudad Autónoma de Buenos Aires", "CABA"),
        "+54 11 4311-7788",
        true,
    ));
    customers
}

fn person_customer(clock: &Clock, person: &PersonSpec, id: i64) -> CustomerDoc {
    let argentine = person.iso == "AR";
    let birth = clock.date(-(person.age * 365 + person.age / 4 + 30 + (id * 37) % 300));
    let document_id = if argentine {
        (46_000_000 - person.age * 550_000 + (id * 7_919) % 100_000).to_string()
    } else {
        format!(
            "{}{:07}",
            person.iso,
            1_000_000 + (id * 104_729) % 9_000_000
        )
    };
    let licence_expiration = clock.date(200 + (id * 97) % 1_500);
    let licence_issuance = licence_expiration - TimeDelta::days(5 * 365 + 1);
    let document_issuance = clock.date(-(100 + (id * 211) % 3_000));
    let email_domain = ["example.com", "example.org", "example.net"][(id % 3) as usize];
    let card_brand = ["VISA", "MASTERCARD", "AMEX"][(id % 3) as usize];
    let full_name = format!("{} {}", person.first, person.last);
    let credit_cards = if id % 4 == 3 {
        Vec::new()
    } else {
        vec![CreditCard {
            kind: text(card_brand),
            number: Some(mask_card_number(&format!(
                "{:016}",
                4_000_000_000_000_000 + mix(id as u64) % 1_000_000_000_000
            ))),
            expiration_month: Some(1 + id % 12),
            expiration_year: Some(i64::from(clock.today.year()) + 1 + id % 4),
            security_code: None,
            card_holder_name: Some(full_name.to_uppercase()),
        }]
    };
    let memberships = if id % 5 == 0 {
        vec![Membership {
            id,
            membership_type: Some(1),
            description: text("Aerolíneas Plus"),
            number: Some(format!("{:010}", 3_000_000_000 + id * 7_654_321)),
            expiration_date: Some(calendar(clock.date(365 + id * 11))),
            used_in_booking: false,
            booking_brand_ids: Vec::new(),
        }]
    } else {
        Vec::new()
    };
    CustomerDoc {
        customer: Customer {
            id,
            global_id: Some(global_id(id as u64)),
            name: Some(full_name),
            lastname: text(person.last),
            firstname: text(person.first),
            document_id: Some(document_id.clone()),
            document_type_id: Some(if argentine { 1 } else { 2 }),
            email_address: Some(format!(
                "{}.{}@{email_domain}",
                ascii_lower(person.first),
                ascii_lower(person.last)
            )),
            cell_phone: text(person.phone),
            address: text(person.street),
            address_number: text(person.number),
            address_department: if id % 3 == 0 {
                Some(format!(
                    "{}º {}",
                    1 + id % 9,
                    ["A", "B", "C"][(id % 3) as usize]
                ))
            } else {
                None
            },
            zip_code: text(person.zip),
            city: text(person.city),
            state: text(person.state),
            region: None,
            country: text(person.country),
            birth_date: Some(calendar(birth)),
            birth_country: text(person.country),
            birth_state: text(person.state),
            age: Some(years_between(birth, clock.today)),
            credit_cards,
            memberships,
            driver_licence_number: Some(if argentine {
                document_id
            } else {
                format!(
                    "{}-{:08}",
                    person.iso,
                    10_000_000 + (id * 48_271) % 89_000_000
                )
            }),
            driver_licence_country: text(person.iso),
            driver_license_expiration: Some(calendar(licence_expiration)),
            driver_license_issuance: Some(calendar(licence_issuance)),
            driver_license_renach_number: None,
            driver_license_category: text(if argentine { "B1" } else { "B" }),
            driver_license_state: text(person.state),
            document_id_issuance: Some(calendar(document_issuance)),
            document_id_expiration: Some(calendar(
                document_issuance + TimeDelta::days(15 * 365 + 3),
            )),
            document_id_issuance_state: text(person.state),
            document_id_issuance_country: text(person.iso),
            fiscal_condition_id: Some(1),
            notes: if id % 7 == 0 {
                text("Cliente frecuente")
            } else {
                None
            },
            is_company: false,
            is_agency: false,
            is_provider: false,
            is_hotel: false,
            has_web_login: id % 3 == 0,
            commercial_agreements: Vec::new(),
            iata_code: None,
            personal_code: None,
            state_registration: None,
            municipal_registration: None,
        },
        created_by_user_id: None,
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call per company row of the demo table"
)]
fn company_customer(
    clock: &Clock,
    id: i64,
    name: &str,
    tax_id: &str,
    (street, number, zip): (&str, &str, &str),
    (city, state): (&str, &str),
    phone: &str,
    agency: bool,
) -> CustomerDoc {
    let slug: String = ascii_lower(name)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    CustomerDoc {
        customer: Customer {
            id,
            global_id: Some(global_id(id as u64)),
            name: text(name),
            document_id: text(tax_id),
            document_type_id: Some(3),
            email_address: Some(format!("reservas@{slug}.example.com")),
            cell_phone: text(phone),
            address: text(street),
            address_number: text(number),
            zip_code: text(zip),
            city: text(city),
            state: text(state),
            country: text("Argentina"),
            fiscal_condition_id: Some(2),
            notes: text(if agency {
                "Agencia de viajes: paga la tarifa, el pasajero paga adicionales y cargos"
            } else {
                "Cuenta corporativa"
            }),
            is_company: true,
            is_agency: agency,
            has_web_login: true,
            commercial_agreements: if agency {
                vec!["AGENCIAS-10".to_owned()]
            } else {
                vec!["CORP-ANDES".to_owned()]
            },
            iata_code: if agency { text("55512345") } else { None },
            state_registration: Some(format!("IIBB {tax_id}")),
            memberships: Vec::new(),
            credit_cards: Vec::new(),
            document_id_issuance: Some(calendar(clock.date(-(2_000 + id * 13)))),
            ..Customer::default()
        },
        created_by_user_id: None,
    }
}

/// The plate of car `index`: the Mercosur format (`AB123CD`), its second letter following
/// the registration year.
fn plate(index: i64, year: i32) -> String {
    let series = match year {
        ..=2019 => 'D',
        2020 | 2021 => 'E',
        2022 | 2023 => 'F',
        2024 => 'G',
        _ => 'H',
    };
    let letter = |n: i64| char::from(b'A' + (n.rem_euclid(26)) as u8);
    format!(
        "A{series}{:03}{}{}",
        100 + (index * 37) % 900,
        letter(index * 7 + 2),
        letter(index * 11 + 5)
    )
}

fn cars(clock: &Clock, models: &[Model], offices: &[BranchOfficeDoc], plans: &[Plan]) -> Vec<Car> {
    (0..CAR_COUNT)
        .map(|index| {
            let i = index as i64;
            let model = &models[index % models.len()];
            let spec = &MODELS[index % MODELS.len()];
            let office = &offices[index % ACTIVE_OFFICES].office;
            let registered = clock.at(-(60 + (i * 83) % 1_400), 10, 0);
            let year = registered.year();
            let plate = plate(i, year);
            let age_years = i64::from(clock.today.year() - year).max(0);
            let last_return = plans
                .iter()
                .filter(|plan| plan.car == index && plan.status == BookingStatus::Closed)
                .map(|plan| plan.status_date)
                .max();
            Car {
                id: plate.clone(),
                model: model.clone(),
                current_branch_office_id: Some(office.id),
                current_branch_office: Some(office.name.clone()),
                branch_office_owner: Some(office.name.clone()),
                current_kms: 3_000 + age_years * 21_000 + (i * 7_919) % 15_000,
                fuel_type: text(spec.fuel),
                gasoline: 8 - i % 3,
                friendly_name: Some(format!("{} {plate}", spec.name)),
                current_plate_id: Some(plate.clone()),
                chassis_identification: Some(format!(
                    "{}{}{:02}{:08}",
                    spec.wmi,
                    spec.sipp,
                    year % 100,
                    10_000_000 + (i * 1_234_567) % 89_000_000
                )),
                current_plate: Some(CarPlate {
                    id: plate,
                    issuing_country: text("AR"),
                    issuing_state: text(["CABA", "Córdoba", "Mendoza"][index % ACTIVE_OFFICES]),
                }),
                color: text(COLORS[index % COLORS.len()]),
                year: Some(i64::from(year)),
                toll_device_id: if index % ACTIVE_OFFICES == 0 {
                    Some(format!("TAG-{:06}", 100_000 + i * 4_321))
                } else {
                    None
                },
                battery_number: None,
                creation_date: Some(registered),
                inactive_date: None,
                leased_to_company: None,
                supplier_full_name: Some(format!("{} Argentina S.A.", spec.brand)),
                last_return_date: last_return,
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Bookings.

/// Where a booking falls on its car's timeline.
struct Plan {
    /// Index of the car.
    car: usize,
    /// Position of the booking on the car's timeline.
    seq: usize,
    from: DateTime<FixedOffset>,
    to: DateTime<FixedOffset>,
    creation: DateTime<FixedOffset>,
    status: BookingStatus,
    status_date: DateTime<FixedOffset>,
    /// The last change, before legacy records lose it and duplicates are spread.
    last_change: DateTime<FixedOffset>,
}

/// Every car's bookings: from about 125 days ago to [`HORIZON_DAYS`] ahead, with 15 to 44
/// days between rentals of 2 to 10 days. Nothing starts or ends today, so the statuses depend
/// only on the date.
fn plans(clock: &Clock) -> Vec<Plan> {
    let latest = clock.at(-1, 22, 0);
    let mut plans = Vec::new();
    for car in 0..CAR_COUNT {
        let c = car as i64;
        let mut cursor = -TIMELINE_START_DAYS_AGO + (c * 7) % 19;
        for seq in 0.. {
            let k = seq as i64;
            let gap = 15 + (c * 5 + k * 11) % 30;
            let length = 2 + (c * 3 + k * 7) % 9;
            let mut from_day = cursor + gap;
            if from_day > HORIZON_DAYS {
                break;
            }
            if from_day == 0 {
                from_day = 1;
            }
            let mut to_day = from_day + length;
            if to_day == 0 {
                to_day = 1;
            }
            cursor = to_day;

            let status = if to_day < 0 {
                if (c + 2 * k) % 9 == 4 {
                    BookingStatus::Canceled
                } else {
                    BookingStatus::Closed
                }
            } else if from_day < 0 {
                BookingStatus::Delivered
            } else {
                match (c * 3 + k) % 7 {
                    0..=2 => BookingStatus::Reserved,
                    3 | 4 => BookingStatus::Confirmed,
                    5 => BookingStatus::Quoted,
                    _ => BookingStatus::Canceled,
                }
            };

            let from = clock.at(from_day, 8 + (c + 3 * k) % 10, 30 * ((c + k) % 2));
            let to = clock.at(to_day, 8 + (2 * c + k) % 11, 30 * ((c + k + 1) % 2));
            let lead = 3 + (c * 7 + k * 13) % 28;
            let mut creation_day = from_day - lead;
            if from_day > 0 {
                creation_day = creation_day.min(-1 - (c + k) % 5);
            }
            let creation = clock.at(creation_day, 9 + (c * 5 + k) % 11, (c * 7 + k * 3) % 60);

            let status_date = match status {
                BookingStatus::Quoted | BookingStatus::Reserved => creation,
                BookingStatus::Confirmed => {
                    let paid = creation + TimeDelta::days(1 + k % 3) + TimeDelta::hours(1);
                    if paid > latest {
                        creation + TimeDelta::hours(1)
                    } else {
                        paid
                    }
                }
                BookingStatus::Canceled if from_day > 0 => {
                    let canceled = creation + TimeDelta::days(1 + c % 3) + TimeDelta::hours(3);
                    if canceled > latest {
                        creation + TimeDelta::hours(2)
                    } else {
                        canceled
                    }
                }
                BookingStatus::Canceled => {
                    (from - TimeDelta::days(1 + k % 3)).max(creation + TimeDelta::hours(2))
                }
                BookingStatus::Delivered => from + TimeDelta::minutes(10 + 5 * (c % 4)),
                BookingStatus::Closed => to + TimeDelta::minutes((c * 13 + k * 7) % 180 - 60),
            };
            let last_change = status_date + TimeDelta::minutes(1 + (c + k) % 7);
            plans.push(Plan {
                car,
                seq,
                from,
                to,
                creation,
                status,
                status_date,
                last_change,
            });
        }
    }
    plans.sort_by_key(|plan| (plan.creation, plan.car, plan.seq));
    plans
}

/// The bookings of the plans, in order: Ids from 1.
fn bookings(
    demo: &Demo,
    clock: &Clock,
    settings: &PricingSettings,
    plans: Vec<Plan>,
) -> Result<Vec<Booking>, ApiError> {
    let audit_start = clock.at(-AUDIT_START_DAYS_AGO, 0, 0);
    let mut used = BTreeSet::new();
    plans
        .into_iter()
        .zip(1_i64..)
        .map(|(plan, id)| {
            let updated_on = (plan.last_change >= audit_start).then(|| {
                let mut instant = plan.last_change;
                while !used.insert(instant) {
                    instant += TimeDelta::seconds(1);
                }
                instant
            });
            booking(demo, settings, id, &plan, updated_on)
        })
        .collect()
}

fn booking(
    demo: &Demo,
    settings: &PricingSettings,
    id: i64,
    plan: &Plan,
    updated_on: Option<DateTime<FixedOffset>>,
) -> Result<Booking, ApiError> {
    let c = plan.car as i64;
    let k = plan.seq as i64;
    let car = &demo.cars[plan.car];
    let model = &car.model;
    let category = demo
        .categories
        .iter()
        .find(|category| model.category.as_ref().map(|c| c.id) == Some(category.id))
        .map(|category| Category {
            models: Vec::new(),
            ..category.clone()
        })
        .unwrap_or_default();
    let tariff = select_tariff(&demo.tariffs, category.id, Some(model.id));
    let office = &demo.offices[plan.car % ACTIVE_OFFICES].office;
    let places = &office.places;
    let delivery_place = places[(plan.car + plan.seq) % places.len()].clone();
    let return_place = if (c + 2 * k) % 4 == 0 {
        places[(plan.car + plan.seq + 1) % places.len()].clone()
    } else {
        delivery_place.clone()
    };
    let customer = demo.customers[((c * 5 + k * 3) % 23) as usize]
        .customer
        .clone();
    let zone = office_zone(office, TIME_ZONE);
    let young_driver = customer
        .birth_date
        .is_some_and(|birth| is_young_driver(birth.date_naive(), plan.from, zone));
    let through_agency = (c + k * 5) % 6 == 5;
    let (origin, user) = if through_agency {
        ("Agencia", "viajesdelsur.api".to_owned())
    } else {
        let (origin, user) = ORIGINS[((c * 2 + k) % 4) as usize];
        let user = if user == "mostrador" {
            format!(
                "mostrador.{}",
                office.iata_code.as_deref().unwrap_or("bue").to_lowercase()
            )
        } else {
            user.to_owned()
        };
        (origin, user)
    };
    let last_user = match plan.status {
        BookingStatus::Delivered | BookingStatus::Closed => format!(
            "mostrador.{}",
            office.iata_code.as_deref().unwrap_or("bue").to_lowercase()
        ),
        BookingStatus::Confirmed => "pagos.conciliacion".to_owned(),
        _ => user,
    };

    // Optional additionals; the required basic insurance is added by the pricing rules.
    let mut requested: Vec<(i64, i64)> = Vec::new();
    if (c + k) % 7 == 3 {
        requested.push((FULL_INSURANCE, 1));
    }
    if (c + k) % 4 == 0 {
        requested.push((GPS, 1));
    }
    if (c * 2 + k) % 5 == 1 {
        requested.push((CHILD_SEAT, 1 + (c + k) % 2));
    }
    if (c + 3 * k) % 6 == 2 {
        requested.push((ADDITIONAL_DRIVER, 1));
    }
    if office.id == 3 && (c + k) % 3 == 0 {
        requested.push((SNOW_CHAINS, 1));
    }
    let requested: Vec<BookingAdditional> = requested
        .into_iter()
        .map(|(id, quantity)| BookingAdditional {
            additional: Additional {
                id,
                ..Additional::default()
            },
            quantity,
        })
        .collect();
    let quote = pricing::quote(
        &QuoteRequest {
            from_date: plan.from,
            to_date: plan.to,
            tariff,
            requested_additionals: &requested,
            catalog: &demo.additionals,
            delivery_place: &delivery_place,
            return_place: &return_place,
            local_times: LocalTimes::at_offices(plan.from, plan.to, zone, zone),
            young_driver,
            has_agency: through_agency,
        },
        settings,
    )?;
    // `ExtraDayRate`: the daily amount of the last tariff bracket the rental reaches.
    let extra_day_rate = quote
        .lines
        .iter()
        .rev()
        .find(|line| line.kind == PriceItemType::Rental.code())
        .map_or(quote.daily_rate, |line| line.unit_price);

    let price = quote.price;
    let deposit = round(quote.customer_price * Decimal::new(DEPOSIT_PERCENT, 2));
    let (payed_by_customer, payed_by_agency) = match plan.status {
        BookingStatus::Quoted | BookingStatus::Canceled => (Decimal::ZERO, Decimal::ZERO),
        BookingStatus::Reserved if (c + k) % 2 == 0 => (deposit, Decimal::ZERO),
        BookingStatus::Reserved => (Decimal::ZERO, Decimal::ZERO),
        BookingStatus::Delivered if (c + k) % 3 == 0 => (deposit, Decimal::ZERO),
        BookingStatus::Confirmed | BookingStatus::Delivered | BookingStatus::Closed => {
            (quote.customer_price, quote.agency_price)
        }
    };
    let total_payed = payed_by_customer + payed_by_agency;
    let commission = round(quote.agency_price * Decimal::new(AGENCY_COMMISSION_PERCENT, 2));
    let days = quote.total_days;
    let unlimited = category.id >= 3;
    let distance_by_day = if unlimited { 0 } else { 250 };
    let flight = |place: &Place, offset: i64| {
        (place.category.as_deref() == Some("Aeropuerto")).then(|| {
            json!(format!(
                "{}{}",
                AIRLINES[((c + k + offset) % 4) as usize],
                1_000 + (c * 131 + k * 17 + offset * 7) % 8_000
            ))
        })
    };
    let mut attributes = BTreeMap::new();
    attributes.insert("Canal".to_owned(), json!(origin));
    if through_agency {
        attributes.insert(
            "Voucher".to_owned(),
            json!(format!("VDS-{:06}", 200_000 + id * 37)),
        );
    }

    Ok(Booking {
        id,
        version: text("1"),
        customer,
        balance: price - total_payed,
        total_payed,
        extra: None,
        promotion: None,
        is_quotation: plan.status == BookingStatus::Quoted,
        car: Some(car.clone()),
        model: Some(model.clone()),
        category,
        from_date: plan.from,
        to_date: plan.to,
        total_days_string: quote.total_days_string,
        total_days: Decimal::from(days),
        price,
        agency_price: quote.agency_price,
        customer_price: quote.customer_price,
        currency: quote.currency.clone(),
        franchise: model.franchise,
        franchise_damage: model.franchise_damage,
        franchise_rollover: model.franchise_rollover,
        franchise_theft: model.franchise_theft,
        franchise_hail: model.franchise_hail,
        ilimited_km: unlimited,
        max_allowed_distance: distance_by_day * days,
        max_allowed_distance_by_day: distance_by_day,
        distance_unit: "km".to_owned(),
        has_franchise_modifiers: false,
        will_leave_country: None,
        average_day_price: quote.average_day_price,
        price_items: quote.lines,
        additionals: quote.additionals,
        available_promotions: None,
        current_status: plan.status,
        current_status_date: plan.status_date,
        delivery_transportation_id: flight(&delivery_place, 0),
        return_transportation_id: flight(&return_place, 1),
        delivery_place,
        return_place,
        is_customer_over25: !young_driver,
        external_system_id: None,
        prepaid_amount: Decimal::ZERO,
        elegible_sipp_code_upgrade: None,
        attributes,
        exchange_rate: None,
        daily_rate: quote.daily_rate,
        hourly_rate: round(quote.daily_rate / Decimal::from(4)),
        extra_day_rate,
        extra_hour_rate: round(extra_day_rate / Decimal::from(4)),
        rate_plan: None,
        is_on_request: false,
        delivery_info: None,
        dropoff_info: None,
        origin: Some(json!(origin)),
        brand: None,
        agency: through_agency.then(|| json!({"Id": AGENCY_CUSTOMER_ID, "Name": AGENCY_NAME})),
        creation_date: plan.creation,
        updated_by_user_name: updated_on.map(|_| last_user),
        updated_on,
        payed_by_agency,
        payed_by_customer,
        commercial_agreement_code: through_agency.then(|| json!("AGENCIAS-10")),
        purchase_order: None,
        sales_commision: commission,
        is_transfer: false,
        price_details: PriceDetails {
            price,
            customer_price: quote.customer_price,
            agency_price: quote.agency_price,
            sales_commission: commission,
            currency: quote.currency,
        },
        is_self_checkin: false,
        links: None,
        code: Some(format!("DEMO-{id:06}")),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::pricing::Payer;

    const RENTAL: i64 = PriceItemType::Rental.code();

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-03-15T14:27:31.123456Z")
            .unwrap()
            .to_utc()
    }

    fn demo() -> Demo {
        Demo::build(now()).unwrap()
    }

    fn holds_car(booking: &Booking) -> bool {
        booking.current_status != BookingStatus::Canceled
    }

    #[test]
    fn catalog_counts() {
        let demo = demo();
        let active: Vec<_> = demo.offices.iter().filter(|o| o.active).collect();
        assert_eq!(active.len(), 3);
        assert_eq!(demo.offices.len(), 4);
        for office in &demo.offices {
            let places = &office.office.places;
            assert!((2..=3).contains(&places.len()), "{}", office.office.name);
            let zone = office.office.time_zone.as_deref().unwrap();
            assert!(crate::dates::parse_time_zone(zone).is_ok(), "{zone}");
            assert!(
                office
                    .office
                    .iata_code
                    .as_deref()
                    .is_some_and(|c| c.len() == 3)
            );
            for place in places {
                assert_eq!(place.branch_office_id, office.office.id);
                assert!(place.latitude.is_some() && place.longitude.is_some());
            }
        }
        assert_eq!(demo.categories.len(), 4);
        assert_eq!(demo.models.len(), 8);
        for model in &demo.models {
            assert_eq!(model.sipp.len(), 4, "{}", model.name);
            assert!(model.category.is_some());
            assert!(model.franchise.is_some());
        }
        for category in &demo.categories {
            assert_eq!(category.models.len(), 2, "{}", category.name);
        }
        assert_eq!(demo.cars.len(), 30);
        let models_used: BTreeSet<i64> = demo.cars.iter().map(|car| car.model.id).collect();
        assert_eq!(models_used.len(), 8);
        let offices_used: BTreeSet<i64> = demo
            .cars
            .iter()
            .map(|car| car.current_branch_office_id.unwrap())
            .collect();
        assert_eq!(offices_used, BTreeSet::from([1, 2, 3]));
        for car in &demo.cars {
            let bytes = car.id.as_bytes();
            assert_eq!(bytes.len(), 7, "{}", car.id);
            assert!(bytes[..2].iter().all(u8::is_ascii_uppercase), "{}", car.id);
            assert!(bytes[2..5].iter().all(u8::is_ascii_digit), "{}", car.id);
            assert!(bytes[5..].iter().all(u8::is_ascii_uppercase), "{}", car.id);
            assert_eq!(car.chassis_identification.as_ref().unwrap().len(), 17);
        }
        assert!(demo.customers.len() >= 20);
    }

    #[test]
    fn additionals_and_tariffs() {
        let demo = demo();
        let find = |id| demo.additionals.iter().find(|a| a.id == id).unwrap();
        let insurance = find(BASIC_INSURANCE);
        assert!(insurance.is_required && insurance.is_price_by_day);
        assert!(find(GPS).name.contains("GPS"));
        assert_eq!(find(CHILD_SEAT).max_quantity_per_booking, 2);
        assert!(find(CHILD_SEAT).is_price_by_day);
        assert!(!find(ADDITIONAL_DRIVER).is_required);
        for category in &demo.categories {
            let tariffs: Vec<_> = demo
                .tariffs
                .iter()
                .filter(|t| t.category_id == category.id && t.model_id.is_none())
                .collect();
            assert_eq!(tariffs.len(), 1, "{}", category.name);
            let ranges: Vec<_> = tariffs[0]
                .brackets
                .iter()
                .map(|b| (b.days_from, b.days_to))
                .collect();
            assert_eq!(ranges, vec![(1, 3), (4, 7), (8, 30)]);
        }
    }

    #[test]
    fn customers_have_unique_uuid_like_global_ids() {
        let demo = demo();
        let mut seen = BTreeSet::new();
        for doc in &demo.customers {
            assert_eq!(doc.created_by_user_id, None);
            let id = doc.customer.global_id.clone().unwrap();
            let groups: Vec<usize> = id.split('-').map(str::len).collect();
            assert_eq!(groups, vec![8, 4, 4, 4, 12], "{id}");
            assert!(
                id.chars().all(|c| c == '-' || c.is_ascii_hexdigit()),
                "{id}"
            );
            assert!(seen.insert(id));
            assert!(doc.customer.email_address.as_ref().unwrap().is_ascii());
        }
        let ids: Vec<i64> = demo.customers.iter().map(|doc| doc.customer.id).collect();
        assert_eq!(ids, (1..=ids.len() as i64).collect::<Vec<_>>());
    }

    #[test]
    fn bookings_have_ids_from_one_and_unique_codes() {
        let demo = demo();
        assert!(demo.bookings.len() >= 60, "{}", demo.bookings.len());
        let ids: Vec<i64> = demo.bookings.iter().map(|b| b.id).collect();
        assert_eq!(ids, (1..=ids.len() as i64).collect::<Vec<_>>());
        let codes: BTreeSet<&str> = demo
            .bookings
            .iter()
            .map(|b| b.code.as_deref().unwrap())
            .collect();
        assert_eq!(codes.len(), demo.bookings.len());
        assert!(codes.contains("DEMO-000001"));
        for booking in &demo.bookings {
            assert_eq!(booking.version.as_deref(), Some("1"));
        }
        // Ids follow the creation date.
        assert!(
            demo.bookings
                .windows(2)
                .all(|w| w[0].creation_date <= w[1].creation_date)
        );
    }

    #[test]
    fn every_status_is_present_and_where_it_belongs_in_time() {
        let demo = demo();
        let now = now();
        let mut counts = BTreeMap::new();
        for booking in &demo.bookings {
            *counts.entry(booking.current_status).or_insert(0) += 1;
            assert!(booking.from_date < booking.to_date, "{}", booking.id);
            assert!(booking.creation_date <= booking.current_status_date);
            assert!(booking.current_status_date <= now, "{}", booking.id);
            assert_eq!(
                booking.is_quotation,
                booking.current_status == BookingStatus::Quoted
            );
            match booking.current_status {
                BookingStatus::Closed => {
                    assert!(booking.to_date < now);
                    assert!(booking.current_status_date > booking.from_date);
                }
                BookingStatus::Delivered => {
                    assert!(booking.from_date < now && now < booking.to_date);
                }
                BookingStatus::Quoted | BookingStatus::Reserved | BookingStatus::Confirmed => {
                    assert!(booking.from_date > now);
                }
                BookingStatus::Canceled => {}
            }
        }
        for status in BookingStatus::ALL {
            assert!(
                counts.get(&status).copied().unwrap_or(0) >= 2,
                "{status}: {counts:?}"
            );
        }
    }

    #[test]
    fn closed_bookings_in_the_last_ninety_days() {
        let demo = demo();
        let now = now();
        let since = now - TimeDelta::days(90);
        let closed: Vec<_> = demo
            .bookings
            .iter()
            .filter(|b| b.current_status == BookingStatus::Closed)
            .filter(|b| b.current_status_date >= since)
            .collect();
        assert!(closed.len() >= 15, "{}", closed.len());
        // The closed list's test reads them in one page of 100.
        assert!(closed.len() <= 100, "{}", closed.len());
        let days: BTreeSet<NaiveDate> = closed
            .iter()
            .map(|b| b.current_status_date.date_naive())
            .collect();
        assert!(days.len() >= 10, "{}", days.len());
        // Some closed before the range too.
        assert!(
            demo.bookings
                .iter()
                .any(|b| b.current_status == BookingStatus::Closed && b.current_status_date < since)
        );
    }

    #[test]
    fn legacy_bookings_and_updated_on() {
        let demo = demo();
        let now = now();
        let legacy: Vec<_> = demo
            .bookings
            .iter()
            .filter(|b| b.updated_on.is_none())
            .collect();
        assert!(legacy.len() >= 4, "{}", legacy.len());
        assert!(legacy.iter().all(|b| b.updated_by_user_name.is_none()));
        let updated: Vec<_> = demo
            .bookings
            .iter()
            .filter_map(|b| b.updated_on.map(|on| (b, on)))
            .collect();
        let distinct: BTreeSet<_> = updated.iter().map(|(_, on)| *on).collect();
        assert_eq!(distinct.len(), updated.len(), "distinct UpdatedOn");
        for (booking, on) in &updated {
            assert!(
                *on <= now && *on > now - TimeDelta::days(60),
                "{}",
                booking.id
            );
            assert!(*on >= booking.current_status_date, "{}", booking.id);
            assert!(booking.updated_by_user_name.is_some());
        }
        let days: BTreeSet<NaiveDate> = distinct.iter().map(|on| on.date_naive()).collect();
        assert!(
            days.len() >= 20,
            "spread over the last 60 days: {}",
            days.len()
        );
    }

    #[test]
    fn no_car_is_held_twice_at_once() {
        let demo = demo();
        let mut by_car: BTreeMap<&str, Vec<&Booking>> = BTreeMap::new();
        for booking in demo.bookings.iter().filter(|b| holds_car(b)) {
            by_car
                .entry(booking.car.as_ref().unwrap().id.as_str())
                .or_default()
                .push(booking);
        }
        for (car, bookings) in by_car {
            for (i, a) in bookings.iter().enumerate() {
                for b in &bookings[i + 1..] {
                    assert!(
                        a.to_date <= b.from_date || b.to_date <= a.from_date,
                        "{car}: {} and {}",
                        a.id,
                        b.id
                    );
                }
            }
        }
    }

    #[test]
    fn bookings_are_consistent_with_their_catalog() {
        let demo = demo();
        for booking in &demo.bookings {
            let car = booking.car.as_ref().unwrap();
            let model = booking.model.as_ref().unwrap();
            assert_eq!(car.model.id, model.id);
            assert_eq!(model.category.as_ref().unwrap().id, booking.category.id);
            let office = car.current_branch_office_id.unwrap();
            assert_eq!(booking.delivery_place.branch_office_id, office);
            assert_eq!(booking.return_place.branch_office_id, office);
            assert!(
                booking
                    .additionals
                    .iter()
                    .any(|a| a.additional.id == BASIC_INSURANCE)
            );
            for taken in &booking.additionals {
                assert!(taken.quantity <= taken.additional.max_quantity_per_booking);
            }
            assert_eq!(booking.currency, CURRENCY);
        }
    }

    #[test]
    fn price_lines_sum_to_the_price() {
        let demo = demo();
        for booking in &demo.bookings {
            let id = booking.id;
            let lines = &booking.price_items;
            assert!(lines.iter().any(|l| l.kind == RENTAL), "{id}");
            let sum: Decimal = lines.iter().map(|l| l.price).sum();
            assert_eq!(sum, booking.price, "{id}");
            let by = |payer| -> Decimal {
                lines
                    .iter()
                    .filter(|l| l.payer == payer)
                    .map(|l| l.price)
                    .sum()
            };
            assert_eq!(by(Payer::Customer.code()), booking.customer_price, "{id}");
            assert_eq!(by(Payer::Agency.code()), booking.agency_price, "{id}");
            assert_eq!(booking.customer_price + booking.agency_price, booking.price);
            for line in lines {
                assert_eq!(line.price, line.unit_price * Decimal::from(line.quantity));
                assert_eq!(line.price.scale(), 2, "{id}");
            }
            let rental_days: i64 = lines
                .iter()
                .filter(|l| l.kind == RENTAL)
                .map(|l| l.quantity)
                .sum();
            assert_eq!(Decimal::from(rental_days), booking.total_days, "{id}");
            assert_eq!(booking.price_details.price, booking.price);
            assert_eq!(
                booking.total_payed,
                booking.payed_by_agency + booking.payed_by_customer
            );
            assert_eq!(booking.balance, booking.price - booking.total_payed, "{id}");
            match booking.current_status {
                BookingStatus::Confirmed | BookingStatus::Closed => {
                    assert!(booking.balance <= Decimal::ZERO, "{id}");
                }
                BookingStatus::Reserved | BookingStatus::Quoted => {
                    assert!(booking.balance > Decimal::ZERO, "{id}");
                }
                _ => {}
            }
        }
        assert!(demo.bookings.iter().any(|b| !b.agency_price.is_zero()));
    }

    #[test]
    fn rental_days_round_up_after_the_grace_period() {
        let grace = pricing_settings().unwrap().grace_minutes;
        let at = |value: &str| DateTime::parse_from_rfc3339(value).unwrap();
        let from = at("2026-03-01T10:00:00-03:00");
        let days = |to| pricing::rental_days(from, at(to), grace).unwrap();
        assert_eq!(days("2026-03-01T12:00:00-03:00"), 1);
        assert_eq!(days("2026-03-04T10:59:00-03:00"), 3);
        assert_eq!(days("2026-03-04T11:00:00-03:00"), 4);
    }

    #[test]
    fn pricing_settings_are_the_tenant_settings_read_back() {
        let settings = pricing_settings().unwrap();
        assert_eq!(settings.grace_minutes, 59);
        assert_eq!(settings.currency.as_deref(), Some("USD"));
        assert_eq!(settings.office_hours.to_string(), "08:00-20:00");
        assert_eq!(settings.surcharges.one_way, Decimal::new(4_000, 2));
        assert_eq!(settings.surcharges.out_of_hours, Decimal::new(1_500, 2));
        assert_eq!(settings.surcharges.young_driver, Decimal::new(600, 2));
    }

    #[test]
    fn young_drivers_pay_the_daily_surcharge() {
        let demo = demo();
        let young: Vec<&Booking> = demo
            .bookings
            .iter()
            .filter(|b| !b.is_customer_over25)
            .collect();
        assert!(young.len() >= 2, "{}", young.len());
        for booking in &demo.bookings {
            let surcharge: Vec<_> = booking
                .price_items
                .iter()
                .filter(|l| l.kind == PriceItemType::Surcharge.code())
                .collect();
            if booking.is_customer_over25 {
                assert!(surcharge.is_empty(), "{}", booking.id);
            } else {
                assert_eq!(surcharge.len(), 1, "{}", booking.id);
                assert_eq!(Decimal::from(surcharge[0].quantity), booking.total_days);
            }
        }
    }

    #[test]
    fn records_are_stored_documents() {
        let tenant = demo_tenant(now()).unwrap();
        let settings: BTreeMap<&str, &str> = tenant
            .settings
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(settings["time_zone"], "America/Argentina/Buenos_Aires");
        assert_eq!(settings["availability_mode"], "model");
        assert_eq!(settings["grace_minutes"], "59");
        assert_eq!(settings["currency"], "USD");
        assert!(["es", "en"].contains(&settings["default_language"]));

        let mut ids = BTreeSet::new();
        let mut per_collection: BTreeMap<&str, usize> = BTreeMap::new();
        for record in &tenant.records {
            assert!(
                ids.insert((record.collection, record.id.clone())),
                "{record:?}"
            );
            *per_collection.entry(record.collection).or_default() += 1;
        }
        assert_eq!(per_collection["branch-offices"], 4);
        assert_eq!(per_collection["categories"], 4);
        assert_eq!(per_collection["models"], 8);
        assert_eq!(per_collection["cars"], 30);
        assert_eq!(per_collection["tariffs"], 5);
        assert!(per_collection["customers"] >= 20);
        assert!(per_collection["bookings"] >= 60);

        let demo = demo();
        let stored: Vec<Booking> = tenant
            .records
            .iter()
            .filter(|r| r.collection == "bookings")
            .map(|r| serde_json::from_str(&r.body).unwrap())
            .collect();
        assert_eq!(stored, demo.bookings, "bookings read back unchanged");
    }

    #[test]
    fn same_now_same_tenant() {
        assert_eq!(demo_tenant(now()).unwrap(), demo_tenant(now()).unwrap());
    }

    #[test]
    fn the_shape_does_not_depend_on_the_time_of_day() {
        let shape = |now: DateTime<Utc>| -> Vec<(i64, BookingStatus, bool, String)> {
            Demo::build(now)
                .unwrap()
                .bookings
                .iter()
                .map(|b| {
                    (
                        b.id,
                        b.current_status,
                        b.updated_on.is_none(),
                        b.car.as_ref().unwrap().id.clone(),
                    )
                })
                .collect()
        };
        // 00:00:01 and 23:59:59 in Buenos Aires on the same day.
        let early = DateTime::parse_from_rfc3339("2026-03-15T03:00:01Z")
            .unwrap()
            .to_utc();
        let late = DateTime::parse_from_rfc3339("2026-03-16T02:59:59Z")
            .unwrap()
            .to_utc();
        assert_eq!(shape(early), shape(late));
    }
}
