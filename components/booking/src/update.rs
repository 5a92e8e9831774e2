//! `PUT /api/booking/update`: the booking changed in place, with the rules of interface.md
//! 4.5, atomically (contract.md "Update rules we make stricter").

use rental_domain::booking::availability::{self, Held as Holding};
use rental_domain::booking::request::BookingRequest;
use rental_domain::booking::rules::{self, UpdateAllowed};
use rental_domain::booking::terms::{self, Decision};
use rental_domain::booking::{additionals, changes, customer};
use rental_domain::json::parse_body;
use rental_domain::{Booking, BookingStatus, ErrorCode};
use rental_guest::comments::Numbering;
use rental_guest::store::{Document, Expect, Mode, Transaction};
use rental_guest::{Error, Request, Response, retry_on_conflict};

use crate::Rules;
use crate::availability::hold;
use crate::catalog::{self, PriceBook};
use crate::env::Env;
use crate::shared::{agency, answer, record, stored_booking, take};

/// How an update ended.
enum Outcome {
    Updated(Box<Booking>),
    /// Delivered or Closed: refused, with the warning comment committed.
    Refused,
}

/// `PUT /api/booking/update`.
pub fn update(request: &Request, custom: &dyn Rules) -> Result<Response, Error> {
    let body: BookingRequest = parse_body(&request.body)?;
    let id = body.booking_id()?;
    let env = Env::load()?;
    match retry_on_conflict(|| attempt(&body, id, &env, custom))? {
        Outcome::Updated(booking) => Ok(answer(*booking, body.full_response())),
        Outcome::Refused => Err(rules::not_allowed().into()),
    }
}

/// One attempt at an update, in one transaction.
fn attempt(
    body: &BookingRequest,
    id: i64,
    env: &Env,
    custom: &dyn Rules,
) -> Result<Outcome, Error> {
    let tx = Transaction::begin(Mode::ReadWrite)?;
    let Document {
        revision,
        value: stored,
        ..
    } = stored_booking(&tx, id)?;
    let allowed = rules::update_allowed(stored.current_status);
    if allowed == UpdateAllowed::Refused {
        let warning = changes::update_refused(env.user(), stored.current_status);
        record(&tx, Numbering::after_last(&tx, id)?, vec![warning], env)?;
        tx.commit()?;
        return Ok(Outcome::Refused);
    }
    let version = rules::next_version(stored.version.as_deref(), body.version.as_deref())?;
    let rules = env.rules();

    // Rule 6: the customer's name and e-mail, by the user who created the customer.
    let customer_doc = catalog::customer(&tx, stored.customer.id)?;
    let changed_customer = match &customer_doc {
        Some(doc) => {
            customer::contact_changes(&doc.value, body.customer.as_ref(), env.caller.user_id)?
        }
        None => None,
    };
    let customer = changed_customer
        .clone()
        .unwrap_or_else(|| stored.customer.clone());

    let offices = catalog::offices(&tx)?;
    let agency = agency(&tx, body, Some(&stored), env)?;
    let terms = terms::check(
        body,
        Some(&stored),
        &customer,
        agency.as_ref(),
        &offices,
        &rules,
    )?;

    let request = availability::vehicle_request(body.vehicle(), &stored);
    let mut vehicle = catalog::vehicle(&tx, &request, Some(&stored))?;
    let plan = availability::plan(
        env.settings.availability,
        &request,
        vehicle.category.id,
        terms.period,
        Some(Holding::of(&stored)),
    );
    let unavailable = match allowed {
        UpdateAllowed::Reactivating => ErrorCode::BookingStatusNotAllowUpdate,
        _ => ErrorCode::CarNotAvailable,
    };
    let (held, locks) = hold(&tx, &plan, terms.period, Some(id), unavailable)?;
    take(&mut vehicle, held);

    let quote = PriceBook::new(&tx).price(
        &terms,
        &vehicle,
        &additionals::requested_by_update(body.additionals()?, &stored.additionals),
        body,
        &rules,
        custom,
    )?;

    let mut booking = stored.clone();
    terms::apply(
        &mut booking,
        body,
        Decision {
            terms,
            vehicle,
            quote,
            customer,
        },
    );
    let status = rules::status_after_update(&stored, body.is_quotation);
    if status != stored.current_status {
        booking.current_status = status;
        booking.current_status_date = env.now;
    }
    booking.is_quotation = status == BookingStatus::Quoted;
    booking.version = version;
    booking.updated_on = Some(env.now);
    booking.updated_by_user_name = Some(env.user().to_owned());

    let numbering = Numbering::after_last(&tx, id)?;
    // Everything is read and decided: from the first write to the commit, writes only.
    locks.write(&tx)?;
    if let (Some(doc), Some(changed)) = (customer_doc, changed_customer) {
        let mut value = doc.value;
        value.customer = changed;
        tx.put(&value, Expect::Revision(doc.revision))?;
    }
    tx.put(&booking, Expect::Revision(revision))?;
    let texts = changes::main_changes(&stored, &booking)
        .iter()
        .map(|change| change.text(env.user()))
        .collect();
    record(&tx, numbering, texts, env)?;
    tx.commit()?;
    Ok(Outcome::Updated(Box::new(booking)))
}
