use chrono::{TimeZone as _, Utc};
use serde_json::{Value, json};

use super::*;

/// A booking's list form with this status and paid total.
fn booking(status: i32, total_payed: &str) -> String {
    json!({
        "Id": 7,
        "CurrentStatus": status,
        "TotalPayed": total_payed.parse::<f64>().unwrap(),
        "Customer": {"Name": "Ann"},
    })
    .to_string()
}

fn change(revision: u64, body: Option<String>) -> Change {
    Change {
        position: 41,
        id: "7".to_owned(),
        revision,
        body,
        changed_at: Utc.with_ymd_and_hms(2026, 11, 27, 10, 0, 0).unwrap(),
    }
}

fn event(previous: Option<&str>, revision: u64, body: Option<String>) -> Option<EventType> {
    event_of(previous, &change(revision, body)).unwrap()
}

#[test]
fn a_first_change_is_a_creation_unless_the_booking_predates_the_feed() {
    assert_eq!(
        event(None, 1, Some(booking(2, "0"))),
        Some(EventType::BookingCreated)
    );
    assert_eq!(
        event(None, 4, Some(booking(2, "0"))),
        Some(EventType::BookingUpdated)
    );
}

#[test]
fn a_status_reached_names_the_operation() {
    let reserved = booking(2, "0");
    for (status, expected) in [
        (6, EventType::BookingCanceled),
        (4, EventType::BookingDelivered),
        (5, EventType::BookingReturned),
    ] {
        assert_eq!(
            event(Some(&reserved), 2, Some(booking(status, "0"))),
            Some(expected)
        );
    }
    // Returned after delivery.
    assert_eq!(
        event(Some(&booking(4, "0")), 3, Some(booking(5, "0"))),
        Some(EventType::BookingReturned)
    );
}

#[test]
fn a_payment_is_a_higher_paid_total_with_or_without_confirmation() {
    let reserved = booking(2, "10");
    assert_eq!(
        event(Some(&reserved), 2, Some(booking(3, "120.5"))),
        Some(EventType::PaymentCredited)
    );
    assert_eq!(
        event(Some(&reserved), 2, Some(booking(2, "10.01"))),
        Some(EventType::PaymentCredited)
    );
    // A delivery that also records a payment is a delivery.
    assert_eq!(
        event(Some(&reserved), 2, Some(booking(4, "50"))),
        Some(EventType::BookingDelivered)
    );
}

#[test]
fn any_other_change_is_an_update_and_no_change_is_no_event() {
    let reserved = booking(2, "0");
    let mut renamed: Value = serde_json::from_str(&reserved).unwrap();
    renamed["Customer"]["Name"] = json!("Bea");
    assert_eq!(
        event(Some(&reserved), 2, Some(renamed.to_string())),
        Some(EventType::BookingUpdated)
    );
    // A quotation turned into a reservation changes the status to no named one.
    assert_eq!(
        event(Some(&booking(1, "0")), 2, Some(reserved.clone())),
        Some(EventType::BookingUpdated)
    );
    assert_eq!(event(Some(&reserved), 2, Some(reserved.clone())), None);
    assert_eq!(event(Some(&reserved), 3, None), None);
}

#[test]
fn an_unreadable_booking_is_an_error_not_an_event() {
    assert!(event_of(Some("{}"), &change(2, Some(booking(2, "0")))).is_err());
}

#[test]
fn names_read_back_and_unknown_ones_are_refused() {
    for event in EventType::ALL {
        assert_eq!(event.name().parse::<EventType>(), Ok(event));
    }
    assert_eq!(
        "booking.deleted".parse::<EventType>(),
        Err(UnknownEventType("booking.deleted".to_owned()))
    );
}

#[test]
fn the_body_is_the_feed_change_with_its_type() {
    let body = booking(6, "0");
    let sent = event_body(
        EventType::BookingCanceled,
        &change(3, Some(body.clone())),
        7,
    );
    let sent: Value = serde_json::from_str(&sent).unwrap();
    assert_eq!(
        sent,
        json!({
            "Id": "41",
            "Type": "booking.canceled",
            "BookingId": 7,
            "Revision": 3,
            "ChangedOn": "2026-11-27T10:00:00.000000Z",
            "Booking": serde_json::from_str::<Value>(&body).unwrap(),
        })
    );
}
