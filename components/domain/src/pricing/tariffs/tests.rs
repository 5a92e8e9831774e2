use super::*;
use crate::models::AppliedCoverageBracket;
use crate::pricing::fixtures::*;
use crate::pricing::*;

#[test]
fn three_days_and_0_59_is_3_days_with_the_default_grace() {
    let from = at("2026-03-01T10:00:00-03:00");
    let to = at("2026-03-04T10:59:00-03:00");
    assert_eq!(rental_days(from, to, DEFAULT_GRACE_MINUTES), Ok(3));
    // Seconds are dropped: 3 days 0:59:59 is still 3 days.
    let to = at("2026-03-04T10:59:59-03:00");
    assert_eq!(rental_days(from, to, DEFAULT_GRACE_MINUTES), Ok(3));
}

#[test]
fn three_days_and_1_00_is_4_days_with_the_default_grace() {
    let from = at("2026-03-01T10:00:00-03:00");
    let to = at("2026-03-04T11:00:00-03:00");
    assert_eq!(rental_days(from, to, DEFAULT_GRACE_MINUTES), Ok(4));
}

#[test]
fn exactly_3_days_is_3_days_and_grace_0_charges_any_minute() {
    let from = at("2026-03-01T10:00:00Z");
    assert_eq!(rental_days(from, at("2026-03-04T10:00:00Z"), 0), Ok(3));
    assert_eq!(rental_days(from, at("2026-03-04T10:01:00Z"), 0), Ok(4));
    assert_eq!(rental_days(from, at("2026-03-04T12:00:00Z"), 120), Ok(3));
}

#[test]
fn two_hours_is_the_1_day_minimum() {
    let from = at("2026-03-01T10:00:00Z");
    assert_eq!(rental_days(from, at("2026-03-01T12:00:00Z"), 59), Ok(1));
    assert_eq!(rental_days(from, at("2026-03-01T10:01:00Z"), 59), Ok(1));
}

#[test]
fn rental_days_compare_instants_across_offsets() {
    // 10:00 -03:00 is 13:00 UTC: to 13:30 UTC three days later is 3 days 0:30.
    let from = at("2026-03-01T10:00:00-03:00");
    assert_eq!(rental_days(from, at("2026-03-04T13:30:00Z"), 59), Ok(3));
}

#[test]
fn to_date_not_after_from_date_is_error_13_naming_to_date() {
    let from = at("2026-03-01T10:00:00Z");
    for to in [from, at("2026-03-01T09:00:00Z")] {
        let error = rental_days(from, to, 59).unwrap_err();
        assert_eq!(error.code, ErrorCode::InvlaidDates);
        assert_eq!(error.code.code(), 13);
        assert_eq!(error.field.as_deref(), Some("ToDate"));
    }
    let mut fixture = Fixture::new();
    fixture.to = fixture.from;
    assert_eq!(fixture.quote().unwrap_err().code, ErrorCode::InvlaidDates);
}

#[test]
fn ten_days_over_1_3_4_7_8_30_are_3x38_plus_4x34_plus_3x29_eq_337() {
    let quote = Fixture::new().days(10).quote().unwrap();
    let rental = of_kind(&quote, PriceItemType::Rental);
    assert_eq!(
        amounts(&rental),
        vec![
            (d("38.00"), 3, d("114.00")),
            (d("34.00"), 4, d("136.00")),
            (d("29.00"), 3, d("87.00")),
        ]
    );
    let ranges: Vec<Vec<AppliedCoverageBracket>> = rental
        .iter()
        .map(|line| line.applied_coverage_brackets.clone().unwrap())
        .collect();
    let range = |days_from, days_to, amount| {
        vec![AppliedCoverageBracket {
            days_from,
            days_to,
            amount: d(amount),
        }]
    };
    assert_eq!(
        ranges,
        vec![
            range(1, 3, "114.00"),
            range(4, 7, "136.00"),
            range(8, 30, "87.00")
        ]
    );
    for line in &rental {
        assert_eq!(line.type_id, 1);
        assert_eq!(line.tariff_name.as_deref(), Some("Economy"));
        assert_eq!(line.payer, Payer::Customer.code());
    }
    assert_eq!(
        rental[2].description.as_deref(),
        Some("Economy: days 8 to 10")
    );
    // The required insurance, 12.00 x 10 days = 120.00, is the only other line.
    assert_eq!(quote.price, d("457.00"));
    assert_eq!(quote.total_days, 10);
    assert_eq!(quote.total_days_string, "10 days");
    // 337.00 / 10 = 33.70; the first bracket's 38.00.
    assert_eq!(quote.average_day_price, d("33.70"));
    assert_eq!(quote.daily_rate, d("38.00"));
    assert_eq!(quote.currency, "USD");
    assert_consistent(&quote);
}

