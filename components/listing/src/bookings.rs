//! `GET /api/bookings/list` and `GET /api/bookings/closed`.
//!
//! The booking list walks the `id` index (or `status`, prefixed by the status filter) from the
//! id cursor and counts the same index for `Total`. With `updatedSince` it reads the keys of
//! the `updated` index after that instant, which carry status and Id, so that filtering,
//! counting and ordering by Id need no document; only the page's documents are loaded. Either
//! way the page's bookings are read in list form, as the store renders them at every write
//! (`booking-items`), and written into the page as they are: no booking is decoded. Without
//! hidden statuses and `updatedSince`, the page's renderings stay in the host (`scan-kept`),
//! which puts them into the answer: they never pass through the component.
//!
//! The closed list reads the `closed` index (close date, then Id) between the first and last
//! instants of the requested days: sorted by close date, one range scan; sorted by Id, the
//! range's keys, ordered by Id, then the page's documents. Its bookings are written as every
//! full response writes a booking (`response::full`).

use chrono::{DateTime, Utc};
use rental_domain::booking::response;
use rental_domain::collections::BOOKING_ITEMS;
use rental_domain::collections::bookings::{self, BY_CLOSED, BY_UPDATED};
use rental_domain::{
    Booking, BookingListQuery, BookingStatus, CloseDateRange, ClosedListQuery, IdCursor, KeyPart,
    PagedResult, Piece, RenderedItem,
};
use rental_guest::context;
use rental_guest::http::{Body, Part};
use rental_guest::store::{Entry, KeptRendered, Mode, Range, Rendered, Scan, Transaction};
use rental_guest::{Error, Request, Response, json, json_text, retry_on_conflict};

use crate::Rules;
use crate::page::{self, page_by_id, store_limit, store_skip};

/// `GET /api/bookings/list`: a page of [`BookingDescription`](rental_domain::BookingDescription)s after the id cursor, without
/// the bookings whose status `rules` hides.
pub fn list(request: &Request, rules: &impl Rules) -> Result<Response, Error> {
    let query = BookingListQuery::parse(page::query(request))?;
    let hidden = rules.hidden_statuses();
    if query.status.is_some_and(|status| hidden.contains(&status)) {
        return Ok(page_response(&query.rendered_page(0, Vec::new())));
    }
    let page = retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadOnly)?;
        match query.updated_since {
            None => list_by_index(&tx, &query, hidden),
            Some(since) => list_updated(&tx, &query, since, hidden),
        }
    })?;
    Ok(page_response(&page))
}

/// 200 with the page as JSON, its items' renderings written in as they are (kept ones by the
/// host).
fn page_response(page: &PagedResult<RenderedItem<Part>>) -> Response {
    let mut body = Body::default();
    page.write_json(|piece| match piece {
        Piece::Text(text) => body.push_bytes(text.as_bytes()),
        Piece::Item(Part::Bytes(json)) => body.push_bytes(json),
        Piece::Item(Part::Kept(kept)) => body.push_kept(*kept),
    });
    json_text(200, body)
}

/// The booking list without `updatedSince`: one scan from the cursor, one count. With hidden
/// statuses, `Total` is the count less theirs (counted indexes: one row each), and the page
/// reads on past the hidden bookings until it is full.
fn list_by_index(
    tx: &Transaction,
    query: &BookingListQuery,
    hidden: &[BookingStatus],
) -> Result<PagedResult<RenderedItem<Part>>, Error> {
    let (matching, page) = index_plan(query);
    let mut total = tx.count(&matching)?;
    if query.status.is_none() {
        for status in hidden {
            total = total.saturating_sub(tx.count(&Range::<Booking>::prefix(
                bookings::BY_STATUS,
                vec![KeyPart::Int(status.code().into())],
            ))?);
        }
    }
    let items = if hidden.is_empty() {
        kept_items(tx.scan_view_kept(&BOOKING_ITEMS, &page)?)?
    } else {
        written(scan_shown(tx, &page, store_limit(query.limit), hidden)?)
    };
    Ok(query.rendered_page(page::total(total), items))
}

