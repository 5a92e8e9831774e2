//! The `listing` component: the platform's list endpoints.
//!
//! - `GET /api/bookings/list`: bookings by id cursor, optionally by status and changed since
//!   an instant (module `bookings`);
//! - `GET /api/bookings/closed`: bookings closed within whole days of the tenant's time zone
//!   (module `bookings`);
//! - `GET /api/bookings/changes`: every change of every booking, in the order they committed
//!   (module `feed`);
//! - `GET /api/branchoffices`, `GET /api/customers`, `GET /api/cars`: the catalogue (module
//!   `catalog`).
//!
//! Each request parses its query with the domain's rules, reads the store in one read-only
//! transaction and answers. Lists are served from the store's indexes (range scans, key scans
//! and counts); no endpoint loads a tenant's whole collection. The host has authenticated the
//! caller, checked the permission and answered other methods before the component runs.
//!
//! # As a library
//!
//! A tenant's own listing is a small crate that depends on this one with
//! `default-features = false` (which leaves out this crate's export), implements [`Rules`] for
//! what it changes and exports a handler that calls [`handle`]:
//!
//! ```
//! use listing::Rules;
//! use rental_domain::BookingStatus;
//! use rental_guest::{Error, Handler, Request, Response};
//!
//! /// Acme's list never shows canceled bookings.
//! struct Acme;
//!
//! impl Rules for Acme {
//!     fn hidden_statuses(&self) -> &[BookingStatus] {
//!         &[BookingStatus::Canceled]
//!     }
//! }
//!
//! struct Component;
//!
//! impl Handler for Component {
//!     fn handle(request: Request) -> Result<Response, Error> {
//!         listing::handle(&request, &Acme)
//!     }
//! }
//!
//! rental_guest::export_handler!(Component);
//! ```

mod bookings;
mod catalog;
mod feed;
mod page;

use rental_domain::BookingStatus;
use rental_guest::{Error, Handler, Request, Response};

/// What a tenant's build of the listing may change. Every method has the platform's behaviour
/// as its default, so an implementation names only what it changes, and a new extension point
/// in a later release changes nothing for it.
pub trait Rules {
    /// Booking statuses `GET /api/bookings/list` never shows: they are left out of every page
    /// and of `Total`, with and without the `status` and `updatedSince` filters (a `status`
    /// filter naming a hidden status finds nothing). `Total` stays exact and costs one more
    /// count per hidden status; a page reads on past hidden bookings until it is full. The
    /// platform hides none.
    fn hidden_statuses(&self) -> &[BookingStatus] {
        &[]
    }
}

/// The platform's own rules: every default of [`Rules`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Platform;

impl Rules for Platform {}

/// Serves one request by its path under `rules`; a path this component does not serve is 404
/// with no body.
pub fn handle(request: &Request, rules: &impl Rules) -> Result<Response, Error> {
    match request.path.as_str() {
        "/api/bookings/list" => bookings::list(request, rules),
        "/api/bookings/closed" => bookings::closed(request),
        "/api/bookings/changes" => feed::changes(request),
        "/api/branchoffices" => catalog::branch_offices(),
        "/api/customers" => catalog::customers(request),
        "/api/cars" => catalog::cars(request),
        _ => Ok(Response::not_found()),
    }
}

/// The platform's listing component: [`handle`] under [`Platform`].
pub struct Listing;

impl Handler for Listing {
    fn handle(request: Request) -> Result<Response, Error> {
        handle(&request, &Platform)
    }
}

#[cfg(feature = "component")]
rental_guest::export_handler!(Listing);

#[cfg(test)]
mod tests {
    use rental_guest::testing::TestHost;

    use super::*;

    use rental_domain::Booking;
    use serde_json::Value;

    /// Hides canceled bookings, as the guide's example tenant does.
    struct HideCanceled;

    impl Rules for HideCanceled {
        fn hidden_statuses(&self) -> &[BookingStatus] {
            &[BookingStatus::Canceled]
        }
    }

    struct HidingListing;

    impl Handler for HidingListing {
        fn handle(request: Request) -> Result<Response, Error> {
            super::handle(&request, &HideCanceled)
        }
    }

