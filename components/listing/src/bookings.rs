//! `GET /api/bookings/list` and `GET /api/bookings/closed`.
//!
//! The booking list walks the `id` index (or `status`, prefixed by the status filter) from the
//! id cursor and counts the same index for `Total`. With `updatedSince` it reads the keys of
//! the `updated` index after that instant, which carry status and Id, so that filtering,
//! counting and ordering by Id need no document; only the page's documents are loaded.
//!
//! The closed list reads the `closed` index (close date, then Id) between the first and last
//! instants of the requested days: sorted by close date, one range scan; sorted by Id, the
//! range's keys, ordered by Id, then the page's documents.

use chrono::{DateTime, Utc};
use rental_domain::collections::bookings::{self, BY_CLOSED, BY_ID, BY_STATUS, BY_UPDATED};
use rental_domain::{
    Booking, BookingDescription, BookingListQuery, BookingStatus, CloseDateRange, ClosedListQuery,
    IdCursor, KeyPart, PagedResult,
};
use rental_guest::context;
use rental_guest::store::{Entry, Mode, Range, Scan, Transaction};
use rental_guest::{Error, Request, Response, json, retry_on_conflict};

use crate::page::{self, page_by_id, store_limit, store_skip};

/// `GET /api/bookings/list`: a page of [`BookingDescription`]s after the id cursor.
pub fn list(request: &Request) -> Result<Response, Error> {
    let query = BookingListQuery::parse(page::query(request))?;
    let page = retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadOnly)?;
        match query.updated_since {
            None => list_by_index(&tx, &query),
            Some(since) => list_updated(&tx, &query, since),
        }
    })?;
    Ok(json(200, &page))
}

/// The booking list without `updatedSince`: one scan from the cursor, one count.
fn list_by_index(
    tx: &Transaction,
    query: &BookingListQuery,
) -> Result<PagedResult<BookingDescription>, Error> {
    let (matching, page) = index_plan(query);
    let total = page::total(tx.count(&matching)?);
    let bookings = tx.scan(&page)?;
    let descriptions = bookings
        .iter()
        .map(|document| BookingDescription::from(&document.value))
        .collect();
    Ok(PagedResult::by_cursor(
        query.cursor,
        query.limit,
        total,
        descriptions,
        |description| description.id,
    ))
}

/// What the booking list without `updatedSince` reads: the range of every booking that
/// matches the filters (for `Total`) and the scan of the page from the cursor.
fn index_plan(query: &BookingListQuery) -> (Range<Booking>, Scan<Booking>) {
    let (index, prefix) = match query.status {
        Some(status) => (BY_STATUS, vec![KeyPart::Int(status.code().into())]),
        None => (BY_ID, Vec::new()),
    };
    let matching = Range::prefix(index, prefix.clone());
    let page = Range::new(index, query.cursor.range(prefix))
        .scan()
        .descending(query.cursor.descending())
        .limit(store_limit(query.limit));
    (matching, page)
}

/// The booking list with `updatedSince`: the keys of every booking updated strictly after it,
/// then the documents of the page.
fn list_updated(
    tx: &Transaction,
    query: &BookingListQuery,
    since: DateTime<Utc>,
) -> Result<PagedResult<BookingDescription>, Error> {
    let entries = tx.all_keys(&Range::<Booking>::new(
        BY_UPDATED,
        bookings::updated_after(since),
    ))?;
    let (total, ids) = select_updated(query, &entries)?;
    let bookings = tx.get_many::<Booking>(&ids)?;
    let descriptions = bookings
        .iter()
        .map(|document| BookingDescription::from(&document.value))
        .collect();
    Ok(PagedResult::by_cursor(
        query.cursor,
        query.limit,
        total,
        descriptions,
        |description| description.id,
    ))
}

