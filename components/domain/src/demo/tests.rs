use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::pricing::{Payer, PriceItemType};
use crate::status::BookingStatus;

const RENTAL: i64 = PriceItemType::Rental.code();
/// The file's required insurance.
const BASIC_INSURANCE: i64 = 1;

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
    let models: Vec<Model> = stored(&demo.catalog, collections::car_models::COLLECTION).unwrap();
    assert_eq!(models.len(), 8);
    for model in &models {
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

#[test]
fn the_catalog_file_is_as_export_writes_it() {
    let file = catalog::import(CATALOG, Catalog::default()).unwrap();
    assert_eq!(file.export().unwrap(), CATALOG);
}

#[test]
fn rates_the_creation_does_not_compute_are_zero_as_through_the_api() {
    let demo = demo();
    for booking in &demo.bookings {
        assert!(!booking.daily_rate.is_zero(), "{}", booking.id);
        assert_eq!(booking.hourly_rate, Decimal::ZERO, "{}", booking.id);
        assert_eq!(booking.extra_day_rate, Decimal::ZERO, "{}", booking.id);
        assert_eq!(booking.extra_hour_rate, Decimal::ZERO, "{}", booking.id);
    }
}

#[test]
fn past_bookings_come_before_the_demo_with_ids_after_it() {
    let tenant = demo_tenant(now()).unwrap();
    let demo = demo();
    let last_id = demo.bookings.iter().map(|b| b.id).max().unwrap();
    let earliest = demo.bookings.iter().map(|b| b.from_date).min().unwrap();
    let past: Vec<Booking> = tenant
        .past_bookings(1_000)
        .unwrap()
        .map(|record| serde_json::from_str(&record.unwrap().body).unwrap())
        .collect();
    assert_eq!(past.len(), 1_000);
    let ids: BTreeSet<i64> = past.iter().map(|b| b.id).collect();
    assert_eq!(ids, (last_id + 1..=last_id + 1_000).collect());
    for booking in &past {
        assert!(
            matches!(
                booking.current_status,
                BookingStatus::Closed | BookingStatus::Canceled
            ),
            "{}: holds no capacity",
            booking.id
        );
        assert_eq!(booking.code, Some(format!("DEMO-{:06}", booking.id)));
        assert!(booking.to_date < earliest, "{}", booking.id);
        assert!(booking.from_date < booking.to_date);
        assert!(booking.updated_on.is_none_or(|updated| updated < earliest));
    }
    let span = past.iter().map(|b| b.to_date).max().unwrap()
        - past.iter().map(|b| b.to_date).min().unwrap();
    assert!(span.num_days() > 3_000, "spread over years: {span}");
}
