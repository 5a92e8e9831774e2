//! Comments on bookings: the audit trail every component that changes a booking writes to
//! (the booking's own changes, payments credited by reconciliation, ...).

use chrono::{DateTime, FixedOffset};
use rental_domain::BookingComment;
use rental_domain::collections::booking_comments;

use crate::store::{Expect, StoreError, Transaction};

/// Adds a comment to booking `booking_id`, numbered by the booking's own comment sequence so
/// that concurrent writers never take the same number. `user_name` is `None` for the system.
pub fn add(
    tx: &Transaction,
    booking_id: i64,
    date: DateTime<FixedOffset>,
    user_name: Option<String>,
    text: String,
) -> Result<(), StoreError> {
    let comment = BookingComment {
        booking_id,
        seq: tx.next_id(&booking_comments::sequence(booking_id))?,
        date,
        user_name,
        text,
    };
    tx.put(&comment, Expect::Absent)?;
    Ok(())
}