#[test]
fn two_days_use_the_first_bracket_only() {
    let quote = Fixture::new().days(2).quote().unwrap();
    let rental = of_kind(&quote, PriceItemType::Rental);
    assert_eq!(amounts(&rental), vec![(d("38.00"), 2, d("76.00"))]);
    assert_eq!(quote.average_day_price, d("38.00"));
}

#[test]
fn seven_days_end_on_a_bracket_boundary_3x38_plus_4x34() {
    let quote = Fixture::new().days(7).quote().unwrap();
    let rental = of_kind(&quote, PriceItemType::Rental);
    assert_eq!(
        amounts(&rental),
        vec![(d("38.00"), 3, d("114.00")), (d("34.00"), 4, d("136.00"))]
    );
    // 250.00 / 7 = 35.714... -> 35.71.
    assert_eq!(quote.average_day_price, d("35.71"));
}

#[test]
fn four_days_make_a_one_day_line_of_the_second_bracket() {
    let quote = Fixture::new().days(4).quote().unwrap();
    let rental = of_kind(&quote, PriceItemType::Rental);
    assert_eq!(rental[1].description.as_deref(), Some("Economy: day 4"));
    assert_eq!(amounts(&rental[1..]), vec![(d("34.00"), 1, d("34.00"))]);
}

#[test]
fn thirty_days_are_covered_thirty_one_are_error_30() {
    let quote = Fixture::new().days(30).quote().unwrap();
    // 3 x 38 + 4 x 34 + 23 x 29 = 114 + 136 + 667 = 917.
    let rental: Decimal = of_kind(&quote, PriceItemType::Rental)
        .iter()
        .map(|line| line.price)
        .sum();
    assert_eq!(rental, d("917.00"));
    let error = Fixture::new().days(31).quote().unwrap_err();
    assert_eq!(error.code, ErrorCode::MaxDaysOfBookingReached);
    assert_eq!(error.code.code(), 30);
    assert_eq!(error.field.as_deref(), Some("ToDate"));
}

#[test]
fn no_tariff_is_error_21() {
    let mut fixture = Fixture::new();
    fixture.tariff = None;
    let error = fixture.quote().unwrap_err();
    assert_eq!(error.code, ErrorCode::TariffNotFound);
    assert_eq!(error.code.code(), 21);
}

#[test]
fn a_tariff_that_leaves_a_day_uncovered_is_error_21() {
    let cases: [&[(i64, i64)]; 4] = [&[], &[(2, 30)], &[(1, 3), (5, 30)], &[(1, 3), (3, 30)]];
    for ranges in cases {
        let mut fixture = Fixture::new();
        fixture.tariff = Some(Tariff {
            brackets: ranges
                .iter()
                .map(|&(days_from, days_to)| TariffBracket {
                    days_from,
                    days_to,
                    daily_amount: d("10.00"),
                })
                .collect(),
            ..economy()
        });
        let error = fixture.quote().unwrap_err();
        assert_eq!(error.code, ErrorCode::TariffNotFound, "{ranges:?}");
    }
}

#[test]
fn brackets_stored_out_of_order_price_the_same() {
    let mut fixture = Fixture::new().days(10);
    let expected = fixture.quote().unwrap();
    if let Some(tariff) = fixture.tariff.as_mut() {
        tariff.brackets.reverse();
    }
    assert_eq!(fixture.quote().unwrap(), expected);
}

#[test]
fn a_model_tariff_overrides_its_category_tariff() {
    let category = economy();
    let model = Tariff {
        id: 5,
        name: "Model 8".to_owned(),
        model_id: Some(8),
        brackets: vec![TariffBracket {
            days_from: 1,
            days_to: 30,
            daily_amount: d("110.00"),
        }],
        ..economy()
    };
    let tariffs = vec![category.clone(), model.clone()];
    assert_eq!(select_tariff(&tariffs, 1, Some(8)), Some(&model));
    assert_eq!(select_tariff(&tariffs, 1, Some(7)), Some(&category));
    assert_eq!(select_tariff(&tariffs, 1, None), Some(&category));
    assert_eq!(select_tariff(&tariffs, 2, Some(7)), None);

    // 3 days of the model: 3 x 110.00 = 330.00 rather than 3 x 38.00.
    let mut fixture = Fixture::new();
    fixture.tariff = select_tariff(&tariffs, 1, Some(8)).cloned();
    let quote = fixture.quote().unwrap();
    let rental = of_kind(&quote, PriceItemType::Rental);
    assert_eq!(amounts(&rental), vec![(d("110.00"), 3, d("330.00"))]);
    assert_eq!(rental[0].type_id, 5);
    assert_eq!(quote.daily_rate, d("110.00"));
}

