//! The terms of a booking a creation or an update asks for: checked against the catalogue and
//! the tenant's settings ([`check`]), priced once its vehicle is known ([`price`]) and written
//! into the booking ([`apply`]).
//!
//! A creation and an update go through the same steps; an update passes the booking as it is
//! stored, whose values stand for every field the request leaves out.

use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset, TimeDelta};
use chrono_tz::Tz;
use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::additionals;
use super::customer::check_may_book;
use super::places::{BookedPlace, Role, book_place, check_pair};
use super::request::{BookingRequest, Period, fields};
use super::settings::BookingSettings;
use crate::collections::{BranchOfficeDoc, CustomerDoc};
use crate::error::{ApiError, ErrorCode};
use crate::models::{
    Additional, Booking, BookingAdditional, Car, Category, Customer, Model, Place, PriceDetails,
    Tariff,
};
use crate::pricing::{
    self, Adjustment, LocalTimes, PricingSettings, Quote, QuoteRequest, YOUNG_DRIVER_AGE,
    office_zone, select_tariff,
};
use crate::status::BookingStatus;

/// How long ago a new (or moved) booking may start: a counter booking "now" arrives a little
/// late.
pub const PAST_START_TOLERANCE: TimeDelta = TimeDelta::hours(1);
/// `DistanceUnit` when neither the request nor the booking has one.
pub const DEFAULT_DISTANCE_UNIT: &str = "km";

/// The tenant's rules and the request's instant.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    pub settings: &'a BookingSettings,
    pub pricing: &'a PricingSettings,
    /// The tenant's time zone (setting `time_zone`), for offices that name none.
    pub zone: Tz,
    pub now: DateTime<FixedOffset>,
}

/// A booking's vehicle: the car (when one is held), its model (when known) and its category.
#[derive(Debug, Clone, PartialEq)]
pub struct Vehicle {
    pub car: Option<Car>,
    pub model: Option<Model>,
    pub category: Category,
}

/// The checked terms of a booking, before its vehicle and price are settled.
#[derive(Debug, Clone, PartialEq)]
pub struct Terms<'a> {
    pub period: Period,
    /// Rental days ([`pricing::rental_days`]).
    pub days: i64,
    pub delivery: BookedPlace<'a>,
    pub returned: BookedPlace<'a>,
    pub local_times: LocalTimes,
    pub young_driver: bool,
    pub distance: Distance,
    /// `Agency` as stored: `{"Id", "Name"}` of the agency customer, or none.
    pub agency: Option<Value>,
    pub commercial_agreement_code: Option<String>,
}

/// The kilometres a booking allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Distance {
    pub unlimited: bool,
    pub max_by_day: i64,
    pub max: i64,
    pub unit: String,
}

/// The agency a booking's terms depend on, when any: the one the request (or, on an update,
/// the booking) names, else the tenant's agency when there is a commercial agreement. The
/// caller reads it for [`check`].
pub fn agency_to_read(
    request: &BookingRequest,
    stored: Option<&Booking>,
    settings: &BookingSettings,
) -> Option<i64> {
    named_agency(request, stored).or_else(|| {
        agreement(request, stored)
            .is_some()
            .then_some(settings.agency_customer_id)
            .flatten()
    })
}

