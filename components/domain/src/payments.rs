//! Bank payments reconciled onto bookings (contract.md, "Bank webhooks").
//!
//! The webhook components turn a bank's notification into a [`ReconcileMessage`] on the queue
//! topic [`TOPIC`]; the `reconcile` component credits it on the booking with [`credit`] and
//! records a [`PaymentRecord`], whose id ([`PaymentRecord::id_of`]) makes a payment count once
//! per bank and external id.
//!
//! Bank two's settlement question (`GET {base_url}/settlements/{id}`, [`BankBaseUrl`]) and the
//! reading of its answer ([`BankAnswer`]) are here too, for `rentald` and the Spin adapter alike.

use chrono::{DateTime, FixedOffset, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::json;
use crate::models::Booking;
use crate::status::BookingStatus;

/// The queue topic of payments to credit.
pub const TOPIC: &str = "payment.reconcile";

/// A payment to credit on a booking: the payload of a [`TOPIC`] message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReconcileMessage {
    /// The webhook component that accepted the payment: `bankone` or `banktwo`.
    pub bank: String,
    /// The bank's id of the payment (bank one's `Payment.Id`, bank two's `SettlementId`).
    pub external_id: String,
    pub booking_id: i64,
    pub booking_code: String,
    /// Written as a decimal string, e.g. `"120.50"`.
    #[serde(with = "decimal_text")]
    pub amount: Decimal,
    pub currency: String,
    pub received_at: DateTime<Utc>,
}

impl ReconcileMessage {
    /// The queue's deduplication key of a bank's notification: the bank's name and its own id
    /// of the notification (`EventId`, `SettlementId`), so two banks never collide.
    pub fn dedupe_key(bank: &str, notification_id: &str) -> String {
        format!("{bank}:{notification_id}")
    }
}

/// A payment credited on a booking; one document per bank and external id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PaymentRecord {
    pub bank: String,
    pub external_id: String,
    pub booking_id: i64,
    #[serde(with = "decimal_text")]
    pub amount: Decimal,
    pub currency: String,
    pub received_at: DateTime<Utc>,
    #[serde(with = "json::date_time")]
    pub credited_at: DateTime<FixedOffset>,
}

impl PaymentRecord {
    /// The document id of the payment `external_id` of `bank`.
    pub fn id_of(bank: &str, external_id: &str) -> String {
        format!("{bank}:{external_id}")
    }

    /// The record of `message`, credited at `now`.
    pub fn of(message: &ReconcileMessage, now: DateTime<FixedOffset>) -> Self {
        Self {
            bank: message.bank.clone(),
            external_id: message.external_id.clone(),
            booking_id: message.booking_id,
            amount: message.amount,
            currency: message.currency.clone(),
            received_at: message.received_at,
            credited_at: now,
        }
    }
}

/// Why a payment cannot be credited on its booking. Permanent: delivering the message again
/// would not change the answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreditError {
    #[error("the amount {0} is not positive")]
    NotPositive(Decimal),
    #[error("the payment is in {payment}, the booking in {booking}")]
    CurrencyMismatch { payment: String, booking: String },
    #[error("the payment is for booking {message} but booking {booking} was found")]
    WrongBooking { message: i64, booking: i64 },
    #[error("crediting {amount} would take the booking's totals past what an amount can hold")]
    Overflow { amount: Decimal },
}

/// What crediting did to the booking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credited {
    /// The booking moved from Reserved to Confirmed.
    pub confirmed: bool,
    /// The comment to record on the booking.
    pub comment: String,
}

