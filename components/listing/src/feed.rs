//! `GET /api/bookings/changes`: a page of the bookings' change feed, read from the store's feed
//! of their list items (`booking-items`), whose every change carries the booking in list form
//! as the change left it. One more change than the page holds is read, to tell whether more
//! follow.

use rental_domain::collections::BOOKING_ITEMS;
use rental_domain::feed::{ChangesQuery, FeedChange};
use rental_guest::store::{self, Change};
use rental_guest::{Error, Request, Response, json_text};

use crate::page::{self, store_limit};

/// `GET /api/bookings/changes`.
pub fn changes(request: &Request) -> Result<Response, Error> {
    let query = ChangesQuery::parse(page::query(request))?;
    let limit = store_limit(query.limit);
    let mut read = store::changes(&BOOKING_ITEMS, query.after, limit.saturating_add(1))?;
    let has_more = read.len() > limit as usize;
    read.truncate(limit as usize);
    let changes = read
        .into_iter()
        .map(feed_change)
        .collect::<Result<_, _>>()?;
    Ok(json_text(200, query.page(changes, has_more).to_json()))
}

fn feed_change(change: Change) -> Result<FeedChange, Error> {
    let id = change.id.parse().map_err(|_| {
        Error::internal(format!(
            "change {} names booking {:?}, which has no numeric id",
            change.position, change.id
        ))
    })?;
    Ok(FeedChange {
        position: change.position,
        id,
        revision: change.revision,
        changed_on: change.changed_at,
        booking: change.body,
    })
}
