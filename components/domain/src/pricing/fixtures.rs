//! What the pricing tests share: amounts, instants, a tariff, additionals, places and a
//! request whose parts each test changes.

use chrono::{DateTime, FixedOffset, NaiveTime, TimeDelta};
use rust_decimal::Decimal;

use super::*;
use crate::error::ApiError;
use crate::fixtures::tariff;
use crate::models::{Additional, BookingAdditional, Place, PriceItem, Tariff};

pub(super) fn d(value: &str) -> Decimal {
    value.parse().unwrap()
}

pub(super) fn at(value: &str) -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339(value).unwrap()
}

pub(super) fn time(value: &str) -> NaiveTime {
    NaiveTime::parse_from_str(value, "%H:%M").unwrap()
}

/// 38.00 for days 1-3, 34.00 for days 4-7, 29.00 for days 8-30 (the demo's economy tariff).
pub(super) fn economy() -> Tariff {
    tariff(
        1,
        "Economy",
        1,
        &[(1, 3, "38.00"), (4, 7, "34.00"), (8, 30, "29.00")],
    )
}

pub(super) fn additional(id: i64, price: &str, by_day: bool, max: i64, stock: i64) -> Additional {
    Additional {
        id,
        name: format!("Additional {id}"),
        is_price_by_day: by_day,
        price: d(price),
        max_quantity_per_booking: max,
        stock,
        order: Decimal::from(id),
        ..Additional::default()
    }
}

/// 1 basic insurance 12.00/day (required), 3 GPS 5.00/day (max 1, stock 10), 4 child seat
/// 4.50/day (max 2, stock 12), 5 additional driver 20.00 per booking (max 2), 6 snow
/// chains 15.00 per booking (no per-booking limit, stock 2).
pub(super) fn catalog() -> Vec<Additional> {
    vec![
        Additional {
            is_required: true,
            ..additional(1, "12.00", true, 1, 0)
        },
        additional(3, "5.00", true, 1, 10),
        additional(4, "4.50", true, 2, 12),
        additional(5, "20.00", false, 2, 0),
        additional(6, "15.00", false, 0, 2),
    ]
}

pub(super) fn place(id: i64, office: i64, price: &str) -> Place {
    Place {
        id,
        price: d(price),
        name: format!("Place {id}"),
        branch_office_id: office,
        ..Place::default()
    }
}

pub(super) fn take(id: i64, quantity: i64) -> BookingAdditional {
    BookingAdditional {
        additional: Additional {
            id,
            ..Additional::default()
        },
        quantity,
    }
}

/// The parts of a request, owned, with the defaults of the tests: 3 days from 10:00 on
/// 2026-03-02 (UTC), economy tariff, no additional requested, free places of office 1,
/// within office hours, driver over 25, no agency.
pub(super) struct Fixture {
    pub(super) from: DateTime<FixedOffset>,
    pub(super) to: DateTime<FixedOffset>,
    pub(super) tariff: Option<Tariff>,
    pub(super) requested: Vec<BookingAdditional>,
    pub(super) catalog: Vec<Additional>,
    pub(super) delivery: Place,
    pub(super) ret: Place,
    pub(super) times: LocalTimes,
    pub(super) young_driver: bool,
    pub(super) has_agency: bool,
    pub(super) settings: PricingSettings,
}

impl Fixture {
    pub(super) fn new() -> Self {
        Self {
            from: at("2026-03-02T10:00:00Z"),
            to: at("2026-03-05T10:00:00Z"),
            tariff: Some(economy()),
            requested: Vec::new(),
            catalog: catalog(),
            delivery: place(3, 1, "0"),
            ret: place(3, 1, "0"),
            times: LocalTimes {
                pickup: time("10:00"),
                dropoff: time("10:00"),
            },
            young_driver: false,
            has_agency: false,
            settings: PricingSettings::default(),
        }
    }

    pub(super) fn days(mut self, days: i64) -> Self {
        self.to = self.from + TimeDelta::days(days);
        self
    }

    pub(super) fn quote(&self) -> Result<Quote, ApiError> {
        quote(
            &QuoteRequest {
                from_date: self.from,
                to_date: self.to,
                tariff: self.tariff.as_ref(),
                requested_additionals: &self.requested,
                catalog: &self.catalog,
                delivery_place: &self.delivery,
                return_place: &self.ret,
                local_times: self.times,
                young_driver: self.young_driver,
                has_agency: self.has_agency,
            },
            &self.settings,
        )
    }
}

pub(super) fn of_kind(quote: &Quote, kind: PriceItemType) -> Vec<&PriceItem> {
    quote
        .lines
        .iter()
        .filter(|line| line.kind == kind.code())
        .collect()
}

/// (UnitPrice, Quantity, Price) of lines.
pub(super) fn amounts(lines: &[&PriceItem]) -> Vec<(Decimal, i64, Decimal)> {
    lines
        .iter()
        .map(|line| (line.unit_price, line.quantity, line.price))
        .collect()
}

/// The invariants of every quote: ids 1..n, payer sums, Price the sum of the lines.
pub(super) fn assert_consistent(quote: &Quote) {
    let ids: Vec<i64> = quote.lines.iter().map(|line| line.id).collect();
    assert_eq!(ids, (1..=ids.len() as i64).collect::<Vec<_>>());
    let sum = |payer: Option<Payer>| -> Decimal {
        quote
            .lines
            .iter()
            .filter(|line| payer.is_none_or(|payer| line.payer == payer.code()))
            .map(|line| line.price)
            .sum()
    };
    assert_eq!(sum(None), quote.price);
    assert_eq!(sum(Some(Payer::Customer)), quote.customer_price);
    assert_eq!(sum(Some(Payer::Agency)), quote.agency_price);
    assert_eq!(quote.customer_price + quote.agency_price, quote.price);
    let scale = minor_units(&quote.currency);
    for line in &quote.lines {
        assert_eq!(line.price.scale(), scale, "{line:?}");
        assert!(line.is_booking_price);
    }
}

pub(super) fn settings_from(pairs: &[(&str, &str)]) -> Result<PricingSettings, InvalidSetting> {
    PricingSettings::from_lookup(|key| {
        pairs
            .iter()
            .find(|(name, _)| *name == key)
            .map(|(_, value)| (*value).to_owned())
    })
}

/// [`Fixture::new`] with the surcharges of the demo: one-way 40.00, out of hours 15.00, young
/// driver 6.00.
pub(super) fn with_surcharges() -> Fixture {
    let mut fixture = Fixture::new();
    fixture.settings.surcharges = Surcharges {
        one_way: d("40.00"),
        out_of_hours: d("15.00"),
        young_driver: d("6.00"),
    };
    fixture
}
