//! Pagination rules (interface.md 4.2, 4.3 and 8; contract.md "Pagination") and the parsing of
//! the lists' query values.
//!
//! Two kinds of list exist:
//! - the booking list, whose `offset` is an **id cursor** ([`IdCursor`]): ascending, items with
//!   an Id above the offset; descending, offset 0 means "from the newest" and any other offset
//!   items with an Id below it. `NextOffset` is the Id of the last item returned, or the offset
//!   again when the page is empty ([`PagedResult::by_cursor`]);
//! - every other list (closed bookings, customers, cars), whose `offset` is a **skip count**
//!   ([`Page`]); `NextOffset` is the offset plus the items returned ([`PagedResult::by_skip`]).
//!
//! In both, the limit defaults to 30 and is cut to 100 ([`effective_limit`]), and a negative
//! offset is 0 ([`effective_offset`]). Query values are read with [`parse_int`],
//! [`parse_bool`] and [`parse_date_time`], which answer [`ErrorCode::ModelNotValid`](crate::ErrorCode::ModelNotValid) naming
//! the parameter; [`BookingListQuery`] and [`ClosedListQuery`] read a whole query string.

use std::collections::HashMap;

use chrono::{DateTime, FixedOffset, Utc};
use chrono_tz::Tz;

use crate::dates::{self, CloseDateRange, FROM_DATE, TO_DATE};
use crate::error::ApiError;
use crate::models::PagedResult;
use crate::status::BookingStatus;
use crate::store::{Bound, KeyPart, KeyRange};

/// Page size when the client sends none.
pub const DEFAULT_LIMIT: i64 = 30;
/// Largest page size; a larger limit is silently cut to it.
pub const MAX_LIMIT: i64 = 100;

/// Query parameter: the offset (a cursor or a skip count, depending on the list).
pub const OFFSET: &str = "offset";
/// Query parameter: the page size.
pub const LIMIT: &str = "limit";
/// Query parameter: ascending (`true`, the default) or descending order.
pub const SORT_DIRECTION_ASC: &str = "sortDirectionAsc";
/// Query parameter of the booking list: the status filter.
pub const STATUS: &str = "status";
/// Query parameter of the booking list: only bookings updated strictly after this instant.
pub const UPDATED_SINCE: &str = "updatedSince";
/// Query parameter of the closed list: sort by close date (`true`) or by Id (`false`, default).
pub const SORT_BY_CLOSE_DATE: &str = "sortByCloseDate";

/// The page size a list uses for the `limit` it was sent.
///
/// No limit, or a limit of 0 or less, means the default of [`DEFAULT_LIMIT`] (30): the
/// interface gives no meaning to an empty or negative page, so it is read as "not chosen".
/// A limit above [`MAX_LIMIT`] is cut to 100.
pub fn effective_limit(requested: Option<i64>) -> i64 {
    match requested {
        Some(limit) if limit > 0 => limit.min(MAX_LIMIT),
        _ => DEFAULT_LIMIT,
    }
}

/// The offset a list uses for the `offset` it was sent: 0 when absent, and a negative offset
/// is 0.
pub fn effective_offset(requested: Option<i64>) -> i64 {
    requested.unwrap_or(0).max(0)
}

/// A page of a skip-count list: skip `offset` items, return at most `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// Items to skip, never negative.
    pub offset: i64,
    /// Items to return, from 1 to [`MAX_LIMIT`].
    pub limit: i64,
}

impl Page {
    /// The page for the values sent, with the rules of [`effective_offset`] and
    /// [`effective_limit`].
    pub fn new(offset: Option<i64>, limit: Option<i64>) -> Self {
        Self {
            offset: effective_offset(offset),
            limit: effective_limit(limit),
        }
    }

    /// Reads `offset` and `limit` from a query string's decoded pairs (see
    /// [`BookingListQuery::parse`] for how pairs are read).
    pub fn parse<K, V>(params: impl IntoIterator<Item = (K, V)>) -> Result<Self, ApiError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        Params::collect(params).page()
    }
}

/// The id cursor of the booking list: where a page starts, in which direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdCursor {
    /// Ascending: items with an Id strictly greater than this (0 on the first call).
    After(i64),
    /// Descending, first call (offset 0): from the newest item.
    Newest,
    /// Descending: items with an Id strictly lower than this.
    Before(i64),
}

