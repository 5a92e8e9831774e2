//! The pricing engine (contract.md "Pricing"; the model, the settings and a worked example are
//! in `docs/pricing.md`): rental days, tariff brackets, additionals, place prices, surcharges,
//! payers, rounding, and the 1% tolerance on a price the client sends.
//!
//! Pure: no I/O and no clock. The caller reads the catalogue (tariffs, additionals, places,
//! branch offices) and the tenant's settings, and passes them in. Money is
//! [`rust_decimal::Decimal`], rounded at one named point: each price line's total
//! ([`round_money`]); every total is a sum of rounded lines.
//!
//! Creating or updating a booking prices it in five steps:
//!
//! 1. [`PricingSettings::from_lookup`] reads the tenant's settings;
//! 2. [`select_tariff`] picks the tariff of the booked model or category;
//! 3. [`LocalTimes::at_offices`] and [`is_young_driver`] (or the request's `IsCustomerOver25`)
//!    turn the dates into the facts the surcharges need;
//! 4. [`quote`] computes the price lines and totals of a [`QuoteRequest`];
//! 5. [`accept_sent_price`] checks a `Price` the client sent against the quote.
//!
//! The response then drops `AppliedCoverageBrackets` with [`strip_coverage_brackets`] when it
//! is the simplified one, or when [`coverage_is_traceable`] says the stored lines no longer
//! map onto their day ranges (interface.md 4.4).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, NaiveTime, TimeDelta};
use chrono_tz::Tz;
use rust_decimal::{Decimal, RoundingStrategy};

use crate::dates::parse_time_zone;
use crate::error::{ApiError, ErrorCode};
use crate::models::{
    Additional, AppliedCoverageBracket, BookingAdditional, BranchOffice, Place, PriceItem, Tariff,
    TariffBracket,
};

/// Names of the tenant settings pricing reads (`rentald setting set`).
pub mod setting {
    /// Minutes past the last whole day that are not charged as one more day; an integer from 0
    /// to 1439, default [`super::DEFAULT_GRACE_MINUTES`].
    pub const GRACE_MINUTES: &str = "grace_minutes";
    /// Currency code used when a tariff names none; no default.
    pub const CURRENCY: &str = "currency";
    /// Opening hours of every branch office, `HH:MM-HH:MM` on the office's own clock; default
    /// `08:00-20:00`.
    pub const OFFICE_HOURS: &str = "office_hours";
    /// Amount charged once when the car is returned to another branch office; default 0 (off).
    pub const ONE_WAY: &str = "surcharge.one_way";
    /// Amount charged for a pick-up, and again for a return, outside office hours; default 0
    /// (off).
    pub const OUT_OF_HOURS: &str = "surcharge.out_of_hours";
    /// Amount charged per rental day when the driver is under 25; default 0 (off).
    pub const YOUNG_DRIVER: &str = "surcharge.young_driver";
}

/// Default of the `grace_minutes` setting.
pub const DEFAULT_GRACE_MINUTES: u32 = 59;
/// Age from which a driver is no longer charged the young-driver surcharge.
pub const YOUNG_DRIVER_AGE: i32 = 25;
/// How far a sent price may be from the computed one, in percent of the computed one.
pub const PRICE_TOLERANCE_PERCENT: i64 = 1;

/// Minutes in a rental day.
const MINUTES_PER_DAY: i64 = 24 * 60;
/// Decimal places of a currency absent from the tables below.
const DEFAULT_MINOR_UNITS: u32 = 2;
/// ISO 4217 currencies without minor unit.
const ZERO_DECIMAL_CURRENCIES: [&str; 17] = [
    "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND",
    "VUV", "XAF", "XOF", "XPF",
];
/// ISO 4217 currencies with three decimal places.
const THREE_DECIMAL_CURRENCIES: [&str; 7] = ["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"];

/// Request fields the errors name, as the booking models spell them.
const TO_DATE: &str = "ToDate";
const ADDITIONALS: &str = "Additionals";
const PRICE: &str = "Price";

/// What a price line charges for: `PriceItem.Type` (values not shown by the interface).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i64)]
pub enum PriceItemType {
    /// Rental days of one tariff bracket; `TypeId` is the tariff's id.
    Rental = 1,
    /// An additional; `TypeId` is the additional's id.
    Additional = 2,
    /// Delivery or return at a place; `TypeId` is the place's id.
    Place = 3,
    /// A surcharge; `TypeId` is a [`SurchargeKind`].
    Surcharge = 4,
    /// The difference between a sent price and the computed one; `TypeId` is 0.
    Adjustment = 5,
}

impl PriceItemType {
    /// The value of `PriceItem.Type`.
    pub const fn code(self) -> i64 {
        self as i64
    }
}

/// Who pays a price line: `PriceItem.Payer` (values not shown by the interface).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i64)]
pub enum Payer {
    /// The customer (driver) pays.
    Customer = 1,
    /// The agency the booking came through pays.
    Agency = 2,
}

impl Payer {
    /// The value of `PriceItem.Payer`.
    pub const fn code(self) -> i64 {
        self as i64
    }
}

/// Which surcharge a [`PriceItemType::Surcharge`] line charges: its `TypeId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i64)]
pub enum SurchargeKind {
    /// The car is returned to another branch office than the one it was delivered by.
    OneWay = 1,
    /// A pick-up or a return outside office hours (one line each).
    OutOfHours = 2,
    /// The driver is under [`YOUNG_DRIVER_AGE`] (per rental day).
    YoungDriver = 3,
}

impl SurchargeKind {
    /// The value of `PriceItem.TypeId`.
    pub const fn code(self) -> i64 {
        self as i64
    }
}

// ---------------------------------------------------------------------------------------------
// Settings.

/// A tenant setting pricing cannot read.
///
/// It is the operator's to fix, not the client's; as an [`ApiError`] it is
/// [`ErrorCode::SettingNotFound`] (105) naming the setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the setting '{key}' is not valid: {reason}")]
pub struct InvalidSetting {
    /// The setting's name, one of [`setting`].
    pub key: &'static str,
    /// What its value should look like.
    pub reason: &'static str,
}

impl From<InvalidSetting> for ApiError {
    fn from(error: InvalidSetting) -> Self {
        ApiError::new(ErrorCode::SettingNotFound)
            .with_field(error.key)
            .with_detail(error.reason)
    }
}

/// The surcharges a tenant configures; an amount of zero turns a surcharge off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Surcharges {
    /// Once per booking returned to another branch office ([`setting::ONE_WAY`]).
    pub one_way: Decimal,
    /// Per pick-up or return outside office hours ([`setting::OUT_OF_HOURS`]).
    pub out_of_hours: Decimal,
    /// Per rental day of a driver under 25 ([`setting::YOUNG_DRIVER`]).
    pub young_driver: Decimal,
}

/// Everything pricing reads from the tenant's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PricingSettings {
    /// Minutes past the last whole day that are not charged ([`setting::GRACE_MINUTES`]).
    pub grace_minutes: u32,
    /// Currency of a tariff that names none ([`setting::CURRENCY`]), upper case.
    pub currency: Option<String>,
    /// When the branch offices are open ([`setting::OFFICE_HOURS`]).
    pub office_hours: OfficeHours,
    /// The surcharges' amounts.
    pub surcharges: Surcharges,
}

impl Default for PricingSettings {
    /// The settings of a tenant that sets none: 59 minutes of grace, 08:00-20:00, no
    /// surcharge, no fallback currency.
    fn default() -> Self {
        Self {
            grace_minutes: DEFAULT_GRACE_MINUTES,
            currency: None,
            office_hours: OfficeHours::default(),
            surcharges: Surcharges::default(),
        }
    }
}

impl PricingSettings {
    /// Reads the settings through `lookup`, which returns a setting's value or `None` when it
    /// is not set (the guests' `context::setting`). A missing or blank setting takes its
    /// default.
    ///
    /// Errors: a value that does not parse, naming the setting: `grace_minutes` not an integer
    /// from 0 to 1439; `currency` not three letters; `office_hours` not `HH:MM-HH:MM` with the
    /// opening before the closing; a surcharge not a number or negative.
    pub fn from_lookup(
        mut lookup: impl FnMut(&str) -> Option<String>,
    ) -> Result<Self, InvalidSetting> {
        let mut read = |key: &str| {
            lookup(key)
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        let defaults = Self::default();
        let grace_minutes = match read(setting::GRACE_MINUTES) {
            None => defaults.grace_minutes,
            Some(value) => value
                .parse::<u32>()
                .ok()
                .filter(|&minutes| i64::from(minutes) < MINUTES_PER_DAY)
                .ok_or(InvalidSetting {
                    key: setting::GRACE_MINUTES,
                    reason: "must be a whole number of minutes from 0 to 1439",
                })?,
        };
        let currency = match read(setting::CURRENCY) {
            None => None,
            Some(value) if value.len() == 3 && value.chars().all(|c| c.is_ascii_alphabetic()) => {
                Some(value.to_ascii_uppercase())
            }
            Some(_) => {
                return Err(InvalidSetting {
                    key: setting::CURRENCY,
                    reason: "must be a three-letter currency code",
                });
            }
        };
        let office_hours = match read(setting::OFFICE_HOURS) {
            None => defaults.office_hours,
            Some(value) => OfficeHours::parse(&value).ok_or(InvalidSetting {
                key: setting::OFFICE_HOURS,
                reason: "must be HH:MM-HH:MM with the opening before the closing",
            })?,
        };
        let mut amount = |key: &'static str| match read(key) {
            None => Ok(Decimal::ZERO),
            Some(value) => value
                .parse::<Decimal>()
                .ok()
                .filter(|amount| !amount.is_sign_negative())
                .ok_or(InvalidSetting {
                    key,
                    reason: "must be an amount of zero or more",
                }),
        };
        let surcharges = Surcharges {
            one_way: amount(setting::ONE_WAY)?,
            out_of_hours: amount(setting::OUT_OF_HOURS)?,
            young_driver: amount(setting::YOUNG_DRIVER)?,
        };
        Ok(Self {
            grace_minutes,
            currency,
            office_hours,
            surcharges,
        })
    }
}

/// The hours a branch office is open, on its own clock: from `open` to `close`, both included.
///
/// Built only through [`OfficeHours::new`] or [`OfficeHours::parse`], so `open` is always
/// before `close` (an office open overnight is not modelled).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OfficeHours {
    open: NaiveTime,
    close: NaiveTime,
}

impl Default for OfficeHours {
    /// 08:00-20:00.
    fn default() -> Self {
        Self {
            open: NaiveTime::MIN + TimeDelta::hours(8),
            close: NaiveTime::MIN + TimeDelta::hours(20),
        }
    }
}

impl OfficeHours {
    /// Hours from `open` to `close`; `None` unless `open` is before `close`.
    pub fn new(open: NaiveTime, close: NaiveTime) -> Option<Self> {
        (open < close).then_some(Self { open, close })
    }

