//! Availability (interface.md 4.5 rule 3 and section 3; contract.md "Pricing", last point):
//! what a creation or an update must hold, and whether a car or a category has room.
//!
//! A booking that holds capacity ([`crate::BookingStatus::holds_capacity`]) holds its car, if
//! it has one, and a place in its category's quota, from `FromDate` (included) to `ToDate`
//! (excluded). Which bookings may overlap a period comes from the store's availability
//! indexes of cars and categories ([`crate::collections::bookings`]); the functions here
//! decide on what was read. The component makes the decision race-free with lock documents, one per car (or
//! category) and day ([`crate::collections::CarLock`], [`lock_days`]).

use std::ops::RangeInclusive;

use chrono::{DateTime, FixedOffset, TimeDelta};

use super::request::{Period, VehicleChoice};
use super::settings::AvailabilityMode;
use crate::collections::CarSlot;
use crate::models::{Booking, Car};

/// What a request asks for as the booking's vehicle, once compared with what the booking has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VehicleRequest {
    /// This car.
    Car(String),
    /// A car of this model.
    Model(i64),
    /// A car of this category.
    Category(i64),
    /// What the booking has (an update that names no vehicle, or the one it has).
    Same,
}

/// The vehicle of an update's booking, as the request changes it: the most specific vehicle
/// the request names ([`VehicleChoice`]), or [`VehicleRequest::Same`] when it names none or
/// names exactly what the booking has.
pub fn vehicle_request(choice: Option<VehicleChoice>, stored: &Booking) -> VehicleRequest {
    match choice {
        None => VehicleRequest::Same,
        Some(VehicleChoice::Car(id)) => {
            if stored.car.as_ref().is_some_and(|car| car.id == id) {
                VehicleRequest::Same
            } else {
                VehicleRequest::Car(id)
            }
        }
        Some(VehicleChoice::Model(id)) => {
            if stored.model.as_ref().is_some_and(|model| model.id == id) {
                VehicleRequest::Same
            } else {
                VehicleRequest::Model(id)
            }
        }
        Some(VehicleChoice::Category(id)) => {
            if stored.category.id == id {
                VehicleRequest::Same
            } else {
                VehicleRequest::Category(id)
            }
        }
    }
}

impl From<VehicleChoice> for VehicleRequest {
    fn from(choice: VehicleChoice) -> Self {
        match choice {
            VehicleChoice::Car(id) => VehicleRequest::Car(id),
            VehicleChoice::Model(id) => VehicleRequest::Model(id),
            VehicleChoice::Category(id) => VehicleRequest::Category(id),
        }
    }
}

/// Where free cars are looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The cars of a model.
    Model(i64),
    /// The cars of every model of a category.
    Category(i64),
}

/// What must be held for a booking to be created or changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Nothing new: the booking keeps what it holds (or holds nothing).
    Keep,
    /// Exactly this car, and room in `quota`'s category when it is set.
    Car { car: String, quota: Option<i64> },
    /// A free car of `scope`, `keep` first when it is free.
    FreeCar { scope: Scope, keep: Option<String> },
    /// Room in this category's quota, with no car.
    Quota(i64),
}

/// What the booking holds before an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held<'a> {
    pub car: Option<&'a str>,
    pub model: Option<i64>,
    pub category: i64,
    pub period: Period,
    /// Whether its status holds capacity (false for a Canceled booking being reactivated).
    pub holds: bool,
}

impl<'a> Held<'a> {
    /// What `booking` holds.
    pub fn of(booking: &'a Booking) -> Self {
        Self {
            car: booking.car.as_ref().map(|car| car.id.as_str()),
            model: booking.model.as_ref().map(|model| model.id),
            category: booking.category.id,
            period: Period {
                from: booking.from_date,
                to: booking.to_date,
            },
            holds: booking.current_status.holds_capacity(),
        }
    }
}

/// What a creation (`held` = `None`) or an update must hold, in `mode`, for the vehicle
/// `request`, a booking in `category` over `period`.
///
/// Model-based: a named car must be free; a named model or category gets a free car of it; an
/// update that keeps the vehicle but changes the dates (or reactivates the booking) keeps its
/// car while it is free, else gets another car of the same model; anything else holds what it
/// held.
///
/// Category-based: a named car must be free, and the quota has room when the category is new
/// to the booking; a new category needs room in its quota (and drops the car); an update that
/// keeps the vehicle re-checks its car, if it has one, when the dates change or the booking is
/// reactivated (the car rule holds in both modes), but never the quota; a reactivated booking
/// without a car needs nothing (interface.md section 3).
pub fn plan(
    mode: AvailabilityMode,
    request: &VehicleRequest,
    category: i64,
    period: Period,
    held: Option<Held<'_>>,
) -> Plan {
    let new_category = held.is_none_or(|held| held.category != category);
    let moved = held.is_none_or(|held| held.period != period || !held.holds);
    match (mode, request) {
        (AvailabilityMode::Model, VehicleRequest::Car(car)) => Plan::Car {
            car: car.clone(),
            quota: None,
        },
        (AvailabilityMode::Model, VehicleRequest::Model(model)) => Plan::FreeCar {
            scope: Scope::Model(*model),
            keep: None,
        },
        (AvailabilityMode::Model, VehicleRequest::Category(category)) => Plan::FreeCar {
            scope: Scope::Category(*category),
            keep: None,
        },
        (AvailabilityMode::Model, VehicleRequest::Same) => match held {
            Some(held) if moved || held.car.is_none() => Plan::FreeCar {
                scope: held
                    .model
                    .map_or(Scope::Category(held.category), Scope::Model),
                keep: held.car.map(str::to_owned),
            },
            _ => Plan::Keep,
        },
        (AvailabilityMode::Category, VehicleRequest::Car(car)) => Plan::Car {
            car: car.clone(),
            quota: new_category.then_some(category),
        },
        (AvailabilityMode::Category, VehicleRequest::Model(_) | VehicleRequest::Category(_)) => {
            if new_category {
                Plan::Quota(category)
            } else {
                Plan::Keep
            }
        }
        (AvailabilityMode::Category, VehicleRequest::Same) => match held {
            Some(Held { car: Some(car), .. }) if moved => Plan::Car {
                car: car.to_owned(),
                quota: None,
            },
            _ => Plan::Keep,
        },
    }
}