impl IdCursor {
    /// The cursor for an `offset` and a `sortDirectionAsc` as sent; a negative offset is 0.
    pub fn new(offset: Option<i64>, ascending: bool) -> Self {
        match (effective_offset(offset), ascending) {
            (offset, true) => IdCursor::After(offset),
            (0, false) => IdCursor::Newest,
            (offset, false) => IdCursor::Before(offset),
        }
    }

    /// The offset the cursor was built from, as `Offset` of the response reports it.
    pub fn offset(self) -> i64 {
        match self {
            IdCursor::After(id) | IdCursor::Before(id) => id,
            IdCursor::Newest => 0,
        }
    }

    /// Whether the index is scanned in descending order.
    pub fn descending(self) -> bool {
        !matches!(self, IdCursor::After(_))
    }

    /// Whether an item with this Id belongs after the cursor.
    pub fn admits(self, id: i64) -> bool {
        match self {
            IdCursor::After(offset) => id > offset,
            IdCursor::Newest => true,
            IdCursor::Before(offset) => id < offset,
        }
    }

    /// The range to scan, in the direction of [`IdCursor::descending`], over an index whose
    /// keys are `prefix` followed by the Id: an empty prefix for the bookings' `id` index,
    /// `[Int(status)]` for their `status` index.
    pub fn range(self, prefix: Vec<KeyPart>) -> KeyRange {
        let whole = KeyRange::prefix(prefix.clone());
        let at = |id: i64| {
            let mut key = prefix.clone();
            key.push(KeyPart::Int(id));
            Some(Bound::Exclusive(key))
        };
        match self {
            IdCursor::After(offset) => KeyRange {
                lower: at(offset),
                upper: whole.upper,
            },
            IdCursor::Newest => whole,
            IdCursor::Before(offset) => KeyRange {
                lower: whole.lower,
                upper: at(offset),
            },
        }
    }
}

impl<T> PagedResult<T> {
    /// A page of the booking list: `NextOffset` is the Id (given by `id_of`) of the last item,
    /// or the cursor's offset again when the page is empty.
    pub fn by_cursor(
        cursor: IdCursor,
        limit: i64,
        total: i64,
        results: Vec<T>,
        id_of: impl Fn(&T) -> i64,
    ) -> Self {
        let next_offset = results.last().map_or(cursor.offset(), id_of);
        Self {
            offset: cursor.offset(),
            limit,
            total,
            results: Some(results),
            next_offset,
        }
    }

    /// A page of a skip-count list: `NextOffset` is the offset plus the items returned.
    pub fn by_skip(page: Page, total: i64, results: Vec<T>) -> Self {
        let returned = i64::try_from(results.len()).unwrap_or(i64::MAX);
        Self {
            offset: page.offset,
            limit: page.limit,
            total,
            results: Some(results),
            next_offset: page.offset.saturating_add(returned),
        }
    }
}

/// Reads an integer query value (surrounding spaces allowed). Values wider than the
/// interface's int32 are accepted, so that a huge limit is cut rather than rejected.
pub fn parse_int(name: &str, value: &str) -> Result<i64, ApiError> {
    value
        .trim()
        .parse::<i64>()
        .map_err(|_| ApiError::invalid_field(name, "must be an integer"))
}

/// Reads a boolean query value: `true` or `false` in any case.
pub fn parse_bool(name: &str, value: &str) -> Result<bool, ApiError> {
    let value = value.trim();
    if value.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if value.eq_ignore_ascii_case("false") {
        Ok(false)
    } else {
        Err(ApiError::invalid_field(name, "must be true or false"))
    }
}

/// Reads a date-time query value as [`dates::parse_date_time`] does (RFC 3339, or without
/// offset taken as UTC).
pub fn parse_date_time(name: &str, value: &str) -> Result<DateTime<FixedOffset>, ApiError> {
    dates::parse_date_time(value.trim())
        .ok_or_else(|| ApiError::invalid_field(name, "must be an ISO 8601 date-time"))
}

/// Reads a booking status query value: its number or its name ([`BookingStatus::parse`]).
pub fn parse_status(name: &str, value: &str) -> Result<BookingStatus, ApiError> {
    BookingStatus::parse(value.trim())
        .ok_or_else(|| ApiError::invalid_field(name, "must be a booking status from 1 to 6"))
}