    /// Reads `HH:MM-HH:MM` (spaces around the dash allowed), e.g. `08:00-20:00`.
    pub fn parse(value: &str) -> Option<Self> {
        let (open, close) = value.split_once('-')?;
        let time = |text: &str| NaiveTime::parse_from_str(text.trim(), "%H:%M").ok();
        Self::new(time(open)?, time(close)?)
    }

    /// Opening time.
    pub fn open(&self) -> NaiveTime {
        self.open
    }

    /// Closing time.
    pub fn close(&self) -> NaiveTime {
        self.close
    }

    /// Whether the office is open at `time`: from the opening to the closing minute included
    /// (20:00 is within 08:00-20:00; 20:00:01 is not).
    pub fn contains(&self, time: NaiveTime) -> bool {
        self.open <= time && time <= self.close
    }
}

impl fmt::Display for OfficeHours {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}-{}",
            self.open.format("%H:%M"),
            self.close.format("%H:%M")
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Facts from dates and time zones, for the surcharges.

/// The local times of pick-up and return, each on the clock of its branch office: what the
/// out-of-hours surcharge compares with [`OfficeHours`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalTimes {
    /// Time of `FromDate` at the delivery place's branch office.
    pub pickup: NaiveTime,
    /// Time of `ToDate` at the return place's branch office.
    pub dropoff: NaiveTime,
}

impl LocalTimes {
    /// The local times of `from` in `delivery_zone` and of `to` in `return_zone` (see
    /// [`office_zone`]).
    pub fn at_offices(
        from: DateTime<FixedOffset>,
        to: DateTime<FixedOffset>,
        delivery_zone: Tz,
        return_zone: Tz,
    ) -> Self {
        Self {
            pickup: from.with_timezone(&delivery_zone).time(),
            dropoff: to.with_timezone(&return_zone).time(),
        }
    }
}

/// The time zone of a branch office: its `TimeZone` when that names a known IANA zone, the
/// tenant's (`time_zone` setting) otherwise.
pub fn office_zone(office: &BranchOffice, tenant_zone: Tz) -> Tz {
    office
        .time_zone
        .as_deref()
        .and_then(|name| parse_time_zone(name).ok())
        .unwrap_or(tenant_zone)
}

/// Whether a driver born on `birth_date` is under [`YOUNG_DRIVER_AGE`] on the day of the
/// pick-up, that day being the date of `pickup` in `zone` (the delivery office's). The
/// surcharge's opposite is the booking's `IsCustomerOver25`: 25 years old counts as over 25.
pub fn is_young_driver(birth_date: NaiveDate, pickup: DateTime<FixedOffset>, zone: Tz) -> bool {
    let day = pickup.with_timezone(&zone).date_naive();
    let mut age = day.year() - birth_date.year();
    if (day.month(), day.day()) < (birth_date.month(), birth_date.day()) {
        age -= 1;
    }
    age < YOUNG_DRIVER_AGE
}

// ---------------------------------------------------------------------------------------------
// Rental days, tariffs and money.

/// Rental days from `from` to `to`: whole days of 24 hours, plus one when what remains exceeds
/// `grace_minutes`; at least 1. The length counts whole minutes (seconds are dropped), so with
/// the default grace 3 days 0:59 is 3 days and 3 days 1:00 is 4.
///
/// Errors: `to` not after `from` is [`ErrorCode::InvlaidDates`] (13) naming `ToDate`.
pub fn rental_days(
    from: DateTime<FixedOffset>,
    to: DateTime<FixedOffset>,
    grace_minutes: u32,
) -> Result<i64, ApiError> {
    if to <= from {
        return Err(ApiError::new(ErrorCode::InvlaidDates)
            .with_field(TO_DATE)
            .with_detail("must be after FromDate"));
    }
    let minutes = (to - from).num_minutes();
    let whole_days = minutes / MINUTES_PER_DAY;
    let rest = minutes % MINUTES_PER_DAY;
    let days = if rest > i64::from(grace_minutes) {
        whole_days + 1
    } else {
        whole_days
    };
    Ok(days.max(1))
}

/// `TotalDaysString`: `1 day`, `3 days` (English whatever the response language).
pub fn total_days_string(days: i64) -> String {
    if days == 1 {
        "1 day".to_owned()
    } else {
        format!("{days} days")
    }
}

/// The tariff that prices a car: the one of its model when there is one, otherwise its
/// category's (a tariff without `ModelId`). When several match, the lowest `Id` wins.
pub fn select_tariff(
    tariffs: &[Tariff],
    category_id: i64,
    model_id: Option<i64>,
) -> Option<&Tariff> {
    let lowest = |matches: &dyn Fn(&Tariff) -> bool| {
        tariffs
            .iter()
            .filter(|tariff| matches(tariff))
            .min_by_key(|tariff| tariff.id)
    };
    model_id
        .and_then(|model| lowest(&|tariff| tariff.model_id == Some(model)))
        .or_else(|| {
            lowest(&|tariff| tariff.model_id.is_none() && tariff.category_id == category_id)
        })
}

/// Decimal places of a currency's minor unit: 0 for JPY, CLP, PYG and the other ISO 4217
/// currencies without one, 3 for BHD, KWD and the other three-decimal ones, 2 otherwise
/// (unknown codes included). The code is matched in any case.
pub fn minor_units(currency: &str) -> u32 {
    let code = currency.trim().to_ascii_uppercase();
    if ZERO_DECIMAL_CURRENCIES.contains(&code.as_str()) {
        0
    } else if THREE_DECIMAL_CURRENCIES.contains(&code.as_str()) {
        3
    } else {
        DEFAULT_MINOR_UNITS
    }
}

/// `amount` rounded half away from zero to `minor_units` decimal places, and written with
/// exactly that many (`10.005` is `10.01`, `-10.005` is `-10.01`, `10` is `10.00`).
pub fn round_money(amount: Decimal, minor_units: u32) -> Decimal {
    let mut rounded =
        amount.round_dp_with_strategy(minor_units, RoundingStrategy::MidpointAwayFromZero);
    rounded.rescale(minor_units);
    rounded
}

/// The brackets of `tariff` that `days` rental days go through, each with the last rental day
/// it prices.
///
/// Errors: a tariff whose brackets, in `DaysFrom` order, do not cover day 1 onwards without
/// gap or overlap is [`ErrorCode::TariffNotFound`] (21: no usable tariff); more days than its
/// last bracket reaches is [`ErrorCode::MaxDaysOfBookingReached`] (30) naming `ToDate`.
fn applied_brackets(tariff: &Tariff, days: i64) -> Result<Vec<(&TariffBracket, i64)>, ApiError> {
    let brackets = ordered_brackets(tariff).map_err(|detail| {
        ApiError::new(ErrorCode::TariffNotFound)
            .with_detail(format!("tariff {} {detail}", tariff.id))
    })?;
    let last_day = brackets.last().map_or(0, |bracket| bracket.days_to);
    if days > last_day {
        return Err(ApiError::new(ErrorCode::MaxDaysOfBookingReached)
            .with_field(TO_DATE)
            .with_detail(format!(
                "the tariff covers at most {last_day} days, the booking lasts {days}"
            )));
    }
    Ok(brackets
        .into_iter()
        .take_while(|bracket| bracket.days_from <= days)
        .map(|bracket| (bracket, days.min(bracket.days_to)))
        .collect())
}

/// The brackets of `tariff` in `DaysFrom` order, when they cover day 1 onwards without gap or
/// overlap: the shape a tariff must have to price anything (also checked on catalogue import).
///
/// Errors: what is wrong, worded to follow "tariff N " (no brackets, or the first bracket that
/// does not follow the previous one).
pub fn ordered_brackets(tariff: &Tariff) -> Result<Vec<&TariffBracket>, String> {
    let mut brackets: Vec<&TariffBracket> = tariff.brackets.iter().collect();
    brackets.sort_by_key(|bracket| bracket.days_from);
    let mut next_day = Some(1_i64);
    for bracket in &brackets {
        if Some(bracket.days_from) != next_day || bracket.days_to < bracket.days_from {
            return Err(format!(
                "has a bracket of days {} to {} that does not follow the previous one",
                bracket.days_from, bracket.days_to
            ));
        }
        next_day = bracket.days_to.checked_add(1);
    }
    if brackets.is_empty() {
        return Err("has no day brackets".to_owned());
    }
    Ok(brackets)
}

/// The currency of a quote: the tariff's, else the tenant's `currency` setting.
fn quote_currency(tariff: &Tariff, settings: &PricingSettings) -> Result<String, ApiError> {
    [Some(tariff.currency.as_str()), settings.currency.as_deref()]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|code| !code.is_empty())
        .map(str::to_ascii_uppercase)
        .ok_or_else(|| {
            ApiError::new(ErrorCode::MissingCurrencyCode)
                .with_detail(format!("tariff {} names no currency", tariff.id))
        })
}

/// An amount too large for a decimal, blamed on the request field that caused it.
fn out_of_range(field: &str) -> ApiError {
    ApiError::invalid_field(field, "gives an amount out of range")
}

/// The sum of `amounts`; `None` on overflow.
fn checked_sum(amounts: impl IntoIterator<Item = Decimal>) -> Option<Decimal> {
    amounts
        .into_iter()
        .try_fold(Decimal::ZERO, |sum, amount| sum.checked_add(amount))
}

// ---------------------------------------------------------------------------------------------
// Additionals.

/// The additionals a booking takes, in catalogue order (`Order`, then `Id`), with their
/// quantities: those requested with a quantity above zero, and every required one (at least
/// once).
///
/// Errors: a negative quantity is [`ErrorCode::ModelNotValid`] (98); an id the catalogue does
/// not have is [`ErrorCode::AdditionalNotFound`] (31); a quantity above
/// `MaxQuantityPerBooking` or `Stock`, when that is above zero, is
/// [`ErrorCode::AdditionalMaxQuantityExceeded`] (32). All name `Additionals`.
fn taken_additionals<'a>(
    requested: &[BookingAdditional],
    catalog: &'a [Additional],
) -> Result<Vec<(&'a Additional, i64)>, ApiError> {
    let mut quantities: BTreeMap<i64, i64> = BTreeMap::new();
    for taken in requested {
        let id = taken.additional.id;
        if taken.quantity < 0 {
            return Err(ApiError::invalid_field(
                ADDITIONALS,
                format!("the quantity of additional {id} must not be negative"),
            ));
        }
        if !catalog.iter().any(|additional| additional.id == id) {
            return Err(ApiError::new(ErrorCode::AdditionalNotFound)
                .with_field(ADDITIONALS)
                .with_detail(format!("no additional has Id {id}")));
        }
        let quantity = quantities.entry(id).or_default();
        *quantity = quantity
            .checked_add(taken.quantity)
            .ok_or_else(|| out_of_range(ADDITIONALS))?;
    }
    let mut seen = BTreeSet::new();
    let mut taken: Vec<(&Additional, i64)> = catalog
        .iter()
        .filter(|additional| seen.insert(additional.id))
        .filter_map(|additional| {
            let requested = quantities.get(&additional.id).copied().unwrap_or(0);
            let quantity = if additional.is_required {
                requested.max(1)
            } else {
                requested
            };
            (quantity > 0).then_some((additional, quantity))
        })
        .collect();
    taken.sort_by_key(|(additional, _)| (additional.order, additional.id));
    for &(additional, quantity) in &taken {
        let exceeded = |limit: &str| {
            ApiError::new(ErrorCode::AdditionalMaxQuantityExceeded)
                .with_field(ADDITIONALS)
                .with_detail(format!(
                    "additional {} ({}): {quantity} requested, {limit}",
                    additional.id, additional.name
                ))
        };
        let max = additional.max_quantity_per_booking;
        if max > 0 && quantity > max {
            return Err(exceeded(&format!("at most {max} per booking")));
        }
        let stock = additional.stock;
        if stock > 0 && quantity > stock {
            return Err(exceeded(&format!("{stock} in stock")));
        }
    }
    Ok(taken)
}

