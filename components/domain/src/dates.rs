//! Date and time rules: lenient parsing of date-times, tenant time zones and the close-date
//! range of the closed-bookings list (interface.md 4.3 and 8, contract.md "Pagination").
//!
//! Nothing here reads the clock: every instant comes from the caller.

use chrono::{
    DateTime, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc,
};
use chrono_tz::Tz;

use crate::error::{ApiError, ErrorCode};
use crate::store::{Bound, KeyPart, KeyRange};

/// Name of the closed list's start-date query parameter.
pub const FROM_DATE: &str = "fromDate";
/// Name of the closed list's end-date query parameter.
pub const TO_DATE: &str = "toDate";
/// Longest close-date range, in days between `fromDate` and `toDate`.
pub const MAX_CLOSE_RANGE_DAYS: i64 = 90;

/// Formats of a date-time without offset, tried in order.
const NAIVE_FORMATS: [&str; 4] = [
    "%Y-%m-%dT%H:%M:%S%.f",
    "%Y-%m-%d %H:%M:%S%.f",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%d %H:%M",
];

/// Format of a plain date.
const DATE_FORMAT: &str = "%Y-%m-%d";

/// Reads an ISO 8601 date-time: RFC 3339 with its offset (`T` or a space between date and
/// time), a date-time without offset (taken as UTC) or a plain date (midnight UTC).
///
/// A `+` of the offset that a query string decoded into a space (`10:00:00 03:00`) is read
/// back as `+`.
pub fn parse_date_time(value: &str) -> Option<DateTime<FixedOffset>> {
    if let Ok(instant) = DateTime::parse_from_rfc3339(value) {
        return Some(instant);
    }
    if let Some(restored) = restore_plus(value)
        && let Ok(instant) = DateTime::parse_from_rfc3339(&restored)
    {
        return Some(instant);
    }
    parse_naive(value).map(|naive| naive.and_utc().fixed_offset())
}

/// Reads an instant as [`parse_date_time`] does, in UTC: the `updatedSince` rule (RFC 3339, or
/// a value without offset taken as UTC).
pub fn parse_instant(value: &str) -> Option<DateTime<Utc>> {
    parse_date_time(value).map(|instant| instant.with_timezone(&Utc))
}

/// Reads the calendar date of a value, ignoring its time part: the date as written, in the
/// offset it was written with (`2024-03-01T23:30:00-03:00` is March 1st). Accepts what
/// [`parse_date_time`] accepts.
pub fn parse_calendar_date(value: &str) -> Option<NaiveDate> {
    // A value with an offset keeps it, so its local date is the date as written; a value
    // without one is read as UTC, whose date is the date as written too.
    parse_date_time(value).map(|instant| instant.date_naive())
}

/// A date-time without offset, or a plain date at midnight.
fn parse_naive(value: &str) -> Option<NaiveDateTime> {
    NAIVE_FORMATS
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(value, format).ok())
        .or_else(|| {
            NaiveDate::parse_from_str(value, DATE_FORMAT)
                .ok()
                .map(|date| date.and_time(NaiveTime::MIN))
        })
}

/// `value` with a space before a trailing `hh:mm` turned back into `+`, when it has one.
fn restore_plus(value: &str) -> Option<String> {
    let split = value.len().checked_sub(6)?;
    let (head, tail) = value.split_at_checked(split)?;
    let bytes = tail.as_bytes();
    let offset_like = bytes[0] == b' '
        && bytes[1].is_ascii_digit()
        && bytes[2].is_ascii_digit()
        && bytes[3] == b':'
        && bytes[4].is_ascii_digit()
        && bytes[5].is_ascii_digit();
    offset_like.then(|| format!("{head}+{}", &tail[1..]))
}

/// A time-zone name that is not in the IANA database.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown time zone '{0}'")]
pub struct UnknownTimeZone(pub String);

/// Reads an IANA time-zone name such as `America/Argentina/Buenos_Aires` (exact spelling).
pub fn parse_time_zone(name: &str) -> Result<Tz, UnknownTimeZone> {
    name.parse::<Tz>()
        .map_err(|_| UnknownTimeZone(name.to_owned()))
}

