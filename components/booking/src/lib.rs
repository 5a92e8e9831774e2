//! The `booking` component: the booking endpoints.
//!
//! - `POST /api/booking/book`, `POST /api/booking/price` (module `create`);
//! - `PUT /api/booking/update` (module `update`);
//! - `GET /api/booking/{id}`, `GET /api/booking/{id}/history` (module `read`);
//! - `POST /api/booking/cancel`, `POST /api/operations/deliver`,
//!   `POST /api/operations/return` (module `operations`);
//! - `GET /api/availability` (module `search`).
//!
//! What these share (reading the stored booking and the agency, recording comments,
//! answering) is in module `shared`, and reading the catalogue in module `catalog`.
//!
//! Each request parses its body with the domain's request models, reads what it needs, lets
//! the domain's booking rules decide and writes the outcome, all in one store transaction that
//! [`rental_guest::retry_on_conflict`] runs again when a concurrent one wins. The rules live in
//! `rental_domain::booking`; this crate only moves data between them and the store. The host
//! has authenticated the caller and checked the permission before the component runs.
//!
//! # As a library
//!
//! A tenant's own booking component depends on this crate with `default-features = false`
//! (which leaves out this crate's export), implements [`Rules`] for what it changes and
//! exports a handler that calls [`handle`]:
//!
//! ```
//! use booking::Rules;
//! use rental_domain::booking::terms::{Terms, Vehicle};
//! use rental_domain::pricing::{Adjustment, Quote, Translations};
//! use rental_guest::{Error, Handler, Request, Response};
//! use rust_decimal::Decimal;
//!
//! /// Acme takes 5.00 off every rental of three days or more.
//! struct Acme;
//!
//! impl Rules for Acme {
//!     fn price_adjustments(&self, _: &Quote, terms: &Terms<'_>, _: &Vehicle) -> Vec<Adjustment> {
//!         if terms.days < 3 {
//!             return Vec::new();
//!         }
//!         vec![Adjustment {
//!             code: 1,
//!             amount: Decimal::new(-500, 2),
//!             description: Translations {
//!                 en: "Long rental discount".to_owned(),
//!                 es: "Descuento por alquiler largo".to_owned(),
//!                 pt: "Desconto por aluguel longo".to_owned(),
//!             },
//!         }]
//!     }
//! }
//!
//! struct Component;
//!
//! impl Handler for Component {
//!     fn handle(request: Request) -> Result<Response, Error> {
//!         booking::handle(&request, &Acme)
//!     }
//! }
//!
//! rental_guest::export_handler!(Component);
//! ```

mod availability;
mod catalog;
mod create;
mod env;
mod operations;
mod read;
mod search;
mod shared;
mod update;

use rental_domain::booking::terms::{Terms, Vehicle};
use rental_domain::pricing::{Adjustment, Quote};
use rental_guest::{Error, Handler, Request, Response};

/// What a tenant's build of the booking component may change. Every method has the
/// platform's behaviour as its default, so an implementation names only what it changes.
pub trait Rules {
    /// Lines to add to the price of a booking being priced, created or updated (`price`,
    /// `book`, `update`), after the platform's lines: a surcharge, or a discount when negative,
    /// paid by the customer, with its description in each language. They count in `Price`
    /// and `CustomerPrice`, the price a client sends is checked against the adjusted total
    /// (within 1%, as always), and a stored booking keeps them. `quote` is the platform's
    /// price; `terms` and `vehicle` are what it priced. The platform adds none.
    fn price_adjustments(
        &self,
        quote: &Quote,
        terms: &Terms<'_>,
        vehicle: &Vehicle,
    ) -> Vec<Adjustment> {
        let _ = (quote, terms, vehicle);
        Vec::new()
    }
}

/// The platform's own rules: every default of [`Rules`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Platform;

impl Rules for Platform {}

/// The platform's booking component: [`handle`] under [`Platform`].
pub struct Booking;

impl Handler for Booking {
    fn handle(request: Request) -> Result<Response, Error> {
        handle(&request, &Platform)
    }
}

#[cfg(feature = "component")]
rental_guest::export_handler!(Booking);