/// Checks what `request` asks for (with `stored` standing for what it leaves out on an
/// update) for the booking's `customer`, with `agency` as [`agency_to_read`] named it (`None`
/// when there is none or it was not found), against the tenant's `offices` and `rules`.
///
/// Errors, in this order:
/// - a promotion: 24 PromotionNotFound (the platform has none);
/// - the customer: 49 BlockedCustomerToBook, 34 DriverAgeNotAllowed ([`check_may_book`]);
/// - the dates: 98 when missing, 13 InvlaidDates when `ToDate` is not after `FromDate` or a
///   new start is more than [`PAST_START_TOLERANCE`] ago; 29 MinimunDaysOfBookingNotReached
///   and 30 MaxDaysOfBookingReached (settings `min_booking_days`, `max_booking_days`);
/// - the places: 25, 23, 75, 76, 74 ([`book_place`]), 46 ([`check_pair`]), and 47
///   BookingOutOfOfficeHoursNotAllowed when a pick-up or return falls outside pricing's
///   `office_hours` and the setting `out_of_hours_allowed` is false;
/// - the kilometres: 27 IlimitedKmNotEnabled, 28 LimitedKmNotEnabled (settings
///   `unlimited_km_enabled`, `limited_km_enabled`), checked when the request sends
///   `IlimitedKm` or creates the booking;
/// - the agency: 110 AgencyNotConfigured when a commercial agreement has no valid agency (a
///   customer with `IsAgency`: the one sent, else setting `agency_customer_id`), or an agency
///   is sent that is none; 51 InvalidCommercialAgreement when the agreement is not one of the
///   agency's `CommercialAgreements`.
pub fn check<'a>(
    request: &BookingRequest,
    stored: Option<&Booking>,
    customer: &Customer,
    agency: Option<&CustomerDoc>,
    offices: &'a [BranchOfficeDoc],
    rules: &Rules<'_>,
) -> Result<Terms<'a>, ApiError> {
    let stored_period = stored.map(|booking| Period {
        from: booking.from_date,
        to: booking.to_date,
    });
    let period = request.period(stored_period)?;
    request.check_promotion()?;
    check_may_book(customer, rules.settings, period.from)?;
    let moved_start = stored_period.is_none_or(|stored| stored.from != period.from);
    if moved_start && period.from < rules.now - PAST_START_TOLERANCE {
        return Err(ApiError::new(ErrorCode::InvlaidDates).with_field(fields::FROM_DATE));
    }
    let days = pricing::rental_days(period.from, period.to, rules.pricing.grace_minutes)?;
    if days < rules.settings.min_days {
        return Err(
            ApiError::new(ErrorCode::MinimunDaysOfBookingNotReached).with_field(fields::TO_DATE)
        );
    }
    if days > rules.settings.max_days {
        return Err(ApiError::new(ErrorCode::MaxDaysOfBookingReached).with_field(fields::TO_DATE));
    }

    let delivery = book_place(
        offices,
        &request.delivery_place(stored.map(|booking| &booking.delivery_place))?,
        Role::Delivery,
    )?;
    let returned = book_place(
        offices,
        &request.return_place(stored.map(|booking| &booking.return_place))?,
        Role::Return,
    )?;
    check_pair(&delivery, &returned, rules.settings)?;
    let delivery_zone = office_zone(delivery.office, rules.zone);
    let local_times = LocalTimes::at_offices(
        period.from,
        period.to,
        delivery_zone,
        office_zone(returned.office, rules.zone),
    );
    let hours = rules.pricing.office_hours;
    if !rules.settings.out_of_hours_allowed {
        if !hours.contains(local_times.pickup) {
            return Err(ApiError::new(ErrorCode::BookingOutOfOfficeHoursNotAllowed)
                .with_field(fields::FROM_DATE));
        }
        if !hours.contains(local_times.dropoff) {
            return Err(ApiError::new(ErrorCode::BookingOutOfOfficeHoursNotAllowed)
                .with_field(fields::TO_DATE));
        }
    }

    let young_driver = match (customer.birth_date, customer.age) {
        (Some(birth), _) => {
            pricing::is_young_driver(birth.date_naive(), period.from, delivery_zone)
        }
        (None, Some(age)) => age < i64::from(YOUNG_DRIVER_AGE),
        (None, None) => request
            .is_customer_over25
            .or(stored.map(|booking| booking.is_customer_over25))
            .is_some_and(|over25| !over25),
    };

    Ok(Terms {
        period,
        days,
        delivery,
        returned,
        local_times,
        young_driver,
        distance: distance(request, stored, rules.settings, days)?,
        agency: checked_agency(request, stored, agency, rules.settings)?,
        commercial_agreement_code: agreement(request, stored),
    })
}