/// From the `updated` entries after `updatedSince`: `Total` (every entry that passes the
/// filters, whatever the cursor) and the document ids of the page (after the cursor, by Id in
/// the cursor's direction, at most `limit`).
fn select_updated(
    query: &BookingListQuery,
    entries: &[Entry],
) -> Result<(i64, Vec<String>), Error> {
    let filters_only = BookingListQuery {
        cursor: IdCursor::Newest,
        ..*query
    };
    let mut total = 0;
    let mut page = Vec::new();
    for entry in entries {
        let (updated_on, status, id) = updated_key(entry)?;
        let updated_on = Some(updated_on.fixed_offset());
        if filters_only.admits(id, status, updated_on) {
            total += 1;
            if query.admits(id, status, updated_on) {
                page.push((id, entry.id.clone()));
            }
        }
    }
    let ids = page_by_id(
        page,
        !query.cursor.descending(),
        0,
        store_limit(query.limit),
    );
    Ok((total, ids))
}

/// The parts of an `updated` key: `[Time(UpdatedOn), Int(CurrentStatus), Int(Id)]`.
fn updated_key(entry: &Entry) -> Result<(DateTime<Utc>, BookingStatus, i64), Error> {
    let parts = match entry.key.as_slice() {
        [
            KeyPart::Time(updated),
            KeyPart::Int(status),
            KeyPart::Int(id),
        ] => DateTime::from_timestamp_micros(*updated).and_then(|updated| {
            let status = i32::try_from(*status)
                .ok()
                .and_then(BookingStatus::from_i32)?;
            Some((updated, status, *id))
        }),
        _ => None,
    };
    parts.ok_or_else(|| malformed(BY_UPDATED, entry))
}

/// `GET /api/bookings/closed`: a page of the [`Booking`]s closed within the requested days.
pub fn closed(request: &Request) -> Result<Response, Error> {
    let time_zone = context::time_zone();
    let query = ClosedListQuery::parse(page::query(request), time_zone)?;
    let page = retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadOnly)?;
        let range = closed_within(&query.range);
        let (total, bookings) = if query.by_close_date {
            let total = tx.count(&range)?;
            (total, tx.scan(&closed_page_by_date(&query))?)
        } else {
            let entries = tx.all_keys(&range)?;
            let total = u64::try_from(entries.len()).unwrap_or(u64::MAX);
            (
                total,
                tx.get_many::<Booking>(&closed_page_by_id(&query, &entries)?)?,
            )
        };
        let bookings = bookings
            .into_iter()
            .map(|document| document.value)
            .collect();
        Ok::<_, Error>(PagedResult::by_skip(
            query.page,
            page::total(total),
            bookings,
        ))
    })?;
    Ok(json(200, &page))
}

/// The `closed` index between the first and last instants of the close-date range.
fn closed_within(range: &CloseDateRange) -> Range<Booking> {
    Range::new(BY_CLOSED, range.key_range())
}

/// The closed list sorted by close date: one scan of the page.
fn closed_page_by_date(query: &ClosedListQuery) -> Scan<Booking> {
    closed_within(&query.range)
        .scan()
        .descending(!query.ascending)
        .skip(store_skip(query.page))
        .limit(store_limit(query.page.limit))
}

