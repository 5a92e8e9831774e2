use chrono::{NaiveDate, NaiveTime, TimeDelta};

use super::*;
use crate::fixtures::tariff;
use crate::pricing::fixtures::*;
use crate::pricing::*;

// --- Places.

#[test]
fn delivery_and_return_places_with_a_price_are_one_line_each() {
    // Delivery at place 2 (25.00), return at place 1 (15.00), same office.
    let mut fixture = Fixture::new();
    fixture.delivery = place(2, 1, "25.00");
    fixture.ret = place(1, 1, "15.00");
    let quote = fixture.quote().unwrap();
    let lines = of_kind(&quote, PriceItemType::Place);
    assert_eq!(
        amounts(&lines),
        vec![(d("25.00"), 1, d("25.00")), (d("15.00"), 1, d("15.00"))]
    );
    assert_eq!(lines[0].type_id, 2);
    assert_eq!(lines[1].type_id, 1);
    assert_eq!(lines[0].description.as_deref(), Some("Delivery at Place 2"));
    assert_eq!(lines[1].description.as_deref(), Some("Return at Place 1"));
    // 3 x 38.00 + 36.00 insurance + 40.00 places = 190.00.
    assert_eq!(quote.price, d("190.00"));
}

#[test]
fn free_places_add_no_line() {
    let quote = Fixture::new().quote().unwrap();
    assert!(of_kind(&quote, PriceItemType::Place).is_empty());
    assert!(of_kind(&quote, PriceItemType::Surcharge).is_empty());
}

// --- Surcharges.

#[test]
fn one_way_is_charged_once_when_the_return_office_differs() {
    let mut fixture = with_surcharges();
    fixture.ret = place(4, 2, "0");
    let quote = fixture.quote().unwrap();
    let lines = of_kind(&quote, PriceItemType::Surcharge);
    assert_eq!(amounts(&lines), vec![(d("40.00"), 1, d("40.00"))]);
    assert_eq!(lines[0].type_id, SurchargeKind::OneWay.code());
    // Another place of the same office is not one-way.
    fixture.ret = place(1, 1, "0");
    let quote = fixture.quote().unwrap();
    assert!(of_kind(&quote, PriceItemType::Surcharge).is_empty());
}

#[test]
fn out_of_hours_is_one_line_per_pick_up_or_return_outside_08_to_20() {
    let mut fixture = with_surcharges();
    fixture.times = LocalTimes {
        pickup: time("07:30"),
        dropoff: time("21:00"),
    };
    let quote = fixture.quote().unwrap();
    let lines = of_kind(&quote, PriceItemType::Surcharge);
    assert_eq!(
        amounts(&lines),
        vec![(d("15.00"), 1, d("15.00")), (d("15.00"), 1, d("15.00"))]
    );
    assert!(
        lines
            .iter()
            .all(|line| line.type_id == SurchargeKind::OutOfHours.code())
    );
    assert_eq!(
        lines[0].description.as_deref(),
        Some("Out-of-hours surcharge: pick-up at 07:30 (office hours 08:00-20:00)")
    );
    // Only the return late: one line.
    fixture.times.pickup = time("09:00");
    let quote = fixture.quote().unwrap();
    assert_eq!(of_kind(&quote, PriceItemType::Surcharge).len(), 1);
}

#[test]
fn opening_and_closing_minutes_are_within_office_hours() {
    let mut fixture = with_surcharges();
    fixture.times = LocalTimes {
        pickup: time("08:00"),
        dropoff: time("20:00"),
    };
    let quote = fixture.quote().unwrap();
    assert!(of_kind(&quote, PriceItemType::Surcharge).is_empty());
    let hours = OfficeHours::default();
    assert!(!hours.contains(NaiveTime::from_hms_opt(20, 0, 1).unwrap()));
    assert!(!hours.contains(NaiveTime::from_hms_opt(7, 59, 59).unwrap()));
}

#[test]
fn young_driver_is_charged_per_day_6x3_eq_18() {
    let mut fixture = with_surcharges();
    fixture.young_driver = true;
    let quote = fixture.quote().unwrap();
    let lines = of_kind(&quote, PriceItemType::Surcharge);
    assert_eq!(amounts(&lines), vec![(d("6.00"), 3, d("18.00"))]);
    assert_eq!(lines[0].type_id, SurchargeKind::YoungDriver.code());
    assert_eq!(lines[0].payer, Payer::Customer.code());
}

#[test]
fn surcharges_set_to_zero_are_off() {
    let mut fixture = Fixture::new();
    fixture.ret = place(4, 2, "0");
    fixture.young_driver = true;
    fixture.times.pickup = time("06:00");
    let quote = fixture.quote().unwrap();
    assert!(of_kind(&quote, PriceItemType::Surcharge).is_empty());
}