/// The query of `GET /api/bookings/list`, read and normalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BookingListQuery {
    /// The `status` filter.
    pub status: Option<BookingStatus>,
    /// Where the page starts, from `offset` and `sortDirectionAsc`.
    pub cursor: IdCursor,
    /// The page size, from 1 to [`MAX_LIMIT`].
    pub limit: i64,
    /// `updatedSince`: only bookings whose `UpdatedOn` is strictly later; bookings without
    /// `UpdatedOn` are excluded whenever it is set.
    pub updated_since: Option<DateTime<Utc>>,
}

impl BookingListQuery {
    /// Reads the query from a query string's decoded pairs. Names are case-sensitive, as the
    /// interface spells them; other names are ignored; when a name repeats, the last value
    /// wins; an empty value counts as absent.
    ///
    /// Errors: a value that does not parse is [`ErrorCode::ModelNotValid`](crate::ErrorCode::ModelNotValid) naming it.
    pub fn parse<K, V>(params: impl IntoIterator<Item = (K, V)>) -> Result<Self, ApiError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let params = Params::collect(params);
        Ok(Self {
            status: params.get(STATUS, parse_status)?,
            cursor: IdCursor::new(
                params.get(OFFSET, parse_int)?,
                params.get(SORT_DIRECTION_ASC, parse_bool)?.unwrap_or(true),
            ),
            limit: effective_limit(params.get(LIMIT, parse_int)?),
            updated_since: params
                .get(UPDATED_SINCE, parse_date_time)?
                .map(|since| since.with_timezone(&Utc)),
        })
    }

    /// Whether a booking passes the filters and lies after the cursor.
    pub fn admits(
        &self,
        id: i64,
        status: BookingStatus,
        updated_on: Option<DateTime<FixedOffset>>,
    ) -> bool {
        let status_ok = self.status.is_none_or(|wanted| wanted == status);
        let updated_ok = match self.updated_since {
            Some(since) => updated_on.is_some_and(|updated| updated > since),
            None => true,
        };
        status_ok && updated_ok && self.cursor.admits(id)
    }
}

/// The query of `GET /api/bookings/closed`, read and normalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClosedListQuery {
    /// The close-date range, from `fromDate` and `toDate` in the tenant's time zone.
    pub range: CloseDateRange,
    /// The skip-count page, from `offset` and `limit`.
    pub page: Page,
    /// `sortDirectionAsc` (default true).
    pub ascending: bool,
    /// `sortByCloseDate`: by close date when true, by Id when false (default).
    pub by_close_date: bool,
}

impl ClosedListQuery {
    /// Reads the query as [`BookingListQuery::parse`] reads pairs, with the close-date range
    /// in the tenant's time zone `tz`.
    ///
    /// Errors: a missing date or a value that does not parse is [`ErrorCode::ModelNotValid`](crate::ErrorCode::ModelNotValid)
    /// naming it; a reversed range or one over 90 days is [`ErrorCode::InvlaidDates`](crate::ErrorCode::InvlaidDates).
    pub fn parse<K, V>(params: impl IntoIterator<Item = (K, V)>, tz: Tz) -> Result<Self, ApiError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let params = Params::collect(params);
        Ok(Self {
            range: CloseDateRange::parse(params.value(FROM_DATE), params.value(TO_DATE), tz)?,
            page: params.page()?,
            ascending: params.get(SORT_DIRECTION_ASC, parse_bool)?.unwrap_or(true),
            by_close_date: params.get(SORT_BY_CLOSE_DATE, parse_bool)?.unwrap_or(false),
        })
    }
}

/// A query string's pairs by name: the last value of each name, empty values dropped.
struct Params(HashMap<String, String>);

