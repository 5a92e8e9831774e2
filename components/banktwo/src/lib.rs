//! The `banktwo` component: `POST /api/v1/banktwo/webhooks`, bank two's settlement
//! notifications (contract.md, "Bank webhooks"; docs/webhooks.md).
//!
//! The endpoint is anonymous and its effect is money, so the notification is trusted for
//! nothing but a settlement id to ask about:
//!
//! 1. the shared secret (`BankTwo-Secret`, the tenant's secret `banktwo.shared_secret`,
//!    compared in constant time) decides whether the bank is asked at all;
//! 2. the host asks the bank over mutually authenticated TLS for the settlement;
//! 3. only a `settled` settlement whose `Reference` is a booking code queues a message, built
//!    from the bank's answer: a fabricated or altered payload credits nothing.

use chrono::Utc;
use rental_domain::json::parse_body;
use rental_domain::payments::{MAX_AMOUNT, ReconcileMessage, parse_amount};
use rental_guest::webhook::{self, Queued, Settlement};
use rental_guest::{Error, Handler, Request, Response, log};
use serde::Deserialize;
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

/// The name this component gives itself to the host (secrets, bank) and in messages.
const BANK: &str = "banktwo";
const SECRET: &str = "banktwo.shared_secret";
const SECRET_HEADER: &str = "banktwo-secret";
const SETTLEMENT: &str = "settlement";
const SETTLED: &str = "settled";

/// A notification: `{"NotificationId", "Type", "SettlementId", "Reference", "Amount",
/// "Currency"}`. Only `SettlementId` is used to act; the rest is compared with the bank's
/// answer and logged when it differs.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Notification {
    #[serde(default)]
    notification_id: Option<String>,
    #[serde(rename = "Type")]
    kind: String,
    #[serde(default)]
    settlement_id: Option<String>,
    #[serde(default)]
    reference: Option<String>,
    #[serde(default)]
    amount: Option<serde_json::Value>,
    #[serde(default)]
    currency: Option<String>,
}

pub struct BankTwo;

impl Handler for BankTwo {
    fn handle(request: Request) -> Result<Response, Error> {
        match request.path.as_str() {
            "/api/v1/banktwo/webhooks" => webhook(&request),
            _ => Ok(Response::not_found()),
        }
    }
}

#[cfg(feature = "component")]
rental_guest::export_handler!(BankTwo);

/// Whether `sent` is the secret. Both sides are hashed first, so the comparison takes the
/// same time whatever the lengths and contents.
fn secret_matches(sent: &[u8], secret: &[u8]) -> bool {
    Sha256::digest(sent).ct_eq(&Sha256::digest(secret)).into()
}

fn webhook(request: &Request) -> Result<Response, Error> {
    let Some(secret) = webhook::secret(SECRET) else {
        log(format_args!("banktwo: refused: the tenant has no {SECRET}"));
        return Ok(Response::new(401));
    };
    let sent = request.header(SECRET_HEADER).unwrap_or_default();
    if secret.is_empty() || !secret_matches(sent.as_bytes(), secret.as_bytes()) {
        log("banktwo: refused: wrong or missing shared secret");
        return Ok(Response::new(401));
    }
    let notification: Notification = parse_body(&request.body)?;
    if notification.kind != SETTLEMENT {
        log(format_args!(
            "banktwo: ignored notification {:?} of type {}",
            notification.notification_id, notification.kind
        ));
        return Ok(Response::new(200));
    }
    let settlement_id = notification
        .settlement_id
        .as_deref()
        .filter(|id| !id.trim().is_empty())
        .ok_or_else(|| rental_domain::ApiError::missing_field("SettlementId"))?;
    let settlement = match webhook::confirm_settlement(BANK, settlement_id) {
        Ok(Some(settlement)) if settlement.settlement_id == settlement_id => settlement,
        Ok(Some(other)) => {
            log(format_args!(
                "banktwo: the bank answered settlement {:?} when asked for {settlement_id:?}",
                other.settlement_id
            ));
            return Ok(Response::new(503));
        }
        Ok(None) => {
            log(format_args!(
                "banktwo: SUSPICIOUS: the bank does not know settlement {settlement_id:?}; nothing queued"
            ));
            return Ok(Response::new(200));
        }
        Err(error) => {
            log(format_args!(
                "banktwo: settlement {settlement_id:?} not confirmed: {error}"
            ));
            return Ok(Response::new(503));
        }
    };
    if settlement.status != SETTLED {
        log(format_args!(
            "banktwo: SUSPICIOUS: settlement {settlement_id:?} is {:?}, not settled; nothing queued",
            settlement.status
        ));
        return Ok(Response::new(200));
    }
    let Some(amount) = parse_amount(&settlement.amount) else {
        log(format_args!(
            "banktwo: the bank's amount {:?} of settlement {settlement_id:?} is not a number of at most {MAX_AMOUNT}",
            settlement.amount
        ));
        return Ok(Response::new(503));
    };
    log_differences(&notification, &settlement);
    let received_at = Utc::now();
    let queued = webhook::queue_payment(BANK, settlement_id, &settlement.reference, |booking| {
        ReconcileMessage {
            bank: BANK.to_owned(),
            external_id: settlement.settlement_id.clone(),
            booking_id: booking.id,
            booking_code: settlement.reference.clone(),
            amount,
            currency: settlement.currency.clone(),
            received_at,
        }
    })?;
    match queued {
        Queued::Queued => {}
        Queued::Duplicate => log(format_args!(
            "banktwo: settlement {settlement_id:?} was queued before"
        )),
        Queued::UnknownBooking => log(format_args!(
            "banktwo: SUSPICIOUS: settlement {settlement_id:?} quotes {:?}, which is no booking code; nothing queued",
            settlement.reference
        )),
    }
    Ok(Response::new(200))
}

/// Logs where the payload disagrees with the bank (the bank's answer is what is queued).
fn log_differences(notification: &Notification, settlement: &Settlement) {
    let sent_amount = notification.amount.as_ref().and_then(|value| match value {
        serde_json::Value::String(text) => parse_amount(text),
        serde_json::Value::Number(number) => parse_amount(&number.to_string()),
        _ => None,
    });
    let differs = sent_amount != parse_amount(&settlement.amount)
        || notification.reference.as_deref() != Some(settlement.reference.as_str())
        || notification.currency.as_deref() != Some(settlement.currency.as_str());
    if differs {
        log(format_args!(
            "banktwo: SUSPICIOUS: the notification of settlement {:?} differs from the bank's answer; the bank's is used",
            settlement.settlement_id
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_secret_matches() {
        assert!(secret_matches(b"s3cret", b"s3cret"));
        for sent in [&b""[..], b"s3cre", b"s3cret ", b"S3cret", b"other"] {
            assert!(!secret_matches(sent, b"s3cret"), "{sent:?}");
        }
    }
}
