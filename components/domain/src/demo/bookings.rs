//! The demo's bookings: where each falls on its car's timeline ([`plans`]), then each created
//! through the booking rules the API's creation runs ([`terms::check`], [`terms::price`],
//! [`terms::new_booking`]) at its creation instant, and its history since (status, payments,
//! last change) written over it.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, FixedOffset, TimeDelta};
use rust_decimal::Decimal;
use serde_json::json;

use super::{
    ACTIVE_OFFICES, ADDITIONAL_DRIVER, AGENCY_CUSTOMER_ID, AUDIT_START_DAYS_AGO, CAR_COUNT,
    CHILD_SEAT, Clock, Demo, FULL_INSURANCE, GPS, HORIZON_DAYS, SNOW_CHAINS, TIME_ZONE,
    TIMELINE_START_DAYS_AGO, round,
};
use crate::booking::request::{AdditionalRef, BookingRequest, IdRef, PlaceRef};
use crate::booking::settings::BookingSettings;
use crate::booking::terms::{self, Decision, Rules, Vehicle};
use crate::error::{ApiError, ErrorCode};
use crate::models::{Booking, Place};
use crate::pricing::PricingSettings;
use crate::status::BookingStatus;

/// Who makes the last change of a booking, by channel.
const ORIGINS: [(&str, &str); 4] = [
    ("Web", "reservas.web"),
    ("Mostrador", "mostrador"),
    ("Teléfono", "call.center"),
    ("API", "api.integracion"),
];

/// Airlines of the flights of bookings at airports.
const AIRLINES: [&str; 4] = ["AR", "LA", "FO", "G3"];

/// The commercial agreement of bookings through the agency.
const AGENCY_AGREEMENT: &str = "AGENCIAS-10";
/// Kilometres a day of a booking with limited kilometres (the Económico and Compacto cars).
const DISTANCE_BY_DAY: i64 = 250;
/// Share of the agency's part kept as sales commission.
const AGENCY_COMMISSION_PERCENT: i64 = 10;
/// Share of the customer's part paid as a deposit when booking.
const DEPOSIT_PERCENT: i64 = 20;

/// Where a booking falls on its car's timeline.
pub(super) struct Plan {
    /// Index of the car.
    pub(super) car: usize,
    /// Position of the booking on the car's timeline.
    pub(super) seq: usize,
    pub(super) from: DateTime<FixedOffset>,
    pub(super) to: DateTime<FixedOffset>,
    pub(super) creation: DateTime<FixedOffset>,
    pub(super) status: BookingStatus,
    pub(super) status_date: DateTime<FixedOffset>,
    /// The last change, before legacy records lose it and duplicates are spread.
    pub(super) last_change: DateTime<FixedOffset>,
}

