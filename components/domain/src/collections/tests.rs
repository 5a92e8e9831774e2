use chrono::DateTime;
use serde_json::json;

use super::*;
use crate::fixtures;
use crate::models::Place;

fn booking(status: BookingStatus) -> Booking {
    fixtures::booking(
        status,
        json!({
            "Id": 42,
            "Category": {"Id": 2},
            "FromDate": "2024-03-01T10:00:00-03:00",
            "ToDate": "2024-03-04T10:00:00-03:00",
            "CurrentStatusDate": "2024-03-04T11:30:00-03:00"
        }),
    )
}

fn micros(value: &str) -> KeyPart {
    KeyPart::Time(
        DateTime::parse_from_rfc3339(value)
            .unwrap()
            .timestamp_micros(),
    )
}

fn index_names(indexes: &[IndexKey]) -> Vec<&'static str> {
    indexes.iter().map(|index| index.name).collect()
}

/// The days (since the Unix epoch, UTC) of 2024-03-01 to 2024-03-04, the days of [`booking`].
const DAYS: std::ops::RangeInclusive<i64> = 19_783..=19_786;

/// The entries of `owner` in a day index for [`booking`]'s period, one per day.
fn on_days(name: &'static str, owner: KeyPart) -> Vec<IndexKey> {
    DAYS.map(|day| {
        IndexKey::new(
            name,
            [
                owner.clone(),
                KeyPart::Int(day),
                micros("2024-03-04T13:00:00Z"),
                micros("2024-03-01T13:00:00Z"),
                KeyPart::Int(42),
            ],
        )
    })
    .collect()
}

#[test]
fn legacy_reserved_booking_without_car_has_id_status_and_category_entries() {
    let booking = booking(BookingStatus::Reserved);
    assert_eq!(booking.id(), "42");
    let mut expected = vec![
        IndexKey::new("id", [KeyPart::Int(42)]),
        IndexKey::new("status", [KeyPart::Int(2), KeyPart::Int(42)]),
        IndexKey::new(
            "category-period",
            [
                KeyPart::Int(2),
                micros("2024-03-04T13:00:00Z"),
                micros("2024-03-01T13:00:00Z"),
                KeyPart::Int(42),
            ],
        ),
    ];
    expected.extend(on_days("category-day", KeyPart::Int(2)));
    assert_eq!(booking.indexes(), expected);
}

#[test]
fn only_bookings_holding_capacity_are_in_the_availability_indexes() {
    for status in BookingStatus::ALL {
        let mut booking = booking(status);
        booking.car = Some(Car {
            id: "AB123CD".to_owned(),
            ..Car::default()
        });
        let indexes = booking.indexes();
        let names = index_names(&indexes);
        let availability = [
            bookings::BY_CAR_PERIOD,
            bookings::BY_CATEGORY_PERIOD,
            bookings::BY_CAR_DAY,
            bookings::BY_CATEGORY_DAY,
        ];
        for index in availability {
            assert_eq!(
                names.contains(&index),
                status.holds_capacity(),
                "{status} {index}"
            );
        }
        for index in [bookings::BY_CAR, bookings::BY_CATEGORY] {
            assert!(!names.contains(&index), "{status}: nothing adds {index}");
        }
        if status.holds_capacity() {
            let of = |name: &str| -> Vec<IndexKey> {
                indexes.iter().filter(|i| i.name == name).cloned().collect()
            };
            let car = KeyPart::Text("AB123CD".to_owned());
            assert_eq!(
                of(bookings::BY_CAR_PERIOD),
                [IndexKey::new(
                    bookings::BY_CAR_PERIOD,
                    [
                        car.clone(),
                        micros("2024-03-04T13:00:00Z"),
                        micros("2024-03-01T13:00:00Z"),
                        KeyPart::Int(42)
                    ]
                )]
            );
            assert_eq!(of(bookings::BY_CAR_DAY), on_days(bookings::BY_CAR_DAY, car));
            assert_eq!(
                of(bookings::BY_CATEGORY_DAY),
                on_days(bookings::BY_CATEGORY_DAY, KeyPart::Int(2))
            );
            for entry in indexes.iter().filter(|i| availability.contains(&i.name)) {
                assert_eq!(
                    bookings::occupancy(&entry.parts),
                    Occupancy::of(&booking),
                    "what the {} entry says of its booking",
                    entry.name
                );
            }
        }
    }
}