/// The closed list sorted by Id: the document ids of the page, from the range's entries
/// (`[Time(CurrentStatusDate), Int(Id)]`).
fn closed_page_by_id(query: &ClosedListQuery, entries: &[Entry]) -> Result<Vec<String>, Error> {
    let items = entries
        .iter()
        .map(|entry| match entry.key.as_slice() {
            [KeyPart::Time(_), KeyPart::Int(id)] => Ok((*id, entry.id.clone())),
            _ => Err(malformed(BY_CLOSED, entry)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(page_by_id(
        items,
        query.ascending,
        store_skip(query.page),
        store_limit(query.page.limit),
    ))
}

/// An index entry whose key does not have the index's layout: stored data the component
/// cannot read.
fn malformed(index: &str, entry: &Entry) -> Error {
    Error::internal(format!(
        "booking {} has a malformed '{index}' key: {:?}",
        entry.id, entry.key
    ))
}

#[cfg(test)]
mod tests {
    use chrono::{NaiveDate, TimeZone};
    use rental_domain::{Bound, KeyRange, Page};

    use super::*;

    fn list_query(query: &str) -> BookingListQuery {
        let request = Request::new("GET", &format!("/api/bookings/list?{query}"));
        BookingListQuery::parse(page::query(&request)).unwrap()
    }

    fn updated(micros: i64, status: i64, id: i64) -> Entry {
        Entry {
            id: id.to_string(),
            key: vec![
                KeyPart::Time(micros),
                KeyPart::Int(status),
                KeyPart::Int(id),
            ],
        }
    }

    #[test]
    fn ascending_list_scans_the_id_index_after_the_cursor() {
        let (matching, page) = index_plan(&list_query("offset=40&limit=10"));
        assert_eq!(matching, Range::all(BY_ID));
        let expected = Range::new(
            BY_ID,
            KeyRange {
                lower: Some(Bound::Exclusive(vec![KeyPart::Int(40)])),
                upper: None,
            },
        )
        .scan()
        .limit(10);
        assert_eq!(page, expected);
    }

    #[test]
    fn first_descending_call_starts_from_the_newest() {
        let (_, page) = index_plan(&list_query("sortDirectionAsc=false"));
        assert_eq!(page, Range::all(BY_ID).scan().descending(true).limit(30));
    }

    #[test]
    fn later_descending_calls_scan_below_the_cursor() {
        let (_, page) = index_plan(&list_query("sortDirectionAsc=false&offset=17&limit=500"));
        let expected = Range::new(
            BY_ID,
            KeyRange {
                lower: None,
                upper: Some(Bound::Exclusive(vec![KeyPart::Int(17)])),
            },
        )
        .scan()
        .descending(true)
        .limit(100);
        assert_eq!(page, expected);
    }

    #[test]
    fn status_filter_uses_the_status_index_under_its_prefix() {
        let (matching, page) = index_plan(&list_query("status=5&offset=3"));
        assert_eq!(matching, Range::prefix(BY_STATUS, vec![KeyPart::Int(5)]));
        let expected = Range::new(
            BY_STATUS,
            KeyRange {
                lower: Some(Bound::Exclusive(vec![KeyPart::Int(5), KeyPart::Int(3)])),
                upper: Some(Bound::Inclusive(vec![KeyPart::Int(5)])),
            },
        )
        .scan()
        .limit(30);
        assert_eq!(page, expected);
    }

    #[test]
    fn updated_entries_are_filtered_counted_and_paged_by_id() {
        let query = list_query("updatedSince=1970-01-01T00:00:00Z&status=2&offset=3&limit=2");
        // Keys come in update order; Ids are out of order.
        let entries = [
            updated(10, 2, 7),
            updated(11, 5, 4),
            updated(12, 2, 2),
            updated(13, 2, 9),
            updated(14, 2, 5),
            updated(15, 2, 3),
        ];
        let (total, ids) = select_updated(&query, &entries).unwrap();
        assert_eq!(total, 5, "every status-2 entry, whatever the cursor");
        assert_eq!(ids, ["5", "7"]);
    }

    #[test]
    fn updated_entries_descending_from_the_newest_and_below_a_cursor() {
        let entries = [updated(10, 1, 7), updated(11, 6, 4), updated(12, 2, 9)];
        let newest = list_query("updatedSince=1970-01-01T00:00:00Z&sortDirectionAsc=false&limit=2");
        assert_eq!(
            select_updated(&newest, &entries).unwrap(),
            (3, vec!["9".to_owned(), "7".to_owned()])
        );
        let below = list_query("updatedSince=1970-01-01T00:00:00Z&sortDirectionAsc=false&offset=7");
        assert_eq!(
            select_updated(&below, &entries).unwrap(),
            (3, vec!["4".to_owned()])
        );
    }

    #[test]
    fn an_entry_at_the_instant_itself_is_not_after_it() {
        // The store's exclusive bound already leaves such entries out; the domain's filter
        // agrees, so a store that returned one would not change the answer.
        let query = list_query("updatedSince=1970-01-01T00:00:01Z");
        let entries = [updated(1_000_000, 2, 1), updated(1_000_001, 2, 2)];
        assert_eq!(
            select_updated(&query, &entries).unwrap(),
            (1, vec!["2".to_owned()])
        );
    }

    #[test]
    fn malformed_updated_keys_are_internal_errors() {
        let query = list_query("updatedSince=1970-01-01T00:00:00Z");
        let bad = Entry {
            id: "1".to_owned(),
            key: vec![KeyPart::Int(1)],
        };
        assert!(matches!(
            select_updated(&query, &[bad]),
            Err(Error::Internal(_))
        ));
        let unknown_status = updated(5, 9, 1);
        assert!(matches!(
            select_updated(&query, &[unknown_status]),
            Err(Error::Internal(_))
        ));
    }

    fn closed_query(query: &str, zone: chrono_tz::Tz) -> ClosedListQuery {
        let request = Request::new("GET", &format!("/api/bookings/closed?{query}"));
        ClosedListQuery::parse(page::query(&request), zone).unwrap()
    }

    #[test]
    fn closed_range_is_whole_days_in_the_tenant_zone() {
        let zone = chrono_tz::America::Argentina::Buenos_Aires;
        let query = closed_query("fromDate=2024-03-01&toDate=2024-03-02T15:00:00", zone);
        let start = Utc.with_ymd_and_hms(2024, 3, 1, 3, 0, 0).unwrap();
        let end = Utc.with_ymd_and_hms(2024, 3, 3, 3, 0, 0).unwrap();
        let expected = Range::new(
            BY_CLOSED,
            KeyRange {
                lower: Some(Bound::Inclusive(vec![KeyPart::Time(
                    start.timestamp_micros(),
                )])),
                upper: Some(Bound::Exclusive(vec![KeyPart::Time(
                    end.timestamp_micros(),
                )])),
            },
        );
        assert_eq!(closed_within(&query.range), expected);
        assert_eq!(
            query.range.from_date(),
            NaiveDate::from_ymd_opt(2024, 3, 1).unwrap()
        );
    }

    #[test]
    fn closed_by_date_is_one_scan_with_skip_and_limit() {
        let query = closed_query(
            "fromDate=2024-03-01&toDate=2024-03-31&offset=20&limit=10&sortByCloseDate=true&sortDirectionAsc=false",
            chrono_tz::Tz::UTC,
        );
        assert_eq!(
            query.page,
            Page {
                offset: 20,
                limit: 10
            }
        );
        let expected = closed_within(&query.range)
            .scan()
            .descending(true)
            .skip(20)
            .limit(10);
        assert_eq!(closed_page_by_date(&query), expected);
    }

    #[test]
    fn closed_by_id_orders_the_entries_by_id() {
        let query = closed_query(
            "fromDate=2024-03-01&toDate=2024-03-31&offset=1&limit=2",
            chrono_tz::Tz::UTC,
        );
        let entry = |time: i64, id: i64| Entry {
            id: id.to_string(),
            key: vec![KeyPart::Time(time), KeyPart::Int(id)],
        };
        let entries = [entry(1, 30), entry(2, 10), entry(3, 20), entry(4, 40)];
        assert_eq!(closed_page_by_id(&query, &entries).unwrap(), ["20", "30"]);
        let descending = closed_query(
            "fromDate=2024-03-01&toDate=2024-03-31&sortDirectionAsc=false",
            chrono_tz::Tz::UTC,
        );
        assert_eq!(
            closed_page_by_id(&descending, &entries).unwrap(),
            ["40", "30", "20", "10"]
        );
        let bad = Entry {
            id: "1".to_owned(),
            key: vec![KeyPart::Int(1)],
        };
        assert!(closed_page_by_id(&query, &[bad]).is_err());
    }
}
