//! `POST /api/booking/book` and `POST /api/booking/price`.

use rental_domain::booking::availability::{self, VehicleRequest};
use rental_domain::booking::changes;
use rental_domain::booking::customer::{self, CustomerLookup};
use rental_domain::booking::request::{BookingRequest, VehicleChoice};
use rental_domain::booking::response::PriceResponse;
use rental_domain::booking::settings::AvailabilityMode;
use rental_domain::booking::terms::{self, Decision};
use rental_domain::collections::{bookings, customers};
use rental_domain::json::parse_body;
use rental_domain::{Booking, Customer, ErrorCode, Model};
use rental_guest::comments::Numbering;
use rental_guest::store::{Expect, Mode, Transaction};
use rental_guest::{Error, Request, Response, context, json, random, retry_on_conflict};

use crate::Rules;
use crate::availability::hold;
use crate::catalog::{self, PriceBook};
use crate::env::Env;
use crate::shared::{agency, answer, record, take};

/// `POST /api/booking/book`: creates a booking and answers it, in full when `FullResponse` is
/// true, else as a [`BookingCreationResponse`].
pub fn book(request: &Request, custom: &dyn Rules) -> Result<Response, Error> {
    let body: BookingRequest = parse_body(&request.body)?;
    let sent = Required {
        customer: body.required_customer()?,
        vehicle: body.required_vehicle()?,
    };
    let env = Env::load()?;
    let global_id = customer::uuid_v4(random::bytes());
    let booking = retry_on_conflict(|| create(&body, &sent, &global_id, &env, custom))?;
    Ok(answer(booking, body.full_response()))
}

/// What a creation must name: its customer and its vehicle.
struct Required<'a> {
    customer: &'a Customer,
    vehicle: VehicleChoice,
}

/// One attempt at a creation, in one transaction.
fn create(
    body: &BookingRequest,
    sent: &Required<'_>,
    global_id: &str,
    env: &Env,
    custom: &dyn Rules,
) -> Result<Booking, Error> {
    let tx = Transaction::begin(Mode::ReadWrite)?;
    let rules = env.rules();
    let lookup = CustomerLookup::of(sent.customer);
    let (customer, new_customer) = match catalog::existing_customer(&tx, &lookup)? {
        Some(found) => (found.value.customer, None),
        None => {
            let doc =
                customer::new_customer(sent.customer, global_id.to_owned(), env.caller.user_id)?;
            (doc.customer.clone(), Some(doc))
        }
    };
    let offices = catalog::offices(&tx)?;
    let agency = agency(&tx, body, None, env)?;
    let terms = terms::check(body, None, &customer, agency.as_ref(), &offices, &rules)?;

    let request = VehicleRequest::from(sent.vehicle.clone());
    let mut vehicle = catalog::vehicle(&tx, &request, None)?;
    let plan = availability::plan(
        env.settings.availability,
        &request,
        vehicle.category.id,
        terms.period,
        None,
    );
    let (held, locks) = hold(&tx, &plan, terms.period, None, ErrorCode::CarNotAvailable)?;
    take(&mut vehicle, held);

    let quote = PriceBook::new(&tx).price(
        &terms,
        &vehicle,
        &body.additionals()?.unwrap_or_default(),
        body,
        &rules,
        custom,
    )?;

    // Everything is read and decided: from the first write to the commit, writes only.
    locks.write(&tx)?;

    let customer = match new_customer {
        Some(mut doc) => {
            doc.customer.id = tx.next_id(customers::COLLECTION)?;
            tx.put(&doc, Expect::Absent)?;
            doc.customer
        }
        None => customer,
    };
    let id = tx.next_id(bookings::COLLECTION)?;
    let booking = terms::new_booking(
        id,
        env.settings.booking_code(id),
        body,
        Decision {
            terms,
            vehicle,
            quote,
            customer,
        },
        env.now,
        env.user(),
    );
    tx.put(&booking, Expect::Absent)?;
    record(
        &tx,
        Numbering::new_booking(id),
        vec![changes::created(env.user(), booking.current_status)],
        env,
    )?;
    tx.commit()?;
    Ok(booking)
}

/// `POST /api/booking/price`: what `book` would price the same body at, with nothing stored
/// and no availability check. A vehicle named by category only is priced as its principal
/// model in model-based availability (whose cars a booking is offered first).
pub fn price(request: &Request, custom: &dyn Rules) -> Result<Response, Error> {
    let body: BookingRequest = parse_body(&request.body)?;
    let vehicle = body.required_vehicle()?;
    let env = Env::load()?;
    let quote = retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadOnly)?;
        let rules = env.rules();
        let customer = match body.customer.as_ref().map(CustomerLookup::of) {
            None | Some(CustomerLookup::New) => body.customer.clone().unwrap_or_default(),
            Some(lookup) => catalog::existing_customer(&tx, &lookup)?
                .map(|found| found.value.customer)
                .unwrap_or_default(),
        };
        let offices = catalog::offices(&tx)?;
        let agency = agency(&tx, &body, None, &env)?;
        let terms = terms::check(&body, None, &customer, agency.as_ref(), &offices, &rules)?;
        let mut vehicle = catalog::vehicle(&tx, &VehicleRequest::from(vehicle.clone()), None)?;
        if env.settings.availability == AvailabilityMode::Model && vehicle.model.is_none() {
            vehicle.model = match vehicle.category.principal_model_id {
                Some(id) => catalog::get::<Model>(&tx, &id.to_string())?,
                None => None,
            };
        }
        PriceBook::new(&tx).price(
            &terms,
            &vehicle,
            &body.additionals()?.unwrap_or_default(),
            &body,
            &rules,
            custom,
        )
    })?;
    Ok(json(200, &PriceResponse::new(quote, context::language())))
}