#[test]
fn a_period_ending_at_midnight_does_not_reach_into_that_day() {
    let mut booking = booking(BookingStatus::Reserved);
    booking.from_date = DateTime::parse_from_rfc3339("2024-03-01T00:00:00Z").unwrap();
    booking.to_date = DateTime::parse_from_rfc3339("2024-03-03T00:00:00Z").unwrap();
    let days: Vec<KeyPart> = booking
        .indexes()
        .into_iter()
        .filter(|i| i.name == bookings::BY_CATEGORY_DAY)
        .map(|i| i.parts[1].clone())
        .collect();
    assert_eq!(days, [KeyPart::Int(19_783), KeyPart::Int(19_784)]);
}

#[test]
fn an_availability_entry_tells_its_booking_and_period() {
    let at = |value: &str| DateTime::parse_from_rfc3339(value).unwrap();
    let told = Some(Occupancy {
        booking_id: 42,
        period: Period {
            from: at("2024-03-04T09:59:59.123456-03:00"),
            to: at("2024-03-10T13:00:00Z"),
        },
    });
    let (to, from) = (
        micros("2024-03-10T13:00:00Z"),
        micros("2024-03-04T12:59:59.123456Z"),
    );
    let car = KeyPart::Text("AB123CD".to_owned());
    let on_a_day = [
        car.clone(),
        KeyPart::Int(19_786),
        to.clone(),
        from.clone(),
        KeyPart::Int(42),
    ];
    assert_eq!(bookings::occupancy(&on_a_day), told);
    let whole_period = [car, to.clone(), from, KeyPart::Int(42)];
    assert_eq!(bookings::occupancy(&whole_period), told);
    let written_before = [KeyPart::Int(2), to, KeyPart::Int(42)];
    assert_eq!(
        bookings::occupancy(&written_before),
        None,
        "an entry without the start must have its booking read"
    );
}

#[test]
fn a_check_reads_its_days_and_the_earlier_entries_ending_after_its_start() {
    let period = Period {
        from: DateTime::parse_from_rfc3339("2024-03-01T10:00:00-03:00").unwrap(),
        to: DateTime::parse_from_rfc3339("2024-03-04T10:00:00-03:00").unwrap(),
    };
    let expected = |day_index, earlier_index, owner: KeyPart| {
        [
            (
                day_index,
                KeyRange {
                    lower: Some(Bound::Inclusive(vec![owner.clone(), KeyPart::Int(19_783)])),
                    upper: Some(Bound::Inclusive(vec![owner.clone(), KeyPart::Int(19_786)])),
                },
            ),
            (
                earlier_index,
                KeyRange {
                    lower: Some(Bound::Exclusive(vec![
                        owner.clone(),
                        micros("2024-03-01T13:00:00Z"),
                    ])),
                    upper: Some(Bound::Inclusive(vec![owner])),
                },
            ),
        ]
    };
    assert_eq!(
        bookings::car_ranges("AB123CD", period),
        expected(
            bookings::BY_CAR_DAY,
            bookings::BY_CAR,
            KeyPart::Text("AB123CD".to_owned())
        )
    );
    assert_eq!(
        bookings::category_ranges(3, period),
        expected(
            bookings::BY_CATEGORY_DAY,
            bookings::BY_CATEGORY,
            KeyPart::Int(3)
        )
    );
}

#[test]
fn locks_are_keyed_by_car_or_category_and_day() {
    let car = CarLock {
        car_id: "AB123CD".to_owned(),
        day: 20_500,
    };
    assert_eq!(<CarLock as Stored>::COLLECTION, "car-locks");
    assert_eq!(car.id(), "AB123CD/20500");
    assert!(car.indexes().is_empty());
    let category = CategoryLock {
        category_id: 3,
        day: 20_500,
    };
    assert_eq!(<CategoryLock as Stored>::COLLECTION, "category-locks");
    assert_eq!(category.id(), "3/20500");
    assert!(category.indexes().is_empty());
}

#[test]
fn closed_audited_booking_with_code_has_every_entry() {
    let mut booking = booking(BookingStatus::Closed);
    booking.updated_on = Some(DateTime::parse_from_rfc3339("2024-03-04T11:31:00-03:00").unwrap());
    booking.code = Some("BK-42".to_owned());
    assert_eq!(
        booking.indexes(),
        vec![
            IndexKey::new("id", [KeyPart::Int(42)]),
            IndexKey::new("status", [KeyPart::Int(5), KeyPart::Int(42)]),
            IndexKey::new(
                "updated",
                [
                    micros("2024-03-04T14:31:00Z"),
                    KeyPart::Int(5),
                    KeyPart::Int(42)
                ]
            ),
            IndexKey::new("closed", [micros("2024-03-04T14:30:00Z"), KeyPart::Int(42)]),
            IndexKey::new("code", [KeyPart::Text("BK-42".to_owned())]),
        ]
    );
}