/// Credits `message` on `booking` at `now`: `TotalPayed` up and `Balance` down by the amount,
/// the booking marked as changed (by the system: no user name), and a Reserved booking becomes
/// Confirmed once its balance is 0 or less. Other statuses are kept: a payment never reopens
/// or closes a booking. A currency is compared without case; a booking without a currency
/// takes any.
pub fn credit(
    booking: &mut Booking,
    message: &ReconcileMessage,
    now: DateTime<FixedOffset>,
) -> Result<Credited, CreditError> {
    if booking.id != message.booking_id {
        return Err(CreditError::WrongBooking {
            message: message.booking_id,
            booking: booking.id,
        });
    }
    if message.amount <= Decimal::ZERO {
        return Err(CreditError::NotPositive(message.amount));
    }
    if !booking.currency.is_empty() && !booking.currency.eq_ignore_ascii_case(&message.currency) {
        return Err(CreditError::CurrencyMismatch {
            payment: message.currency.clone(),
            booking: booking.currency.clone(),
        });
    }
    let overflow = || CreditError::Overflow {
        amount: message.amount,
    };
    let total_payed = booking
        .total_payed
        .checked_add(message.amount)
        .ok_or_else(overflow)?;
    let balance = booking
        .balance
        .checked_sub(message.amount)
        .ok_or_else(overflow)?;
    booking.total_payed = total_payed;
    booking.balance = balance;
    booking.updated_on = Some(now);
    booking.updated_by_user_name = None;
    let confirmed =
        booking.current_status == BookingStatus::Reserved && booking.balance <= Decimal::ZERO;
    if confirmed {
        booking.current_status = BookingStatus::Confirmed;
        booking.current_status_date = now;
    }
    let mut comment = format!(
        "Payment of {} {} received from {} (id {}). Total paid {}, balance {}.",
        message.amount,
        message.currency,
        message.bank,
        message.external_id,
        booking.total_payed,
        booking.balance
    );
    if confirmed {
        comment.push_str(" Booking confirmed.");
    }
    Ok(Credited { confirmed, comment })
}

/// The largest amount a bank may notify: one billion, in any currency. Above it a
/// notification is refused as malformed, so that no sum of payments can come near what a
/// [`Decimal`] holds.
pub const MAX_AMOUNT: Decimal = Decimal::from_parts(1_000_000_000, 0, 0, false, 0);

/// Reads a decimal amount as the banks send it: a JSON string (`"120.50"`), or, leniently, a
/// JSON number, kept exact (never through `f64`); `None` when it is not a number or is above
/// [`MAX_AMOUNT`] (or below its negative).
pub fn parse_amount(text: &str) -> Option<Decimal> {
    let text = text.trim();
    Decimal::from_str_exact(text)
        .or_else(|_| Decimal::from_scientific(text))
        .ok()
        .filter(|amount| amount.abs() <= MAX_AMOUNT)
}

/// A bank's answer to `GET {base_url}/settlements/{id}`:
/// `{"SettlementId", "Reference", "Amount", "Currency", "Status"}`. Read by `rentald` and by
/// the Spin adapter alike.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BankSettlement {
    pub settlement_id: String,
    pub reference: String,
    /// The amount as text, as the bank wrote it (a JSON string or number, never through
    /// `f64`).
    #[serde(deserialize_with = "amount_text")]
    pub amount: String,
    pub currency: String,
    pub status: String,
}

impl BankSettlement {
    /// Reads a bank's answer body; the error says why it is not a settlement.
    pub fn parse(body: &[u8]) -> Result<Self, String> {
        serde_json::from_slice(body).map_err(|e| e.to_string())
    }
}

/// The largest answer read from a bank.
pub const MAX_ANSWER: usize = 64 << 10;

/// The tenant setting holding a bank's base URL, e.g. `banktwo.base_url`; under Spin, the
/// variable of the same name (`banktwo_base_url`, by `rental_platform::spin_variable`).
pub fn base_url_setting(bank: &str) -> String {
    format!("{bank}.base_url")
}

/// The schemes a bank's base URL may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BankSchemes {
    /// `https://` only: `rentald`, which authenticates to the bank with the tenant's client
    /// certificate.
    Https,
    /// `https://`, or `http://` for a local mock bank: development under Spin.
    HttpOrHttps,
}

/// A bank's base URL: an absolute URL with a host, of one of the allowed [`BankSchemes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BankBaseUrl(url::Url);

