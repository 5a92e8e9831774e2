use super::*;

fn date(value: &str) -> NaiveDate {
    NaiveDate::parse_from_str(value, DATE_FORMAT).unwrap()
}

fn utc(value: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(value)
        .unwrap()
        .with_timezone(&Utc)
}

fn buenos_aires() -> Tz {
    parse_time_zone("America/Argentina/Buenos_Aires").unwrap()
}

#[test]
fn date_times_with_offset_keep_it() {
    let instant = parse_date_time("2024-03-01T10:15:30-03:00").unwrap();
    assert_eq!(instant.offset().local_minus_utc(), -3 * 3600);
    assert_eq!(instant.with_timezone(&Utc), utc("2024-03-01T13:15:30Z"));
    assert_eq!(
        parse_date_time("2024-03-01 10:15:30.250Z").unwrap(),
        utc("2024-03-01T10:15:30.250Z")
    );
}

#[test]
fn date_times_without_offset_are_utc() {
    assert_eq!(
        parse_date_time("2024-03-01T10:15:30").unwrap(),
        utc("2024-03-01T10:15:30Z")
    );
    assert_eq!(
        parse_date_time("2024-03-01 10:15").unwrap(),
        utc("2024-03-01T10:15:00Z")
    );
    assert_eq!(
        parse_date_time("2024-03-01").unwrap(),
        utc("2024-03-01T00:00:00Z")
    );
    assert_eq!(
        parse_date_time("2024-03-01T10:15:30.5").unwrap(),
        utc("2024-03-01T10:15:30.500Z")
    );
}

#[test]
fn a_plus_decoded_as_space_is_restored() {
    assert_eq!(
        parse_date_time("2024-03-01T10:00:00 03:00").unwrap(),
        utc("2024-03-01T07:00:00Z")
    );
    assert_eq!(
        parse_calendar_date("2024-03-01T23:00:00 03:00"),
        Some(date("2024-03-01"))
    );
}

#[test]
fn garbage_is_not_a_date_time() {
    for value in [
        "",
        "yesterday",
        "2024-13-01",
        "2024-02-30",
        "01/03/2024",
        "2024-03-01T25:00:00",
        "1709290800",
        "2024-03-01T10:00:00+3",
    ] {
        assert_eq!(parse_date_time(value), None, "{value:?}");
        assert_eq!(parse_calendar_date(value), None, "{value:?}");
    }
}

#[test]
fn calendar_date_is_the_date_as_written() {
    assert_eq!(
        parse_calendar_date("2024-03-01T23:30:00-03:00"),
        Some(date("2024-03-01"))
    );
    assert_eq!(
        parse_calendar_date("2024-03-01T00:30:00+05:00"),
        Some(date("2024-03-01"))
    );
    assert_eq!(
        parse_calendar_date("2024-03-01T18:00:00"),
        Some(date("2024-03-01"))
    );
    assert_eq!(parse_calendar_date("2024-03-01"), Some(date("2024-03-01")));
}

#[test]
fn time_zones() {
    assert_eq!(buenos_aires().name(), "America/Argentina/Buenos_Aires");
    assert_eq!(
        parse_time_zone("Mars/Olympus"),
        Err(UnknownTimeZone("Mars/Olympus".to_owned()))
    );
    assert!(parse_time_zone("").is_err());
    assert_eq!(
        parse_time_zone("America/Sao_Paulo"),
        Ok(Tz::America__Sao_Paulo)
    );
}

#[test]
fn start_of_day_in_buenos_aires_is_three_in_the_morning_utc() {
    assert_eq!(
        start_of_day(buenos_aires(), date("2024-03-01")),
        utc("2024-03-01T03:00:00Z")
    );
}

#[test]
fn start_of_day_after_a_gap_at_midnight() {
    // Brazil's daylight saving time began at 00:00 on 2018-11-04: clocks jumped to 01:00.
    assert_eq!(
        start_of_day(Tz::America__Sao_Paulo, date("2018-11-04")),
        utc("2018-11-04T03:00:00Z")
    );
    // Samoa skipped 2011-12-30 entirely: that day starts where 2011-12-31 does.
    assert_eq!(
        start_of_day(Tz::Pacific__Apia, date("2011-12-30")),
        start_of_day(Tz::Pacific__Apia, date("2011-12-31"))
    );
    assert_eq!(
        start_of_day(Tz::Pacific__Apia, date("2011-12-31")),
        utc("2011-12-30T10:00:00Z")
    );
}

#[test]
fn start_of_day_when_midnight_happens_twice_is_the_first() {
    // Brazil's daylight saving time ended at 00:00 on 2019-02-17: 23:00 came again.
    // Midnight of the 16th happened once; midnight of the 17th did not repeat, 23:00 did.
    assert_eq!(
        start_of_day(Tz::America__Sao_Paulo, date("2019-02-17")),
        utc("2019-02-17T03:00:00Z")
    );
    // Cuba ends daylight saving time at 01:00 back to 00:00: midnight happens twice.
    assert_eq!(
        start_of_day(Tz::America__Havana, date("2023-11-05")),
        utc("2023-11-05T04:00:00Z")
    );
}