/// The kilometres of the booking: unlimited when asked (or, on an update, as stored; by
/// default when the tenant offers no limited kilometres); otherwise the kilometres a day sent
/// or stored or of the setting `max_distance_by_day`, and in total the sent
/// `MaxAllowedDistance` or a day's kilometres times the rental days.
fn distance(
    request: &BookingRequest,
    stored: Option<&Booking>,
    settings: &BookingSettings,
    days: i64,
) -> Result<Distance, ApiError> {
    let unlimited = request
        .ilimited_km
        .or(stored.map(|booking| booking.ilimited_km))
        .unwrap_or(!settings.limited_km_enabled);
    if request.ilimited_km.is_some() || stored.is_none() {
        if unlimited && !settings.unlimited_km_enabled {
            return Err(
                ApiError::new(ErrorCode::IlimitedKmNotEnabled).with_field(fields::ILIMITED_KM)
            );
        }
        if !unlimited && !settings.limited_km_enabled {
            return Err(
                ApiError::new(ErrorCode::LimitedKmNotEnabled).with_field(fields::ILIMITED_KM)
            );
        }
    }
    let unit = request
        .distance_unit
        .clone()
        .filter(|unit| !unit.trim().is_empty())
        .or(stored
            .map(|booking| booking.distance_unit.clone())
            .filter(|unit| !unit.is_empty()))
        .unwrap_or_else(|| DEFAULT_DISTANCE_UNIT.to_owned());
    if unlimited {
        return Ok(Distance {
            unlimited,
            max_by_day: 0,
            max: 0,
            unit,
        });
    }
    let positive = |value: Option<i64>| value.filter(|value| *value > 0);
    let max_by_day = positive(request.max_allowed_distance_by_day)
        .or(positive(
            stored.map(|booking| booking.max_allowed_distance_by_day),
        ))
        .unwrap_or(settings.max_distance_by_day);
    let max = positive(request.max_allowed_distance).unwrap_or(max_by_day.saturating_mul(days));
    Ok(Distance {
        unlimited,
        max_by_day,
        max,
        unit,
    })
}

/// The agency id the request names, or on an update that does not, the booking's.
fn named_agency(request: &BookingRequest, stored: Option<&Booking>) -> Option<i64> {
    if request.agency.is_some() {
        return request.agency_id();
    }
    let stored = stored?.agency.as_ref()?;
    stored
        .get("Id")
        .and_then(Value::as_i64)
        .filter(|id| *id > 0)
}

/// The commercial agreement code sent, or on an update that sends none, the booking's.
fn agreement(request: &BookingRequest, stored: Option<&Booking>) -> Option<String> {
    let code = match &request.commercial_agreement_code {
        Some(sent) => sent.clone(),
        None => stored
            .and_then(|booking| booking.commercial_agreement_code.as_ref())
            .and_then(Value::as_str)
            .map(str::to_owned),
    };
    code.map(|code| code.trim().to_owned())
        .filter(|code| !code.is_empty())
}

/// `Agency` of the booking, checked (see [`check`]).
fn checked_agency(
    request: &BookingRequest,
    stored: Option<&Booking>,
    agency: Option<&CustomerDoc>,
    settings: &BookingSettings,
) -> Result<Option<Value>, ApiError> {
    let named = named_agency(request, stored);
    let agreement = agreement(request, stored);
    if named.is_none() && agreement.is_none() {
        return Ok(None);
    }
    let expected = named.or(settings.agency_customer_id);
    let agency = agency
        .map(|doc| &doc.customer)
        .filter(|customer| customer.is_agency && Some(customer.id) == expected)
        .ok_or_else(|| ApiError::new(ErrorCode::AgencyNotConfigured).with_field(fields::AGENCY))?;
    if let Some(code) = &agreement {
        let known = agency
            .commercial_agreements
            .iter()
            .any(|known| known.trim().eq_ignore_ascii_case(code));
        if !known {
            return Err(ApiError::new(ErrorCode::InvalidCommercialAgreement)
                .with_field(fields::COMMERCIAL_AGREEMENT_CODE));
        }
    }
    Ok(Some(json!({"Id": agency.id, "Name": agency.name})))
}

/// The tenant's price lists a booking is priced by.
#[derive(Debug, Clone, Copy)]
pub struct PriceLists<'a> {
    /// The tenant's additionals.
    pub additionals: &'a [Additional],
    /// The tariffs of the vehicle's category.
    pub tariffs: &'a [Tariff],
}