/// The tenant's time zone from its `time_zone` setting, UTC when the setting is missing or
/// names no known zone. Callers that must report a misconfigured zone use
/// [`parse_time_zone`] instead.
pub fn time_zone_or_utc(setting: Option<&str>) -> Tz {
    setting
        .and_then(|name| parse_time_zone(name).ok())
        .unwrap_or(Tz::UTC)
}

/// The first instant of `date` in `tz`: local midnight, or when a transition skips midnight
/// (America/Sao_Paulo on 2018-11-04), the first local time after the gap. Where midnight
/// happens twice, the earlier one.
pub fn start_of_day(tz: Tz, date: NaiveDate) -> DateTime<Utc> {
    let midnight = date.and_time(NaiveTime::MIN);
    match tz.from_local_datetime(&midnight) {
        LocalResult::Single(instant) => instant.with_timezone(&Utc),
        LocalResult::Ambiguous(earliest, _) => earliest.with_timezone(&Utc),
        LocalResult::None => first_instant_from(tz, midnight),
    }
}

/// The first instant whose local time in `tz` is `local` or later, for a `local` time that a
/// transition skipped.
///
/// No zone is 15 hours or more away from UTC, so the answer lies within 27 hours of `local`
/// read as UTC; around a gap local time only moves forward, so bisecting on whole seconds
/// (transitions fall on whole seconds) finds it exactly.
fn first_instant_from(tz: Tz, local: NaiveDateTime) -> DateTime<Utc> {
    const WINDOW: i64 = 27 * 3600;
    let as_utc = local.and_utc();
    let local_at = |seconds: i64| {
        DateTime::from_timestamp(seconds, 0).map(|instant| instant.with_timezone(&tz).naive_local())
    };
    // Invariant: local time at `before` is earlier than `local`, at `after` not.
    let mut before = as_utc.timestamp() - WINDOW;
    let mut after = as_utc.timestamp() + WINDOW;
    while after - before > 1 {
        let middle = before + (after - before) / 2;
        match local_at(middle) {
            Some(time) if time >= local => after = middle,
            Some(_) => before = middle,
            None => return as_utc,
        }
    }
    DateTime::from_timestamp(after, 0).unwrap_or(as_utc)
}

/// The close-date range of the closed-bookings list: whole days from `fromDate` to `toDate`
/// inclusive, in the tenant's time zone, as the half-open UTC interval
/// `[start of fromDate, start of the day after toDate)`.
///
/// Built only through [`CloseDateRange::new`] or [`CloseDateRange::parse`], so every value
/// satisfies the rules: `toDate` >= `fromDate`, at most [`MAX_CLOSE_RANGE_DAYS`] days apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CloseDateRange {
    from: NaiveDate,
    to: NaiveDate,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
}

impl CloseDateRange {
    /// The range of the query parameters `fromDate` and `toDate`, as received (`None` when
    /// absent). Each is RFC 3339, a date-time without offset or a plain date; its time part is
    /// ignored.
    ///
    /// Errors: a missing or unreadable date is [`ErrorCode::ModelNotValid`] naming the
    /// parameter; the rules of [`CloseDateRange::new`] give [`ErrorCode::InvlaidDates`].
    pub fn parse(from: Option<&str>, to: Option<&str>, tz: Tz) -> Result<Self, ApiError> {
        let from = required_date(FROM_DATE, from)?;
        let to = required_date(TO_DATE, to)?;
        Self::new(from, to, tz)
    }

    /// The range from `from` to `to`, both days included, in `tz`.
    ///
    /// Errors, all [`ErrorCode::InvlaidDates`]: `to` before `from`; more than
    /// [`MAX_CLOSE_RANGE_DAYS`] days between them (exactly 90 is accepted).
    pub fn new(from: NaiveDate, to: NaiveDate, tz: Tz) -> Result<Self, ApiError> {
        let invalid = |detail: &str| {
            ApiError::new(ErrorCode::InvlaidDates)
                .with_field(TO_DATE)
                .with_detail(detail)
        };
        if to < from {
            return Err(invalid("must not be before fromDate"));
        }
        if (to - from).num_days() > MAX_CLOSE_RANGE_DAYS {
            return Err(invalid("must be at most 90 days after fromDate"));
        }
        let after = to
            .succ_opt()
            .ok_or_else(|| invalid("is beyond the last supported date"))?;
        Ok(Self {
            from,
            to,
            start: start_of_day(tz, from),
            end: start_of_day(tz, after),
        })
    }