/// Serves one request by its method and path under `rules`; anything else is 404 with no
/// body.
pub fn handle(request: &Request, rules: &impl Rules) -> Result<Response, Error> {
    let segments: Vec<&str> = request.path.split('/').skip(1).collect();
    match (request.method.as_str(), segments.as_slice()) {
        ("POST", ["api", "booking", "book"]) => create::book(request, rules),
        ("POST", ["api", "booking", "price"]) => create::price(request, rules),
        ("PUT", ["api", "booking", "update"]) => update::update(request, rules),
        ("POST", ["api", "booking", "cancel"]) => operations::cancel(request),
        ("POST", ["api", "operations", "deliver"]) => operations::deliver(request),
        ("POST", ["api", "operations", "return"]) => operations::return_car(request),
        ("GET", ["api", "booking", id]) => read::booking(id),
        ("GET", ["api", "booking", id, "history"]) => read::history(id),
        ("GET", ["api", "availability"]) => search::availability(request, rules),
        _ => Ok(Response::not_found()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use rental_domain::Booking as StoredBooking;
    use rental_domain::pricing::Translations;
    use rental_guest::testing::TestHost;
    use rust_decimal::Decimal;
    use serde_json::{Value, json};

    /// Takes 5.00 off every booking of three days or more.
    struct LongRentals;

    impl Rules for LongRentals {
        fn price_adjustments(&self, _: &Quote, terms: &Terms<'_>, _: &Vehicle) -> Vec<Adjustment> {
            if terms.days < 3 {
                return Vec::new();
            }
            vec![Adjustment {
                code: 1,
                amount: Decimal::new(-500, 2),
                description: Translations {
                    en: "Long rental discount".to_owned(),
                    es: "Descuento por alquiler largo".to_owned(),
                    pt: "Desconto por aluguel longo".to_owned(),
                },
            }]
        }
    }

    struct Discounting;

    impl Handler for Discounting {
        fn handle(request: Request) -> Result<Response, Error> {
            super::handle(&request, &LongRentals)
        }
    }

    /// A date `days` ahead at 10:00 on the demo tenant's clock.
    fn ahead(days: i64) -> String {
        let zone = chrono_tz::America::Argentina::Buenos_Aires;
        let date = chrono::Utc::now().with_timezone(&zone).date_naive()
            + chrono::Days::new(days.unsigned_abs());
        format!("{date}T10:00:00-03:00")
    }

    fn post<H: Handler>(host: &TestHost, path: &str, body: &Value) -> Value {
        let mut request = Request::new("POST", path);
        request.body = body.to_string().into_bytes();
        let response = host.call::<H>(request);
        let answer: Value = serde_json::from_slice(&response.body.to_bytes()).unwrap();
        assert_eq!(response.status, 200, "{answer}");
        answer
    }

    #[test]
    fn a_tenants_adjustment_is_priced_booked_and_kept() {
        let host = TestHost::demo().language(rental_domain::Language::Es);
        let body = json!({
            "Customer": {"Id": 3},
            "Car": {"Model": {"Id": 2}},
            "FromDate": ahead(70),
            "ToDate": ahead(73),
            "DeliveryPlace": {"Id": 1},
            "ReturnPlace": {"Id": 1},
        });
        let platform = post::<Booking>(&host, "/api/booking/price", &body);
        let adjusted = post::<Discounting>(&host, "/api/booking/price", &body);
        let price = |answer: &Value| answer["Price"].to_string().parse::<Decimal>().unwrap();
        assert_eq!(
            price(&adjusted),
            price(&platform) - Decimal::new(500, 2),
            "{adjusted}"
        );
        let line = adjusted["PriceItems"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(line["Type"], 6, "{line}");
        assert_eq!(line["Description"], "Descuento por alquiler largo");

        // The platform's price is more than 1% away from the adjusted one: refused.
        let mut sent = body.clone();
        sent["Price"] = platform["Price"].clone();
        let mut request = Request::new("POST", "/api/booking/book");
        request.body = sent.to_string().into_bytes();
        assert_eq!(host.call::<Discounting>(request).status, 400);

        sent["Price"] = adjusted["Price"].clone();
        let booked = post::<Discounting>(&host, "/api/booking/book", &sent);
        let stored = host
            .get::<StoredBooking>(&booked["Id"].to_string())
            .unwrap();
        assert_eq!(stored.value.price, price(&adjusted));
        assert!(
            stored.value.price_items.iter().any(|item| item.kind == 6),
            "{:?}",
            stored.value.price_items
        );
    }

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
            let response = handle(&Request::new(method, path), &Platform).unwrap();
            assert_eq!(response.status, 404, "{method} {path}");
            assert!(response.body.is_empty(), "{method} {path}");
        }
    }
}