/// Prices the booking of `terms` with its `vehicle` (the model's tariff when it has one, else
/// the category's), the additionals `requested` and the tenant's price `lists`, with the lines `adjustments` adds to the quote (a tenant's own rules; none on
/// the platform's), accepting a `sent` price within 1% of the adjusted one; then checks the
/// tenant's insurance requirement on the additionals taken.
///
/// Errors: pricing's (21, 30, 31, 32, 98, 100, 4), then 50 MustHaveAtLeastOneInsurance.
pub fn price(
    terms: &Terms<'_>,
    vehicle: &Vehicle,
    requested: &[BookingAdditional],
    lists: PriceLists<'_>,
    sent: Option<Decimal>,
    rules: &Rules<'_>,
    adjustments: impl FnOnce(&Quote) -> Vec<Adjustment>,
) -> Result<Quote, ApiError> {
    let tariff = select_tariff(
        lists.tariffs,
        vehicle.category.id,
        vehicle.model.as_ref().map(|model| model.id),
    );
    let quote = pricing::quote(
        &QuoteRequest {
            from_date: terms.period.from,
            to_date: terms.period.to,
            tariff,
            requested_additionals: requested,
            catalog: lists.additionals,
            delivery_place: &terms.delivery.place,
            return_place: &terms.returned.place,
            local_times: terms.local_times,
            young_driver: terms.young_driver,
            has_agency: terms.agency.is_some(),
        },
        rules.pricing,
    )?;
    let extra = adjustments(&quote);
    let quote = pricing::adjust(quote, extra)?;
    let quote = pricing::accept_sent_price(quote, sent)?;
    additionals::check_insurance(&quote.additionals, rules.settings.require_insurance)?;
    Ok(quote)
}

/// What a creation or an update decided: its checked terms, its vehicle, its price and its
/// customer.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision<'a> {
    pub terms: Terms<'a>,
    pub vehicle: Vehicle,
    pub quote: Quote,
    pub customer: Customer,
}

/// A new booking `id` with its `code`, as `request` asks and `decision` decided, created at
/// `now` by `user`: Version "1", Quoted when `IsQuotation` is true, else Reserved.
pub fn new_booking(
    id: i64,
    code: String,
    request: &BookingRequest,
    decision: Decision<'_>,
    now: DateTime<FixedOffset>,
    user: &str,
) -> Booking {
    let is_quotation = request.is_quotation == Some(true);
    let mut booking = Booking {
        id,
        version: Some("1".to_owned()),
        customer: Customer::default(),
        balance: Decimal::ZERO,
        total_payed: Decimal::ZERO,
        extra: None,
        promotion: None,
        is_quotation,
        car: None,
        model: None,
        category: Category::default(),
        from_date: now,
        to_date: now,
        delivery_place: Place::default(),
        return_place: Place::default(),
        total_days_string: String::new(),
        total_days: Decimal::ZERO,
        price: Decimal::ZERO,
        agency_price: Decimal::ZERO,
        customer_price: Decimal::ZERO,
        currency: String::new(),
        franchise: None,
        franchise_damage: None,
        franchise_rollover: None,
        franchise_theft: None,
        franchise_hail: None,
        ilimited_km: false,
        max_allowed_distance: 0,
        max_allowed_distance_by_day: 0,
        distance_unit: String::new(),
        has_franchise_modifiers: false,
        will_leave_country: None,
        average_day_price: Decimal::ZERO,
        price_items: Vec::new(),
        additionals: Vec::new(),
        available_promotions: None,
        current_status: if is_quotation {
            BookingStatus::Quoted
        } else {
            BookingStatus::Reserved
        },
        current_status_date: now,
        delivery_transportation_id: None,
        return_transportation_id: None,
        is_customer_over25: true,
        external_system_id: None,
        prepaid_amount: Decimal::ZERO,
        elegible_sipp_code_upgrade: None,
        attributes: BTreeMap::new(),
        exchange_rate: None,
        daily_rate: Decimal::ZERO,
        hourly_rate: Decimal::ZERO,
        extra_day_rate: Decimal::ZERO,
        extra_hour_rate: Decimal::ZERO,
        rate_plan: None,
        is_on_request: false,
        delivery_info: None,
        dropoff_info: None,
        origin: None,
        brand: None,
        agency: None,
        creation_date: now,
        updated_on: Some(now),
        updated_by_user_name: Some(user.to_owned()),
        payed_by_agency: Decimal::ZERO,
        payed_by_customer: Decimal::ZERO,
        commercial_agreement_code: None,
        purchase_order: None,
        sales_commision: Decimal::ZERO,
        is_transfer: false,
        price_details: PriceDetails::default(),
        is_self_checkin: false,
        links: None,
        code: Some(code),
    };
    apply(&mut booking, request, decision);
    booking
}