/// The days whose locks a booking over `period` writes: every UTC day (as days since the Unix
/// epoch) that holds an instant of the period. Two periods that overlap share an instant, so
/// they share a day and their transactions write one lock in common; periods on other days
/// write other locks and do not contend.
pub fn lock_days(period: Period) -> RangeInclusive<i64> {
    let day = |instant: DateTime<FixedOffset>| instant.timestamp().div_euclid(SECONDS_PER_DAY);
    // The period excludes its end: an end at midnight does not reach into that day.
    day(period.from)..=day(period.to - TimeDelta::microseconds(1))
}

/// Seconds in a UTC day.
const SECONDS_PER_DAY: i64 = 24 * 60 * 60;

/// Whether `car` is in the fleet for the whole of `period` ([`in_fleet`]).
pub fn in_service(car: &Car, period: Period) -> bool {
    in_fleet(car.inactive_date, period)
}

/// Whether a car that leaves the fleet at `inactive_date` is in it for the whole of `period`:
/// it never leaves, or leaves after the period ends.
pub fn in_fleet(inactive_date: Option<DateTime<FixedOffset>>, period: Period) -> bool {
    inactive_date.is_none_or(|inactive| inactive >= period.to)
}

/// What an availability check needs of a booking that holds capacity: its Id and its
/// period. The entries of the availability indexes carry both
/// ([`crate::collections::bookings::occupancy`]), so a check decides without reading bookings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occupancy {
    pub booking_id: i64,
    pub period: Period,
}

impl Occupancy {
    /// What `booking` occupies, when its status holds capacity.
    pub fn of(booking: &Booking) -> Option<Self> {
        booking.current_status.holds_capacity().then_some(Self {
            booking_id: booking.id,
            period: Period {
                from: booking.from_date,
                to: booking.to_date,
            },
        })
    }
}

/// The occupancies among `occupied` (read from an availability index) that overlap
/// `period`, other than booking `except`'s (the one being changed).
pub fn overlapping(
    occupied: &[Occupancy],
    period: Period,
    except: Option<i64>,
) -> impl Iterator<Item = &Occupancy> {
    occupied.iter().filter(move |occupancy| {
        Some(occupancy.booking_id) != except && period.overlaps(&occupancy.period)
    })
}

/// Whether a car whose bookings occupy `occupied` is free for `period`.
pub fn car_is_free(occupied: &[Occupancy], period: Period, except: Option<i64>) -> bool {
    overlapping(occupied, period, except).next().is_none()
}

/// Whether a category of `capacity` cars, whose bookings occupy `occupied`, has room for one
/// more booking over `period`: at no instant of the period are `capacity` bookings running at
/// once.
pub fn has_room(
    occupied: &[Occupancy],
    period: Period,
    except: Option<i64>,
    capacity: usize,
) -> bool {
    peak(occupied, period, except) < capacity
}

/// The most bookings of `occupied` (but `except`) running at one instant of `period`.
pub fn peak(occupied: &[Occupancy], period: Period, except: Option<i64>) -> usize {
    // Sweep the starts and ends of the overlapping bookings, clipped to the period; at equal
    // instants ends come first, since periods that touch do not overlap.
    let mut events: Vec<(DateTime<FixedOffset>, i32)> = Vec::new();
    for occupancy in overlapping(occupied, period, except) {
        events.push((occupancy.period.from.max(period.from), 1));
        events.push((occupancy.period.to.min(period.to), -1));
    }
    events.sort_by_key(|&(at, change)| (at, change));
    let mut running: i64 = 0;
    let mut peak: i64 = 0;
    for (_, change) in events {
        running += i64::from(change);
        peak = peak.max(running);
    }
    usize::try_from(peak).unwrap_or(0)
}

/// The cars to try for a [`Plan::FreeCar`], as their slots, in order: `keep` first, then the
/// cars of the category's principal model, then the others, each by Id; cars out of the fleet
/// over `period` are left out.
pub fn candidates(
    mut cars: Vec<CarSlot>,
    keep: Option<&str>,
    principal_model: Option<i64>,
    period: Period,
) -> Vec<CarSlot> {
    cars.retain(|car| in_fleet(car.inactive_date, period));
    cars.sort_by(|a, b| {
        let rank = |car: &CarSlot| {
            (
                Some(car.id.as_str()) != keep,
                Some(car.model_id) != principal_model,
            )
        };
        rank(a).cmp(&rank(b)).then_with(|| a.id.cmp(&b.id))
    });
    cars
}

#[cfg(test)]
mod tests;