impl BankBaseUrl {
    /// `None` when `text` is not a URL with a host and an allowed scheme.
    pub fn parse(text: &str, schemes: BankSchemes) -> Option<Self> {
        let url = url::Url::parse(text).ok()?;
        let allowed = match schemes {
            BankSchemes::Https => url.scheme() == "https",
            BankSchemes::HttpOrHttps => matches!(url.scheme(), "https" | "http"),
        };
        (allowed && url.host().is_some()).then_some(Self(url))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// `GET {base}/settlements/{id}`'s URL: the id as one escaped path segment, without the
    /// base's query.
    pub fn settlement_url(&self, settlement_id: &str) -> url::Url {
        let mut url = self.0.clone();
        url.path_segments_mut()
            .expect("a URL with a host has a path")
            .pop_if_empty()
            .push("settlements")
            .push(settlement_id);
        url.set_query(None);
        url
    }
}

/// Why a bank's answer is no settlement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerError {
    /// The bank answered an error status other than 404.
    Refused(String),
    /// The answer is too large, or not a settlement.
    BadAnswer(String),
}

/// Defines, in the calling module, the conversions from a bank's answer to the bindings module
/// `$wit` of `rental:platform/bank`: `answer_error` and `settlement`. `rentald` (wasmtime's
/// bindings) and the Spin adapter (wit-bindgen's) each generate their own types for the same
/// WIT, so the conversions are written once here and expanded in both.
#[macro_export]
macro_rules! wit_bank_conversions {
    ($wit:path) => {
        use $wit as wit_bank;

        fn answer_error(error: $crate::payments::AnswerError) -> wit_bank::BankError {
            match error {
                $crate::payments::AnswerError::Refused(message) => {
                    wit_bank::BankError::Refused(message)
                }
                $crate::payments::AnswerError::BadAnswer(message) => {
                    wit_bank::BankError::BadAnswer(message)
                }
            }
        }

        fn settlement(answer: $crate::payments::BankSettlement) -> wit_bank::Settlement {
            wit_bank::Settlement {
                settlement_id: answer.settlement_id,
                reference: answer.reference,
                amount: answer.amount,
                currency: answer.currency,
                status: answer.status,
            }
        }
    };
}

/// A bank's answer to `GET {base_url}/settlements/{id}`, read as it arrives: 404 means no such
/// settlement, any other status but success a refusal, and a success's body (at most
/// [`MAX_ANSWER`] bytes) is a [`BankSettlement`]. Read by `rentald` and by the Spin adapter
/// alike.
#[derive(Debug)]
pub struct BankAnswer {
    body: Vec<u8>,
}

impl BankAnswer {
    /// Starts reading an answer of `status`. `Ok(None)`: the bank does not know the settlement
    /// (404), nothing more to read; `Ok(Some(_))`: read the body into it with
    /// [`push`](Self::push).
    pub fn start(status: u16) -> Result<Option<Self>, AnswerError> {
        if status == 404 {
            return Ok(None);
        }
        if (200..300).contains(&status) {
            return Ok(Some(Self { body: Vec::new() }));
        }
        // The code and its reason where it has one: `500 Internal Server Error`.
        let status = http::StatusCode::from_u16(status)
            .map_or_else(|_| status.to_string(), |status| status.to_string());
        Err(AnswerError::Refused(format!("the bank answered {status}")))
    }

    /// Adds a chunk of the body; an error once the body is larger than [`MAX_ANSWER`].
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), AnswerError> {
        self.body.extend_from_slice(chunk);
        if self.body.len() > MAX_ANSWER {
            return Err(AnswerError::BadAnswer("the answer is too large".to_owned()));
        }
        Ok(())
    }

    /// The settlement the whole body describes.
    pub fn settlement(self) -> Result<BankSettlement, AnswerError> {
        BankSettlement::parse(&self.body).map_err(AnswerError::BadAnswer)
    }
}

/// A JSON string as it is, or a JSON number as written.
fn amount_text<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::String(text) => Ok(text),
        serde_json::Value::Number(number) => Ok(number.to_string()),
        other => Err(serde::de::Error::custom(format!("Amount is {other}"))),
    }
}

/// A [`Decimal`] written as a JSON string and read from a string or a number.
pub mod decimal_text {
    use rust_decimal::Decimal;
    use serde::{Deserialize as _, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Decimal, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(value)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Decimal, D::Error> {
        let text = match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(text) => text,
            serde_json::Value::Number(number) => number.to_string(),
            _ => return Err(serde::de::Error::custom("expected a decimal amount")),
        };
        super::parse_amount(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("{text:?} is not a decimal amount")))
    }
}

#[cfg(test)]
mod tests;
