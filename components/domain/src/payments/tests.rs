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
    assert!(
        BankSettlement::parse(
            br#"{"SettlementId":"s1","Reference":"B","Amount":true,"Currency":"EUR","Status":"x"}"#
        )
        .is_err()
    );
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
        let credited = credit(&mut booking, &message("100"), at("2024-02-21T10:00:05Z")).unwrap();
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
    let mut overflowing = original.clone();
    overflowing.balance = Decimal::MIN + Decimal::ONE;
    let mut overflowing_total = original.clone();
    overflowing_total.total_payed = Decimal::MAX;
    for (booking, message, error) in [
        (
            overflowing,
            message("10"),
            CreditError::Overflow {
                amount: Decimal::TEN,
            },
        ),
        (
            overflowing_total,
            message("10"),
            CreditError::Overflow {
                amount: Decimal::TEN,
            },
        ),
    ] {
        let mut credited = booking.clone();
        assert_eq!(credit(&mut credited, &message, now), Err(error));
        assert_eq!(credited, booking, "nothing half-credited");
    }
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
    assert_eq!(parse_amount("1000000000"), Some(MAX_AMOUNT));
    assert_eq!(parse_amount("1000000000.01"), None, "over the bound");
    assert_eq!(parse_amount("79228162514264337593543950335"), None);
    assert_eq!(parse_amount("-1e30"), None);
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