// --- Payers.

#[test]
fn with_an_agency_the_agency_pays_the_rental_and_the_customer_the_rest() {
    // 3 x 38.00 = 114.00 for the agency; insurance 36.00 + delivery 25.00 + young driver
    // 18.00 = 79.00 for the customer; 193.00 in all.
    let mut fixture = with_surcharges();
    fixture.has_agency = true;
    fixture.young_driver = true;
    fixture.delivery = place(2, 1, "25.00");
    let quote = fixture.quote().unwrap();
    for line in &quote.lines {
        let expected = if line.kind == PriceItemType::Rental.code() {
            Payer::Agency
        } else {
            Payer::Customer
        };
        assert_eq!(line.payer, expected.code(), "{line:?}");
    }
    assert_eq!(quote.agency_price, d("114.00"));
    assert_eq!(quote.customer_price, d("79.00"));
    assert_eq!(quote.price, d("193.00"));
    assert_consistent(&quote);

    fixture.has_agency = false;
    let quote = fixture.quote().unwrap();
    assert_eq!(quote.agency_price, d("0"));
    assert_eq!(quote.customer_price, d("193.00"));
}

// --- Every kind of line together.

#[test]
fn lines_sum_to_price_with_every_kind_of_line() {
    let mut fixture = with_surcharges().days(9);
    fixture.to += TimeDelta::minutes(75);
    fixture.requested = vec![take(3, 1), take(4, 2), take(5, 1), take(6, 1)];
    fixture.delivery = place(2, 1, "25.00");
    fixture.ret = place(4, 2, "12.00");
    fixture.times = LocalTimes {
        pickup: time("07:00"),
        dropoff: time("22:00"),
    };
    fixture.young_driver = true;
    fixture.has_agency = true;
    let quote = fixture.quote().unwrap();
    assert_eq!(quote.total_days, 10, "9 days 1:15 is 10");
    let kinds: Vec<i64> = quote.lines.iter().map(|line| line.kind).collect();
    assert_eq!(kinds, vec![1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 4, 4, 4, 4]);
    assert_consistent(&quote);
    let accepted = accept_sent_price(quote.clone(), Some(quote.price - d("1.00"))).unwrap();
    assert_consistent(&accepted);
}

// --- Sent price.

/// A quote of exactly 100.00: one rental line.
fn hundred() -> Quote {
    let mut fixture = Fixture::new().days(1);
    fixture.catalog.clear();
    fixture.tariff = Some(tariff(1, "Economy", 1, &[(1, 30, "100.00")]));
    let quote = fixture.quote().unwrap();
    assert_eq!(quote.price, d("100.00"));
    quote
}

#[test]
fn no_sent_price_keeps_the_computed_quote() {
    assert_eq!(accept_sent_price(hundred(), None), Ok(hundred()));
}

#[test]
fn the_computed_price_sent_adds_no_line() {
    assert_eq!(accept_sent_price(hundred(), Some(d("100"))), Ok(hundred()));
}

#[test]
fn sent_101_00_for_100_00_is_exactly_1_percent_and_accepted_with_plus_1_00() {
    let quote = accept_sent_price(hundred(), Some(d("101.00"))).unwrap();
    assert_eq!(quote.price, d("101.00"));
    assert_eq!(quote.customer_price, d("101.00"));
    let adjustment = quote.lines.last().unwrap();
    assert_eq!(adjustment.id, 2);
    assert_eq!(adjustment.kind, PriceItemType::Adjustment.code());
    assert_eq!(adjustment.type_id, 0);
    assert_eq!(adjustment.payer, Payer::Customer.code());
    assert_eq!(
        (adjustment.unit_price, adjustment.quantity, adjustment.price),
        (d("1.00"), 1, d("1.00"))
    );
    assert_eq!(adjustment.applied_coverage_brackets, None);
    assert_consistent(&quote);
}

#[test]
fn sent_99_00_for_100_00_is_accepted_with_minus_1_00() {
    let quote = accept_sent_price(hundred(), Some(d("99.00"))).unwrap();
    assert_eq!(quote.price, d("99.00"));
    assert_eq!(quote.lines.last().unwrap().price, d("-1.00"));
    assert_consistent(&quote);
}

#[test]
fn sent_101_01_or_98_99_for_100_00_is_1_01_percent_and_error_4() {
    for sent in ["101.01", "98.99", "0", "-100.00"] {
        let error = accept_sent_price(hundred(), Some(d(sent))).unwrap_err();
        assert_eq!(error.code, ErrorCode::PriceMismatch, "{sent}");
        assert_eq!(error.code.code(), 4);
        assert_eq!(error.field.as_deref(), Some("Price"));
    }
}

