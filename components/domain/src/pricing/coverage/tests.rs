use rust_decimal::Decimal;

use super::*;
use crate::models::AppliedCoverageBracket;
use crate::pricing::fixtures::*;
use crate::pricing::*;

#[test]
fn strip_removes_every_coverage_bracket() {
    let mut quote = Fixture::new().days(10).quote().unwrap();
    strip_coverage_brackets(&mut quote.lines);
    assert!(
        quote
            .lines
            .iter()
            .all(|line| line.applied_coverage_brackets.is_none())
    );
}

#[test]
fn fresh_quotes_are_traceable_with_or_without_agency() {
    let mut fixture = with_surcharges().days(10);
    fixture.young_driver = true;
    assert!(coverage_is_traceable(&fixture.quote().unwrap().lines));
    fixture.has_agency = true;
    assert!(coverage_is_traceable(&fixture.quote().unwrap().lines));
    let quote = fixture.quote().unwrap();
    let sent = quote.price + d("1.00");
    let adjusted = accept_sent_price(quote, Some(sent)).unwrap();
    assert!(coverage_is_traceable(&adjusted.lines));
}

#[test]
fn lines_without_any_detail_are_traceable() {
    let mut lines = Fixture::new().days(10).quote().unwrap().lines;
    strip_coverage_brackets(&mut lines);
    assert!(coverage_is_traceable(&lines));
    assert!(coverage_is_traceable(&[]));
}

/// A rental line of `quantity` days at 29.00 in range 8-30, paid by `payer`.
fn extension(id: i64, quantity: i64, payer: Payer) -> PriceItem {
    let price = Decimal::from(quantity) * d("29.00");
    PriceItem {
        id,
        kind: PriceItemType::Rental.code(),
        quantity,
        unit_price: d("29.00"),
        price,
        payer: payer.code(),
        applied_coverage_brackets: Some(vec![AppliedCoverageBracket {
            days_from: 8,
            days_to: 30,
            amount: price,
        }]),
        ..PriceItem::default()
    }
}

#[test]
fn an_extension_by_the_same_payer_in_the_same_range_stays_traceable() {
    // 10 days (days 8-10 in 8-30), extended by 5 days paid by the customer too.
    let mut lines = Fixture::new().days(10).quote().unwrap().lines;
    lines.push(extension(5, 5, Payer::Customer));
    assert!(coverage_is_traceable(&lines));
}

#[test]
fn an_extension_by_another_payer_in_the_same_range_is_not_traceable() {
    let mut fixture = Fixture::new().days(10);
    fixture.has_agency = true;
    let mut lines = fixture.quote().unwrap().lines;
    lines.push(extension(5, 5, Payer::Customer));
    assert!(!coverage_is_traceable(&lines));
}

#[test]
fn inconsistent_details_are_not_traceable() {
    let base = Fixture::new().days(10).quote().unwrap().lines;
    // The amount is not the line's price.
    let mut lines = base.clone();
    lines[0].price = d("100.00");
    assert!(!coverage_is_traceable(&lines));
    // One rental line lost its detail.
    let mut lines = base.clone();
    lines[1].applied_coverage_brackets = None;
    assert!(!coverage_is_traceable(&lines));
    // Two ranges on one line.
    let mut lines = base.clone();
    if let Some(ranges) = lines[0].applied_coverage_brackets.as_mut() {
        ranges.push(ranges[0].clone());
    }
    assert!(!coverage_is_traceable(&lines));
    // A line other than rental carries a range.
    let mut lines = base.clone();
    lines[3].applied_coverage_brackets = lines[0].applied_coverage_brackets.clone();
    assert!(!coverage_is_traceable(&lines));
    // Overlapping ranges: 1-3 and 3-7.
    let mut lines = base.clone();
    if let Some(ranges) = lines[1].applied_coverage_brackets.as_mut() {
        ranges[0].days_from = 3;
    }
    assert!(!coverage_is_traceable(&lines));
    // More days charged in 8-30 (3 + 21) than it has (23).
    let mut lines = base;
    lines.push(extension(5, 21, Payer::Customer));
    assert!(!coverage_is_traceable(&lines));
}
