//! The events of the bookings' lives that a tenant's webhooks receive (contract.md, "Event
//! webhooks"), read off the change feed: what one change of a booking did, told by comparing
//! the booking as the change left it with the booking as its previous change left it.
//!
//! One change is one event, the most telling one: a creation, then a status reached
//! (canceled, delivered, returned), then a payment credited, then any other change. A change
//! that leaves the booking's list form as it was (a warning comment recorded on an update
//! refused) and an operator's delete are no event.

use std::fmt;
use std::str::FromStr;

use chrono::SecondsFormat;
use rust_decimal::Decimal;
use serde::Deserialize;

use crate::status::BookingStatus;
use crate::store::Change;

/// What happened to a booking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    BookingCreated,
    BookingUpdated,
    BookingCanceled,
    BookingDelivered,
    BookingReturned,
    PaymentCredited,
}

impl EventType {
    /// Every event type, in the order the contract lists them.
    pub const ALL: [Self; 6] = [
        Self::BookingCreated,
        Self::BookingUpdated,
        Self::BookingCanceled,
        Self::BookingDelivered,
        Self::BookingReturned,
        Self::PaymentCredited,
    ];

    /// The event's name, as receivers see it in `Type`.
    pub fn name(self) -> &'static str {
        match self {
            Self::BookingCreated => "booking.created",
            Self::BookingUpdated => "booking.updated",
            Self::BookingCanceled => "booking.canceled",
            Self::BookingDelivered => "booking.delivered",
            Self::BookingReturned => "booking.returned",
            Self::PaymentCredited => "payment.credited",
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no event type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown event type {0:?}; known: booking.created, booking.updated, booking.canceled, booking.delivered, booking.returned, payment.credited"
)]
pub struct UnknownEventType(pub String);

impl FromStr for EventType {
    type Err = UnknownEventType;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|event| event.name() == name)
            .ok_or_else(|| UnknownEventType(name.to_owned()))
    }
}

/// What an event is told by: the fields of a booking's list form that a change may move.
#[derive(Debug, Deserialize)]
struct Facts {
    #[serde(rename = "CurrentStatus")]
    status: BookingStatus,
    #[serde(rename = "TotalPayed", default)]
    total_payed: Decimal,
}

/// A list form that does not read as a booking: the feed holds only what the store rendered,
/// so this is a fault of the store, not of a client.
#[derive(Debug, thiserror::Error)]
#[error("a change's booking does not read as a booking: {0}")]
pub struct UnreadableChange(#[from] serde_json::Error);

/// The event that `change` of a booking is, given the booking's list form as its previous
/// change left it (`None` when the change is the booking's first in the feed); `None` when it
/// is no event.
pub fn event_of(
    previous: Option<&str>,
    change: &Change,
) -> Result<Option<EventType>, UnreadableChange> {
    let Some(body) = change.body.as_deref() else {
        return Ok(None);
    };
    let Some(previous) = previous else {
        // A booking stored before the feed began has no earlier change to compare with.
        return Ok(Some(if change.revision <= 1 {
            EventType::BookingCreated
        } else {
            EventType::BookingUpdated
        }));
    };
    if previous == body {
        return Ok(None);
    }
    let (before, after): (Facts, Facts) =
        (serde_json::from_str(previous)?, serde_json::from_str(body)?);
    Ok(Some(if before.status != after.status {
        match after.status {
            BookingStatus::Canceled => EventType::BookingCanceled,
            BookingStatus::Delivered => EventType::BookingDelivered,
            BookingStatus::Closed => EventType::BookingReturned,
            _ if after.total_payed > before.total_payed => EventType::PaymentCredited,
            _ => EventType::BookingUpdated,
        }
    } else if after.total_payed > before.total_payed {
        EventType::PaymentCredited
    } else {
        EventType::BookingUpdated
    }))
}

/// The body of an event as its receivers get it: the change as the feed shows it, with its
/// `Type`. `Id` is the change's `Cursor` in the feed, the same for every endpoint, so that a
/// receiver can tell an event it has seen.
pub fn event_body(event: EventType, change: &Change, booking_id: i64) -> String {
    format!(
        r#"{{"Id":"{}","Type":"{}","BookingId":{},"Revision":{},"ChangedOn":"{}","Booking":{}}}"#,
        change.position,
        event.name(),
        booking_id,
        change.revision,
        change
            .changed_at
            .to_rfc3339_opts(SecondsFormat::Micros, true),
        change.body.as_deref().unwrap_or("null"),
    )
}

#[cfg(test)]
mod tests;
