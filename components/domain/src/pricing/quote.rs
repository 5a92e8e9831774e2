//! Quotes: a booking priced line by line, and a price the client sent checked against it.

use chrono::{DateTime, FixedOffset};
use rust_decimal::Decimal;

use super::additionals::taken_additionals;
use super::lines::{Line, Lines, payer_totals};
use super::tariffs::{applied_brackets, checked_sum, out_of_range, quote_currency};
use super::texts::{LineText, Translations, total_days_text};
use super::{
    ADDITIONALS, LocalTimes, PRICE, Payer, PriceItemType, PricingSettings, SurchargeKind, TO_DATE,
    minor_units, rental_days, round_money,
};
use crate::error::{ApiError, ErrorCode};
use crate::i18n::Language;
use crate::models::{Additional, BookingAdditional, Place, PriceItem, Tariff, TariffBracket};

/// How far a sent price may be from the computed one, in percent of the computed one.
pub const PRICE_TOLERANCE_PERCENT: i64 = 1;

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
    /// `TotalDaysString` in English, as stored; a response writes it in its own language
    /// ([`crate::booking::response::full`]).
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
///   once for a return outside [`OfficeHours`](super::OfficeHours), young driver per rental day.
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
    let rental = lines.push_all(rental_lines(tariff, &brackets, rental_payer), TO_DATE)?;
    lines.push_all(additional_lines(&taken, days)?, ADDITIONALS)?;
    lines.push_all(place_lines(request), PRICE)?;
    lines.push_all(surcharge_lines(request, settings, days), TO_DATE)?;
    totals(lines, &rental, &brackets, taken, days, currency)
}

/// The rental lines: one per tariff bracket the rental days go through, paid by `payer`.
fn rental_lines<'a>(
    tariff: &'a Tariff,
    brackets: &[(&'a TariffBracket, i64)],
    payer: Payer,
) -> Vec<Line<'a>> {
    brackets
        .iter()
        .map(|&(bracket, last_day)| Line {
            kind: PriceItemType::Rental,
            type_id: tariff.id,
            text: LineText::Rental {
                tariff: tariff.name.clone(),
                from: bracket.days_from,
                to: last_day,
            },
            unit_price: bracket.daily_amount,
            quantity: last_day - bracket.days_from + 1,
            payer,
            tariff: Some(tariff),
            bracket: Some(bracket),
        })
        .collect()
}

/// The additional lines: one per additional taken, its quantity times the rental `days` when
/// it is priced by day.
///
/// Errors: a quantity of days out of range, naming `Additionals`.
fn additional_lines<'a>(
    taken: &[(&Additional, i64)],
    days: i64,
) -> Result<Vec<Line<'a>>, ApiError> {
    taken
        .iter()
        .map(|&(additional, quantity)| {
            let (units, by_day) = if additional.is_price_by_day {
                let units = quantity
                    .checked_mul(days)
                    .ok_or_else(|| out_of_range(ADDITIONALS))?;
                (units, Some(days))
            } else {
                (quantity, None)
            };
            Ok(Line {
                kind: PriceItemType::Additional,
                type_id: additional.id,
                text: LineText::Additional {
                    name: additional.name.clone(),
                    quantity,
                    days: by_day,
                },
                unit_price: additional.price,
                quantity: units,
                payer: Payer::Customer,
                tariff: None,
                bracket: None,
            })
        })
        .collect()
}

/// The place lines: delivery, then return, each when its price is not zero.
fn place_lines<'a>(request: &QuoteRequest<'_>) -> Vec<Line<'a>> {
    [
        (request.delivery_place, true),
        (request.return_place, false),
    ]
    .into_iter()
    .filter(|(place, _)| !place.price.is_zero())
    .map(|(place, delivery)| Line {
        kind: PriceItemType::Place,
        type_id: place.id,
        text: if delivery {
            LineText::Delivery {
                place: place.name.clone(),
            }
        } else {
            LineText::Return {
                place: place.name.clone(),
            }
        },
        unit_price: place.price,
        quantity: 1,
        payer: Payer::Customer,
        tariff: None,
        bracket: None,
    })
    .collect()
}