#[test]
fn the_lowest_tariff_id_wins_among_equals() {
    let tariffs = vec![Tariff { id: 9, ..economy() }, Tariff { id: 4, ..economy() }];
    assert_eq!(select_tariff(&tariffs, 1, None).map(|t| t.id), Some(4));
}

#[test]
fn rounding_is_half_away_from_zero_to_the_minor_unit() {
    assert_eq!(round_money(d("10.005"), 2), d("10.01"));
    assert_eq!(round_money(d("10.004999"), 2), d("10.00"));
    assert_eq!(round_money(d("-10.005"), 2), d("-10.01"));
    assert_eq!(round_money(d("2.675"), 2), d("2.68"));
    // Bankers' rounding would give 10.00 and 2.67 here.
    assert_eq!(round_money(d("10.005"), 2).to_string(), "10.01");
    assert_eq!(round_money(d("10"), 2).to_string(), "10.00");
    assert_eq!(round_money(d("1234.5"), 0).to_string(), "1235");
    assert_eq!(round_money(d("1234.49"), 0).to_string(), "1234");
    assert_eq!(round_money(d("1.0005"), 3).to_string(), "1.001");
}

#[test]
fn minor_units_are_0_for_jpy_clp_pyg_3_for_kwd_and_2_otherwise() {
    for code in ["JPY", "CLP", "PYG", "jpy", " KRW "] {
        assert_eq!(minor_units(code), 0, "{code}");
    }
    assert_eq!(minor_units("KWD"), 3);
    for code in ["USD", "ARS", "BRL", "EUR", "XYZ", ""] {
        assert_eq!(minor_units(code), 2, "{code}");
    }
}

#[test]
fn each_line_is_rounded_and_price_is_the_sum_of_rounded_lines() {
    // A daily amount of 10.005: 1 day = 10.005 -> 10.01. Two one-day lines (brackets 1-1
    // and 2-2) are 10.01 + 10.01 = 20.02, not round(20.01) = 20.01.
    let mut fixture = Fixture::new().days(2);
    fixture.catalog.clear();
    fixture.tariff = Some(Tariff {
        brackets: vec![
            TariffBracket {
                days_from: 1,
                days_to: 1,
                daily_amount: d("10.005"),
            },
            TariffBracket {
                days_from: 2,
                days_to: 30,
                daily_amount: d("10.005"),
            },
        ],
        ..economy()
    });
    let quote = fixture.quote().unwrap();
    let rental = of_kind(&quote, PriceItemType::Rental);
    assert_eq!(
        amounts(&rental),
        vec![(d("10.005"), 1, d("10.01")), (d("10.005"), 1, d("10.01"))]
    );
    assert_eq!(quote.price, d("20.02"));
    assert_eq!(quote.daily_rate, d("10.005"), "as the tariff has it");
    assert_consistent(&quote);
}

#[test]
fn a_zero_decimal_currency_rounds_lines_to_whole_units() {
    // CLP: 3 days x 25,000.50 = 75,001.50 -> 75,002; insurance 1,200.5 x 3 = 3,601.5 ->
    // 3,602; average 75,002 / 3 = 25,000.67 -> 25,001.
    let mut fixture = Fixture::new();
    fixture.tariff = Some(Tariff {
        currency: "clp".to_owned(),
        brackets: vec![TariffBracket {
            days_from: 1,
            days_to: 30,
            daily_amount: d("25000.50"),
        }],
        ..economy()
    });
    fixture.catalog[0].price = d("1200.5");
    let quote = fixture.quote().unwrap();
    assert_eq!(quote.currency, "CLP");
    let prices: Vec<String> = quote.lines.iter().map(|l| l.price.to_string()).collect();
    assert_eq!(prices, vec!["75002", "3602"]);
    assert_eq!(quote.price.to_string(), "78604");
    assert_eq!(quote.average_day_price.to_string(), "25001");
    assert_consistent(&quote);
}

#[test]
fn the_currency_falls_back_to_the_setting_and_is_error_100_when_none() {
    let mut fixture = Fixture::new();
    if let Some(tariff) = fixture.tariff.as_mut() {
        tariff.currency = " ".to_owned();
    }
    fixture.settings.currency = Some("ARS".to_owned());
    assert_eq!(fixture.quote().unwrap().currency, "ARS");
    fixture.settings.currency = None;
    let error = fixture.quote().unwrap_err();
    assert_eq!(error.code, ErrorCode::MissingCurrencyCode);
    assert_eq!(error.code.code(), 100);
}
