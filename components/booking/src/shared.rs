//! What creation, update and the booking operations share: reading the stored booking and the
//! agency, taking what availability held, recording comments and answering.

use rental_domain::booking::request::BookingRequest;
use rental_domain::booking::response::{self, BookingCreationResponse};
use rental_domain::booking::terms::{self, Vehicle};
use rental_domain::{ApiError, Booking, CustomerDoc, ErrorCode};
use rental_guest::comments::Numbering;
use rental_guest::store::{Document, Transaction};
use rental_guest::{Error, Response, context, json};

use crate::availability::Held;
use crate::catalog;
use crate::env::Env;

/// The stored booking `id`: 22 BookingNotFound when there is none.
pub fn stored_booking(tx: &Transaction, id: i64) -> Result<Document<Booking>, Error> {
    tx.get::<Booking>(&id.to_string())?
        .ok_or_else(|| ApiError::new(ErrorCode::BookingNotFound).into())
}

/// Records `texts` as comments on the booking `numbering` numbers, by the caller at the
/// request's instant.
pub fn record(
    tx: &Transaction,
    mut numbering: Numbering,
    texts: Vec<String>,
    env: &Env,
) -> Result<(), Error> {
    for text in texts {
        numbering.add(tx, env.now, Some(env.user().to_owned()), text)?;
    }
    Ok(())
}

/// The agency the terms depend on, read (see [`terms::agency_to_read`]).
pub fn agency(
    tx: &Transaction,
    body: &BookingRequest,
    stored: Option<&Booking>,
    env: &Env,
) -> Result<Option<CustomerDoc>, Error> {
    match terms::agency_to_read(body, stored, &env.settings) {
        Some(id) => Ok(catalog::customer(tx, id)?.map(|document| document.value)),
        None => Ok(None),
    }
}

/// The vehicle after availability held what it needed.
pub fn take(vehicle: &mut Vehicle, held: Held) {
    match held {
        Held::Unchanged => {}
        Held::Car(car) => {
            vehicle.model = Some(car.model.clone());
            vehicle.car = Some(*car);
        }
        Held::Quota => vehicle.car = None,
    }
}

/// The booking (full or simplified) as the answer of a creation or an update.
pub fn answer(booking: Booking, full: bool) -> Response {
    if full {
        json(200, &response::full(booking, context::language()))
    } else {
        json(200, &BookingCreationResponse::from(&booking))
    }
}