// ---------------------------------------------------------------------------------------------
// Price lines.

/// One price line before its id and rounding.
struct Line<'a> {
    kind: PriceItemType,
    type_id: i64,
    description: String,
    unit_price: Decimal,
    quantity: i64,
    payer: Payer,
    tariff: Option<&'a Tariff>,
    bracket: Option<&'a TariffBracket>,
}

/// Price lines being written: ids from 1, each total rounded to the currency's minor unit.
struct Lines {
    minor_units: u32,
    items: Vec<PriceItem>,
}

impl Lines {
    /// Appends `line` with `Price` = round(`UnitPrice` x `Quantity`) and returns that price;
    /// a rental line declares its bracket's range with that price. An overflow is blamed on
    /// `field`.
    fn push(&mut self, line: Line<'_>, field: &str) -> Result<Decimal, ApiError> {
        let exact = line
            .unit_price
            .checked_mul(Decimal::from(line.quantity))
            .ok_or_else(|| out_of_range(field))?;
        let price = round_money(exact, self.minor_units);
        self.items.push(PriceItem {
            id: self.next_id(),
            is_booking_price: true,
            description: Some(line.description),
            price,
            kind: line.kind.code(),
            type_id: line.type_id,
            unit_price: line.unit_price,
            quantity: line.quantity,
            payer: line.payer.code(),
            tariff_name: line.tariff.map(|tariff| tariff.name.clone()),
            applied_coverage_brackets: line.bracket.map(|bracket| {
                vec![AppliedCoverageBracket {
                    days_from: bracket.days_from,
                    days_to: bracket.days_to,
                    amount: price,
                }]
            }),
        });
        Ok(price)
    }

    fn next_id(&self) -> i64 {
        i64::try_from(self.items.len()).map_or(i64::MAX, |count| count + 1)
    }
}

/// The sums of `lines` per payer: (customer, agency).
fn payer_totals(lines: &[PriceItem]) -> Result<(Decimal, Decimal), ApiError> {
    let total = |payer: Payer| {
        checked_sum(
            lines
                .iter()
                .filter(|line| line.payer == payer.code())
                .map(|line| line.price),
        )
        .ok_or_else(|| out_of_range(PRICE))
    };
    Ok((total(Payer::Customer)?, total(Payer::Agency)?))
}

// ---------------------------------------------------------------------------------------------
// Quotes.

/// What a booking is priced from: the request's dates, places and additionals, the catalogue
/// entries they name, and the facts the surcharges need.
#[derive(Debug, Clone, Copy)]
pub struct QuoteRequest<'a> {
    /// `FromDate`: pick-up.
    pub from_date: DateTime<FixedOffset>,
    /// `ToDate`: return.
    pub to_date: DateTime<FixedOffset>,
    /// The tariff [`select_tariff`] chose; `None` when there is none.
    pub tariff: Option<&'a Tariff>,
    /// The request's `Additionals`: only `Additional.Id` and `Quantity` are read.
    pub requested_additionals: &'a [BookingAdditional],
    /// The tenant's additionals.
    pub catalog: &'a [Additional],
    /// `DeliveryPlace`, as the catalogue has it (its `Price` and `BranchOfficeId` are read).
    pub delivery_place: &'a Place,
    /// `ReturnPlace`, as the catalogue has it.
    pub return_place: &'a Place,
    /// Pick-up and return times on the offices' clocks ([`LocalTimes::at_offices`]).
    pub local_times: LocalTimes,
    /// Whether the driver is under 25: the request's `!IsCustomerOver25`, or
    /// [`is_young_driver`].
    pub young_driver: bool,
    /// Whether the booking comes through an agency (`Agency` set), which then pays the rental.
    pub has_agency: bool,
}

/// A priced booking: the price lines and every price field of a Booking.
#[derive(Debug, Clone, PartialEq)]
pub struct Quote {
    /// `PriceItems`, with `Id` 1 to n: rental lines by bracket, additionals in catalogue
    /// order, delivery and return places, surcharges and, after [`accept_sent_price`], the
    /// adjustment.
    pub lines: Vec<PriceItem>,
    /// `Additionals`: the requested ones with a quantity above zero and the required ones,
    /// full catalogue entries, in the order of their lines.
    pub additionals: Vec<BookingAdditional>,
    /// `Price`: the sum of the lines, `CustomerPrice` + `AgencyPrice`.
    pub price: Decimal,
    /// `CustomerPrice`: the sum of the lines the customer pays.
    pub customer_price: Decimal,
    /// `AgencyPrice`: the sum of the lines the agency pays.
    pub agency_price: Decimal,
    /// `TotalDays`: rental days ([`rental_days`]).
    pub total_days: i64,
    /// `TotalDaysString` ([`total_days_string`]).
    pub total_days_string: String,
    /// `AverageDayPrice`: the rental lines' sum over the rental days, rounded.
    pub average_day_price: Decimal,
    /// `DailyRate`: the daily amount of the tariff's first bracket, as the tariff has it.
    pub daily_rate: Decimal,
    /// `Currency`: the tariff's, else the tenant's `currency` setting; upper case.
    pub currency: String,
}

/// Prices a booking (contract.md "Pricing"; `docs/pricing.md` works an example through).
///
/// Lines, all with `IsBookingPrice` true and `Price` = round(`UnitPrice` x `Quantity`):
/// - one [`PriceItemType::Rental`] line per tariff bracket the rental days go through, with
///   that bracket's daily amount and days, and its range in `AppliedCoverageBrackets`; paid
///   by the agency when the booking has one;
/// - one [`PriceItemType::Additional`] line per additional taken: `Quantity` is the quantity
///   taken, times the rental days when `IsPriceByDay`;
/// - one [`PriceItemType::Place`] line each for the delivery and the return place, when its
///   price is not zero;
/// - the [`PriceItemType::Surcharge`] lines of the surcharges configured (not zero): one-way
///   when the places belong to different branch offices, out of hours once for a pick-up and
///   once for a return outside [`OfficeHours`], young driver per rental day.
///
/// Everything but the rental is paid by the customer.
///
/// Errors: those of [`rental_days`]; no tariff is [`ErrorCode::TariffNotFound`] (21), and
/// so is a tariff whose brackets leave a day uncovered; more days than the tariff covers,
/// [`ErrorCode::MaxDaysOfBookingReached`] (30); neither tariff nor settings naming a currency,
/// [`ErrorCode::MissingCurrencyCode`] (100); the additionals' errors 98, 31 and 32 (see
/// `docs/pricing.md`).
pub fn quote(request: &QuoteRequest<'_>, settings: &PricingSettings) -> Result<Quote, ApiError> {
    let days = rental_days(request.from_date, request.to_date, settings.grace_minutes)?;
    let tariff = request
        .tariff
        .ok_or_else(|| ApiError::new(ErrorCode::TariffNotFound))?;
    let currency = quote_currency(tariff, settings)?;
    let brackets = applied_brackets(tariff, days)?;
    let taken = taken_additionals(request.requested_additionals, request.catalog)?;
    let mut lines = Lines {
        minor_units: minor_units(&currency),
        items: Vec::new(),
    };

    let rental_payer = if request.has_agency {
        Payer::Agency
    } else {
        Payer::Customer
    };
    let mut rental = Vec::with_capacity(brackets.len());
    for &(bracket, last_day) in &brackets {
        let days_text = if bracket.days_from == last_day {
            format!("day {last_day}")
        } else {
            format!("days {} to {last_day}", bracket.days_from)
        };
        rental.push(lines.push(
            Line {
                kind: PriceItemType::Rental,
                type_id: tariff.id,
                description: format!("{}: {days_text}", tariff.name),
                unit_price: bracket.daily_amount,
                quantity: last_day - bracket.days_from + 1,
                payer: rental_payer,
                tariff: Some(tariff),
                bracket: Some(bracket),
            },
            TO_DATE,
        )?);
    }

    for &(additional, quantity) in &taken {
        let (units, description) = if additional.is_price_by_day {
            let units = quantity
                .checked_mul(days)
                .ok_or_else(|| out_of_range(ADDITIONALS))?;
            let description = format!(
                "{} x{quantity}, {}",
                additional.name,
                total_days_string(days)
            );
            (units, description)
        } else {
            (quantity, format!("{} x{quantity}", additional.name))
        };
        lines.push(
            Line {
                kind: PriceItemType::Additional,
                type_id: additional.id,
                description,
                unit_price: additional.price,
                quantity: units,
                payer: Payer::Customer,
                tariff: None,
                bracket: None,
            },
            ADDITIONALS,
        )?;
    }

    for (place, verb) in [
        (request.delivery_place, "Delivery at"),
        (request.return_place, "Return at"),
    ] {
        if !place.price.is_zero() {
            lines.push(
                Line {
                    kind: PriceItemType::Place,
                    type_id: place.id,
                    description: format!("{verb} {}", place.name),
                    unit_price: place.price,
                    quantity: 1,
                    payer: Payer::Customer,
                    tariff: None,
                    bracket: None,
                },
                PRICE,
            )?;
        }
    }

    for line in surcharge_lines(request, settings, days) {
        lines.push(line, TO_DATE)?;
    }

    let minor = lines.minor_units;
    let items = lines.items;
    let (customer_price, agency_price) = payer_totals(&items)?;
    let price = customer_price
        .checked_add(agency_price)
        .ok_or_else(|| out_of_range(PRICE))?;
    let rental_total = checked_sum(rental).ok_or_else(|| out_of_range(TO_DATE))?;
    let average_day_price = round_money(rental_total / Decimal::from(days), minor);
    let daily_rate = brackets
        .first()
        .map_or(Decimal::ZERO, |(bracket, _)| bracket.daily_amount);
    Ok(Quote {
        lines: items,
        additionals: taken
            .into_iter()
            .map(|(additional, quantity)| BookingAdditional {
                additional: additional.clone(),
                quantity,
            })
            .collect(),
        price,
        customer_price,
        agency_price,
        total_days: days,
        total_days_string: total_days_string(days),
        average_day_price,
        daily_rate,
        currency,
    })
}

