use chrono::{DateTime, FixedOffset};
use rust_decimal::Decimal;

use super::*;
use crate::error::ErrorCode;

fn at(value: &str) -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339(value).unwrap()
}

const FROM_AT: &str = "2030-01-10T10:00:00Z";
const TO_AT: &str = "2030-01-13T10:00:00Z";

fn asked() -> Period {
    Period::new(at(FROM_AT), at(TO_AT)).unwrap()
}

fn held(booking_id: i64, from: &str, to: &str) -> Occupancy {
    Occupancy {
        booking_id,
        period: Period::new(at(from), at(to)).unwrap(),
    }
}

fn category(id: i64, order: i64) -> Category {
    Category {
        id,
        order: Decimal::from(order),
        ..Category::default()
    }
}

fn model(id: i64, category: Option<i64>) -> Model {
    Model {
        id,
        category: category.map(|id| Category {
            id,
            ..Category::default()
        }),
        ..Model::default()
    }
}

fn car(id: &str, model: i64, inactive: Option<&str>) -> CarSlot {
    CarSlot {
        id: id.to_owned(),
        model_id: model,
        inactive_date: inactive.map(at),
    }
}

/// Category 1 shown after category 2; model 10 and 11 in category 1, 20 in 2, 30 in none.
fn catalogue() -> (Vec<Category>, Vec<Model>, Vec<CarSlot>) {
    let categories = vec![category(1, 5), category(2, 1)];
    let models = vec![
        model(10, Some(1)),
        model(11, Some(1)),
        model(20, Some(2)),
        model(30, None),
    ];
    let cars = vec![
        car("A", 10, None),
        car("B", 10, None),
        car("C", 10, Some("2030-01-12T00:00:00Z")),
        car("D", 11, None),
        car("E", 20, None),
        car("F", 30, None),
    ];
    (categories, models, cars)
}

fn parse(query: &str) -> Result<AvailabilityQuery, ApiError> {
    AvailabilityQuery::parse(query.split('&').filter_map(|pair| pair.split_once('=')))
}

#[test]
fn the_query_is_a_creations_period_and_places() {
    let query = parse(&format!(
        "from={FROM_AT}&to={TO_AT}&deliveryPlace=1&returnPlace=3&offset=2&limit=500"
    ))
    .unwrap();
    assert_eq!(query.request.from_date, Some(at(FROM_AT)));
    assert_eq!(query.request.to_date, Some(at(TO_AT)));
    assert_eq!(query.request.delivery_place.unwrap().id, Some(1));
    assert_eq!(query.request.return_place.unwrap().id, Some(3));
    assert!(query.request.car.is_none() && query.request.customer.is_none());
    assert_eq!(query.page, Page::new(Some(2), Some(100)));
}

#[test]
fn each_parameter_is_required_and_named_when_wrong() {
    let full = [
        format!("{FROM}={FROM_AT}"),
        format!("{TO}={TO_AT}"),
        format!("{DELIVERY_PLACE}=1"),
        format!("{RETURN_PLACE}=1"),
    ];
    for (left_out, name) in [FROM, TO, DELIVERY_PLACE, RETURN_PLACE]
        .into_iter()
        .enumerate()
    {
        let mut pairs = full.to_vec();
        pairs.remove(left_out);
        let error = parse(&pairs.join("&")).unwrap_err();
        assert_eq!(error.code, ErrorCode::ModelNotValid, "{name}");
        assert_eq!(error.field.as_deref(), Some(name));

        pairs.push(format!("{name}=soon"));
        let error = parse(&pairs.join("&")).unwrap_err();
        assert_eq!(error.field.as_deref(), Some(name));
    }
}

#[test]
fn the_rules_errors_name_the_query_parameters() {
    for (field, name) in [
        (fields::FROM_DATE, FROM),
        (fields::TO_DATE, TO),
        (fields::DELIVERY_PLACE_ID, DELIVERY_PLACE),
        (fields::RETURN_PLACE_ID, RETURN_PLACE),
        ("Customer", "Customer"),
    ] {
        let error = in_query_terms(ApiError::new(ErrorCode::InvlaidDates).with_field(field));
        assert_eq!(error.field.as_deref(), Some(name));
        assert_eq!(error.code, ErrorCode::InvlaidDates);
    }
}

#[test]
fn a_model_is_offered_with_its_free_cars_in_service() {
    let (categories, models, cars) = catalogue();
    let fleet = Fleet {
        categories: &categories,
        models: &models,
        cars: &cars,
    };
    let occupied = HashMap::from([
        // B is taken within the period; D only before it (touching).
        (
            "B".to_owned(),
            vec![held(1, "2030-01-11T10:00:00Z", "2030-01-20T10:00:00Z")],
        ),
        (
            "D".to_owned(),
            vec![held(2, "2030-01-01T10:00:00Z", FROM_AT)],
        ),
    ]);
    let offer = |category, model, available| Offer {
        category,
        model: Some(model),
        available,
    };
    // C leaves the fleet during the period; model 30 has no category. Category 2 first.
    assert_eq!(
        model_offers(fleet, &occupied, asked()),
        vec![offer(2, 20, 1), offer(1, 10, 1), offer(1, 11, 1)]
    );

    let occupied = HashMap::from([("E".to_owned(), vec![held(3, FROM_AT, TO_AT)])]);
    assert_eq!(
        model_offers(fleet, &occupied, asked()),
        vec![offer(1, 10, 2), offer(1, 11, 1)]
    );
}

#[test]
fn a_category_is_offered_with_the_room_left_in_its_quota() {
    let (categories, models, cars) = catalogue();
    let fleet = Fleet {
        categories: &categories,
        models: &models,
        cars: &cars,
    };
    let offer = |category, available| Offer {
        category,
        model: None,
        available,
    };
    // Category 1 has A, B and D in service over the period (C leaves during it).
    assert_eq!(
        category_offers(fleet, &HashMap::new(), asked()),
        vec![offer(2, 1), offer(1, 3)]
    );
    // Two bookings that do not overlap each other use one place; then a third overlapping
    // one of them uses a second.
    let mut holds = vec![
        held(1, FROM_AT, "2030-01-11T10:00:00Z"),
        held(2, "2030-01-11T10:00:00Z", TO_AT),
    ];
    let occupied = HashMap::from([(1, holds.clone()), (2, vec![held(9, FROM_AT, TO_AT)])]);
    assert_eq!(
        category_offers(fleet, &occupied, asked()),
        vec![offer(1, 2)]
    );
    holds.push(held(3, "2030-01-12T10:00:00Z", "2030-01-20T10:00:00Z"));
    let occupied = HashMap::from([(1, holds)]);
    assert_eq!(
        category_offers(fleet, &occupied, asked()),
        vec![offer(2, 1), offer(1, 1)]
    );
}
