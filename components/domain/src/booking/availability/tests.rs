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

/// What `bookings` occupy, as an availability check reads it.
fn occupied(bookings: &[Booking]) -> Vec<Occupancy> {
    bookings.iter().filter_map(Occupancy::of).collect()
}

fn slot(id: &str, model_id: i64) -> CarSlot {
    CarSlot {
        id: id.to_owned(),
        model_id,
        inactive_date: None,
    }
}

const FROM: &str = "2030-01-10T10:00:00Z";
const TO: &str = "2030-01-13T10:00:00Z";

#[test]
fn a_car_is_free_unless_an_active_booking_overlaps() {
    let asked = period(FROM, TO);
    let before = booking(1, "2030-01-05T10:00:00Z", FROM, BookingStatus::Closed);
    let touching = booking(2, "2030-01-08T10:00:00Z", FROM, BookingStatus::Reserved);
    let after = booking(3, TO, "2030-01-15T10:00:00Z", BookingStatus::Quoted);
    assert!(car_is_free(
        &occupied(&[before, touching, after]),
        asked,
        None
    ));

    for status in BookingStatus::ALL {
        let inside = occupied(&[booking(
            4,
            "2030-01-11T10:00:00Z",
            "2030-01-12T10:00:00Z",
            status,
        )]);
        assert_eq!(
            car_is_free(&inside, asked, None),
            !status.holds_capacity(),
            "{status}"
        );
        assert!(
            car_is_free(&inside, asked, Some(4)),
            "a booking does not block itself"
        );
    }
}

#[test]
fn room_is_the_peak_of_running_bookings() {
    let asked = period(FROM, TO);
    let reserved = BookingStatus::Reserved;
    // Two bookings in a row never run at once: one car is enough for both.
    let sequential = occupied(&[
        booking(1, "2030-01-09T10:00:00Z", "2030-01-11T10:00:00Z", reserved),
        booking(2, "2030-01-11T10:00:00Z", "2030-01-14T10:00:00Z", reserved),
    ]);
    assert!(!has_room(&sequential, asked, None, 1));
    assert!(has_room(&sequential, asked, None, 2));
    let parallel = occupied(&[
        booking(1, "2030-01-09T10:00:00Z", "2030-01-11T10:00:00Z", reserved),
        booking(2, "2030-01-10T12:00:00Z", "2030-01-14T10:00:00Z", reserved),
    ]);
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
    let mut retired = slot("AA000AA", 2);
    retired.inactive_date = Some(at("2030-01-12T00:00:00Z"));
    let mut leaves_later = slot("AA999AA", 1);
    leaves_later.inactive_date = Some(at(TO));
    let cars = vec![
        slot("AC300CC", 1),
        retired,
        slot("AB200BB", 2),
        leaves_later,
        slot("AA100AA", 1),
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
