//! The `bankone` component: `POST /api/bankone/webhooks`, bank one's payment notifications
//! (contract.md, "Bank webhooks"; docs/webhooks.md).
//!
//! The endpoint is anonymous: the signature (module [`signature`]) with the tenant's secret
//! `bankone.signing_secret` is the only thing that makes a notification authentic. An
//! authentic `payment.succeeded` whose `Title` is a booking code becomes one message on
//! `payment.reconcile`, deduplicated by `EventId`; anything else authentic is answered 200 and
//! ignored, so that the bank does not retry what will not change.

pub mod signature;

use chrono::Utc;
use rental_domain::ApiError;
use rental_domain::json::parse_body;
use rental_domain::payments::{ReconcileMessage, decimal_text};
use rental_guest::webhook::{self, Queued};
use rental_guest::{Error, Handler, Request, Response, log};
use rust_decimal::Decimal;
use serde::Deserialize;

/// The name this component gives itself in messages and secrets.
const BANK: &str = "bankone";
const SECRET: &str = "bankone.signing_secret";
const SIGNATURE_HEADER: &str = "bankone-signature";
const PAYMENT_SUCCEEDED: &str = "payment.succeeded";

/// A notification: `{"EventId", "EventType", "CreatedAt", "Payment"}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Event {
    event_id: String,
    event_type: String,
    /// Read only for payment events.
    #[serde(default)]
    payment: Option<serde_json::Value>,
}

/// `Payment` of a `payment.succeeded` event.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Payment {
    id: String,
    title: String,
    #[serde(with = "decimal_text")]
    amount: Decimal,
    currency: String,
}

pub struct BankOne;

impl Handler for BankOne {
    fn handle(request: Request) -> Result<Response, Error> {
        match request.path.as_str() {
            "/api/bankone/webhooks" => webhook(&request),
            _ => Ok(Response::not_found()),
        }
    }
}

#[cfg(feature = "component")]
rental_guest::export_handler!(BankOne);

fn webhook(request: &Request) -> Result<Response, Error> {
    let Some(secret) = webhook::secret(SECRET) else {
        log(format_args!("bankone: refused: the tenant has no {SECRET}"));
        return Ok(Response::new(401));
    };
    let header = request.header(SIGNATURE_HEADER).unwrap_or_default();
    let now = Utc::now().timestamp();
    if let Err(refused) = signature::verify(secret.as_bytes(), header, &request.body, now) {
        log(format_args!("bankone: refused: signature {refused:?}"));
        return Ok(Response::new(401));
    }
    let event: Event = parse_body(&request.body)?;
    if event.event_type != PAYMENT_SUCCEEDED {
        log(format_args!(
            "bankone: ignored event {} of type {}",
            event.event_id, event.event_type
        ));
        return Ok(Response::new(200));
    }
    let payment = event
        .payment
        .ok_or_else(|| ApiError::missing_field("Payment"))
        .and_then(|value| {
            serde_json::from_value::<Payment>(value)
                .map_err(|e| ApiError::invalid_field("Payment", e.to_string()))
        })?;
    let received_at = Utc::now();
    let queued = webhook::queue_payment(BANK, &event.event_id, &payment.title, |booking| {
        ReconcileMessage {
            bank: BANK.to_owned(),
            external_id: payment.id.clone(),
            booking_id: booking.id,
            booking_code: payment.title.clone(),
            amount: payment.amount,
            currency: payment.currency.clone(),
            received_at,
        }
    })?;
    match queued {
        Queued::Queued => {}
        Queued::Duplicate => log(format_args!(
            "bankone: event {} was queued before",
            event.event_id
        )),
        Queued::UnknownBooking => log(format_args!(
            "bankone: ignored event {}: no booking has the code {:?}",
            event.event_id, payment.title
        )),
    }
    Ok(Response::new(200))
}