/// The surcharge lines of a request: one-way, out of hours (pick-up, then return), young
/// driver. A surcharge whose amount is zero is off.
fn surcharge_lines<'a>(
    request: &QuoteRequest<'_>,
    settings: &PricingSettings,
    days: i64,
) -> Vec<Line<'a>> {
    let amounts = settings.surcharges;
    let surcharge = |kind: SurchargeKind, description: String, amount, quantity| Line {
        kind: PriceItemType::Surcharge,
        type_id: kind.code(),
        description,
        unit_price: amount,
        quantity,
        payer: Payer::Customer,
        tariff: None,
        bracket: None,
    };
    let mut lines = Vec::new();
    if !amounts.one_way.is_zero()
        && request.delivery_place.branch_office_id != request.return_place.branch_office_id
    {
        lines.push(surcharge(
            SurchargeKind::OneWay,
            "One-way surcharge".to_owned(),
            amounts.one_way,
            1,
        ));
    }
    if !amounts.out_of_hours.is_zero() {
        let times = request.local_times;
        for (time, what) in [(times.pickup, "pick-up"), (times.dropoff, "return")] {
            if !settings.office_hours.contains(time) {
                lines.push(surcharge(
                    SurchargeKind::OutOfHours,
                    format!(
                        "Out-of-hours surcharge: {what} at {} (office hours {})",
                        time.format("%H:%M"),
                        settings.office_hours
                    ),
                    amounts.out_of_hours,
                    1,
                ));
            }
        }
    }
    if !amounts.young_driver.is_zero() && request.young_driver {
        lines.push(surcharge(
            SurchargeKind::YoungDriver,
            format!("Young driver surcharge, {}", total_days_string(days)),
            amounts.young_driver,
            days,
        ));
    }
    lines
}

/// Checks a `Price` the client sent against `quote` (interface.md 4.4 and 8).
///
/// - `None`: the computed quote, unchanged.
/// - A price within 1% of the computed one, bounds included (|sent - computed| <= 1% of
///   computed), after rounding it to the currency's minor unit: the quote now has that
///   `Price`, and when it differs, one more line, [`PriceItemType::Adjustment`] paid by the
///   customer, with the difference (negative when the sent price is lower), so the lines
///   still sum to `Price` and `CustomerPrice` takes the difference.
///
/// Errors: further away, [`ErrorCode::PriceMismatch`] (4) naming `Price`.
pub fn accept_sent_price(mut quote: Quote, sent: Option<Decimal>) -> Result<Quote, ApiError> {
    let Some(sent) = sent else {
        return Ok(quote);
    };
    let minor = minor_units(&quote.currency);
    let sent = round_money(sent, minor);
    let computed = quote.price;
    let tolerance = computed.abs() * Decimal::new(PRICE_TOLERANCE_PERCENT, 2);
    let difference = sent
        .checked_sub(computed)
        .filter(|difference| difference.abs() <= tolerance)
        .ok_or_else(|| {
            ApiError::new(ErrorCode::PriceMismatch)
                .with_field(PRICE)
                .with_detail(format!(
                    "{sent} is more than {PRICE_TOLERANCE_PERCENT}% away from the computed \
                     {computed} {}",
                    quote.currency
                ))
        })?;
    if difference.is_zero() {
        return Ok(quote);
    }
    let mut lines = Lines {
        minor_units: minor,
        items: std::mem::take(&mut quote.lines),
    };
    lines.push(
        Line {
            kind: PriceItemType::Adjustment,
            type_id: 0,
            description: "Adjustment to the price sent".to_owned(),
            unit_price: difference,
            quantity: 1,
            payer: Payer::Customer,
            tariff: None,
            bracket: None,
        },
        PRICE,
    )?;
    quote.lines = lines.items;
    quote.customer_price += difference;
    quote.price = sent;
    Ok(quote)
}

// ---------------------------------------------------------------------------------------------
// AppliedCoverageBrackets in responses.

/// Removes `AppliedCoverageBrackets` from every line: for the simplified response, which never
/// carries it, and for a full response whose lines are not [`coverage_is_traceable`].
pub fn strip_coverage_brackets(lines: &mut [PriceItem]) {
    for line in lines {
        line.applied_coverage_brackets = None;
    }
}

