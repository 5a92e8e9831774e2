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

use chrono::{DateTime, FixedOffset, Utc};
use chrono_tz::Tz;

use crate::collections;
use crate::dates::{self, CloseDateRange, FROM_DATE, TO_DATE};
use crate::error::ApiError;
use crate::models::{PagedResult, RenderedItem};
use crate::query::QueryParams;
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
        page(&QueryParams::collect(params))
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
        let params = QueryParams::collect(params);
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

    /// What the list without `updatedSince` reads from the `id` index (or `status`, prefixed
    /// by the status filter): the prefix every matching booking's key starts with, whose
    /// count is `Total`, and the range of the page, from the cursor.
    pub fn index_reads(&self) -> ListReads {
        let (index, prefix) = match self.status {
            Some(status) => (
                collections::bookings::BY_STATUS,
                vec![KeyPart::Int(status.code().into())],
            ),
            None => (collections::bookings::BY_ID, Vec::new()),
        };
        ListReads {
            index,
            matching: KeyRange::prefix(prefix.clone()),
            page: self.cursor.range(prefix),
            descending: self.cursor.descending(),
        }
    }

    /// The page of the booking list from its items as the store renders them
    /// ([`booking_items`](crate::collections::booking_items)), in page order, with `Total`:
    /// the page of their [`BookingDescription`](crate::models::BookingDescription)s.
    pub fn rendered_page<J>(
        &self,
        total: i64,
        items: Vec<RenderedItem<J>>,
    ) -> PagedResult<RenderedItem<J>> {
        PagedResult::by_cursor(self.cursor, self.limit, total, items, |item| item.id)
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

/// The reads of one page of the booking list without `updatedSince`
/// ([`BookingListQuery::index_reads`]), all in one index of the bookings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListReads {
    pub index: &'static str,
    /// Every booking that passes the filters: its count is `Total`.
    pub matching: KeyRange,
    /// The page's range, from the cursor, read in the cursor's direction.
    pub page: KeyRange,
    pub descending: bool,
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
        let params = QueryParams::collect(params);
        Ok(Self {
            range: CloseDateRange::parse(params.value(FROM_DATE), params.value(TO_DATE), tz)?,
            page: page(&params)?,
            ascending: params.get(SORT_DIRECTION_ASC, parse_bool)?.unwrap_or(true),
            by_close_date: params.get(SORT_BY_CLOSE_DATE, parse_bool)?.unwrap_or(false),
        })
    }
}

/// The `offset` and `limit` of a skip-count list.
pub(crate) fn page(params: &QueryParams) -> Result<Page, ApiError> {
    Ok(Page::new(
        params.get(OFFSET, parse_int)?,
        params.get(LIMIT, parse_int)?,
    ))
}

#[cfg(test)]
mod tests;
