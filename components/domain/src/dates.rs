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
mod tests;
