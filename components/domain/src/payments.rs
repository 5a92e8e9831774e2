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
    booking.total_payed += message.amount;
    booking.balance -= message.amount;
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

/// Reads a decimal amount as the banks send it: a JSON string (`"120.50"`), or, leniently, a
/// JSON number, kept exact (never through `f64`).
pub fn parse_amount(text: &str) -> Option<Decimal> {
    let text = text.trim();
    Decimal::from_str_exact(text)
        .or_else(|_| Decimal::from_scientific(text))
        .ok()
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
mod tests {
    use serde_json::json;

    use super::*;
    use crate::fixtures;

    #[test]
    fn a_bank_answer_keeps_its_amount_as_written() {
        let answer = BankSettlement::parse(
            br#"{"SettlementId":"s1","Reference":"B-7","Amount":120.50,"Currency":"EUR","Status":"settled"}"#,
        )
        .unwrap();
        assert_eq!(answer.amount, "120.50");
        assert!(BankSettlement::parse(br#"{"SettlementId":"s1","Reference":"B","Amount":true,"Currency":"EUR","Status":"x"}"#).is_err());
    }

    #[test]
    fn the_settlement_id_is_one_escaped_segment() {
        let url = |base: &str, id: &str| {
            BankBaseUrl::parse(base, BankSchemes::Https)
                .unwrap()
                .settlement_url(id)
                .to_string()
        };
        for base in [
            "https://bank.test",
            "https://bank.test/",
            "https://bank.test/?x=1",
        ] {
            assert_eq!(url(base, "st_1"), "https://bank.test/settlements/st_1");
        }
        assert_eq!(
            url("https://bank.test/api/v2/", "../admin?x#y"),
            "https://bank.test/api/v2/settlements/..%2Fadmin%3Fx%23y"
        );
        assert_eq!(
            url("https://bank.test:8443/api/", "S 1/2"),
            "https://bank.test:8443/api/settlements/S%201%2F2"
        );
    }

    #[test]
    fn a_base_url_has_a_host_and_an_allowed_scheme() {
        let https = |text| BankBaseUrl::parse(text, BankSchemes::Https);
        let any = |text| BankBaseUrl::parse(text, BankSchemes::HttpOrHttps);
        assert!(https("https://bank.test").is_some());
        assert!(https("http://127.0.0.1:9000").is_none());
        assert_eq!(
            any("http://127.0.0.1:9000")
                .map(|base| base.settlement_url("s1").to_string())
                .as_deref(),
            Some("http://127.0.0.1:9000/settlements/s1")
        );
        for text in ["ftp://x", "file:///tmp", "bank.test", "https://", ""] {
            assert!(any(text).is_none(), "{text}");
        }
        assert_eq!(base_url_setting("banktwo"), "banktwo.base_url");
    }

    #[test]
    fn a_bank_answer_is_read_by_its_status_then_its_body() {
        assert_eq!(BankAnswer::start(404).unwrap().map(|_| ()), None);
        assert_eq!(
            BankAnswer::start(500).unwrap_err(),
            AnswerError::Refused("the bank answered 500 Internal Server Error".to_owned())
        );
        assert!(matches!(
            BankAnswer::start(302),
            Err(AnswerError::Refused(_))
        ));
        let mut answer = BankAnswer::start(200).unwrap().unwrap();
        answer
            .push(br#"{"SettlementId":"s1","Reference":"B-7","#)
            .unwrap();
        answer
            .push(br#""Amount":"1.50","Currency":"EUR","Status":"settled"}"#)
            .unwrap();
        assert_eq!(answer.settlement().unwrap().amount, "1.50");

        let mut answer = BankAnswer::start(200).unwrap().unwrap();
        answer.push(&[b' '; MAX_ANSWER]).unwrap();
        assert_eq!(
            answer.push(b" ").unwrap_err(),
            AnswerError::BadAnswer("the answer is too large".to_owned())
        );
        let answer = BankAnswer::start(200).unwrap().unwrap();
        assert!(matches!(
            answer.settlement(),
            Err(AnswerError::BadAnswer(_))
        ));
    }

    fn at(text: &str) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(text).unwrap()
    }

    fn booking(status: BookingStatus, balance: &str) -> Booking {
        fixtures::booking(
            status,
            json!({
                "Id": 7,
                "CurrentStatusDate": "2024-02-20T09:00:00-03:00",
                "Currency": "USD",
                "Balance": balance,
                "TotalPayed": 0,
                "UpdatedByUserName": "api"
            }),
        )
    }

    fn message(amount: &str) -> ReconcileMessage {
        ReconcileMessage {
            bank: "bankone".to_owned(),
            external_id: "pay_1".to_owned(),
            booking_id: 7,
            booking_code: "DEMO-000007".to_owned(),
            amount: Decimal::from_str_exact(amount).unwrap(),
            currency: "usd".to_owned(),
            received_at: at("2024-02-21T10:00:00Z").to_utc(),
        }
    }

    #[test]
    fn a_partial_payment_lowers_the_balance_and_keeps_the_status() {
        let mut booking = booking(BookingStatus::Reserved, "300.00");
        let now = at("2024-02-21T10:00:05-03:00");
        let credited = credit(&mut booking, &message("120.50"), now).unwrap();
        assert!(!credited.confirmed);
        assert_eq!(booking.total_payed.to_string(), "120.50");
        assert_eq!(booking.balance.to_string(), "179.50");
        assert_eq!(booking.current_status, BookingStatus::Reserved);
        assert_eq!(booking.updated_on, Some(now));
        assert_eq!(booking.updated_by_user_name, None);
        assert_eq!(
            credited.comment,
            "Payment of 120.50 usd received from bankone (id pay_1). Total paid 120.50, balance 179.50."
        );
    }

    #[test]
    fn a_reserved_booking_paid_in_full_or_more_is_confirmed() {
        for amount in ["300.00", "300.01"] {
            let mut booking = booking(BookingStatus::Reserved, "300.00");
            let now = at("2024-02-21T10:00:05-03:00");
            let credited = credit(&mut booking, &message(amount), now).unwrap();
            assert!(credited.confirmed, "{amount}");
            assert!(credited.comment.ends_with(" Booking confirmed."));
            assert_eq!(booking.current_status, BookingStatus::Confirmed);
            assert_eq!(booking.current_status_date, now);
            assert!(booking.balance <= Decimal::ZERO);
        }
    }

    #[test]
    fn other_statuses_are_credited_but_kept() {
        for status in [
            BookingStatus::Quoted,
            BookingStatus::Confirmed,
            BookingStatus::Delivered,
            BookingStatus::Closed,
            BookingStatus::Canceled,
        ] {
            let mut booking = booking(status, "100");
            let credited =
                credit(&mut booking, &message("100"), at("2024-02-21T10:00:05Z")).unwrap();
            assert!(!credited.confirmed, "{status}");
            assert_eq!(booking.current_status, status);
            assert_eq!(booking.balance, Decimal::ZERO);
        }
    }

    #[test]
    fn refusals_leave_the_booking_untouched() {
        let original = booking(BookingStatus::Reserved, "100");
        let now = at("2024-02-21T10:00:05Z");
        let mut other_currency = message("10");
        other_currency.currency = "ARS".to_owned();
        let mut other_booking = message("10");
        other_booking.booking_id = 8;
        for (message, error) in [
            (message("0"), CreditError::NotPositive(Decimal::ZERO)),
            (
                message("-5"),
                CreditError::NotPositive(Decimal::from_str_exact("-5").unwrap()),
            ),
            (
                other_currency,
                CreditError::CurrencyMismatch {
                    payment: "ARS".to_owned(),
                    booking: "USD".to_owned(),
                },
            ),
            (
                other_booking,
                CreditError::WrongBooking {
                    message: 8,
                    booking: 7,
                },
            ),
        ] {
            let mut booking = original.clone();
            assert_eq!(credit(&mut booking, &message, now), Err(error));
            assert_eq!(booking, original);
        }
    }

    #[test]
    fn the_message_has_the_contract_shape_with_a_decimal_string() {
        let value = serde_json::to_value(message("120.50")).unwrap();
        assert_eq!(
            value,
            json!({
                "Bank": "bankone",
                "ExternalId": "pay_1",
                "BookingId": 7,
                "BookingCode": "DEMO-000007",
                "Amount": "120.50",
                "Currency": "usd",
                "ReceivedAt": "2024-02-21T10:00:00Z"
            })
        );
        let back: ReconcileMessage = serde_json::from_value(value).unwrap();
        assert_eq!(back, message("120.50"));
    }

    #[test]
    fn amounts_are_read_exactly_from_strings_and_numbers() {
        assert_eq!(parse_amount("0.1").unwrap().to_string(), "0.1");
        assert_eq!(
            parse_amount(" 1e2 ").map(|d| d.normalize().to_string()),
            Some("100".to_owned())
        );
        assert_eq!(parse_amount("ten"), None);
        let from_number: ReconcileMessage = serde_json::from_str(
            r#"{"Bank": "banktwo", "ExternalId": "s", "BookingId": 7, "BookingCode": "C",
                "Amount": 0.30, "Currency": "USD", "ReceivedAt": "2024-02-21T10:00:00Z"}"#,
        )
        .unwrap();
        assert_eq!(from_number.amount, Decimal::new(30, 2));
        assert_eq!(
            ReconcileMessage::dedupe_key("bankone", "evt_1"),
            "bankone:evt_1"
        );
        assert_eq!(PaymentRecord::id_of("banktwo", "st_9"), "banktwo:st_9");
    }
}