    /// The first day of the range.
    pub fn from_date(&self) -> NaiveDate {
        self.from
    }

    /// The last day of the range (included).
    pub fn to_date(&self) -> NaiveDate {
        self.to
    }

    /// The first instant of the range (included).
    pub fn start(&self) -> DateTime<Utc> {
        self.start
    }

    /// The first instant after the range (excluded).
    pub fn end(&self) -> DateTime<Utc> {
        self.end
    }

    /// Whether a close date falls in the range.
    pub fn contains<Z: TimeZone>(&self, instant: &DateTime<Z>) -> bool {
        let instant = instant.with_timezone(&Utc);
        self.start <= instant && instant < self.end
    }

    /// The range over an index whose keys start with the close date, such as the bookings'
    /// `closed` index.
    pub fn key_range(&self) -> KeyRange {
        KeyRange {
            lower: Some(Bound::Inclusive(vec![KeyPart::from(self.start)])),
            upper: Some(Bound::Exclusive(vec![KeyPart::from(self.end)])),
        }
    }
}

/// A required date query parameter.
fn required_date(name: &str, value: Option<&str>) -> Result<NaiveDate, ApiError> {
    let value = value
        .filter(|value| !value.trim().is_empty())
        .ok_or_else(|| ApiError::missing_field(name))?;
    parse_calendar_date(value.trim())
        .ok_or_else(|| ApiError::invalid_field(name, "must be a date or a date-time"))
}

#[cfg(test)]
mod tests {
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
            parse_instant("2024-03-01T10:15:30.5").unwrap(),
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
        assert_eq!(time_zone_or_utc(None), Tz::UTC);
        assert_eq!(time_zone_or_utc(Some("Mars/Olympus")), Tz::UTC);
        assert_eq!(
            time_zone_or_utc(Some("America/Sao_Paulo")),
            Tz::America__Sao_Paulo
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

    #[test]
    fn close_range_covers_whole_days_in_the_tenant_zone() {
        let range =
            CloseDateRange::parse(Some("2024-03-01"), Some("2024-03-31"), buenos_aires()).unwrap();
        assert_eq!(range.from_date(), date("2024-03-01"));
        assert_eq!(range.to_date(), date("2024-03-31"));
        assert_eq!(range.start(), utc("2024-03-01T03:00:00Z"));
        assert_eq!(range.end(), utc("2024-04-01T03:00:00Z"));

        // 23:59 local on the last day is in; 00:00 local on the next day is out.
        assert!(range.contains(&utc("2024-04-01T02:59:59Z")));
        assert!(!range.contains(&utc("2024-04-01T03:00:00Z")));
        // 00:00 local on the first day is in; 23:59 local the day before is out.
        assert!(range.contains(&utc("2024-03-01T03:00:00Z")));
        assert!(!range.contains(&utc("2024-03-01T02:59:59Z")));
        // A date-time in the zone's own offset reads the same.
        assert!(
            range.contains(&DateTime::parse_from_rfc3339("2024-03-31T23:59:59-03:00").unwrap())
        );
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
        assert_eq!(range.start(), utc("2024-02-29T00:00:00Z"));
        assert_eq!(range.end(), utc("2024-03-01T00:00:00Z"));
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
        let error =
            CloseDateRange::parse(Some("2024-03-01"), Some("tomorrow"), Tz::UTC).unwrap_err();
        assert_eq!(error.code, ErrorCode::ModelNotValid);
        assert_eq!(error.field.as_deref(), Some("toDate"));
    }

    #[test]
    fn close_range_reversed_is_invalid_dates() {
        let error =
            CloseDateRange::parse(Some("2024-03-02"), Some("2024-03-01"), Tz::UTC).unwrap_err();
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
}
