//! Rental days, tariffs and money: how many days a rental lasts, which tariff and brackets
//! price them, and how amounts are rounded.

use rust_decimal::{Decimal, RoundingStrategy};

use chrono::{DateTime, FixedOffset};

use super::{PricingSettings, TO_DATE};
use crate::error::{ApiError, ErrorCode};
use crate::models::{Tariff, TariffBracket};

/// Minutes in a rental day.
pub(super) const MINUTES_PER_DAY: i64 = 24 * 60;
/// Decimal places of a currency absent from the tables below.
const DEFAULT_MINOR_UNITS: u32 = 2;
/// ISO 4217 currencies without minor unit.
const ZERO_DECIMAL_CURRENCIES: [&str; 17] = [
    "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND",
    "VUV", "XAF", "XOF", "XPF",
];
/// ISO 4217 currencies with three decimal places.
const THREE_DECIMAL_CURRENCIES: [&str; 7] = ["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"];

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
pub(super) fn applied_brackets(
    tariff: &Tariff,
    days: i64,
) -> Result<Vec<(&TariffBracket, i64)>, ApiError> {
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
pub(super) fn quote_currency(
    tariff: &Tariff,
    settings: &PricingSettings,
) -> Result<String, ApiError> {
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
pub(super) fn out_of_range(field: &str) -> ApiError {
    ApiError::invalid_field(field, "gives an amount out of range")
}

/// The sum of `amounts`; `None` on overflow.
pub(super) fn checked_sum(amounts: impl IntoIterator<Item = Decimal>) -> Option<Decimal> {
    amounts
        .into_iter()
        .try_fold(Decimal::ZERO, |sum, amount| sum.checked_add(amount))
}

#[cfg(test)]
mod tests;
