//! `POST /api/booking/cancel`, `POST /api/operations/deliver` and
//! `POST /api/operations/return` (contract.md "Booking statuses"): each answers the full
//! booking after the operation.

use rental_domain::booking::operations;
use rental_domain::booking::request::{CancelRequest, OperationRequest};
use rental_domain::booking::{changes, response};
use rental_domain::json::parse_body;
use rental_domain::{Booking, BranchOfficeDoc, Car};
use rental_guest::store::{Document, Expect, Mode, Transaction};
use rental_guest::{Error, Request, Response, json, retry_on_conflict};

use crate::catalogue;
use crate::env::Env;
use crate::update::{record, stored_booking};

/// `POST /api/booking/cancel`.
pub fn cancel(request: &Request) -> Result<Response, Error> {
    let body: CancelRequest = parse_body(&request.body)?;
    let id = body.booking_id()?;
    let lastname = body.lastname()?;
    let env = Env::load()?;
    let booking = retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadWrite)?;
        let stored = stored_booking(&tx, id)?;
        operations::check_cancel(&stored.value, lastname)?;
        let mut booking = stored.value.clone();
        operations::cancel(&mut booking, env.now, env.user());
        finish(&tx, &stored.value, &booking, stored.revision, &env)?;
        tx.commit()?;
        Ok::<_, Error>(booking)
    })?;
    Ok(json(200, &response::full(booking)))
}

/// `POST /api/operations/deliver`.
pub fn deliver(request: &Request) -> Result<Response, Error> {
    let body: OperationRequest = parse_body(&request.body)?;
    let env = Env::load()?;
    let operation = body.operation(env.now)?;
    let booking = retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadWrite)?;
        let stored = stored_booking(&tx, operation.booking_id)?;
        let car = fleet_car(&tx, &stored.value)?;
        operations::check_delivery(
            &stored.value,
            car.as_ref().map(|car| &car.value),
            &operation,
            &env.settings,
            env.now,
        )?;
        let mut booking = stored.value.clone();
        if let Some(mut car) = car {
            operations::deliver(
                &mut booking,
                &mut car.value,
                &operation,
                env.now,
                env.user(),
            )
            .map_err(|error| Error::internal(error.to_string()))?;
            tx.put(&car.value, Expect::Revision(car.revision))?;
        }
        finish(&tx, &stored.value, &booking, stored.revision, &env)?;
        tx.commit()?;
        Ok::<_, Error>(booking)
    })?;
    Ok(json(200, &response::full(booking)))
}

/// `POST /api/operations/return`: closes the booking; the return date is its close date.
pub fn return_car(request: &Request) -> Result<Response, Error> {
    let body: OperationRequest = parse_body(&request.body)?;
    let env = Env::load()?;
    let operation = body.operation(env.now)?;
    let booking = retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadWrite)?;
        let stored = stored_booking(&tx, operation.booking_id)?;
        operations::check_return(&stored.value, &operation, env.now)?;
        let office = catalogue::get::<BranchOfficeDoc>(
            &tx,
            &stored.value.return_place.branch_office_id.to_string(),
        )?;
        let mut booking = stored.value.clone();
        let mut car = fleet_car(&tx, &stored.value)?;
        operations::return_car(
            &mut booking,
            car.as_mut().map(|car| &mut car.value),
            office.as_ref().map(|doc| &doc.office),
            &operation,
            env.now,
            env.user(),
        )
        .map_err(|error| Error::internal(error.to_string()))?;
        if let Some(car) = car {
            tx.put(&car.value, Expect::Revision(car.revision))?;
        }
        finish(&tx, &stored.value, &booking, stored.revision, &env)?;
        tx.commit()?;
        Ok::<_, Error>(booking)
    })?;
    Ok(json(200, &response::full(booking)))
}

/// The booking's car as the fleet has it now, when it has one that the fleet still knows.
fn fleet_car(tx: &Transaction, booking: &Booking) -> Result<Option<Document<Car>>, Error> {
    match &booking.car {
        Some(car) => Ok(tx.get::<Car>(&car.id)?),
        None => Ok(None),
    }
}

/// Writes the operated `booking` over `stored` (at `revision`) and records its changes.
fn finish(
    tx: &Transaction,
    stored: &Booking,
    booking: &Booking,
    revision: u64,
    env: &Env,
) -> Result<(), Error> {
    tx.put(booking, Expect::Revision(revision))?;
    let texts = changes::main_changes(stored, booking)
        .iter()
        .map(|change| change.text(env.user()))
        .collect();
    record(tx, booking.id, texts, env)
}