/// The first `limit` bookings of `page` whose status is not hidden, reading further pages
/// past the hidden ones.
fn scan_shown(
    tx: &Transaction,
    page: &Scan<Booking>,
    limit: u32,
    hidden: &[BookingStatus],
) -> Result<Vec<RenderedItem>, Error> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut shown = Vec::new();
    let mut skip = 0;
    loop {
        let read = rendered_items(tx.scan_view(&BOOKING_ITEMS, &page.clone().skip(skip))?)?;
        if read.is_empty() {
            return Ok(shown);
        }
        skip = skip.saturating_add(u32::try_from(read.len()).unwrap_or(u32::MAX));
        for item in read {
            if !hidden.contains(&status_of(&item)?) {
                shown.push(item);
            }
        }
        if shown.len() >= limit {
            shown.truncate(limit);
            return Ok(shown);
        }
    }
}

/// The status of a booking in list form.
fn status_of(item: &RenderedItem) -> Result<BookingStatus, Error> {
    item.booking_status().map_err(|e| {
        Error::internal(format!(
            "booking item {} does not read as a booking: {e}",
            item.id
        ))
    })
}

/// The page's items as the store rendered them, with the Ids their document ids are.
fn rendered_items(documents: Vec<Rendered>) -> Result<Vec<RenderedItem>, Error> {
    documents
        .into_iter()
        .map(|document| {
            Ok(RenderedItem {
                id: item_id(&document.id)?,
                json: document.body,
            })
        })
        .collect()
}

/// The page's items as the host kept their renderings, with the Ids their document ids are.
fn kept_items(documents: Vec<KeptRendered>) -> Result<Vec<RenderedItem<Part>>, Error> {
    documents
        .into_iter()
        .map(|document| {
            Ok(RenderedItem {
                id: item_id(&document.id)?,
                json: Part::Kept(document.body),
            })
        })
        .collect()
}

/// Items read into the component, as parts of the answer.
fn written(items: Vec<RenderedItem>) -> Vec<RenderedItem<Part>> {
    items
        .into_iter()
        .map(|item| RenderedItem {
            id: item.id,
            json: Part::Bytes(item.json.into_bytes()),
        })
        .collect()
}

/// The Id of a booking item: its document id.
fn item_id(document: &str) -> Result<i64, Error> {
    document
        .parse()
        .map_err(|_| Error::internal(format!("booking item {document} has no numeric id")))
}

/// What the booking list without `updatedSince` reads ([`BookingListQuery::index_reads`]):
/// the range of every booking that matches the filters (for `Total`) and the scan of the page
/// from the cursor.
fn index_plan(query: &BookingListQuery) -> (Range<Booking>, Scan<Booking>) {
    let reads = query.index_reads();
    let page = Range::new(reads.index, reads.page)
        .scan()
        .descending(reads.descending)
        .limit(store_limit(query.limit));
    (Range::new(reads.index, reads.matching), page)
}

/// The booking list with `updatedSince`: the keys of every booking updated strictly after it,
/// then the documents of the page.
fn list_updated(
    tx: &Transaction,
    query: &BookingListQuery,
    since: DateTime<Utc>,
    hidden: &[BookingStatus],
) -> Result<PagedResult<RenderedItem<Part>>, Error> {
    let entries = tx.all_keys(&Range::<Booking>::new(
        BY_UPDATED,
        bookings::updated_after(since),
    ))?;
    let (total, ids) = select_updated(query, &entries, hidden)?;
    let items = rendered_items(tx.get_many_view::<Booking>(&BOOKING_ITEMS, &ids)?)?;
    Ok(query.rendered_page(total, written(items)))
}

/// From the `updated` entries after `updatedSince`: `Total` (every entry that passes the
/// filters and is not hidden, whatever the cursor) and the document ids of the page (after
/// the cursor, by Id in the cursor's direction, at most `limit`).
fn select_updated(
    query: &BookingListQuery,
    entries: &[Entry],
    hidden: &[BookingStatus],
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
        if !hidden.contains(&status) && filters_only.admits(id, status, updated_on) {
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
    let language = context::language();
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
            .map(|document| response::full(document.value, language))
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
mod tests;
