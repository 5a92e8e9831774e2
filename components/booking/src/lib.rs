//! The `booking` component: the booking endpoints.
//!
//! - `POST /api/booking/book`, `POST /api/booking/price` (module `create`);
//! - `PUT /api/booking/update` (module `update`);
//! - `GET /api/booking/{id}`, `GET /api/booking/{id}/history` (module `read`);
//! - `POST /api/booking/cancel`, `POST /api/operations/deliver`,
//!   `POST /api/operations/return` (module `operations`).
//!
//! What these share (reading the stored booking and the agency, recording comments,
//! answering) is in module `shared`, and reading the catalogue in module `catalog`.
//!
//! Each request parses its body with the domain's request models, reads what it needs, lets
//! the domain's booking rules decide and writes the outcome, all in one store transaction that
//! [`rental_guest::retry_on_conflict`] runs again when a concurrent one wins. The rules live in
//! `rental_domain::booking`; this crate only moves data between them and the store. The host
//! has authenticated the caller and checked the permission before the component runs.

mod availability;
mod catalog;
mod create;
mod env;
mod operations;
mod read;
mod shared;
mod update;

use rental_guest::{Error, Handler, Request, Response};

/// The component's handler.
pub struct Booking;

impl Handler for Booking {
    fn handle(request: Request) -> Result<Response, Error> {
        route(&request)
    }
}

#[cfg(feature = "component")]
rental_guest::export_handler!(Booking);

/// Serves one request by its method and path; anything else is 404 with no body.
fn route(request: &Request) -> Result<Response, Error> {
    let segments: Vec<&str> = request.path.split('/').skip(1).collect();
    match (request.method.as_str(), segments.as_slice()) {
        ("POST", ["api", "booking", "book"]) => create::book(request),
        ("POST", ["api", "booking", "price"]) => create::price(request),
        ("PUT", ["api", "booking", "update"]) => update::update(request),
        ("POST", ["api", "booking", "cancel"]) => operations::cancel(request),
        ("POST", ["api", "operations", "deliver"]) => operations::deliver(request),
        ("POST", ["api", "operations", "return"]) => operations::return_car(request),
        ("GET", ["api", "booking", id]) => read::booking(id),
        ("GET", ["api", "booking", id, "history"]) => read::history(id),
        _ => Ok(Response::not_found()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_paths_are_404_without_body() {
        for (method, path) in [
            ("GET", "/"),
            ("GET", "/api/booking"),
            ("GET", "/api/booking/book"),
            ("GET", "/api/booking/12/history/x"),
            ("DELETE", "/api/booking/12"),
            ("POST", "/api/operations/refuel"),
            ("GET", "/api/booking/-3"),
        ] {
            let response = route(&Request::new(method, path)).unwrap();
            assert_eq!(response.status, 404, "{method} {path}");
            assert!(response.body.is_empty(), "{method} {path}");
        }
    }
}
