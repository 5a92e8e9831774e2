//! The `reconcile` component: credits a queued bank payment (`payment.reconcile`) on its
//! booking, exactly once per bank and external id.
//!
//! Not reachable from outside: no route of the host names it. The host's queue consumer
//! invokes it for each message with `POST /queue/payment.reconcile`, the message as the body,
//! and the message's tenant bound. The answer tells the consumer what to do with the message:
//!
//! - 200: credited now, or credited before (a redelivery): acknowledge;
//! - 422 with `{"Reason"}`: it can never be credited (no such booking, another currency, a
//!   message that does not parse): dead-letter with the reason;
//! - anything else (a store failure, a trap): retry later.
//!
//! Crediting writes, in one transaction, the payment's record with `Expect::Absent` (the
//! once-only guard: a second delivery, or a consumer racing this one, finds it or conflicts),
//! the booking with `Expect::Revision` (so a concurrent booking update is never overwritten)
//! and a comment on the booking.

use chrono::{DateTime, FixedOffset, Utc};
use rental_domain::models::Booking;
use rental_domain::payments::{self, PaymentRecord, ReconcileMessage};
use rental_guest::store::{Expect, Mode, Transaction, retry_on_conflict};
use rental_guest::{Error, Handler, Request, Response, comments, json, log};
use serde_json::json;

/// The path the host's queue consumer posts `payment.reconcile` messages to.
const PATH: &str = "/queue/payment.reconcile";

/// How one message ended.
enum Outcome {
    Credited {
        confirmed: bool,
    },
    AlreadyCredited,
    /// Permanent: dead-letter with this reason.
    Refused(String),
}

pub struct Reconcile;

impl Handler for Reconcile {
    fn handle(request: Request) -> Result<Response, Error> {
        if request.path != PATH || request.method != "POST" {
            return Ok(Response::not_found());
        }
        let message: ReconcileMessage = match serde_json::from_slice(&request.body) {
            Ok(message) => message,
            Err(error) => {
                return Ok(refused(format!(
                    "not a {} message: {error}",
                    payments::TOPIC
                )));
            }
        };
        Ok(match reconcile(&message, Utc::now().fixed_offset())? {
            Outcome::Credited { confirmed } => json(
                200,
                &json!({ "Outcome": "credited", "Confirmed": confirmed }),
            ),
            Outcome::AlreadyCredited => {
                log(format_args!(
                    "reconcile: payment {}:{} was credited before",
                    message.bank, message.external_id
                ));
                json(200, &json!({ "Outcome": "already credited" }))
            }
            Outcome::Refused(reason) => refused(reason),
        })
    }
}

#[cfg(feature = "component")]
rental_guest::export_handler!(Reconcile);

/// 422 with the reason the message can never be credited.
fn refused(reason: String) -> Response {
    log(format_args!("reconcile: refused: {reason}"));
    json(422, &json!({ "Reason": reason }))
}

fn reconcile(message: &ReconcileMessage, now: DateTime<FixedOffset>) -> Result<Outcome, Error> {
    let payment_id = PaymentRecord::id_of(&message.bank, &message.external_id);
    retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadWrite)?;
        if tx.get::<PaymentRecord>(&payment_id)?.is_some() {
            return Ok(Outcome::AlreadyCredited);
        }
        let Some(stored) = tx.get::<Booking>(&message.booking_id.to_string())? else {
            return Ok(Outcome::Refused(format!(
                "booking {} ({}) does not exist",
                message.booking_id, message.booking_code
            )));
        };
        let mut booking = stored.value;
        let credited = match payments::credit(&mut booking, message, now) {
            Ok(credited) => credited,
            Err(error) => return Ok(Outcome::Refused(error.to_string())),
        };
        tx.put(&PaymentRecord::of(message, now), Expect::Absent)?;
        tx.put(&booking, Expect::Revision(stored.revision))?;
        comments::add(&tx, booking.id, now, None, credited.comment)?;
        tx.commit()?;
        Ok(Outcome::Credited {
            confirmed: credited.confirmed,
        })
    })
}