/// Every car's bookings: from about 125 days ago to [`HORIZON_DAYS`] ahead, with 15 to 44
/// days between rentals of 2 to 10 days. Nothing starts or ends today, so the statuses depend
/// only on the date.
pub(super) fn plans(clock: &Clock) -> Vec<Plan> {
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

/// The bookings of the plans, in order: Ids from 1, each created under the tenant's
/// `settings` and `pricing` at its own creation instant.
pub(super) fn bookings(
    demo: &Demo,
    clock: &Clock,
    settings: &BookingSettings,
    pricing: &PricingSettings,
    plans: &[Plan],
) -> Result<Vec<Booking>, ApiError> {
    let audit_start = clock.at(-AUDIT_START_DAYS_AGO, 0, 0);
    let mut used = BTreeSet::new();
    plans
        .iter()
        .zip(1_i64..)
        .map(|(plan, id)| {
            let updated_on = (plan.last_change >= audit_start).then(|| {
                let mut instant = plan.last_change;
                while !used.insert(instant) {
                    instant += TimeDelta::seconds(1);
                }
                instant
            });
            let rules = Rules {
                settings,
                pricing,
                zone: TIME_ZONE,
                now: plan.creation,
            };
            let booking = create(demo, &rules, id, plan)?;
            Ok(history(booking, plan, updated_on))
        })
        .collect()
}

/// Booking `id` of `plan` as `POST /api/booking/book` creates it at the plan's creation
/// instant: the request a channel would send, checked, priced and written by the booking
/// rules, over the catalogue as stored.
fn create(demo: &Demo, rules: &Rules<'_>, id: i64, plan: &Plan) -> Result<Booking, ApiError> {
    let c = plan.car as i64;
    let k = plan.seq as i64;
    let car = &demo.cars[plan.car];
    let office = &demo.offices[plan.car % ACTIVE_OFFICES].office;
    let places = &office.places;
    let delivery = &places[(plan.car + plan.seq) % places.len()];
    let returned = if (c + 2 * k) % 4 == 0 {
        &places[(plan.car + plan.seq + 1) % places.len()]
    } else {
        delivery
    };
    let customer = demo.customers[((c * 5 + k * 3) % 23) as usize]
        .customer
        .clone();
    let category = demo
        .categories
        .iter()
        .find(|category| car.model.category.as_ref().map(|c| c.id) == Some(category.id))
        .cloned()
        .ok_or_else(|| ApiError::new(ErrorCode::CarNotFound))?;
    let through_agency = is_through_agency(plan);
    let (origin, user) = channel(plan, office.iata_code.as_deref());
    let unlimited = category.id >= 3;

    // Optional additionals; the required basic insurance is added by the pricing rules.
    let mut additionals: Vec<(i64, i64)> = Vec::new();
    if (c + k) % 7 == 3 {
        additionals.push((FULL_INSURANCE, 1));
    }
    if (c + k) % 4 == 0 {
        additionals.push((GPS, 1));
    }
    if (c * 2 + k) % 5 == 1 {
        additionals.push((CHILD_SEAT, 1 + (c + k) % 2));
    }
    if (c + 3 * k) % 6 == 2 {
        additionals.push((ADDITIONAL_DRIVER, 1));
    }
    if office.id == 3 && (c + k) % 3 == 0 {
        additionals.push((SNOW_CHAINS, 1));
    }
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
    let place = |place: &Place| PlaceRef {
        id: Some(place.id),
        ..PlaceRef::default()
    };
    let request = BookingRequest {
        from_date: Some(plan.from),
        to_date: Some(plan.to),
        delivery_place: Some(place(delivery)),
        return_place: Some(place(returned)),
        additionals: Some(
            additionals
                .into_iter()
                .map(|(id, quantity)| AdditionalRef {
                    additional: IdRef { id: Some(id) },
                    quantity: Some(quantity),
                })
                .collect(),
        ),
        attributes: Some(attributes),
        origin: Some(Some(json!(origin))),
        agency: through_agency.then(|| Some(json!({ "Id": AGENCY_CUSTOMER_ID }))),
        commercial_agreement_code: through_agency.then(|| Some(AGENCY_AGREEMENT.to_owned())),
        is_quotation: Some(plan.status == BookingStatus::Quoted),
        delivery_transportation_id: Some(flight(delivery, 0)),
        return_transportation_id: Some(flight(returned, 1)),
        ilimited_km: Some(unlimited),
        max_allowed_distance_by_day: (!unlimited).then_some(DISTANCE_BY_DAY),
        ..BookingRequest::default()
    };

    let agency = terms::agency_to_read(&request, None, rules.settings)
        .and_then(|id| demo.customers.iter().find(|doc| doc.customer.id == id));
    let terms = terms::check(&request, None, &customer, agency, &demo.offices, rules)?;
    let vehicle = Vehicle {
        car: Some(car.clone()),
        model: Some(car.model.clone()),
        category,
    };
    let quote = terms::price(
        &terms,
        &vehicle,
        &request.additionals()?.unwrap_or_default(),
        terms::PriceLists {
            additionals: &demo.additionals,
            tariffs: &demo.tariffs,
        },
        request.price,
        rules,
        |_| Vec::new(),
    )?;
    Ok(terms::new_booking(
        id,
        rules.settings.booking_code(id),
        &request,
        Decision {
            terms,
            vehicle,
            quote,
            customer,
        },
        plan.creation,
        &user,
    ))
}

/// `booking` after what happened to it since its creation: its status now, what was paid,
/// the agency's commission and its last change (`None` for a legacy record).
fn history(
    mut booking: Booking,
    plan: &Plan,
    updated_on: Option<DateTime<FixedOffset>>,
) -> Booking {
    let c = plan.car as i64;
    let k = plan.seq as i64;
    let deposit = round(booking.customer_price * Decimal::new(DEPOSIT_PERCENT, 2));
    let (payed_by_customer, payed_by_agency) = match plan.status {
        BookingStatus::Quoted | BookingStatus::Canceled => (Decimal::ZERO, Decimal::ZERO),
        BookingStatus::Reserved if (c + k) % 2 == 0 => (deposit, Decimal::ZERO),
        BookingStatus::Reserved => (Decimal::ZERO, Decimal::ZERO),
        BookingStatus::Delivered if (c + k) % 3 == 0 => (deposit, Decimal::ZERO),
        BookingStatus::Confirmed | BookingStatus::Delivered | BookingStatus::Closed => {
            (booking.customer_price, booking.agency_price)
        }
    };
    let commission = round(booking.agency_price * Decimal::new(AGENCY_COMMISSION_PERCENT, 2));
    booking.current_status = plan.status;
    booking.current_status_date = plan.status_date;
    booking.payed_by_customer = payed_by_customer;
    booking.payed_by_agency = payed_by_agency;
    booking.total_payed = payed_by_customer + payed_by_agency;
    booking.balance = booking.price - booking.total_payed;
    booking.sales_commision = commission;
    booking.price_details.sales_commission = commission;
    booking.updated_by_user_name = updated_on.map(|_| last_user(plan, &booking));
    booking.updated_on = updated_on;
    booking
}

/// Whether the booking of `plan` comes through the travel agency.
fn is_through_agency(plan: &Plan) -> bool {
    let (c, k) = (plan.car as i64, plan.seq as i64);
    (c + k * 5) % 6 == 5
}

/// The channel a booking of `plan` comes through (`Origin`) and its user there, at the office
/// of `iata_code`.
fn channel(plan: &Plan, iata_code: Option<&str>) -> (&'static str, String) {
    let (c, k) = (plan.car as i64, plan.seq as i64);
    if is_through_agency(plan) {
        return ("Agencia", "viajesdelsur.api".to_owned());
    }
    let (origin, user) = ORIGINS[((c * 2 + k) % 4) as usize];
    if user == "mostrador" {
        (origin, counter(iata_code))
    } else {
        (origin, user.to_owned())
    }
}

/// The user of the last change of the booking of `plan`: the counter that delivered or
/// received the car, the payments reconciliation that confirmed it, or whoever booked it.
fn last_user(plan: &Plan, booking: &Booking) -> String {
    let iata_code = booking.delivery_place.branch_office_iata_code.as_deref();
    match plan.status {
        BookingStatus::Delivered | BookingStatus::Closed => counter(iata_code),
        BookingStatus::Confirmed => "pagos.conciliacion".to_owned(),
        _ => channel(plan, iata_code).1,
    }
}

/// The counter user of the office of `iata_code`.
fn counter(iata_code: Option<&str>) -> String {
    format!("mostrador.{}", iata_code.unwrap_or("bue").to_lowercase())
}