#[test]
fn only_closed_bookings_are_in_the_closed_index() {
    for status in BookingStatus::ALL {
        let names = index_names(&booking(status).indexes());
        assert_eq!(
            names.contains(&bookings::BY_CLOSED),
            status == BookingStatus::Closed,
            "{status}"
        );
    }
}

#[test]
fn record_carries_collection_id_body_and_indexes() {
    let booking = booking(BookingStatus::Quoted);
    let record = booking.record().unwrap();
    assert_eq!(record.collection, "bookings");
    assert_eq!(record.id, "42");
    assert_eq!(record.indexes, booking.indexes());
    let back: Booking = serde_json::from_str(&record.body).unwrap();
    assert_eq!(back, booking);
}

#[test]
fn updated_after_excludes_the_instant_itself() {
    let since = DateTime::parse_from_rfc3339("2024-03-01T00:00:00Z")
        .unwrap()
        .to_utc();
    assert_eq!(
        bookings::updated_after(since),
        KeyRange {
            lower: Some(Bound::Exclusive(vec![micros("2024-03-01T00:00:00Z")])),
            upper: None,
        }
    );
}

#[test]
fn customers_by_id_and_global_id() {
    let mut doc = CustomerDoc {
        customer: Customer {
            id: 9,
            ..Customer::default()
        },
        created_by_user_id: Some(4),
    };
    assert_eq!(<CustomerDoc as Stored>::COLLECTION, "customers");
    assert_eq!(doc.id(), "9");
    assert_eq!(doc.indexes(), vec![IndexKey::new("id", [KeyPart::Int(9)])]);
    doc.customer.global_id = Some("5f0c".to_owned());
    assert_eq!(
        doc.indexes(),
        vec![
            IndexKey::new("id", [KeyPart::Int(9)]),
            IndexKey::new("global-id", [KeyPart::Text("5f0c".to_owned())]),
        ]
    );
    let body = serde_json::to_value(&doc).unwrap();
    assert_eq!(body["CreatedByUserId"], json!(4));
    assert_eq!(body["Customer"]["Id"], json!(9));
}

#[test]
fn cars_by_id_and_model() {
    let car = Car {
        id: "AB123CD".to_owned(),
        model: Model {
            id: 5,
            ..Model::default()
        },
        ..Car::default()
    };
    assert_eq!(<Car as Stored>::COLLECTION, "cars");
    assert_eq!(car.id(), "AB123CD");
    let id = KeyPart::Text("AB123CD".to_owned());
    assert_eq!(
        car.indexes(),
        vec![
            IndexKey::new("id", [id.clone()]),
            IndexKey::new("model", [KeyPart::Int(5), id]),
        ]
    );
}

#[test]
fn only_active_branch_offices_are_listed() {
    let mut doc = BranchOfficeDoc {
        office: BranchOffice {
            id: 3,
            places: vec![Place::default()],
            ..BranchOffice::default()
        },
        active: false,
    };
    assert_eq!(<BranchOfficeDoc as Stored>::COLLECTION, "branch-offices");
    assert_eq!(doc.id(), "3");
    assert_eq!(doc.indexes(), vec![IndexKey::new("id", [KeyPart::Int(3)])]);
    doc.active = true;
    assert_eq!(
        index_names(&doc.indexes()),
        vec![branch_offices::BY_ID, branch_offices::ACTIVE]
    );
    assert_eq!(doc.indexes()[1].parts, vec![KeyPart::Int(3)]);
    assert_eq!(serde_json::to_value(&doc).unwrap()["Active"], json!(true));
}

#[test]
fn catalog_collections() {
    let category = Category {
        id: 2,
        ..Category::default()
    };
    assert_eq!(<Category as Stored>::COLLECTION, "categories");
    assert_eq!(category.id(), "2");
    assert_eq!(
        category.indexes(),
        vec![IndexKey::new("id", [KeyPart::Int(2)])]
    );

    let mut model = Model {
        id: 5,
        ..Model::default()
    };
    assert_eq!(<Model as Stored>::COLLECTION, "models");
    assert_eq!(
        model.indexes(),
        vec![IndexKey::new("id", [KeyPart::Int(5)])]
    );
    model.category = Some(category);
    assert_eq!(
        model.indexes(),
        vec![
            IndexKey::new("id", [KeyPart::Int(5)]),
            IndexKey::new("category", [KeyPart::Int(2), KeyPart::Int(5)]),
        ]
    );

    let additional = Additional {
        id: 8,
        ..Additional::default()
    };
    assert_eq!(<Additional as Stored>::COLLECTION, "additionals");
    assert_eq!(additional.id(), "8");
    assert_eq!(
        additional.indexes(),
        vec![IndexKey::new("id", [KeyPart::Int(8)])]
    );

    let tariff = Tariff {
        id: 6,
        category_id: 2,
        ..Tariff::default()
    };
    assert_eq!(<Tariff as Stored>::COLLECTION, "tariffs");
    assert_eq!(tariff.id(), "6");
    assert_eq!(
        tariff.indexes(),
        vec![
            IndexKey::new("id", [KeyPart::Int(6)]),
            IndexKey::new("category", [KeyPart::Int(2), KeyPart::Int(6)]),
        ]
    );
}