/// Whether `instant` falls in `range`: what its [`CloseDateRange::key_range`] selects.
fn within<Z: TimeZone>(range: &CloseDateRange, instant: &DateTime<Z>) -> bool {
    let instant = instant.with_timezone(&Utc);
    range.start <= instant && instant < range.end
}

#[test]
fn close_range_covers_whole_days_in_the_tenant_zone() {
    let range =
        CloseDateRange::parse(Some("2024-03-01"), Some("2024-03-31"), buenos_aires()).unwrap();
    assert_eq!(range.from_date(), date("2024-03-01"));
    assert_eq!(range.to, date("2024-03-31"));
    assert_eq!(range.start, utc("2024-03-01T03:00:00Z"));
    assert_eq!(range.end, utc("2024-04-01T03:00:00Z"));
    assert_eq!(
        range.key_range(),
        KeyRange {
            lower: Some(Bound::Inclusive(vec![KeyPart::from(range.start)])),
            upper: Some(Bound::Exclusive(vec![KeyPart::from(range.end)])),
        }
    );

    // 23:59 local on the last day is in; 00:00 local on the next day is out.
    assert!(within(&range, &utc("2024-04-01T02:59:59Z")));
    assert!(!within(&range, &utc("2024-04-01T03:00:00Z")));
    // 00:00 local on the first day is in; 23:59 local the day before is out.
    assert!(within(&range, &utc("2024-03-01T03:00:00Z")));
    assert!(!within(&range, &utc("2024-03-01T02:59:59Z")));
    // A date-time in the zone's own offset reads the same.
    assert!(within(
        &range,
        &DateTime::parse_from_rfc3339("2024-03-31T23:59:59-03:00").unwrap()
    ));
}

#[test]
fn close_range_ignores_the_time_part() {
    let tz = buenos_aires();
    let with_times = CloseDateRange::parse(
        Some("2024-03-01T18:45:00-03:00"),
        Some("2024-03-02T00:10:00"),
        tz,
    )
    .unwrap();
    let plain = CloseDateRange::parse(Some("2024-03-01"), Some("2024-03-02"), tz).unwrap();
    assert_eq!(with_times, plain);
}

#[test]
fn close_range_of_one_day_in_utc() {
    let range = CloseDateRange::parse(Some("2024-02-29"), Some("2024-02-29"), Tz::UTC).unwrap();
    assert_eq!(range.start, utc("2024-02-29T00:00:00Z"));
    assert_eq!(range.end, utc("2024-03-01T00:00:00Z"));
}

#[test]
fn close_range_missing_dates_name_the_parameter() {
    let error = CloseDateRange::parse(None, Some("2024-03-01"), Tz::UTC).unwrap_err();
    assert_eq!(error.code, ErrorCode::ModelNotValid);
    assert_eq!(error.field.as_deref(), Some("fromDate"));

    let error = CloseDateRange::parse(Some("2024-03-01"), None, Tz::UTC).unwrap_err();
    assert_eq!(error.code, ErrorCode::ModelNotValid);
    assert_eq!(error.field.as_deref(), Some("toDate"));

    let error = CloseDateRange::parse(Some(" "), Some("2024-03-01"), Tz::UTC).unwrap_err();
    assert_eq!(error.field.as_deref(), Some("fromDate"));
}

#[test]
fn close_range_unreadable_dates_name_the_parameter() {
    let error = CloseDateRange::parse(Some("2024-03-01"), Some("tomorrow"), Tz::UTC).unwrap_err();
    assert_eq!(error.code, ErrorCode::ModelNotValid);
    assert_eq!(error.field.as_deref(), Some("toDate"));
}

#[test]
fn close_range_reversed_is_invalid_dates() {
    let error = CloseDateRange::parse(Some("2024-03-02"), Some("2024-03-01"), Tz::UTC).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvlaidDates);
    assert_eq!(error.code.code(), 13);
}

#[test]
fn close_range_of_ninety_days_is_the_longest() {
    let tz = Tz::UTC;
    assert!(CloseDateRange::new(date("2024-01-01"), date("2024-03-31"), tz).is_ok());
    let error = CloseDateRange::new(date("2024-01-01"), date("2024-04-01"), tz).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvlaidDates);
    // The time part does not stretch the range: 90 days apart by date is accepted.
    assert!(
        CloseDateRange::parse(
            Some("2024-01-01T00:00:00Z"),
            Some("2024-03-31T23:59:59Z"),
            tz
        )
        .is_ok()
    );
}

#[test]
fn close_range_as_index_bounds() {
    let range = CloseDateRange::parse(Some("2024-03-01"), Some("2024-03-01"), Tz::UTC).unwrap();
    let start = utc("2024-03-01T00:00:00Z").timestamp_micros();
    let end = utc("2024-03-02T00:00:00Z").timestamp_micros();
    assert_eq!(
        range.key_range(),
        KeyRange {
            lower: Some(Bound::Inclusive(vec![KeyPart::Time(start)])),
            upper: Some(Bound::Exclusive(vec![KeyPart::Time(end)])),
        }
    );
}
