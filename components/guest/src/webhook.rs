//! What the bank webhook components share (feature `webhook`): their own secrets, the bank's
//! confirmation of a settlement, and queueing a payment for a booking.
//!
//! These imports (`rental:platform/secrets` and `bank`) are linked by the host for the webhook
//! components only; an API component that called them would fail to load.

use rental_domain::collections::bookings;
use rental_domain::models::Booking;
use rental_domain::payments::{ReconcileMessage, TOPIC};
use rental_domain::store::KeyPart;

use crate::error::Error;
use crate::host::{bank as wit_bank, secrets as wit_secrets};
use crate::store::{Mode, Range, Transaction, retry_on_conflict};

/// A tenant secret of this component. The host answers only names that start with the
/// component's name and a dot (`banktwo.shared_secret`); any other reads as `None`.
pub fn secret(name: &str) -> Option<String> {
    wit_secrets::get(name)
}

/// A settlement as the bank reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settlement {
    pub settlement_id: String,
    /// What the payer quoted: a booking code when the payment is for a booking.
    pub reference: String,
    /// A decimal number as text.
    pub amount: String,
    pub currency: String,
    /// `settled` when the money has arrived.
    pub status: String,
}

/// Why the bank could not confirm a settlement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BankError {
    #[error("the bank is unreachable: {0}")]
    Unreachable(String),
    #[error("the bank refused: {0}")]
    Refused(String),
    #[error("the bank's answer is not a settlement: {0}")]
    BadAnswer(String),
    #[error("the bank is not configured: {0}")]
    NotConfigured(String),
}

/// Asks `bank` (the component's own) for a settlement over mutually authenticated TLS;
/// `None` when the bank does not know it.
pub fn confirm_settlement(
    bank: &str,
    settlement_id: &str,
) -> Result<Option<Settlement>, BankError> {
    match wit_bank::confirm_settlement(bank, settlement_id) {
        Ok(settlement) => Ok(settlement.map(|s| Settlement {
            settlement_id: s.settlement_id,
            reference: s.reference,
            amount: s.amount,
            currency: s.currency,
            status: s.status,
        })),
        Err(wit_bank::BankError::Unreachable(m)) => Err(BankError::Unreachable(m)),
        Err(wit_bank::BankError::Refused(m)) => Err(BankError::Refused(m)),
        Err(wit_bank::BankError::BadAnswer(m)) => Err(BankError::BadAnswer(m)),
        Err(wit_bank::BankError::NotConfigured(m)) => Err(BankError::NotConfigured(m)),
    }
}

/// What [`queue_payment`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// One message was queued.
    Queued,
    /// The notification was queued before: nothing new.
    Duplicate,
    /// No booking has the code: nothing queued.
    UnknownBooking,
}

/// Queues a payment for the booking with code `booking_code`: in one transaction, finds the
/// booking by its code and publishes the message `payment` builds from it on
/// [`TOPIC`], deduplicated by the bank's notification id. The queue's deduplication record and
/// the message are one row, committed together or not at all.
pub fn queue_payment(
    bank: &str,
    notification_id: &str,
    booking_code: &str,
    payment: impl Fn(&Booking) -> ReconcileMessage,
) -> Result<Queued, Error> {
    let dedupe_key = ReconcileMessage::dedupe_key(bank, notification_id);
    let by_code = Range::<Booking>::prefix(
        bookings::BY_CODE,
        vec![KeyPart::Text(booking_code.to_owned())],
    )
    .scan()
    .limit(1);
    retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadWrite)?;
        let Some(booking) = tx.scan(&by_code)?.into_iter().next() else {
            return Ok(Queued::UnknownBooking);
        };
        let published = tx.publish(TOPIC, &payment(&booking.value), Some(&dedupe_key))?;
        tx.commit()?;
        Ok(if published {
            Queued::Queued
        } else {
            Queued::Duplicate
        })
    })
}