/// The quote of the written `lines`: the payers' totals, the average over the `rental` line
/// prices, the first bracket's daily rate and the additionals `taken`.
fn totals(
    lines: Lines,
    rental: &[Decimal],
    brackets: &[(&TariffBracket, i64)],
    taken: Vec<(&Additional, i64)>,
    days: i64,
    currency: String,
) -> Result<Quote, ApiError> {
    let minor = lines.minor_units;
    let items = lines.items;
    let (customer_price, agency_price) = payer_totals(&items)?;
    let price = customer_price
        .checked_add(agency_price)
        .ok_or_else(|| out_of_range(PRICE))?;
    let rental_total = checked_sum(rental.iter().copied()).ok_or_else(|| out_of_range(TO_DATE))?;
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
        total_days_string: total_days_text(days, Language::En),
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
    let surcharge = |kind: SurchargeKind, text: LineText, amount, quantity| Line {
        kind: PriceItemType::Surcharge,
        type_id: kind.code(),
        text,
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
            LineText::OneWay,
            amounts.one_way,
            1,
        ));
    }
    if !amounts.out_of_hours.is_zero() {
        let times = request.local_times;
        for (time, pickup) in [(times.pickup, true), (times.dropoff, false)] {
            if !settings.office_hours.contains(time) {
                lines.push(surcharge(
                    SurchargeKind::OutOfHours,
                    LineText::OutOfHours {
                        pickup,
                        time: time.format("%H:%M").to_string(),
                        hours: settings.office_hours.to_string(),
                    },
                    amounts.out_of_hours,
                    1,
                ));
            }
        }
    }
    if !amounts.young_driver.is_zero() && request.young_driver {
        lines.push(surcharge(
            SurchargeKind::YoungDriver,
            LineText::YoungDriver { days },
            amounts.young_driver,
            days,
        ));
    }
    lines
}

/// A line a tenant's own rules add to every quote of its bookings: a surcharge, or a discount
/// when negative. The customer pays it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adjustment {
    /// The line's `TypeId`: the tenant's own code for this kind of adjustment.
    pub code: i64,
    /// The amount, rounded to the currency's minor unit like every line.
    pub amount: Decimal,
    /// The line's `Description` in each language.
    pub description: Translations,
}

/// `quote` with one more line per adjustment ([`PriceItemType::TenantAdjustment`], paid by the
/// customer, after the platform's lines), and `Price` and `CustomerPrice` moved by each, so
/// the lines still sum to `Price`.
///
/// Errors: a sum out of `Decimal`'s range is [`ErrorCode::ModelNotValid`] naming `Price`.
pub fn adjust(mut quote: Quote, adjustments: Vec<Adjustment>) -> Result<Quote, ApiError> {
    if adjustments.is_empty() {
        return Ok(quote);
    }
    let mut lines = Lines {
        minor_units: minor_units(&quote.currency),
        items: std::mem::take(&mut quote.lines),
    };
    for adjustment in adjustments {
        let amount = lines.push(
            customer_line(
                PriceItemType::TenantAdjustment,
                adjustment.code,
                LineText::Tenant(adjustment.description),
                adjustment.amount,
            ),
            PRICE,
        )?;
        quote.customer_price = quote
            .customer_price
            .checked_add(amount)
            .ok_or_else(|| out_of_range(PRICE))?;
        quote.price = quote
            .price
            .checked_add(amount)
            .ok_or_else(|| out_of_range(PRICE))?;
    }
    quote.lines = lines.items;
    Ok(quote)
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
        customer_line(
            PriceItemType::Adjustment,
            0,
            LineText::Adjustment,
            difference,
        ),
        PRICE,
    )?;
    quote.lines = lines.items;
    quote.customer_price += difference;
    quote.price = sent;
    Ok(quote)
}

/// One line of `amount`, quantity 1, paid by the customer, priced by no tariff.
fn customer_line(
    kind: PriceItemType,
    type_id: i64,
    text: LineText,
    amount: Decimal,
) -> Line<'static> {
    Line {
        kind,
        type_id,
        text,
        unit_price: amount,
        quantity: 1,
        payer: Payer::Customer,
        tariff: None,
        bracket: None,
    }
}

#[cfg(test)]
mod tests;
