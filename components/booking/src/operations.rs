//! `POST /api/booking/cancel`, `POST /api/operations/deliver` and
//! `POST /api/operations/return` (contract.md "Booking statuses"): each answers the full
//! booking after the operation.

use rental_domain::booking::operations;
use rental_domain::booking::request::{CancelRequest, OperationRequest};
use rental_domain::booking::{changes, response};
use rental_domain::json::parse_body;
use rental_domain::{Booking, BranchOfficeDoc, Car};
use rental_guest::comments::Numbering;
use rental_guest::store::{Document, Expect, Mode, Transaction};
use rental_guest::{Error, Request, Response, context, json, retry_on_conflict};

use crate::catalog;
use crate::env::Env;
use crate::shared::{record, stored_booking};

/// `POST /api/booking/cancel`.
pub fn cancel(request: &Request) -> Result<Response, Error> {
    let body: CancelRequest = parse_body(&request.body)?;
    let id = body.booking_id()?;
    let lastname = body.lastname()?;
    let env = Env::load()?;
    operate(id, &env, |_, stored, booking| {
        operations::check_cancel(stored, lastname)?;
        operations::cancel(booking, env.now, env.user());
        Ok(())
    })
}

/// `POST /api/operations/deliver`.
pub fn deliver(request: &Request) -> Result<Response, Error> {
    let body: OperationRequest = parse_body(&request.body)?;
    let env = Env::load()?;
    let operation = body.operation(env.now)?;
    operate(operation.booking_id, &env, |tx, stored, booking| {
        let car = fleet_car(tx, stored)?;
        operations::check_delivery(
            stored,
            car.as_ref().map(|car| &car.value),
            &operation,
            &env.settings,
            env.now,
        )?;
        if let Some(mut car) = car {
            operations::deliver(booking, &mut car.value, &operation, env.now, env.user())
                .map_err(|error| Error::internal(error.to_string()))?;
            tx.put(&car.value, Expect::Revision(car.revision))?;
        }
        Ok(())
    })
}

/// `POST /api/operations/return`: closes the booking; the return date is its close date.
pub fn return_car(request: &Request) -> Result<Response, Error> {
    let body: OperationRequest = parse_body(&request.body)?;
    let env = Env::load()?;
    let operation = body.operation(env.now)?;
    operate(operation.booking_id, &env, |tx, stored, booking| {
        operations::check_return(stored, &operation, env.now)?;
        let office =
            catalog::get::<BranchOfficeDoc>(tx, &stored.return_place.branch_office_id.to_string())?;
        let mut car = fleet_car(tx, stored)?;
        operations::return_car(
            booking,
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
        Ok(())
    })
}

/// The frame every operation shares: in one read-write transaction, retried on conflict,
/// load booking `id`, let `apply` check and change a copy of it (and write what else it
/// touches), write the booking with its change comments, and answer the full booking.
fn operate(
    id: i64,
    env: &Env,
    mut apply: impl FnMut(&Transaction, &Booking, &mut Booking) -> Result<(), Error>,
) -> Result<Response, Error> {
    let booking = retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadWrite)?;
        let stored = stored_booking(&tx, id)?;
        // Read before `apply`'s writes, like everything else the request decides on.
        let numbering = Numbering::after_last(&tx, id)?;
        let mut booking = stored.value.clone();
        apply(&tx, &stored.value, &mut booking)?;
        finish(
            &tx,
            &stored.value,
            &booking,
            stored.revision,
            numbering,
            env,
        )?;
        tx.commit()?;
        Ok::<_, Error>(booking)
    })?;
    Ok(json(200, &response::full(booking, context::language())))
}

/// The booking's car as the fleet has it now, when it has one that the fleet still knows.
fn fleet_car(tx: &Transaction, booking: &Booking) -> Result<Option<Document<Car>>, Error> {
    match &booking.car {
        Some(car) => Ok(tx.get::<Car>(&car.id)?),
        None => Ok(None),
    }
}

/// Writes the operated `booking` over `stored` (at `revision`) and records its changes,
/// numbered by `numbering`.
fn finish(
    tx: &Transaction,
    stored: &Booking,
    booking: &Booking,
    revision: u64,
    numbering: Numbering,
    env: &Env,
) -> Result<(), Error> {
    tx.put(booking, Expect::Revision(revision))?;
    let texts = changes::main_changes(stored, booking)
        .iter()
        .map(|change| change.text(env.user()))
        .collect();
    record(tx, numbering, texts, env)
}
