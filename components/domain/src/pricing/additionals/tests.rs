use super::*;
use crate::pricing::fixtures::*;
use crate::pricing::*;

#[test]
fn per_day_additionals_are_price_x_quantity_x_days() {
    // GPS 5.00 x 1 x 3 days = 15.00; child seats 4.50 x 2 x 3 days = 27.00.
    let mut fixture = Fixture::new();
    fixture.requested = vec![take(4, 2), take(3, 1)];
    let quote = fixture.quote().unwrap();
    let lines = of_kind(&quote, PriceItemType::Additional);
    assert_eq!(
        amounts(&lines),
        vec![
            (d("12.00"), 3, d("36.00")),
            (d("5.00"), 3, d("15.00")),
            (d("4.50"), 6, d("27.00")),
        ]
    );
    let ids: Vec<i64> = lines.iter().map(|line| line.type_id).collect();
    assert_eq!(ids, vec![1, 3, 4], "catalogue order");
    assert_eq!(
        lines[2].description.as_deref(),
        Some("Additional 4 x2, 3 days")
    );
    let taken: Vec<(i64, i64)> = quote
        .additionals
        .iter()
        .map(|taken| (taken.additional.id, taken.quantity))
        .collect();
    assert_eq!(taken, vec![(1, 1), (3, 1), (4, 2)]);
    assert_eq!(quote.additionals[2].additional.price, d("4.50"));
    assert_consistent(&quote);
}

#[test]
fn per_unit_additionals_are_price_x_quantity() {
    // Additional driver 20.00 x 2 = 40.00, whatever the days.
    let mut fixture = Fixture::new().days(10);
    fixture.requested = vec![take(5, 2)];
    let quote = fixture.quote().unwrap();
    let lines = of_kind(&quote, PriceItemType::Additional);
    assert_eq!(amounts(&lines[1..]), vec![(d("20.00"), 2, d("40.00"))]);
    assert_eq!(lines[1].description.as_deref(), Some("Additional 5 x2"));
}

#[test]
fn a_required_additional_is_re_added_once_when_omitted_or_sent_with_0() {
    for requested in [vec![], vec![take(1, 0)]] {
        let mut fixture = Fixture::new();
        fixture.requested = requested;
        let quote = fixture.quote().unwrap();
        // Basic insurance 12.00 x 1 x 3 days = 36.00.
        let lines = of_kind(&quote, PriceItemType::Additional);
        assert_eq!(amounts(&lines), vec![(d("12.00"), 3, d("36.00"))]);
        assert_eq!(quote.additionals.len(), 1);
        assert_eq!(quote.additionals[0].quantity, 1);
        assert!(quote.additionals[0].additional.is_required);
    }
}

#[test]
fn optional_additionals_with_quantity_0_are_not_taken() {
    let mut fixture = Fixture::new();
    fixture.requested = vec![take(3, 0)];
    let quote = fixture.quote().unwrap();
    assert_eq!(of_kind(&quote, PriceItemType::Additional).len(), 1);
}

#[test]
fn the_same_additional_twice_adds_up_its_quantities() {
    let mut fixture = Fixture::new();
    fixture.requested = vec![take(5, 1), take(5, 1)];
    let quote = fixture.quote().unwrap();
    let lines = of_kind(&quote, PriceItemType::Additional);
    assert_eq!(amounts(&lines[1..]), vec![(d("20.00"), 2, d("40.00"))]);
    fixture.requested = vec![take(5, 2), take(5, 1)];
    let error = fixture.quote().unwrap_err();
    assert_eq!(error.code, ErrorCode::AdditionalMaxQuantityExceeded);
}

#[test]
fn above_max_quantity_per_booking_is_error_32() {
    // Child seats: at most 2 per booking.
    let mut fixture = Fixture::new();
    fixture.requested = vec![take(4, 3)];
    let error = fixture.quote().unwrap_err();
    assert_eq!(error.code, ErrorCode::AdditionalMaxQuantityExceeded);
    assert_eq!(error.code.code(), 32);
    assert_eq!(error.field.as_deref(), Some("Additionals"));
    fixture.requested = vec![take(4, 2)];
    assert!(fixture.quote().is_ok());
}

#[test]
fn above_a_limited_stock_is_error_32_and_stock_0_is_unlimited() {
    // Snow chains: no per-booking limit, 2 in stock.
    let mut fixture = Fixture::new();
    fixture.requested = vec![take(6, 3)];
    let error = fixture.quote().unwrap_err();
    assert_eq!(error.code, ErrorCode::AdditionalMaxQuantityExceeded);
    fixture.requested = vec![take(6, 2)];
    assert!(fixture.quote().is_ok());
    // Additional drivers: stock 0, so only the per-booking maximum of 2 limits them.
    fixture.requested = vec![take(5, 2)];
    assert!(fixture.quote().is_ok());
}

#[test]
fn an_unknown_additional_is_error_31_and_a_negative_quantity_98() {
    let mut fixture = Fixture::new();
    fixture.requested = vec![take(99, 1)];
    let error = fixture.quote().unwrap_err();
    assert_eq!(error.code, ErrorCode::AdditionalNotFound);
    assert_eq!(error.code.code(), 31);
    fixture.requested = vec![take(3, -1)];
    let error = fixture.quote().unwrap_err();
    assert_eq!(error.code, ErrorCode::ModelNotValid);
    assert_eq!(error.field.as_deref(), Some("Additionals"));
}