/// Whether stored lines can still be traced back to their day ranges, so that a full response
/// may show `AppliedCoverageBrackets` (interface.md 4.4; otherwise strip it from every line).
///
/// True when no line carries the detail (there is nothing to trace). Otherwise all of:
/// - only rental lines carry it, and every rental line does, as exactly one range
///   (`1 <= DaysFrom <= DaysTo`) whose `Amount` is the line's `Price`;
/// - every line declaring a range has the same payer (several lines of one payer may declare
///   the same range, e.g. an extension; a range shared by two payers cannot be split back);
/// - the ranges declared do not overlap, and the lines of a range charge no more days than it
///   has.
pub fn coverage_is_traceable(lines: &[PriceItem]) -> bool {
    if lines
        .iter()
        .all(|line| line.applied_coverage_brackets.is_none())
    {
        return true;
    }
    // (DaysFrom, DaysTo) -> (payer, days charged).
    let mut ranges: BTreeMap<(i64, i64), (i64, i64)> = BTreeMap::new();
    for line in lines {
        let rental = line.kind == PriceItemType::Rental.code();
        let bracket = match (rental, line.applied_coverage_brackets.as_deref()) {
            (false, None) => continue,
            (true, Some([bracket])) => bracket,
            _ => return false,
        };
        if bracket.amount != line.price
            || bracket.days_from < 1
            || bracket.days_to < bracket.days_from
            || line.quantity < 0
        {
            return false;
        }
        let (payer, days) = ranges
            .entry((bracket.days_from, bracket.days_to))
            .or_insert((line.payer, 0));
        if *payer != line.payer {
            return false;
        }
        match days.checked_add(line.quantity) {
            Some(sum) => *days = sum,
            None => return false,
        }
    }
    let mut previous_end = 0;
    for (&(from, to), &(_, days)) in &ranges {
        if from <= previous_end || days > to - from + 1 {
            return false;
        }
        previous_end = to;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(value: &str) -> Decimal {
        value.parse().unwrap()
    }

    fn at(value: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(value).unwrap()
    }

    fn time(value: &str) -> NaiveTime {
        NaiveTime::parse_from_str(value, "%H:%M").unwrap()
    }

    /// 38.00 for days 1-3, 34.00 for days 4-7, 29.00 for days 8-30 (the demo's economy tariff).
    fn economy() -> Tariff {
        Tariff {
            id: 1,
            name: "Economy".to_owned(),
            category_id: 1,
            model_id: None,
            currency: "USD".to_owned(),
            brackets: vec![
                TariffBracket {
                    days_from: 1,
                    days_to: 3,
                    daily_amount: d("38.00"),
                },
                TariffBracket {
                    days_from: 4,
                    days_to: 7,
                    daily_amount: d("34.00"),
                },
                TariffBracket {
                    days_from: 8,
                    days_to: 30,
                    daily_amount: d("29.00"),
                },
            ],
        }
    }

    fn additional(id: i64, price: &str, by_day: bool, max: i64, stock: i64) -> Additional {
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
    fn catalog() -> Vec<Additional> {
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

    fn place(id: i64, office: i64, price: &str) -> Place {
        Place {
            id,
            price: d(price),
            name: format!("Place {id}"),
            branch_office_id: office,
            ..Place::default()
        }
    }

    fn take(id: i64, quantity: i64) -> BookingAdditional {
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
    struct Fixture {
        from: DateTime<FixedOffset>,
        to: DateTime<FixedOffset>,
        tariff: Option<Tariff>,
        requested: Vec<BookingAdditional>,
        catalog: Vec<Additional>,
        delivery: Place,
        ret: Place,
        times: LocalTimes,
        young_driver: bool,
        has_agency: bool,
        settings: PricingSettings,
    }

    impl Fixture {
        fn new() -> Self {
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

        fn days(mut self, days: i64) -> Self {
            self.to = self.from + TimeDelta::days(days);
            self
        }

        fn quote(&self) -> Result<Quote, ApiError> {
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

    fn of_kind(quote: &Quote, kind: PriceItemType) -> Vec<&PriceItem> {
        quote
            .lines
            .iter()
            .filter(|line| line.kind == kind.code())
            .collect()
    }

    /// (UnitPrice, Quantity, Price) of lines.
    fn amounts(lines: &[&PriceItem]) -> Vec<(Decimal, i64, Decimal)> {
        lines
            .iter()
            .map(|line| (line.unit_price, line.quantity, line.price))
            .collect()
    }

    /// The invariants of every quote: ids 1..n, payer sums, Price the sum of the lines.
    fn assert_consistent(quote: &Quote) {
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

    // --- Enumerations.

    #[test]
    fn line_types_payers_and_surcharge_kinds_have_fixed_codes() {
        assert_eq!(PriceItemType::Rental.code(), 1);
        assert_eq!(PriceItemType::Additional.code(), 2);
        assert_eq!(PriceItemType::Place.code(), 3);
        assert_eq!(PriceItemType::Surcharge.code(), 4);
        assert_eq!(PriceItemType::Adjustment.code(), 5);
        assert_eq!(Payer::Customer.code(), 1);
        assert_eq!(Payer::Agency.code(), 2);
        assert_eq!(SurchargeKind::OneWay.code(), 1);
        assert_eq!(SurchargeKind::OutOfHours.code(), 2);
        assert_eq!(SurchargeKind::YoungDriver.code(), 3);
    }

    // --- Rental days.

    #[test]
    fn three_days_and_0_59_is_3_days_with_the_default_grace() {
        let from = at("2026-03-01T10:00:00-03:00");
        let to = at("2026-03-04T10:59:00-03:00");
        assert_eq!(rental_days(from, to, DEFAULT_GRACE_MINUTES), Ok(3));
        // Seconds are dropped: 3 days 0:59:59 is still 3 days.
        let to = at("2026-03-04T10:59:59-03:00");
        assert_eq!(rental_days(from, to, DEFAULT_GRACE_MINUTES), Ok(3));
    }

    #[test]
    fn three_days_and_1_00_is_4_days_with_the_default_grace() {
        let from = at("2026-03-01T10:00:00-03:00");
        let to = at("2026-03-04T11:00:00-03:00");
        assert_eq!(rental_days(from, to, DEFAULT_GRACE_MINUTES), Ok(4));
    }

    #[test]
    fn exactly_3_days_is_3_days_and_grace_0_charges_any_minute() {
        let from = at("2026-03-01T10:00:00Z");
        assert_eq!(rental_days(from, at("2026-03-04T10:00:00Z"), 0), Ok(3));
        assert_eq!(rental_days(from, at("2026-03-04T10:01:00Z"), 0), Ok(4));
        assert_eq!(rental_days(from, at("2026-03-04T12:00:00Z"), 120), Ok(3));
    }

    #[test]
    fn two_hours_is_the_1_day_minimum() {
        let from = at("2026-03-01T10:00:00Z");
        assert_eq!(rental_days(from, at("2026-03-01T12:00:00Z"), 59), Ok(1));
        assert_eq!(rental_days(from, at("2026-03-01T10:01:00Z"), 59), Ok(1));
    }

    #[test]
    fn rental_days_compare_instants_across_offsets() {
        // 10:00 -03:00 is 13:00 UTC: to 13:30 UTC three days later is 3 days 0:30.
        let from = at("2026-03-01T10:00:00-03:00");
        assert_eq!(rental_days(from, at("2026-03-04T13:30:00Z"), 59), Ok(3));
    }

    #[test]
    fn to_date_not_after_from_date_is_error_13_naming_to_date() {
        let from = at("2026-03-01T10:00:00Z");
        for to in [from, at("2026-03-01T09:00:00Z")] {
            let error = rental_days(from, to, 59).unwrap_err();
            assert_eq!(error.code, ErrorCode::InvlaidDates);
            assert_eq!(error.code.code(), 13);
            assert_eq!(error.field.as_deref(), Some("ToDate"));
        }
        let mut fixture = Fixture::new();
        fixture.to = fixture.from;
        assert_eq!(fixture.quote().unwrap_err().code, ErrorCode::InvlaidDates);
    }

    #[test]
    fn total_days_string_is_1_day_or_n_days() {
        assert_eq!(total_days_string(1), "1 day");
        assert_eq!(total_days_string(3), "3 days");
        assert_eq!(total_days_string(30), "30 days");
    }

    // --- Tariffs and brackets.

    #[test]
    fn ten_days_over_1_3_4_7_8_30_are_3x38_plus_4x34_plus_3x29_eq_337() {
        let quote = Fixture::new().days(10).quote().unwrap();
        let rental = of_kind(&quote, PriceItemType::Rental);
        assert_eq!(
            amounts(&rental),
            vec![
                (d("38.00"), 3, d("114.00")),
                (d("34.00"), 4, d("136.00")),
                (d("29.00"), 3, d("87.00")),
            ]
        );
        let ranges: Vec<Vec<AppliedCoverageBracket>> = rental
            .iter()
            .map(|line| line.applied_coverage_brackets.clone().unwrap())
            .collect();
        let range = |days_from, days_to, amount| {
            vec![AppliedCoverageBracket {
                days_from,
                days_to,
                amount: d(amount),
            }]
        };
        assert_eq!(
            ranges,
            vec![
                range(1, 3, "114.00"),
                range(4, 7, "136.00"),
                range(8, 30, "87.00")
            ]
        );
        for line in &rental {
            assert_eq!(line.type_id, 1);
            assert_eq!(line.tariff_name.as_deref(), Some("Economy"));
            assert_eq!(line.payer, Payer::Customer.code());
        }
        assert_eq!(
            rental[2].description.as_deref(),
            Some("Economy: days 8 to 10")
        );
        // The required insurance, 12.00 x 10 days = 120.00, is the only other line.
        assert_eq!(quote.price, d("457.00"));
        assert_eq!(quote.total_days, 10);
        assert_eq!(quote.total_days_string, "10 days");
        // 337.00 / 10 = 33.70; the first bracket's 38.00.
        assert_eq!(quote.average_day_price, d("33.70"));
        assert_eq!(quote.daily_rate, d("38.00"));
        assert_eq!(quote.currency, "USD");
        assert_consistent(&quote);
    }

    #[test]
    fn two_days_use_the_first_bracket_only() {
        let quote = Fixture::new().days(2).quote().unwrap();
        let rental = of_kind(&quote, PriceItemType::Rental);
        assert_eq!(amounts(&rental), vec![(d("38.00"), 2, d("76.00"))]);
        assert_eq!(quote.average_day_price, d("38.00"));
    }

    #[test]
    fn seven_days_end_on_a_bracket_boundary_3x38_plus_4x34() {
        let quote = Fixture::new().days(7).quote().unwrap();
        let rental = of_kind(&quote, PriceItemType::Rental);
        assert_eq!(
            amounts(&rental),
            vec![(d("38.00"), 3, d("114.00")), (d("34.00"), 4, d("136.00"))]
        );
        // 250.00 / 7 = 35.714... -> 35.71.
        assert_eq!(quote.average_day_price, d("35.71"));
    }

    #[test]
    fn four_days_make_a_one_day_line_of_the_second_bracket() {
        let quote = Fixture::new().days(4).quote().unwrap();
        let rental = of_kind(&quote, PriceItemType::Rental);
        assert_eq!(rental[1].description.as_deref(), Some("Economy: day 4"));
        assert_eq!(amounts(&rental[1..]), vec![(d("34.00"), 1, d("34.00"))]);
    }

    #[test]
    fn thirty_days_are_covered_thirty_one_are_error_30() {
        let quote = Fixture::new().days(30).quote().unwrap();
        // 3 x 38 + 4 x 34 + 23 x 29 = 114 + 136 + 667 = 917.
        let rental: Decimal = of_kind(&quote, PriceItemType::Rental)
            .iter()
            .map(|line| line.price)
            .sum();
        assert_eq!(rental, d("917.00"));
        let error = Fixture::new().days(31).quote().unwrap_err();
        assert_eq!(error.code, ErrorCode::MaxDaysOfBookingReached);
        assert_eq!(error.code.code(), 30);
        assert_eq!(error.field.as_deref(), Some("ToDate"));
    }

    #[test]
    fn no_tariff_is_error_21() {
        let mut fixture = Fixture::new();
        fixture.tariff = None;
        let error = fixture.quote().unwrap_err();
        assert_eq!(error.code, ErrorCode::TariffNotFound);
        assert_eq!(error.code.code(), 21);
    }

    #[test]
    fn a_tariff_that_leaves_a_day_uncovered_is_error_21() {
        let cases: [&[(i64, i64)]; 4] = [&[], &[(2, 30)], &[(1, 3), (5, 30)], &[(1, 3), (3, 30)]];
        for ranges in cases {
            let mut fixture = Fixture::new();
            fixture.tariff = Some(Tariff {
                brackets: ranges
                    .iter()
                    .map(|&(days_from, days_to)| TariffBracket {
                        days_from,
                        days_to,
                        daily_amount: d("10.00"),
                    })
                    .collect(),
                ..economy()
            });
            let error = fixture.quote().unwrap_err();
            assert_eq!(error.code, ErrorCode::TariffNotFound, "{ranges:?}");
        }
    }

    #[test]
    fn brackets_stored_out_of_order_price_the_same() {
        let mut fixture = Fixture::new().days(10);
        let expected = fixture.quote().unwrap();
        if let Some(tariff) = fixture.tariff.as_mut() {
            tariff.brackets.reverse();
        }
        assert_eq!(fixture.quote().unwrap(), expected);
    }

    #[test]
    fn a_model_tariff_overrides_its_category_tariff() {
        let category = economy();
        let model = Tariff {
            id: 5,
            name: "Model 8".to_owned(),
            model_id: Some(8),
            brackets: vec![TariffBracket {
                days_from: 1,
                days_to: 30,
                daily_amount: d("110.00"),
            }],
            ..economy()
        };
        let tariffs = vec![category.clone(), model.clone()];
        assert_eq!(select_tariff(&tariffs, 1, Some(8)), Some(&model));
        assert_eq!(select_tariff(&tariffs, 1, Some(7)), Some(&category));
        assert_eq!(select_tariff(&tariffs, 1, None), Some(&category));
        assert_eq!(select_tariff(&tariffs, 2, Some(7)), None);

        // 3 days of the model: 3 x 110.00 = 330.00 rather than 3 x 38.00.
        let mut fixture = Fixture::new();
        fixture.tariff = select_tariff(&tariffs, 1, Some(8)).cloned();
        let quote = fixture.quote().unwrap();
        let rental = of_kind(&quote, PriceItemType::Rental);
        assert_eq!(amounts(&rental), vec![(d("110.00"), 3, d("330.00"))]);
        assert_eq!(rental[0].type_id, 5);
        assert_eq!(quote.daily_rate, d("110.00"));
    }

    #[test]
    fn the_lowest_tariff_id_wins_among_equals() {
        let tariffs = vec![Tariff { id: 9, ..economy() }, Tariff { id: 4, ..economy() }];
        assert_eq!(select_tariff(&tariffs, 1, None).map(|t| t.id), Some(4));
    }

    // --- Additionals.

    #[test]
    fn per_day_additionals_are_price_x_quantity_x_days() {
        // GPS 5.00 x 1 x 3 days = 15.00; child seats 4.50 x 2 x 3 days = 27.00.
        let mut fixture = Fixture::new();
        fixture.requested = vec![take(4, 2), take(3, 1)];
        let quote = fixture.quote().unwrap();
        let lines = of_kind(&quote, PriceItemType::Additional);
        assert_eq!(
            amounts(&lines),
            vec![
                (d("12.00"), 3, d("36.00")),
                (d("5.00"), 3, d("15.00")),
                (d("4.50"), 6, d("27.00")),
            ]
        );
        let ids: Vec<i64> = lines.iter().map(|line| line.type_id).collect();
        assert_eq!(ids, vec![1, 3, 4], "catalogue order");
        assert_eq!(
            lines[2].description.as_deref(),
            Some("Additional 4 x2, 3 days")
        );
        let taken: Vec<(i64, i64)> = quote
            .additionals
            .iter()
            .map(|taken| (taken.additional.id, taken.quantity))
            .collect();
        assert_eq!(taken, vec![(1, 1), (3, 1), (4, 2)]);
        assert_eq!(quote.additionals[2].additional.price, d("4.50"));
        assert_consistent(&quote);
    }

    #[test]
    fn per_unit_additionals_are_price_x_quantity() {
        // Additional driver 20.00 x 2 = 40.00, whatever the days.
        let mut fixture = Fixture::new().days(10);
        fixture.requested = vec![take(5, 2)];
        let quote = fixture.quote().unwrap();
        let lines = of_kind(&quote, PriceItemType::Additional);
        assert_eq!(amounts(&lines[1..]), vec![(d("20.00"), 2, d("40.00"))]);
        assert_eq!(lines[1].description.as_deref(), Some("Additional 5 x2"));
    }

    #[test]
    fn a_required_additional_is_re_added_once_when_omitted_or_sent_with_0() {
        for requested in [vec![], vec![take(1, 0)]] {
            let mut fixture = Fixture::new();
            fixture.requested = requested;
            let quote = fixture.quote().unwrap();
            // Basic insurance 12.00 x 1 x 3 days = 36.00.
            let lines = of_kind(&quote, PriceItemType::Additional);
            assert_eq!(amounts(&lines), vec![(d("12.00"), 3, d("36.00"))]);
            assert_eq!(quote.additionals.len(), 1);
            assert_eq!(quote.additionals[0].quantity, 1);
            assert!(quote.additionals[0].additional.is_required);
        }
    }

    #[test]
    fn optional_additionals_with_quantity_0_are_not_taken() {
        let mut fixture = Fixture::new();
        fixture.requested = vec![take(3, 0)];
        let quote = fixture.quote().unwrap();
        assert_eq!(of_kind(&quote, PriceItemType::Additional).len(), 1);
    }

    #[test]
    fn the_same_additional_twice_adds_up_its_quantities() {
        let mut fixture = Fixture::new();
        fixture.requested = vec![take(5, 1), take(5, 1)];
        let quote = fixture.quote().unwrap();
        let lines = of_kind(&quote, PriceItemType::Additional);
        assert_eq!(amounts(&lines[1..]), vec![(d("20.00"), 2, d("40.00"))]);
        fixture.requested = vec![take(5, 2), take(5, 1)];
        let error = fixture.quote().unwrap_err();
        assert_eq!(error.code, ErrorCode::AdditionalMaxQuantityExceeded);
    }

    #[test]
    fn above_max_quantity_per_booking_is_error_32() {
        // Child seats: at most 2 per booking.
        let mut fixture = Fixture::new();
        fixture.requested = vec![take(4, 3)];
        let error = fixture.quote().unwrap_err();
        assert_eq!(error.code, ErrorCode::AdditionalMaxQuantityExceeded);
        assert_eq!(error.code.code(), 32);
        assert_eq!(error.field.as_deref(), Some("Additionals"));
        fixture.requested = vec![take(4, 2)];
        assert!(fixture.quote().is_ok());
    }

    #[test]
    fn above_a_limited_stock_is_error_32_and_stock_0_is_unlimited() {
        // Snow chains: no per-booking limit, 2 in stock.
        let mut fixture = Fixture::new();
        fixture.requested = vec![take(6, 3)];
        let error = fixture.quote().unwrap_err();
        assert_eq!(error.code, ErrorCode::AdditionalMaxQuantityExceeded);
        fixture.requested = vec![take(6, 2)];
        assert!(fixture.quote().is_ok());
        // Additional drivers: stock 0, so only the per-booking maximum of 2 limits them.
        fixture.requested = vec![take(5, 2)];
        assert!(fixture.quote().is_ok());
    }

    #[test]
    fn an_unknown_additional_is_error_31_and_a_negative_quantity_98() {
        let mut fixture = Fixture::new();
        fixture.requested = vec![take(99, 1)];
        let error = fixture.quote().unwrap_err();
        assert_eq!(error.code, ErrorCode::AdditionalNotFound);
        assert_eq!(error.code.code(), 31);
        fixture.requested = vec![take(3, -1)];
        let error = fixture.quote().unwrap_err();
        assert_eq!(error.code, ErrorCode::ModelNotValid);
        assert_eq!(error.field.as_deref(), Some("Additionals"));
    }

    // --- Places.

    #[test]
    fn delivery_and_return_places_with_a_price_are_one_line_each() {
        // Delivery at place 2 (25.00), return at place 1 (15.00), same office.
        let mut fixture = Fixture::new();
        fixture.delivery = place(2, 1, "25.00");
        fixture.ret = place(1, 1, "15.00");
        let quote = fixture.quote().unwrap();
        let lines = of_kind(&quote, PriceItemType::Place);
        assert_eq!(
            amounts(&lines),
            vec![(d("25.00"), 1, d("25.00")), (d("15.00"), 1, d("15.00"))]
        );
        assert_eq!(lines[0].type_id, 2);
        assert_eq!(lines[1].type_id, 1);
        assert_eq!(lines[0].description.as_deref(), Some("Delivery at Place 2"));
        assert_eq!(lines[1].description.as_deref(), Some("Return at Place 1"));
        // 3 x 38.00 + 36.00 insurance + 40.00 places = 190.00.
        assert_eq!(quote.price, d("190.00"));
    }

    #[test]
    fn free_places_add_no_line() {
        let quote = Fixture::new().quote().unwrap();
        assert!(of_kind(&quote, PriceItemType::Place).is_empty());
        assert!(of_kind(&quote, PriceItemType::Surcharge).is_empty());
    }

    // --- Surcharges.

    fn with_surcharges() -> Fixture {
        let mut fixture = Fixture::new();
        fixture.settings.surcharges = Surcharges {
            one_way: d("40.00"),
            out_of_hours: d("15.00"),
            young_driver: d("6.00"),
        };
        fixture
    }

    #[test]
    fn one_way_is_charged_once_when_the_return_office_differs() {
        let mut fixture = with_surcharges();
        fixture.ret = place(4, 2, "0");
        let quote = fixture.quote().unwrap();
        let lines = of_kind(&quote, PriceItemType::Surcharge);
        assert_eq!(amounts(&lines), vec![(d("40.00"), 1, d("40.00"))]);
        assert_eq!(lines[0].type_id, SurchargeKind::OneWay.code());
        // Another place of the same office is not one-way.
        fixture.ret = place(1, 1, "0");
        let quote = fixture.quote().unwrap();
        assert!(of_kind(&quote, PriceItemType::Surcharge).is_empty());
    }

    #[test]
    fn out_of_hours_is_one_line_per_pick_up_or_return_outside_08_to_20() {
        let mut fixture = with_surcharges();
        fixture.times = LocalTimes {
            pickup: time("07:30"),
            dropoff: time("21:00"),
        };
        let quote = fixture.quote().unwrap();
        let lines = of_kind(&quote, PriceItemType::Surcharge);
        assert_eq!(
            amounts(&lines),
            vec![(d("15.00"), 1, d("15.00")), (d("15.00"), 1, d("15.00"))]
        );
        assert!(
            lines
                .iter()
                .all(|line| line.type_id == SurchargeKind::OutOfHours.code())
        );
        assert_eq!(
            lines[0].description.as_deref(),
            Some("Out-of-hours surcharge: pick-up at 07:30 (office hours 08:00-20:00)")
        );
        // Only the return late: one line.
        fixture.times.pickup = time("09:00");
        let quote = fixture.quote().unwrap();
        assert_eq!(of_kind(&quote, PriceItemType::Surcharge).len(), 1);
    }

    #[test]
    fn opening_and_closing_minutes_are_within_office_hours() {
        let mut fixture = with_surcharges();
        fixture.times = LocalTimes {
            pickup: time("08:00"),
            dropoff: time("20:00"),
        };
        let quote = fixture.quote().unwrap();
        assert!(of_kind(&quote, PriceItemType::Surcharge).is_empty());
        let hours = OfficeHours::default();
        assert!(!hours.contains(NaiveTime::from_hms_opt(20, 0, 1).unwrap()));
        assert!(!hours.contains(NaiveTime::from_hms_opt(7, 59, 59).unwrap()));
    }

    #[test]
    fn young_driver_is_charged_per_day_6x3_eq_18() {
        let mut fixture = with_surcharges();
        fixture.young_driver = true;
        let quote = fixture.quote().unwrap();
        let lines = of_kind(&quote, PriceItemType::Surcharge);
        assert_eq!(amounts(&lines), vec![(d("6.00"), 3, d("18.00"))]);
        assert_eq!(lines[0].type_id, SurchargeKind::YoungDriver.code());
        assert_eq!(lines[0].payer, Payer::Customer.code());
    }

    #[test]
    fn surcharges_set_to_zero_are_off() {
        let mut fixture = Fixture::new();
        fixture.ret = place(4, 2, "0");
        fixture.young_driver = true;
        fixture.times.pickup = time("06:00");
        let quote = fixture.quote().unwrap();
        assert!(of_kind(&quote, PriceItemType::Surcharge).is_empty());
    }

    // --- Payers.

    #[test]
    fn with_an_agency_the_agency_pays_the_rental_and_the_customer_the_rest() {
        // 3 x 38.00 = 114.00 for the agency; insurance 36.00 + delivery 25.00 + young driver
        // 18.00 = 79.00 for the customer; 193.00 in all.
        let mut fixture = with_surcharges();
        fixture.has_agency = true;
        fixture.young_driver = true;
        fixture.delivery = place(2, 1, "25.00");
        let quote = fixture.quote().unwrap();
        for line in &quote.lines {
            let expected = if line.kind == PriceItemType::Rental.code() {
                Payer::Agency
            } else {
                Payer::Customer
            };
            assert_eq!(line.payer, expected.code(), "{line:?}");
        }
        assert_eq!(quote.agency_price, d("114.00"));
        assert_eq!(quote.customer_price, d("79.00"));
        assert_eq!(quote.price, d("193.00"));
        assert_consistent(&quote);

        fixture.has_agency = false;
        let quote = fixture.quote().unwrap();
        assert_eq!(quote.agency_price, d("0"));
        assert_eq!(quote.customer_price, d("193.00"));
    }

    // --- Money.

    #[test]
    fn rounding_is_half_away_from_zero_to_the_minor_unit() {
        assert_eq!(round_money(d("10.005"), 2), d("10.01"));
        assert_eq!(round_money(d("10.004999"), 2), d("10.00"));
        assert_eq!(round_money(d("-10.005"), 2), d("-10.01"));
        assert_eq!(round_money(d("2.675"), 2), d("2.68"));
        // Bankers' rounding would give 10.00 and 2.67 here.
        assert_eq!(round_money(d("10.005"), 2).to_string(), "10.01");
        assert_eq!(round_money(d("10"), 2).to_string(), "10.00");
        assert_eq!(round_money(d("1234.5"), 0).to_string(), "1235");
        assert_eq!(round_money(d("1234.49"), 0).to_string(), "1234");
        assert_eq!(round_money(d("1.0005"), 3).to_string(), "1.001");
    }

    #[test]
    fn minor_units_are_0_for_jpy_clp_pyg_3_for_kwd_and_2_otherwise() {
        for code in ["JPY", "CLP", "PYG", "jpy", " KRW "] {
            assert_eq!(minor_units(code), 0, "{code}");
        }
        assert_eq!(minor_units("KWD"), 3);
        for code in ["USD", "ARS", "BRL", "EUR", "XYZ", ""] {
            assert_eq!(minor_units(code), 2, "{code}");
        }
    }

    #[test]
    fn each_line_is_rounded_and_price_is_the_sum_of_rounded_lines() {
        // A daily amount of 10.005: 1 day = 10.005 -> 10.01. Two one-day lines (brackets 1-1
        // and 2-2) are 10.01 + 10.01 = 20.02, not round(20.01) = 20.01.
        let mut fixture = Fixture::new().days(2);
        fixture.catalog.clear();
        fixture.tariff = Some(Tariff {
            brackets: vec![
                TariffBracket {
                    days_from: 1,
                    days_to: 1,
                    daily_amount: d("10.005"),
                },
                TariffBracket {
                    days_from: 2,
                    days_to: 30,
                    daily_amount: d("10.005"),
                },
            ],
            ..economy()
        });
        let quote = fixture.quote().unwrap();
        let rental = of_kind(&quote, PriceItemType::Rental);
        assert_eq!(
            amounts(&rental),
            vec![(d("10.005"), 1, d("10.01")), (d("10.005"), 1, d("10.01"))]
        );
        assert_eq!(quote.price, d("20.02"));
        assert_eq!(quote.daily_rate, d("10.005"), "as the tariff has it");
        assert_consistent(&quote);
    }

    #[test]
    fn a_zero_decimal_currency_rounds_lines_to_whole_units() {
        // CLP: 3 days x 25,000.50 = 75,001.50 -> 75,002; insurance 1,200.5 x 3 = 3,601.5 ->
        // 3,602; average 75,002 / 3 = 25,000.67 -> 25,001.
        let mut fixture = Fixture::new();
        fixture.tariff = Some(Tariff {
            currency: "clp".to_owned(),
            brackets: vec![TariffBracket {
                days_from: 1,
                days_to: 30,
                daily_amount: d("25000.50"),
            }],
            ..economy()
        });
        fixture.catalog[0].price = d("1200.5");
        let quote = fixture.quote().unwrap();
        assert_eq!(quote.currency, "CLP");
        let prices: Vec<String> = quote.lines.iter().map(|l| l.price.to_string()).collect();
        assert_eq!(prices, vec!["75002", "3602"]);
        assert_eq!(quote.price.to_string(), "78604");
        assert_eq!(quote.average_day_price.to_string(), "25001");
        assert_consistent(&quote);
    }

    #[test]
    fn the_currency_falls_back_to_the_setting_and_is_error_100_when_none() {
        let mut fixture = Fixture::new();
        if let Some(tariff) = fixture.tariff.as_mut() {
            tariff.currency = " ".to_owned();
        }
        fixture.settings.currency = Some("ARS".to_owned());
        assert_eq!(fixture.quote().unwrap().currency, "ARS");
        fixture.settings.currency = None;
        let error = fixture.quote().unwrap_err();
        assert_eq!(error.code, ErrorCode::MissingCurrencyCode);
        assert_eq!(error.code.code(), 100);
    }

    // --- Every kind of line together.

    #[test]
    fn lines_sum_to_price_with_every_kind_of_line() {
        let mut fixture = with_surcharges().days(9);
        fixture.to += TimeDelta::minutes(75);
        fixture.requested = vec![take(3, 1), take(4, 2), take(5, 1), take(6, 1)];
        fixture.delivery = place(2, 1, "25.00");
        fixture.ret = place(4, 2, "12.00");
        fixture.times = LocalTimes {
            pickup: time("07:00"),
            dropoff: time("22:00"),
        };
        fixture.young_driver = true;
        fixture.has_agency = true;
        let quote = fixture.quote().unwrap();
        assert_eq!(quote.total_days, 10, "9 days 1:15 is 10");
        let kinds: Vec<i64> = quote.lines.iter().map(|line| line.kind).collect();
        assert_eq!(kinds, vec![1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 4, 4, 4, 4]);
        assert_consistent(&quote);
        let accepted = accept_sent_price(quote.clone(), Some(quote.price - d("1.00"))).unwrap();
        assert_consistent(&accepted);
    }

    // --- Sent price.

    /// A quote of exactly 100.00: one rental line.
    fn hundred() -> Quote {
        let mut fixture = Fixture::new().days(1);
        fixture.catalog.clear();
        fixture.tariff = Some(Tariff {
            brackets: vec![TariffBracket {
                days_from: 1,
                days_to: 30,
                daily_amount: d("100.00"),
            }],
            ..economy()
        });
        let quote = fixture.quote().unwrap();
        assert_eq!(quote.price, d("100.00"));
        quote
    }

    #[test]
    fn no_sent_price_keeps_the_computed_quote() {
        assert_eq!(accept_sent_price(hundred(), None), Ok(hundred()));
    }

    #[test]
    fn the_computed_price_sent_adds_no_line() {
        assert_eq!(accept_sent_price(hundred(), Some(d("100"))), Ok(hundred()));
    }

    #[test]
    fn sent_101_00_for_100_00_is_exactly_1_percent_and_accepted_with_plus_1_00() {
        let quote = accept_sent_price(hundred(), Some(d("101.00"))).unwrap();
        assert_eq!(quote.price, d("101.00"));
        assert_eq!(quote.customer_price, d("101.00"));
        let adjustment = quote.lines.last().unwrap();
        assert_eq!(adjustment.id, 2);
        assert_eq!(adjustment.kind, PriceItemType::Adjustment.code());
        assert_eq!(adjustment.type_id, 0);
        assert_eq!(adjustment.payer, Payer::Customer.code());
        assert_eq!(
            (adjustment.unit_price, adjustment.quantity, adjustment.price),
            (d("1.00"), 1, d("1.00"))
        );
        assert_eq!(adjustment.applied_coverage_brackets, None);
        assert_consistent(&quote);
    }

    #[test]
    fn sent_99_00_for_100_00_is_accepted_with_minus_1_00() {
        let quote = accept_sent_price(hundred(), Some(d("99.00"))).unwrap();
        assert_eq!(quote.price, d("99.00"));
        assert_eq!(quote.lines.last().unwrap().price, d("-1.00"));
        assert_consistent(&quote);
    }

    #[test]
    fn sent_101_01_or_98_99_for_100_00_is_1_01_percent_and_error_4() {
        for sent in ["101.01", "98.99", "0", "-100.00"] {
            let error = accept_sent_price(hundred(), Some(d(sent))).unwrap_err();
            assert_eq!(error.code, ErrorCode::PriceMismatch, "{sent}");
            assert_eq!(error.code.code(), 4);
            assert_eq!(error.field.as_deref(), Some("Price"));
        }
    }

    #[test]
    fn a_sent_price_is_rounded_to_the_minor_unit_first() {
        // 101.004 -> 101.00: accepted; 101.005 -> 101.01: rejected.
        let quote = accept_sent_price(hundred(), Some(d("101.004"))).unwrap();
        assert_eq!(quote.price.to_string(), "101.00");
        assert!(accept_sent_price(hundred(), Some(d("101.005"))).is_err());
    }

    #[test]
    fn tolerance_of_457_00_is_4_57() {
        // 10 days of economy (337.00) plus insurance (120.00) = 457.00; 1% = 4.57.
        let quote = Fixture::new().days(10).quote().unwrap();
        let accepted = accept_sent_price(quote.clone(), Some(d("452.43"))).unwrap();
        assert_eq!(accepted.lines.last().unwrap().price, d("-4.57"));
        assert_eq!(accepted.customer_price, d("452.43"));
        assert!(accept_sent_price(quote.clone(), Some(d("452.42"))).is_err());
        assert!(accept_sent_price(quote.clone(), Some(d("461.57"))).is_ok());
        assert!(accept_sent_price(quote, Some(d("461.58"))).is_err());
    }

    #[test]
    fn a_zero_computed_price_accepts_only_zero() {
        let mut quote = hundred();
        quote.lines.clear();
        quote.price = Decimal::ZERO;
        quote.customer_price = Decimal::ZERO;
        assert!(accept_sent_price(quote.clone(), Some(d("0.00"))).is_ok());
        assert!(accept_sent_price(quote, Some(d("0.01"))).is_err());
    }

    // --- AppliedCoverageBrackets.

    #[test]
    fn strip_removes_every_coverage_bracket() {
        let mut quote = Fixture::new().days(10).quote().unwrap();
        strip_coverage_brackets(&mut quote.lines);
        assert!(
            quote
                .lines
                .iter()
                .all(|line| line.applied_coverage_brackets.is_none())
        );
    }

    #[test]
    fn fresh_quotes_are_traceable_with_or_without_agency() {
        let mut fixture = with_surcharges().days(10);
        fixture.young_driver = true;
        assert!(coverage_is_traceable(&fixture.quote().unwrap().lines));
        fixture.has_agency = true;
        assert!(coverage_is_traceable(&fixture.quote().unwrap().lines));
        let quote = fixture.quote().unwrap();
        let sent = quote.price + d("1.00");
        let adjusted = accept_sent_price(quote, Some(sent)).unwrap();
        assert!(coverage_is_traceable(&adjusted.lines));
    }

    #[test]
    fn lines_without_any_detail_are_traceable() {
        let mut lines = Fixture::new().days(10).quote().unwrap().lines;
        strip_coverage_brackets(&mut lines);
        assert!(coverage_is_traceable(&lines));
        assert!(coverage_is_traceable(&[]));
    }

    /// A rental line of `quantity` days at 29.00 in range 8-30, paid by `payer`.
    fn extension(id: i64, quantity: i64, payer: Payer) -> PriceItem {
        let price = Decimal::from(quantity) * d("29.00");
        PriceItem {
            id,
            kind: PriceItemType::Rental.code(),
            quantity,
            unit_price: d("29.00"),
            price,
            payer: payer.code(),
            applied_coverage_brackets: Some(vec![AppliedCoverageBracket {
                days_from: 8,
                days_to: 30,
                amount: price,
            }]),
            ..PriceItem::default()
        }
    }

    #[test]
    fn an_extension_by_the_same_payer_in_the_same_range_stays_traceable() {
        // 10 days (days 8-10 in 8-30), extended by 5 days paid by the customer too.
        let mut lines = Fixture::new().days(10).quote().unwrap().lines;
        lines.push(extension(5, 5, Payer::Customer));
        assert!(coverage_is_traceable(&lines));
    }

    #[test]
    fn an_extension_by_another_payer_in_the_same_range_is_not_traceable() {
        let mut fixture = Fixture::new().days(10);
        fixture.has_agency = true;
        let mut lines = fixture.quote().unwrap().lines;
        lines.push(extension(5, 5, Payer::Customer));
        assert!(!coverage_is_traceable(&lines));
    }

    #[test]
    fn inconsistent_details_are_not_traceable() {
        let base = Fixture::new().days(10).quote().unwrap().lines;
        // The amount is not the line's price.
        let mut lines = base.clone();
        lines[0].price = d("100.00");
        assert!(!coverage_is_traceable(&lines));
        // One rental line lost its detail.
        let mut lines = base.clone();
        lines[1].applied_coverage_brackets = None;
        assert!(!coverage_is_traceable(&lines));
        // Two ranges on one line.
        let mut lines = base.clone();
        if let Some(ranges) = lines[0].applied_coverage_brackets.as_mut() {
            ranges.push(ranges[0].clone());
        }
        assert!(!coverage_is_traceable(&lines));
        // A line other than rental carries a range.
        let mut lines = base.clone();
        lines[3].applied_coverage_brackets = lines[0].applied_coverage_brackets.clone();
        assert!(!coverage_is_traceable(&lines));
        // Overlapping ranges: 1-3 and 3-7.
        let mut lines = base.clone();
        if let Some(ranges) = lines[1].applied_coverage_brackets.as_mut() {
            ranges[0].days_from = 3;
        }
        assert!(!coverage_is_traceable(&lines));
        // More days charged in 8-30 (3 + 21) than it has (23).
        let mut lines = base;
        lines.push(extension(5, 21, Payer::Customer));
        assert!(!coverage_is_traceable(&lines));
    }

    // --- Settings.

    fn settings_from(pairs: &[(&str, &str)]) -> Result<PricingSettings, InvalidSetting> {
        PricingSettings::from_lookup(|key| {
            pairs
                .iter()
                .find(|(name, _)| *name == key)
                .map(|(_, value)| (*value).to_owned())
        })
    }

    #[test]
    fn no_settings_are_the_defaults() {
        let settings = settings_from(&[]).unwrap();
        assert_eq!(settings, PricingSettings::default());
        assert_eq!(settings.grace_minutes, 59);
        assert_eq!(settings.office_hours.to_string(), "08:00-20:00");
        assert_eq!(settings.surcharges, Surcharges::default());
        assert_eq!(settings.currency, None);
        // Blank values are not set.
        assert_eq!(
            settings_from(&[("grace_minutes", " "), ("surcharge.one_way", "")]).unwrap(),
            settings
        );
    }

    #[test]
    fn every_setting_is_read() {
        let settings = settings_from(&[
            ("grace_minutes", "30"),
            ("currency", "ars"),
            ("office_hours", "09:00 - 18:30"),
            ("surcharge.one_way", "40"),
            ("surcharge.out_of_hours", "15.50"),
            ("surcharge.young_driver", "6.00"),
        ])
        .unwrap();
        assert_eq!(
            settings,
            PricingSettings {
                grace_minutes: 30,
                currency: Some("ARS".to_owned()),
                office_hours: OfficeHours::new(time("09:00"), time("18:30")).unwrap(),
                surcharges: Surcharges {
                    one_way: d("40"),
                    out_of_hours: d("15.50"),
                    young_driver: d("6.00"),
                },
            }
        );
    }

    #[test]
    fn invalid_settings_name_the_setting_and_are_error_105() {
        for (key, value) in [
            ("grace_minutes", "-1"),
            ("grace_minutes", "1440"),
            ("grace_minutes", "an hour"),
            ("currency", "dollars"),
            ("office_hours", "20:00-08:00"),
            ("office_hours", "08:00"),
            ("office_hours", "8am-8pm"),
            ("surcharge.one_way", "-5"),
            ("surcharge.out_of_hours", "free"),
            ("surcharge.young_driver", "6,00"),
        ] {
            let error = settings_from(&[(key, value)]).unwrap_err();
            assert_eq!(error.key, key, "{value}");
            let error = ApiError::from(error);
            assert_eq!(error.code, ErrorCode::SettingNotFound);
            assert_eq!(error.code.code(), 105);
            assert_eq!(error.field.as_deref(), Some(key));
        }
        assert!(settings_from(&[("grace_minutes", "1439")]).is_ok());
        assert!(settings_from(&[("grace_minutes", "0")]).is_ok());
    }

    #[test]
    fn grace_from_settings_applies_to_rental_days() {
        let settings = settings_from(&[("grace_minutes", "120")]).unwrap();
        let mut fixture = Fixture::new();
        fixture.to += TimeDelta::minutes(90);
        assert_eq!(fixture.quote().unwrap().total_days, 4, "default grace 59");
        fixture.settings = settings;
        assert_eq!(fixture.quote().unwrap().total_days, 3, "grace 120");
    }

    // --- Helpers from time zones and dates.

    #[test]
    fn local_times_are_read_on_each_office_clock() {
        // 10:30Z is 07:30 in Buenos Aires and 11:30 in Madrid (CET, winter).
        let from = at("2026-03-02T10:30:00Z");
        let to = at("2026-03-05T19:00:00-03:00");
        let times = LocalTimes::at_offices(
            from,
            to,
            chrono_tz::America::Argentina::Buenos_Aires,
            chrono_tz::Europe::Madrid,
        );
        assert_eq!(times.pickup, time("07:30"));
        // 19:00 -03:00 is 22:00Z, 23:00 in Madrid.
        assert_eq!(times.dropoff, time("23:00"));
        assert!(!OfficeHours::default().contains(times.pickup));
    }

    #[test]
    fn office_zone_falls_back_to_the_tenant_zone() {
        let mut office = BranchOffice {
            time_zone: Some("America/Argentina/Cordoba".to_owned()),
            ..BranchOffice::default()
        };
        assert_eq!(
            office_zone(&office, Tz::UTC),
            chrono_tz::America::Argentina::Cordoba
        );
        office.time_zone = Some("Mars/Olympus".to_owned());
        assert_eq!(office_zone(&office, Tz::Europe__Madrid), Tz::Europe__Madrid);
        office.time_zone = None;
        assert_eq!(office_zone(&office, Tz::UTC), Tz::UTC);
    }

    #[test]
    fn a_driver_is_young_until_the_25th_birthday_on_the_pick_up_day() {
        let zone = chrono_tz::America::Argentina::Buenos_Aires;
        let birth = NaiveDate::from_ymd_opt(2001, 3, 10).unwrap();
        // 25 on 2026-03-10 in Buenos Aires.
        assert!(is_young_driver(
            birth,
            at("2026-03-09T23:59:00-03:00"),
            zone
        ));
        assert!(!is_young_driver(
            birth,
            at("2026-03-10T00:00:00-03:00"),
            zone
        ));
        // 02:00Z on the 10th is still the 9th in Buenos Aires.
        assert!(is_young_driver(birth, at("2026-03-10T02:00:00Z"), zone));
        assert!(!is_young_driver(birth, at("2040-01-01T00:00:00Z"), zone));
    }

    #[test]
    fn office_hours_parse_and_print() {
        let hours = OfficeHours::parse("07:30-19:45").unwrap();
        assert_eq!(hours.open(), time("07:30"));
        assert_eq!(hours.close(), time("19:45"));
        assert_eq!(hours.to_string(), "07:30-19:45");
        assert_eq!(OfficeHours::parse("10:00-10:00"), None);
        assert_eq!(OfficeHours::new(time("10:00"), time("09:00")), None);
    }

    // --- The example of docs/pricing.md.

    #[test]
    fn the_worked_example_of_the_docs() {
        let settings = settings_from(&[
            ("grace_minutes", "59"),
            ("office_hours", "08:00-20:00"),
            ("surcharge.one_way", "40.00"),
            ("surcharge.out_of_hours", "15.00"),
            ("surcharge.young_driver", "6.00"),
        ])
        .unwrap();
        let compact = Tariff {
            id: 2,
            name: "Tarifa Compacto".to_owned(),
            category_id: 2,
            model_id: None,
            currency: "USD".to_owned(),
            brackets: vec![
                TariffBracket {
                    days_from: 1,
                    days_to: 3,
                    daily_amount: d("46.00"),
                },
                TariffBracket {
                    days_from: 4,
                    days_to: 7,
                    daily_amount: d("41.50"),
                },
                TariffBracket {
                    days_from: 8,
                    days_to: 30,
                    daily_amount: d("36.00"),
                },
            ],
        };
        let mut catalog = catalog();
        catalog[0].name = "Seguro básico".to_owned();
        catalog[2].name = "Silla para niños".to_owned();
        catalog[3].name = "Conductor adicional".to_owned();
        let aep = Place {
            name: "Aeroparque (AEP)".to_owned(),
            ..place(1, 1, "15.00")
        };
        let cor = Place {
            name: "Aeropuerto de Córdoba (COR)".to_owned(),
            ..place(4, 2, "12.00")
        };
        let from = at("2026-03-06T07:30:00-03:00");
        let to = at("2026-03-16T09:15:00-03:00");
        let zone = chrono_tz::America::Argentina::Buenos_Aires;
        let cordoba = chrono_tz::America::Argentina::Cordoba;
        let birth = NaiveDate::from_ymd_opt(2002, 5, 20).unwrap();
        let requested = [take(4, 2), take(5, 1)];
        let request = QuoteRequest {
            from_date: from,
            to_date: to,
            tariff: Some(&compact),
            requested_additionals: &requested,
            catalog: &catalog,
            delivery_place: &aep,
            return_place: &cor,
            local_times: LocalTimes::at_offices(from, to, zone, cordoba),
            young_driver: is_young_driver(birth, from, zone),
            has_agency: true,
        };
        let quote = quote(&request, &settings).unwrap();
        // The rows of the table in docs/pricing.md: Id | Type | TypeId | Description |
        // UnitPrice | Quantity | Price | Payer.
        let table: Vec<String> = quote
            .lines
            .iter()
            .map(|line| {
                format!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} |",
                    line.id,
                    line.kind,
                    line.type_id,
                    line.description.as_deref().unwrap(),
                    line.unit_price,
                    line.quantity,
                    line.price,
                    line.payer
                )
            })
            .collect();
        let expected = [
            "| 1 | 1 | 2 | Tarifa Compacto: days 1 to 3 | 46.00 | 3 | 138.00 | 2 |",
            "| 2 | 1 | 2 | Tarifa Compacto: days 4 to 7 | 41.50 | 4 | 166.00 | 2 |",
            "| 3 | 1 | 2 | Tarifa Compacto: days 8 to 11 | 36.00 | 4 | 144.00 | 2 |",
            "| 4 | 2 | 1 | Seguro básico x1, 11 days | 12.00 | 11 | 132.00 | 1 |",
            "| 5 | 2 | 4 | Silla para niños x2, 11 days | 4.50 | 22 | 99.00 | 1 |",
            "| 6 | 2 | 5 | Conductor adicional x1 | 20.00 | 1 | 20.00 | 1 |",
            "| 7 | 3 | 1 | Delivery at Aeroparque (AEP) | 15.00 | 1 | 15.00 | 1 |",
            "| 8 | 3 | 4 | Return at Aeropuerto de Córdoba (COR) | 12.00 | 1 | 12.00 | 1 |",
            "| 9 | 4 | 1 | One-way surcharge | 40.00 | 1 | 40.00 | 1 |",
            "| 10 | 4 | 2 | Out-of-hours surcharge: pick-up at 07:30 (office hours 08:00-20:00) \
             | 15.00 | 1 | 15.00 | 1 |",
            "| 11 | 4 | 3 | Young driver surcharge, 11 days | 6.00 | 11 | 66.00 | 1 |",
        ];
        assert_eq!(table, expected);
        // The table of docs/pricing.md is this one.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/pricing.md");
        let docs = std::fs::read_to_string(path).unwrap();
        let example = docs.split("## Worked example").nth(1).unwrap();
        let documented: Vec<&str> = example
            .lines()
            .filter(|line| {
                line.starts_with("| ") && line[2..].starts_with(|c: char| c.is_ascii_digit())
            })
            .collect();
        assert_eq!(documented, expected);
        assert_eq!(quote.total_days, 11);
        assert_eq!(quote.total_days_string, "11 days");
        assert_eq!(quote.agency_price, d("448.00"));
        assert_eq!(quote.customer_price, d("399.00"));
        assert_eq!(quote.price, d("847.00"));
        assert_eq!(quote.average_day_price, d("40.73"));
        assert_eq!(quote.daily_rate, d("46.00"));
        assert!(coverage_is_traceable(&quote.lines));

        // The client sent 850.00: 3.00 away, within 1% of 847.00 = 8.47.
        let accepted = accept_sent_price(quote.clone(), Some(d("850.00"))).unwrap();
        let adjustment = accepted.lines.last().unwrap();
        assert_eq!(
            (adjustment.id, adjustment.kind, adjustment.price),
            (12, 5, d("3.00"))
        );
        assert_eq!(accepted.customer_price, d("402.00"));
        assert_eq!(accepted.agency_price, d("448.00"));
        assert_eq!(accepted.price, d("850.00"));
        // 855.47 is 8.47 away: accepted; 855.48 is 8.48 away: rejected.
        assert!(accept_sent_price(quote.clone(), Some(d("855.47"))).is_ok());
        let error = accept_sent_price(quote, Some(d("855.48"))).unwrap_err();
        assert_eq!(error.code, ErrorCode::PriceMismatch);
    }
}