#[test]
fn a_sent_price_is_rounded_to_the_minor_unit_first() {
    // 101.004 -> 101.00: accepted; 101.005 -> 101.01: rejected.
    let quote = accept_sent_price(hundred(), Some(d("101.004"))).unwrap();
    assert_eq!(quote.price.to_string(), "101.00");
    assert!(accept_sent_price(hundred(), Some(d("101.005"))).is_err());
}

#[test]
fn tolerance_of_457_00_is_4_57() {
    // 10 days of economy (337.00) plus insurance (120.00) = 457.00; 1% = 4.57.
    let quote = Fixture::new().days(10).quote().unwrap();
    let accepted = accept_sent_price(quote.clone(), Some(d("452.43"))).unwrap();
    assert_eq!(accepted.lines.last().unwrap().price, d("-4.57"));
    assert_eq!(accepted.customer_price, d("452.43"));
    assert!(accept_sent_price(quote.clone(), Some(d("452.42"))).is_err());
    assert!(accept_sent_price(quote.clone(), Some(d("461.57"))).is_ok());
    assert!(accept_sent_price(quote, Some(d("461.58"))).is_err());
}

#[test]
fn a_zero_computed_price_accepts_only_zero() {
    let mut quote = hundred();
    quote.lines.clear();
    quote.price = Decimal::ZERO;
    quote.customer_price = Decimal::ZERO;
    assert!(accept_sent_price(quote.clone(), Some(d("0.00"))).is_ok());
    assert!(accept_sent_price(quote, Some(d("0.01"))).is_err());
}

// --- The example of docs/pricing.md.

#[test]
fn the_worked_example_of_the_docs() {
    let settings = settings_from(&[
        ("grace_minutes", "59"),
        ("office_hours", "08:00-20:00"),
        ("surcharge.one_way", "40.00"),
        ("surcharge.out_of_hours", "15.00"),
        ("surcharge.young_driver", "6.00"),
    ])
    .unwrap();
    let compact = tariff(
        2,
        "Tarifa Compacto",
        2,
        &[(1, 3, "46.00"), (4, 7, "41.50"), (8, 30, "36.00")],
    );
    let mut catalog = catalog();
    catalog[0].name = "Seguro básico".to_owned();
    catalog[2].name = "Silla para niños".to_owned();
    catalog[3].name = "Conductor adicional".to_owned();
    let aep = Place {
        name: "Aeroparque (AEP)".to_owned(),
        ..place(1, 1, "15.00")
    };
    let cor = Place {
        name: "Aeropuerto de Córdoba (COR)".to_owned(),
        ..place(4, 2, "12.00")
    };
    let from = at("2026-03-06T07:30:00-03:00");
    let to = at("2026-03-16T09:15:00-03:00");
    let zone = chrono_tz::America::Argentina::Buenos_Aires;
    let cordoba = chrono_tz::America::Argentina::Cordoba;
    let birth = NaiveDate::from_ymd_opt(2002, 5, 20).unwrap();
    let requested = [take(4, 2), take(5, 1)];
    let request = QuoteRequest {
        from_date: from,
        to_date: to,
        tariff: Some(&compact),
        requested_additionals: &requested,
        catalog: &catalog,
        delivery_place: &aep,
        return_place: &cor,
        local_times: LocalTimes::at_offices(from, to, zone, cordoba),
        young_driver: is_young_driver(birth, from, zone),
        has_agency: true,
    };
    let quote = quote(&request, &settings).unwrap();
    // The rows of the table in docs/pricing.md: Id | Type | TypeId | Description |
    // UnitPrice | Quantity | Price | Payer.
    let table: Vec<String> = quote
        .lines
        .iter()
        .map(|line| {
            format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                line.id,
                line.kind,
                line.type_id,
                line.description.as_deref().unwrap(),
                line.unit_price,
                line.quantity,
                line.price,
                line.payer
            )
        })
        .collect();
    let expected = [
        "| 1 | 1 | 2 | Tarifa Compacto: days 1 to 3 | 46.00 | 3 | 138.00 | 2 |",
        "| 2 | 1 | 2 | Tarifa Compacto: days 4 to 7 | 41.50 | 4 | 166.00 | 2 |",
        "| 3 | 1 | 2 | Tarifa Compacto: days 8 to 11 | 36.00 | 4 | 144.00 | 2 |",
        "| 4 | 2 | 1 | Seguro básico x1, 11 days | 12.00 | 11 | 132.00 | 1 |",
        "| 5 | 2 | 4 | Silla para niños x2, 11 days | 4.50 | 22 | 99.00 | 1 |",
        "| 6 | 2 | 5 | Conductor adicional x1 | 20.00 | 1 | 20.00 | 1 |",
        "| 7 | 3 | 1 | Delivery at Aeroparque (AEP) | 15.00 | 1 | 15.00 | 1 |",
        "| 8 | 3 | 4 | Return at Aeropuerto de Córdoba (COR) | 12.00 | 1 | 12.00 | 1 |",
        "| 9 | 4 | 1 | One-way surcharge | 40.00 | 1 | 40.00 | 1 |",
        "| 10 | 4 | 2 | Out-of-hours surcharge: pick-up at 07:30 (office hours 08:00-20:00) \
         | 15.00 | 1 | 15.00 | 1 |",
        "| 11 | 4 | 3 | Young driver surcharge, 11 days | 6.00 | 11 | 66.00 | 1 |",
    ];
    assert_eq!(table, expected);
    // The table of docs/pricing.md is this one.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/pricing.md");
    let docs = std::fs::read_to_string(path).unwrap();
    let example = docs.split("## Worked example").nth(1).unwrap();
    let documented: Vec<&str> = example
        .lines()
        .filter(|line| {
            line.starts_with("| ") && line[2..].starts_with(|c: char| c.is_ascii_digit())
        })
        .collect();
    assert_eq!(documented, expected);
    assert_eq!(quote.total_days, 11);
    assert_eq!(quote.total_days_string, "11 days");
    assert_eq!(quote.agency_price, d("448.00"));
    assert_eq!(quote.customer_price, d("399.00"));
    assert_eq!(quote.price, d("847.00"));
    assert_eq!(quote.average_day_price, d("40.73"));
    assert_eq!(quote.daily_rate, d("46.00"));
    assert!(coverage_is_traceable(&quote.lines));

    // The client sent 850.00: 3.00 away, within 1% of 847.00 = 8.47.
    let accepted = accept_sent_price(quote.clone(), Some(d("850.00"))).unwrap();
    let adjustment = accepted.lines.last().unwrap();
    assert_eq!(
        (adjustment.id, adjustment.kind, adjustment.price),
        (12, 5, d("3.00"))
    );
    assert_eq!(accepted.customer_price, d("402.00"));
    assert_eq!(accepted.agency_price, d("448.00"));
    assert_eq!(accepted.price, d("850.00"));
    // 855.47 is 8.47 away: accepted; 855.48 is 8.48 away: rejected.
    assert!(accept_sent_price(quote.clone(), Some(d("855.47"))).is_ok());
    let error = accept_sent_price(quote, Some(d("855.48"))).unwrap_err();
    assert_eq!(error.code, ErrorCode::PriceMismatch);
}