/// Writes what `decision` decided into `booking`, with the descriptive fields the `request`
/// sends (`Attributes`, `Origin`, `Brand`, `Extra`, `ExternalSystemId`,
/// `ElegibleSIPPCodeUpgrade`, `RatePlan`, `ExchangeRate`, `PrepaidAmount`, `IsOnRequest`, the
/// transportation ids); fields the request leaves out keep what `booking` has. `Balance` is
/// the new price less what was paid.
pub fn apply(booking: &mut Booking, request: &BookingRequest, decision: Decision<'_>) {
    let Decision {
        terms,
        vehicle,
        quote,
        customer,
    } = decision;
    let franchises = match &vehicle.model {
        Some(model) => [
            model.franchise,
            model.franchise_damage,
            model.franchise_rollover,
            model.franchise_theft,
            model.franchise_hail,
        ],
        None => [
            vehicle.category.franchise,
            vehicle.category.franchise_damage,
            vehicle.category.franchise_rollover,
            vehicle.category.franchise_theft,
            vehicle.category.franchise_hail,
        ],
    };
    [
        booking.franchise,
        booking.franchise_damage,
        booking.franchise_rollover,
        booking.franchise_theft,
        booking.franchise_hail,
    ] = franchises;
    booking.customer = customer;
    booking.car = vehicle.car;
    booking.model = vehicle.model;
    booking.category = Category {
        models: Vec::new(),
        ..vehicle.category
    };
    booking.from_date = terms.period.from;
    booking.to_date = terms.period.to;
    booking.delivery_place = terms.delivery.place;
    booking.return_place = terms.returned.place;
    booking.is_customer_over25 = !terms.young_driver;
    booking.ilimited_km = terms.distance.unlimited;
    booking.max_allowed_distance_by_day = terms.distance.max_by_day;
    booking.max_allowed_distance = terms.distance.max;
    booking.distance_unit = terms.distance.unit;
    booking.agency = terms.agency;
    booking.commercial_agreement_code = terms.commercial_agreement_code.map(Value::String);

    booking.total_days = Decimal::from(quote.total_days);
    booking.total_days_string = quote.total_days_string;
    booking.price = quote.price;
    booking.customer_price = quote.customer_price;
    booking.agency_price = quote.agency_price;
    booking.average_day_price = quote.average_day_price;
    booking.daily_rate = quote.daily_rate;
    booking.price_items = quote.lines;
    booking.additionals = quote.additionals;
    booking.balance = booking.price - booking.total_payed;
    booking.price_details = PriceDetails {
        price: booking.price,
        customer_price: booking.customer_price,
        agency_price: booking.agency_price,
        sales_commission: booking.sales_commision,
        currency: quote.currency.clone(),
    };
    booking.currency = quote.currency;

    let replace = |field: &mut Option<Value>, sent: &Option<Option<Value>>| {
        if let Some(sent) = sent {
            field.clone_from(sent);
        }
    };
    replace(&mut booking.origin, &request.origin);
    replace(&mut booking.brand, &request.brand);
    replace(&mut booking.extra, &request.extra);
    replace(&mut booking.external_system_id, &request.external_system_id);
    replace(
        &mut booking.elegible_sipp_code_upgrade,
        &request.elegible_sipp_code_upgrade,
    );
    replace(&mut booking.rate_plan, &request.rate_plan);
    replace(
        &mut booking.delivery_transportation_id,
        &request.delivery_transportation_id,
    );
    replace(
        &mut booking.return_transportation_id,
        &request.return_transportation_id,
    );
    if let Some(attributes) = &request.attributes {
        booking.attributes = crate::selfcheckin::sent_attributes(&booking.attributes, attributes);
    }
    if let Some(rate) = request.exchange_rate {
        booking.exchange_rate = rate;
    }
    if let Some(prepaid) = request.prepaid_amount {
        booking.prepaid_amount = prepaid;
    }
    if let Some(on_request) = request.is_on_request {
        booking.is_on_request = on_request;
    }
}

#[cfg(test)]
mod tests;
