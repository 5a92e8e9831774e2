//! Availability (interface.md 4.5 rule 3 and section 3; contract.md "Pricing", last point):
//! what a creation or an update must hold, and whether a car or a category has room.
//!
//! A booking that holds capacity ([`crate::BookingStatus::holds_capacity`]) holds its car, if
//! it has one, and a place in its category's quota, from `FromDate` (included) to `ToDate`
//! (excluded). Which bookings may overlap a period comes from the store's `car` and
//! `category` indexes ([`crate::collections::bookings`]); the functions here decide on what
//! was read. The component makes the decision race-free with lock documents, one per car (or
//! category) and day ([`crate::collections::CarLock`], [`lock_days`]).

use std::ops::RangeInclusive;

use chrono::{DateTime, FixedOffset, TimeDelta};

use super::request::{Period, VehicleChoice};
use super::settings::AvailabilityMode;
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

/// Whether `car` is in the fleet for the whole of `period` (it has no `InactiveDate`, or
/// leaves after the period ends).
pub fn in_service(car: &Car, period: Period) -> bool {
    car.inactive_date
        .is_none_or(|inactive| inactive >= period.to)
}

/// The bookings among `bookings` (read from the `car` or `category` index) that hold
/// capacity during `period`, other than booking `except` (the one being changed).
pub fn overlapping(
    bookings: &[Booking],
    period: Period,
    except: Option<i64>,
) -> impl Iterator<Item = &Booking> {
    bookings.iter().filter(move |booking| {
        Some(booking.id) != except
            && booking.current_status.holds_capacity()
            && period.overlaps(&Period {
                from: booking.from_date,
                to: booking.to_date,
            })
    })
}

/// Whether a car whose bookings are `bookings` is free for `period`.
pub fn car_is_free(bookings: &[Booking], period: Period, except: Option<i64>) -> bool {
    overlapping(bookings, period, except).next().is_none()
}

/// Whether a category of `capacity` cars, whose bookings are `bookings`, has room for one more
/// booking over `period`: at no instant of the period are `capacity` bookings running at once.
pub fn has_room(
    bookings: &[Booking],
    period: Period,
    except: Option<i64>,
    capacity: usize,
) -> bool {
    // Sweep the starts and ends of the overlapping bookings, clipped to the period; at equal
    // instants ends come first, since periods that touch do not overlap.
    let mut events: Vec<(DateTime<FixedOffset>, i32)> = Vec::new();
    for booking in overlapping(bookings, period, except) {
        events.push((booking.from_date.max(period.from), 1));
        events.push((booking.to_date.min(period.to), -1));
    }
    events.sort_by_key(|&(at, change)| (at, change));
    let mut running: i64 = 0;
    let mut peak: i64 = 0;
    for (_, change) in events {
        running += i64::from(change);
        peak = peak.max(running);
    }
    usize::try_from(peak).is_ok_and(|peak| peak < capacity)
}