// --- A tenant's adjustments.

fn loyalty(amount: &str) -> Adjustment {
    Adjustment {
        code: 7,
        amount: d(amount),
        description: Translations {
            en: "Loyalty discount".to_owned(),
            es: "Descuento por fidelidad".to_owned(),
            pt: "Desconto de fidelidade".to_owned(),
        },
    }
}

#[test]
fn no_adjustment_keeps_the_quote() {
    assert_eq!(adjust(hundred(), Vec::new()), Ok(hundred()));
}

#[test]
fn adjustments_are_customer_lines_after_the_platforms_and_move_the_totals() {
    let quote = adjust(hundred(), vec![loyalty("-10.004"), loyalty("2.5")]).unwrap();
    assert_eq!(
        (quote.price, quote.customer_price, quote.agency_price),
        (d("92.50"), d("92.50"), d("0"))
    );
    let [rental, discount, surcharge] = quote.lines.as_slice() else {
        panic!("{:?}", quote.lines)
    };
    assert_eq!(rental.kind, PriceItemType::Rental.code());
    assert_eq!((discount.id, surcharge.id), (2, 3));
    assert_eq!(discount.kind, PriceItemType::TenantAdjustment.code());
    assert_eq!(
        (discount.type_id, discount.payer),
        (7, Payer::Customer.code())
    );
    assert_eq!((discount.price, surcharge.price), (d("-10.00"), d("2.50")));
    assert_consistent(&quote);

    let mut lines = quote.lines.clone();
    localize(&mut lines, Language::Es);
    assert_eq!(
        lines[1].description.as_deref(),
        Some("Descuento por fidelidad")
    );
}

#[test]
fn a_sent_price_is_checked_against_the_adjusted_quote() {
    let adjusted = adjust(hundred(), vec![loyalty("-10.00")]).unwrap();
    assert_eq!(
        accept_sent_price(adjusted.clone(), Some(d("90.00"))),
        Ok(adjusted.clone())
    );
    assert_eq!(
        accept_sent_price(adjusted, Some(d("100.00")))
            .unwrap_err()
            .code,
        ErrorCode::PriceMismatch
    );
}

#[test]
fn an_adjustment_out_of_range_is_refused() {
    let huge = Adjustment {
        amount: Decimal::MAX,
        ..loyalty("0")
    };
    assert!(adjust(hundred(), vec![huge.clone(), huge]).is_err());
}