    fn page<H: Handler>(host: &TestHost, path: &str) -> Value {
        let response = host.call::<H>(Request::new("GET", path));
        assert_eq!(response.status, 200, "{path}");
        serde_json::from_slice(&response.body.to_bytes()).unwrap()
    }

    fn ids(page: &Value) -> Vec<i64> {
        page["Results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|booking| booking["Id"].as_i64().unwrap())
            .collect()
    }

    #[test]
    fn the_feed_begins_with_the_demo_tenants_bookings() {
        let host = TestHost::demo();
        let first = page::<Listing>(&host, "/api/bookings/changes?limit=2");
        assert_eq!(first["Cursor"], "2", "{first}");
        assert_eq!(first["HasMore"], true);
        let next = page::<Listing>(&host, "/api/bookings/changes?cursor=2&limit=100");
        let changes = next["Changes"].as_array().unwrap();
        assert_eq!(changes.len(), 100);
        assert_eq!(changes[0]["Cursor"], "3");
        assert_eq!(next["HasMore"], true, "124 bookings in all");
        let last = page::<Listing>(&host, "/api/bookings/changes?cursor=102");
        assert_eq!(last["Changes"].as_array().unwrap().len(), 22);
        assert_eq!(
            (&last["Cursor"], &last["HasMore"]),
            (&"124".into(), &false.into())
        );
    }

    #[test]
    fn lists_the_demo_tenants_bookings() {
        let host = TestHost::demo();
        let page = page::<Listing>(&host, "/api/bookings/list?limit=1");
        assert_eq!(page["Total"], 124, "{page}");
        assert_eq!(ids(&page).len(), 1, "{page}");
    }

    #[test]
    fn hidden_statuses_leave_every_page_and_the_total() {
        let host = TestHost::demo();
        let bookings = host.documents::<Booking>();
        let canceled = bookings
            .iter()
            .filter(|booking| booking.value.current_status == BookingStatus::Canceled)
            .count();
        assert!(canceled > 0, "the demo has canceled bookings");
        let shown_len = bookings.len() - canceled;
        let shown = i64::try_from(shown_len).unwrap();

        let mut seen = Vec::new();
        let mut path = "/api/bookings/list?limit=7".to_owned();
        for _ in 0..bookings.len() {
            let page = page::<HidingListing>(&host, &path);
            assert_eq!(page["Total"], shown, "{page}");
            let ids = ids(&page);
            if ids.is_empty() {
                break;
            }
            assert!(ids.len() == 7 || seen.len() + ids.len() == shown_len);
            seen.extend(ids.iter().copied());
            path = format!("/api/bookings/list?limit=7&offset={}", page["NextOffset"]);
        }
        let mut expected: Vec<i64> = bookings
            .iter()
            .filter(|booking| booking.value.current_status != BookingStatus::Canceled)
            .map(|booking| booking.value.id)
            .collect();
        expected.sort_unstable();
        assert_eq!(seen, expected);

        let asked = page::<HidingListing>(
            &host,
            &format!(
                "/api/bookings/list?status={}",
                BookingStatus::Canceled.code()
            ),
        );
        assert_eq!((asked["Total"].as_i64(), ids(&asked).len()), (Some(0), 0));
        let since = page::<HidingListing>(
            &host,
            "/api/bookings/list?limit=100&updatedSince=2000-01-01T00:00:00Z",
        );
        let updated = page::<Listing>(
            &host,
            "/api/bookings/list?limit=100&updatedSince=2000-01-01T00:00:00Z",
        );
        assert!(
            since["Total"].as_i64() < updated["Total"].as_i64(),
            "{since}"
        );
        for id in ids(&since) {
            assert!(expected.contains(&id), "{id} is canceled");
        }
    }

    #[test]
    fn unknown_paths_are_404_without_body() {
        for path in [
            "/",
            "/api/bookings",
            "/api/bookings/list/1",
            "/api/Cars",
            "/api/cars/",
        ] {
            let response = handle(&Request::new("GET", path), &Platform).unwrap();
            assert_eq!(response.status, 404, "{path}");
            assert!(response.body.is_empty(), "{path}");
        }
    }
}