#[test]
fn booking_comments_by_booking_and_sequence() {
    let comment: BookingComment = serde_json::from_value(json!({
        "BookingId": 42, "Seq": 3, "Date": "2024-03-01T00:00:00Z",
        "UserName": "api-user", "Text": "Return place changed"
    }))
    .unwrap();
    assert_eq!(<BookingComment as Stored>::COLLECTION, "booking-comments");
    assert_eq!(comment.id(), "42-3");
    assert_eq!(booking_comments::id(42, 3), "42-3");
    assert_eq!(
        comment.indexes(),
        vec![IndexKey::new(
            "booking",
            [KeyPart::Int(42), KeyPart::Int(3)]
        )]
    );
}

#[cfg(feature = "demo")]
#[test]
fn counted_indexes_hold_one_fixed_width_entry_per_document() {
    let demo = crate::demo::demo_tenant(chrono::Utc::now()).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for record in &demo.records {
        for counted in COUNTED.iter().filter(|c| c.collection == record.collection) {
            let entries: Vec<&IndexKey> = record
                .indexes
                .iter()
                .filter(|index| index.name == counted.index)
                .collect();
            assert!(entries.len() <= 1, "{counted:?} in {}", record.id);
            for entry in entries {
                let head = entry.parts.get(..counted.depth).expect("deep enough");
                assert!(
                    head.iter()
                        .all(|part| matches!(part, KeyPart::Int(_) | KeyPart::Time(_))),
                    "{counted:?}: {head:?}"
                );
                seen.insert((counted.collection, counted.index));
            }
        }
    }
    assert_eq!(
        seen.len(),
        COUNTED.len(),
        "every counted index has demo entries"
    );
}

#[test]
fn prefix_ranges_are_recognised_as_prefixes() {
    let status = vec![KeyPart::Int(5)];
    assert_eq!(KeyRange::all().as_prefix(), Some(&[][..]));
    assert_eq!(
        KeyRange::prefix(status.clone()).as_prefix(),
        Some(&status[..])
    );
    let open_above = KeyRange {
        lower: Some(Bound::Inclusive(status.clone())),
        upper: None,
    };
    assert_eq!(open_above.as_prefix(), None);
    assert_eq!(bookings::updated_after(Utc::now()).as_prefix(), None);
}

#[test]
fn a_booking_item_is_the_list_form_of_the_stored_booking() {
    let booking = booking(BookingStatus::Closed);
    let items = view(booking_items::COLLECTION).unwrap();
    assert_eq!(items.source, bookings::COLLECTION);
    let stored = serde_json::to_string(&booking).unwrap();
    assert_eq!(
        (items.render)(&stored).unwrap(),
        serde_json::to_string(&BookingDescription::from(&booking)).unwrap()
    );
    assert!((items.render)(r#"{"Id": "not a booking"}"#).is_err());
    assert_eq!(views_of(bookings::COLLECTION).count(), 1);
    assert!(view(bookings::COLLECTION).is_none());
    assert_eq!(views_of(customers::COLLECTION).count(), 0);
}

#[test]
fn a_car_slot_is_what_availability_reads_of_the_car() {
    let slots = view(car_slots::COLLECTION).unwrap();
    assert_eq!(slots.source, cars::COLLECTION);
    assert!(!slots.feed);
    let car: Car = serde_json::from_value(json!({
        "Id": "AB123CD",
        "Model": {"Id": 7, "Name": "Volkswagen Taos"},
        "Color": "Gris",
        "InactiveDate": "2030-02-01T00:00:00-03:00",
    }))
    .unwrap();
    let rendered = (slots.render)(&serde_json::to_string(&car).unwrap()).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&rendered).unwrap(),
        json!({"Id": "AB123CD", "ModelId": 7, "InactiveDate": "2030-02-01T00:00:00-03:00"})
    );
    let slot: CarSlot = serde_json::from_str(&rendered).unwrap();
    assert_eq!(slot, CarSlot::of(&car));
    assert_eq!(views_of(cars::COLLECTION).count(), 1);
}
