//! The `listing` component: the platform's list endpoints.
//!
//! - `GET /api/bookings/list`: bookings by id cursor, optionally by status and changed since
//!   an instant (module `bookings`);
//! - `GET /api/bookings/closed`: bookings closed within whole days of the tenant's time zone
//!   (module `bookings`);
//! - `GET /api/branchoffices`, `GET /api/customers`, `GET /api/cars`: the catalogue (module
//!   `catalog`).
//!
//! Each request parses its query with the domain's rules, reads the store in one read-only
//! transaction and answers. Lists are served from the store's indexes (range scans, key scans
//! and counts); no endpoint loads a tenant's whole collection. The host has authenticated the
//! caller, checked the permission and answered other methods before the component runs.

mod bookings;
mod catalog;
mod page;

use rental_guest::{Error, Handler, Request, Response};

/// The component's handler.
struct Listing;

impl Handler for Listing {
    fn handle(request: Request) -> Result<Response, Error> {
        route(&request)
    }
}

rental_guest::export_handler!(Listing);

/// Serves one request by its path; a path this component does not serve is 404 with no body.
fn route(request: &Request) -> Result<Response, Error> {
    match request.path.as_str() {
        "/api/bookings/list" => bookings::list(request),
        "/api/bookings/closed" => bookings::closed(request),
        "/api/branchoffices" => catalog::branch_offices(),
        "/api/customers" => catalog::customers(request),
        "/api/cars" => catalog::cars(request),
        _ => Ok(Response::not_found()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_paths_are_404_without_body() {
        for path in [
            "/",
            "/api/bookings",
            "/api/bookings/list/1",
            "/api/Cars",
            "/api/cars/",
        ] {
            let response = route(&Request::new("GET", path)).unwrap();
            assert_eq!(response.status, 404, "{path}");
            assert!(response.body.is_empty(), "{path}");
        }
    }
}
