//! The `selfcheckin` component: `PUT /api/selfcheckin` (interface.md 4.6, docs/selfcheckin.md).
//!
//! The request is parsed with the domain's [`SelfCheckinRequest`], checked and applied by the
//! rules of `rental_domain::selfcheckin`; this crate reads the booking and its stored customer
//! and writes both, with the comment, in one store transaction that
//! [`rental_guest::retry_on_conflict`] runs again when a concurrent one wins. The host has
//! authenticated the caller and checked the permission (`selfcheckin:write`).

use chrono::{DateTime, FixedOffset, SubsecRound as _, Utc};
use rental_domain::booking::response;
use rental_domain::booking::settings::BookingSettings;
use rental_domain::json::parse_body;
use rental_domain::selfcheckin::{self, SelfCheckinRequest};
use rental_domain::{ApiError, Booking, CustomerDoc, ErrorCode};
use rental_guest::context;
use rental_guest::store::{Expect, Mode, Transaction};
use rental_guest::{Error, Handler, Request, Response, comments, json, retry_on_conflict};

/// The component's handler.
pub struct SelfCheckin;

impl Handler for SelfCheckin {
    fn handle(request: Request) -> Result<Response, Error> {
        route(&request)
    }
}

#[cfg(feature = "component")]
rental_guest::export_handler!(SelfCheckin);

/// Serves one request by its method and path; anything else is 404 with no body.
fn route(request: &Request) -> Result<Response, Error> {
    match (request.method.as_str(), request.path.as_str()) {
        ("PUT", "/api/selfcheckin") => check_in(request),
        _ => Ok(Response::not_found()),
    }
}

/// `PUT /api/selfcheckin`: the full Booking after the check-in.
fn check_in(request: &Request) -> Result<Response, Error> {
    let body: SelfCheckinRequest = parse_body(&request.body)?;
    let id = body.booking_id()?;
    let caller = context::caller()
        .ok_or_else(|| Error::internal("a self-check-in request without caller"))?;
    let settings = BookingSettings::from_lookup(&context::tenant(), context::setting)
        .map_err(ApiError::from)?;
    // The clock is read once: every check and write of the request uses this instant.
    let now: DateTime<FixedOffset> = Utc::now()
        .trunc_subsecs(6)
        .with_timezone(&context::time_zone())
        .fixed_offset();
    let user = caller.user_name.as_str();
    let booking = retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadWrite)?;
        let stored = tx
            .get::<Booking>(&id.to_string())?
            .ok_or_else(|| ApiError::new(ErrorCode::BookingNotFound))?;
        let checkin = selfcheckin::check(&body, &stored.value, &settings, now)?;
        let mut booking = stored.value.clone();
        let comment = selfcheckin::apply(&mut booking, &checkin, user, now);
        if let Some(mut doc) = tx.get::<CustomerDoc>(&booking.customer.id.to_string())? {
            selfcheckin::apply_to_customer(&mut doc.value.customer, &checkin.main_driver, now);
            tx.put(&doc.value, Expect::Revision(doc.revision))?;
        }
        tx.put(&booking, Expect::Revision(stored.revision))?;
        comments::add(&tx, id, now, Some(user.to_owned()), comment)?;
        tx.commit()?;
        Ok::<_, Error>(booking)
    })?;
    Ok(json(200, &response::full(booking, context::language())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_paths_are_404_without_body() {
        for (method, path) in [
            ("GET", "/api/selfcheckin"),
            ("PUT", "/api/selfcheckin/1"),
            ("POST", "/api/booking/book"),
        ] {
            let response = route(&Request::new(method, path)).unwrap();
            assert_eq!(response.status, 404, "{method} {path}");
            assert!(response.body.is_empty(), "{method} {path}");
        }
    }
}