/// The cars to try for a [`Plan::FreeCar`], in order: `keep` first, then the cars of the
/// category's principal model, then the others, each by Id; cars out of service over
/// `period` are left out.
pub fn candidates(
    mut cars: Vec<Car>,
    keep: Option<&str>,
    principal_model: Option<i64>,
    period: Period,
) -> Vec<Car> {
    cars.retain(|car| in_service(car, period));
    cars.sort_by(|a, b| {
        let rank = |car: &Car| {
            (
                Some(car.id.as_str()) != keep,
                Some(car.model.id) != principal_model,
            )
        };
        rank(a).cmp(&rank(b)).then_with(|| a.id.cmp(&b.id))
    });
    cars
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::status::BookingStatus;

    fn at(value: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(value).unwrap()
    }

    fn period(from: &str, to: &str) -> Period {
        Period::new(at(from), at(to)).unwrap()
    }

    fn booking(id: i64, from: &str, to: &str, status: BookingStatus) -> Booking {
        serde_json::from_value(json!({
            "Id": id,
            "Customer": {"Id": 1},
            "Car": {"Id": "AA100AA", "Model": {"Id": 2}},
            "Model": {"Id": 2},
            "Category": {"Id": 1},
            "FromDate": from,
            "ToDate": to,
            "DeliveryPlace": {"Id": 1},
            "ReturnPlace": {"Id": 1},
            "CurrentStatus": status.code(),
            "CurrentStatusDate": from,
            "CreationDate": from
        }))
        .unwrap()
    }

    fn car(id: &str, model: i64) -> Car {
        let mut car = Car {
            id: id.to_owned(),
            ..Car::default()
        };
        car.model.id = model;
        car
    }

    const FROM: &str = "2030-01-10T10:00:00Z";
    const TO: &str = "2030-01-13T10:00:00Z";

    #[test]
    fn a_car_is_free_unless_an_active_booking_overlaps() {
        let asked = period(FROM, TO);
        let before = booking(1, "2030-01-05T10:00:00Z", FROM, BookingStatus::Closed);
        let touching = booking(2, "2030-01-08T10:00:00Z", FROM, BookingStatus::Reserved);
        let after = booking(3, TO, "2030-01-15T10:00:00Z", BookingStatus::Quoted);
        assert!(car_is_free(&[before, touching, after], asked, None));

        for status in BookingStatus::ALL {
            let inside = booking(4, "2030-01-11T10:00:00Z", "2030-01-12T10:00:00Z", status);
            assert_eq!(
                car_is_free(std::slice::from_ref(&inside), asked, None),
                !status.holds_capacity(),
                "{status}"
            );
            assert!(
                car_is_free(&[inside], asked, Some(4)),
                "a booking does not block itself"
            );
        }
    }

    #[test]
    fn room_is_the_peak_of_running_bookings() {
        let asked = period(FROM, TO);
        let reserved = BookingStatus::Reserved;
        // Two bookings in a row never run at once: one car is enough for both.
        let sequential = [
            booking(1, "2030-01-09T10:00:00Z", "2030-01-11T10:00:00Z", reserved),
            booking(2, "2030-01-11T10:00:00Z", "2030-01-14T10:00:00Z", reserved),
        ];
        assert!(!has_room(&sequential, asked, None, 1));
        assert!(has_room(&sequential, asked, None, 2));
        let parallel = [
            booking(1, "2030-01-09T10:00:00Z", "2030-01-11T10:00:00Z", reserved),
            booking(2, "2030-01-10T12:00:00Z", "2030-01-14T10:00:00Z", reserved),
        ];
        assert!(!has_room(&parallel, asked, None, 2));
        assert!(has_room(&parallel, asked, None, 3));
        assert!(has_room(&parallel, asked, Some(2), 2));
        assert!(has_room(&[], asked, None, 1));
        assert!(!has_room(&[], asked, None, 0));
    }

    #[test]
    fn lock_days_cover_the_period_and_only_it() {
        let days = |from, to| {
            let days = lock_days(period(from, to));
            (*days.start(), *days.end())
        };
        let day = at("2030-01-10T00:00:00Z").timestamp() / 86_400;
        assert_eq!(
            days("2030-01-10T10:00:00Z", "2030-01-12T10:00:00Z"),
            (day, day + 2)
        );
        assert_eq!(
            days("2030-01-10T00:00:00Z", "2030-01-12T00:00:00Z"),
            (day, day + 1)
        );
        assert_eq!(
            days("2030-01-10T10:00:00Z", "2030-01-10T11:00:00Z"),
            (day, day)
        );
        // Offsets are instants: 22:00 at -03:00 is 01:00 UTC the next day.
        assert_eq!(
            days("2030-01-09T22:00:00-03:00", "2030-01-10T23:00:00-03:00"),
            (day, day + 1)
        );
        // Overlapping periods share a day; periods on other days do not.
        let a = lock_days(period(FROM, TO));
        let b = lock_days(period("2030-01-12T09:00:00Z", "2030-01-20T10:00:00Z"));
        assert!(a.contains(b.start()));
        let c = lock_days(period("2030-01-14T10:00:00Z", "2030-01-15T10:00:00Z"));
        assert!(!a.contains(c.start()) && !a.contains(c.end()));
    }

    #[test]
    fn candidates_keep_first_then_the_principal_model() {
        let asked = period(FROM, TO);
        let mut retired = car("AA000AA", 2);
        retired.inactive_date = Some(at("2030-01-12T00:00:00Z"));
        let mut leaves_later = car("AA999AA", 1);
        leaves_later.inactive_date = Some(at(TO));
        let cars = vec![
            car("AC300CC", 1),
            retired,
            car("AB200BB", 2),
            leaves_later,
            car("AA100AA", 1),
        ];
        let order: Vec<String> = candidates(cars.clone(), Some("AC300CC"), Some(2), asked)
            .into_iter()
            .map(|car| car.id)
            .collect();
        assert_eq!(order, ["AC300CC", "AB200BB", "AA100AA", "AA999AA"]);
        let order: Vec<String> = candidates(cars, None, None, asked)
            .into_iter()
            .map(|car| car.id)
            .collect();
        assert_eq!(order, ["AA100AA", "AA999AA", "AB200BB", "AC300CC"]);
    }

    #[test]
    fn update_requests_name_what_changes() {
        let stored = booking(9, FROM, TO, BookingStatus::Reserved);
        let choice = |choice| vehicle_request(Some(choice), &stored);
        assert_eq!(vehicle_request(None, &stored), VehicleRequest::Same);
        assert_eq!(
            choice(VehicleChoice::Car("AA100AA".to_owned())),
            VehicleRequest::Same
        );
        assert_eq!(
            choice(VehicleChoice::Car("AB200BB".to_owned())),
            VehicleRequest::Car("AB200BB".to_owned())
        );
        assert_eq!(choice(VehicleChoice::Model(2)), VehicleRequest::Same);
        assert_eq!(choice(VehicleChoice::Model(3)), VehicleRequest::Model(3));
        assert_eq!(choice(VehicleChoice::Category(1)), VehicleRequest::Same);
        assert_eq!(
            choice(VehicleChoice::Category(4)),
            VehicleRequest::Category(4)
        );
    }

    #[test]
    fn model_based_plans() {
        let mode = AvailabilityMode::Model;
        let asked = period(FROM, TO);
        let car = |id: &str| VehicleRequest::Car(id.to_owned());
        assert_eq!(
            plan(mode, &car("AA100AA"), 1, asked, None),
            Plan::Car {
                car: "AA100AA".to_owned(),
                quota: None
            }
        );
        assert_eq!(
            plan(mode, &VehicleRequest::Model(2), 1, asked, None),
            Plan::FreeCar {
                scope: Scope::Model(2),
                keep: None
            }
        );
        assert_eq!(
            plan(mode, &VehicleRequest::Category(1), 1, asked, None),
            Plan::FreeCar {
                scope: Scope::Category(1),
                keep: None
            }
        );

        let stored = booking(9, FROM, TO, BookingStatus::Reserved);
        let held = Some(Held::of(&stored));
        assert_eq!(
            plan(mode, &VehicleRequest::Same, 1, asked, held),
            Plan::Keep
        );
        let later = period(FROM, "2030-01-14T10:00:00Z");
        let keep = Plan::FreeCar {
            scope: Scope::Model(2),
            keep: Some("AA100AA".to_owned()),
        };
        assert_eq!(plan(mode, &VehicleRequest::Same, 1, later, held), keep);
        let canceled = booking(9, FROM, TO, BookingStatus::Canceled);
        assert_eq!(
            plan(
                mode,
                &VehicleRequest::Same,
                1,
                asked,
                Some(Held::of(&canceled))
            ),
            keep,
            "a reactivated booking needs its car again"
        );
    }

    #[test]
    fn category_based_plans() {
        let mode = AvailabilityMode::Category;
        let asked = period(FROM, TO);
        assert_eq!(
            plan(mode, &VehicleRequest::Category(1), 1, asked, None),
            Plan::Quota(1)
        );
        assert_eq!(
            plan(
                mode,
                &VehicleRequest::Car("AB200BB".to_owned()),
                1,
                asked,
                None
            ),
            Plan::Car {
                car: "AB200BB".to_owned(),
                quota: Some(1)
            }
        );

        let stored = booking(9, FROM, TO, BookingStatus::Reserved);
        let held = Some(Held::of(&stored));
        let later = period(FROM, "2030-01-14T10:00:00Z");
        // A new category is checked; a date change re-checks the car, never the quota.
        assert_eq!(
            plan(mode, &VehicleRequest::Category(3), 3, later, held),
            Plan::Quota(3)
        );
        assert_eq!(
            plan(mode, &VehicleRequest::Model(1), 1, later, held),
            Plan::Keep
        );
        assert_eq!(
            plan(mode, &VehicleRequest::Same, 1, later, held),
            Plan::Car {
                car: "AA100AA".to_owned(),
                quota: None
            }
        );
        assert_eq!(
            plan(mode, &VehicleRequest::Same, 1, asked, held),
            Plan::Keep
        );
        assert_eq!(
            plan(
                mode,
                &VehicleRequest::Car("AB200BB".to_owned()),
                1,
                asked,
                held
            ),
            Plan::Car {
                car: "AB200BB".to_owned(),
                quota: None
            }
        );

        let mut carless = booking(9, FROM, TO, BookingStatus::Canceled);
        carless.car = None;
        assert_eq!(
            plan(
                mode,
                &VehicleRequest::Same,
                1,
                later,
                Some(Held::of(&carless))
            ),
            Plan::Keep,
            "no check for a reactivated booking without a car"
        );
    }
}