impl Params {
    fn collect<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut values = HashMap::new();
        for (name, value) in pairs {
            let (name, value) = (name.as_ref(), value.as_ref());
            if value.trim().is_empty() {
                values.remove(name);
            } else {
                values.insert(name.to_owned(), value.to_owned());
            }
        }
        Self(values)
    }

    fn value(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    fn get<T>(
        &self,
        name: &str,
        parse: impl Fn(&str, &str) -> Result<T, ApiError>,
    ) -> Result<Option<T>, ApiError> {
        self.value(name).map(|value| parse(name, value)).transpose()
    }

    fn page(&self) -> Result<Page, ApiError> {
        Ok(Page::new(
            self.get(OFFSET, parse_int)?,
            self.get(LIMIT, parse_int)?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn utc(value: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(value)
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn limit_defaults_to_thirty_and_is_cut_to_one_hundred() {
        assert_eq!(effective_limit(None), 30);
        assert_eq!(effective_limit(Some(0)), 30);
        assert_eq!(effective_limit(Some(-5)), 30);
        assert_eq!(effective_limit(Some(1)), 1);
        assert_eq!(effective_limit(Some(30)), 30);
        assert_eq!(effective_limit(Some(100)), 100);
        assert_eq!(effective_limit(Some(101)), 100);
        assert_eq!(effective_limit(Some(i64::MAX)), 100);
    }

    #[test]
    fn negative_offset_is_zero() {
        assert_eq!(effective_offset(None), 0);
        assert_eq!(effective_offset(Some(-1)), 0);
        assert_eq!(effective_offset(Some(i64::MIN)), 0);
        assert_eq!(effective_offset(Some(40)), 40);
        assert_eq!(
            Page::new(Some(-3), Some(500)),
            Page {
                offset: 0,
                limit: 100
            }
        );
    }

    #[test]
    fn ascending_cursor_admits_greater_ids() {
        let cursor = IdCursor::new(Some(10), true);
        assert_eq!(cursor, IdCursor::After(10));
        assert!(!cursor.descending());
        assert!(!cursor.admits(9));
        assert!(!cursor.admits(10));
        assert!(cursor.admits(11));
        assert_eq!(IdCursor::new(None, true), IdCursor::After(0));
        assert_eq!(IdCursor::new(Some(-7), true), IdCursor::After(0));
        assert!(IdCursor::After(0).admits(1));
    }

    #[test]
    fn descending_cursor_starts_from_the_newest_then_admits_lower_ids() {
        let first = IdCursor::new(Some(0), false);
        assert_eq!(first, IdCursor::Newest);
        assert!(first.descending());
        assert!(first.admits(i64::MAX));
        assert_eq!(IdCursor::new(Some(-1), false), IdCursor::Newest);
        assert_eq!(IdCursor::new(None, false), IdCursor::Newest);

        let later = IdCursor::new(Some(10), false);
        assert_eq!(later, IdCursor::Before(10));
        assert!(later.descending());
        assert!(later.admits(9));
        assert!(!later.admits(10));
        assert!(!later.admits(11));
    }

    #[test]
    fn cursor_ranges_over_the_id_index() {
        assert_eq!(
            IdCursor::After(5).range(vec![]),
            KeyRange {
                lower: Some(Bound::Exclusive(vec![KeyPart::Int(5)])),
                upper: None,
            }
        );
        assert_eq!(IdCursor::Newest.range(vec![]), KeyRange::all());
        assert_eq!(
            IdCursor::Before(5).range(vec![]),
            KeyRange {
                lower: None,
                upper: Some(Bound::Exclusive(vec![KeyPart::Int(5)])),
            }
        );
    }

    #[test]
    fn cursor_ranges_over_the_status_index() {
        let status = || vec![KeyPart::Int(2)];
        assert_eq!(
            IdCursor::After(5).range(status()),
            KeyRange {
                lower: Some(Bound::Exclusive(vec![KeyPart::Int(2), KeyPart::Int(5)])),
                upper: Some(Bound::Inclusive(status())),
            }
        );
        assert_eq!(IdCursor::Newest.range(status()), KeyRange::prefix(status()));
        assert_eq!(
            IdCursor::Before(5).range(status()),
            KeyRange {
                lower: Some(Bound::Inclusive(status())),
                upper: Some(Bound::Exclusive(vec![KeyPart::Int(2), KeyPart::Int(5)])),
            }
        );
    }

    #[test]
    fn next_offset_of_the_booking_list_is_the_last_id() {
        let page = PagedResult::by_cursor(IdCursor::After(0), 3, 10, vec![1, 2, 4], |id| *id);
        assert_eq!(page.offset, 0);
        assert_eq!(page.limit, 3);
        assert_eq!(page.total, 10);
        assert_eq!(page.next_offset, 4);
        assert_eq!(page.results, Some(vec![1, 2, 4]));

        let descending = PagedResult::by_cursor(IdCursor::Newest, 2, 10, vec![9, 7], |id| *id);
        assert_eq!(descending.offset, 0);
        assert_eq!(descending.next_offset, 7);

        let next = PagedResult::by_cursor(IdCursor::Before(7), 2, 10, vec![6, 3], |id| *id);
        assert_eq!(next.offset, 7);
        assert_eq!(next.next_offset, 3);
    }

    #[test]
    fn next_offset_of_an_empty_page_is_the_offset_again() {
        let page = PagedResult::<i64>::by_cursor(IdCursor::After(42), 30, 42, vec![], |id| *id);
        assert_eq!(page.next_offset, 42);
        assert_eq!(page.results, Some(vec![]));
        let page = PagedResult::<i64>::by_cursor(IdCursor::Before(1), 30, 5, vec![], |id| *id);
        assert_eq!(page.next_offset, 1);
        let page = PagedResult::<i64>::by_cursor(IdCursor::Newest, 30, 0, vec![], |id| *id);
        assert_eq!(page.next_offset, 0);
    }

    #[test]
    fn next_offset_of_skip_lists_adds_the_items_returned() {
        let page = PagedResult::by_skip(Page::new(Some(20), Some(10)), 25, vec!['a'; 5]);
        assert_eq!(page.offset, 20);
        assert_eq!(page.limit, 10);
        assert_eq!(page.total, 25);
        assert_eq!(page.next_offset, 25);
        let empty = PagedResult::<char>::by_skip(Page::new(Some(30), None), 25, vec![]);
        assert_eq!(empty.next_offset, 30);
        assert_eq!(empty.limit, 30);
    }

    #[test]
    fn integers() {
        assert_eq!(parse_int("limit", "25"), Ok(25));
        assert_eq!(parse_int("limit", " -3 "), Ok(-3));
        assert_eq!(parse_int("offset", "4294967296"), Ok(4_294_967_296));
        for value in ["", "ten", "1.5", "1e3", "0x10", "99999999999999999999"] {
            let error = parse_int("limit", value).unwrap_err();
            assert_eq!(error.code, ErrorCode::ModelNotValid, "{value:?}");
            assert_eq!(error.field.as_deref(), Some("limit"));
        }
    }

    #[test]
    fn booleans_in_any_case() {
        assert_eq!(parse_bool("sortDirectionAsc", "true"), Ok(true));
        assert_eq!(parse_bool("sortDirectionAsc", "TRUE"), Ok(true));
        assert_eq!(parse_bool("sortDirectionAsc", "False"), Ok(false));
        for value in ["", "1", "0", "yes", "no", "t"] {
            let error = parse_bool("sortByCloseDate", value).unwrap_err();
            assert_eq!(error.code, ErrorCode::ModelNotValid, "{value:?}");
            assert_eq!(error.field.as_deref(), Some("sortByCloseDate"));
        }
    }

    #[test]
    fn date_times_and_statuses() {
        assert_eq!(
            parse_date_time("updatedSince", "2024-03-01T10:00:00").unwrap(),
            utc("2024-03-01T10:00:00Z")
        );
        let error = parse_date_time("updatedSince", "soon").unwrap_err();
        assert_eq!(error.code, ErrorCode::ModelNotValid);
        assert_eq!(error.field.as_deref(), Some("updatedSince"));

        assert_eq!(parse_status("status", "5"), Ok(BookingStatus::Closed));
        let error = parse_status("status", "0").unwrap_err();
        assert_eq!(error.field.as_deref(), Some("status"));
    }

    #[test]
    fn booking_list_query_defaults() {
        let query = BookingListQuery::parse(Vec::<(&str, &str)>::new()).unwrap();
        assert_eq!(
            query,
            BookingListQuery {
                status: None,
                cursor: IdCursor::After(0),
                limit: 30,
                updated_since: None,
            }
        );
    }

    #[test]
    fn booking_list_query_reads_every_parameter() {
        let query = BookingListQuery::parse([
            ("status", "2"),
            ("offset", "50"),
            ("limit", "500"),
            ("sortDirectionAsc", "false"),
            ("updatedSince", "2024-03-01T10:00:00-03:00"),
            ("language", "es-AR"),
        ])
        .unwrap();
        assert_eq!(query.status, Some(BookingStatus::Reserved));
        assert_eq!(query.cursor, IdCursor::Before(50));
        assert_eq!(query.limit, 100);
        assert_eq!(query.updated_since, Some(utc("2024-03-01T13:00:00Z")));
    }

    #[test]
    fn booking_list_query_last_value_wins_and_empty_is_absent() {
        let query = BookingListQuery::parse([
            ("limit", "10"),
            ("limit", "20"),
            ("status", ""),
            ("offset", "-4"),
        ])
        .unwrap();
        assert_eq!(query.limit, 20);
        assert_eq!(query.status, None);
        assert_eq!(query.cursor, IdCursor::After(0));
    }

    #[test]
    fn booking_list_query_errors_name_the_parameter() {
        for (name, value) in [
            ("offset", "x"),
            ("limit", "1.5"),
            ("sortDirectionAsc", "yes"),
            ("updatedSince", "yesterday"),
            ("status", "Lost"),
        ] {
            let error = BookingListQuery::parse([(name, value)]).unwrap_err();
            assert_eq!(error.code, ErrorCode::ModelNotValid, "{name}");
            assert_eq!(error.field.as_deref(), Some(name));
        }
    }

    #[test]
    fn booking_list_filters() {
        let since = BookingListQuery::parse([("updatedSince", "2024-03-01T10:00:00Z")]).unwrap();
        let at = |value: &str| Some(DateTime::parse_from_rfc3339(value).unwrap());
        assert!(since.admits(1, BookingStatus::Quoted, at("2024-03-01T10:00:01Z")));
        assert!(!since.admits(1, BookingStatus::Quoted, at("2024-03-01T10:00:00Z")));
        assert!(!since.admits(1, BookingStatus::Quoted, None));

        let closed = BookingListQuery::parse([("status", "5"), ("offset", "3")]).unwrap();
        assert!(closed.admits(4, BookingStatus::Closed, None));
        assert!(!closed.admits(4, BookingStatus::Canceled, None));
        assert!(!closed.admits(3, BookingStatus::Closed, None));
    }

    #[test]
    fn closed_list_query() {
        let tz = Tz::America__Argentina__Buenos_Aires;
        let query = ClosedListQuery::parse(
            [
                ("fromDate", "2024-03-01"),
                ("toDate", "2024-03-02T12:00:00"),
                ("offset", "-10"),
                ("limit", "0"),
                ("sortByCloseDate", "TRUE"),
            ],
            tz,
        )
        .unwrap();
        assert_eq!(query.page, Page::new(None, None));
        assert!(query.ascending);
        assert!(query.by_close_date);
        assert_eq!(query.range.start(), utc("2024-03-01T03:00:00Z"));
        assert_eq!(query.range.end(), utc("2024-03-03T03:00:00Z"));
    }

    #[test]
    fn closed_list_query_errors() {
        let tz = Tz::UTC;
        let error = ClosedListQuery::parse([("toDate", "2024-03-01")], tz).unwrap_err();
        assert_eq!(error.code, ErrorCode::ModelNotValid);
        assert_eq!(error.field.as_deref(), Some("fromDate"));

        let error =
            ClosedListQuery::parse([("fromDate", "2024-03-01"), ("toDate", "")], tz).unwrap_err();
        assert_eq!(error.field.as_deref(), Some("toDate"));

        let error =
            ClosedListQuery::parse([("fromDate", "2024-01-01"), ("toDate", "2024-06-01")], tz)
                .unwrap_err();
        assert_eq!(error.code, ErrorCode::InvlaidDates);

        let error = ClosedListQuery::parse(
            [
                ("fromDate", "2024-01-01"),
                ("toDate", "2024-01-02"),
                ("sortByCloseDate", "maybe"),
            ],
            tz,
        )
        .unwrap_err();
        assert_eq!(error.field.as_deref(), Some("sortByCloseDate"));
    }

    #[test]
    fn skip_page_from_a_query() {
        assert_eq!(
            Page::parse([("offset", "60"), ("limit", "20")]).unwrap(),
            Page {
                offset: 60,
                limit: 20
            }
        );
        assert!(Page::parse([("offset", "sixty")]).is_err());
    }
}
