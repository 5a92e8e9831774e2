//! Comments on bookings: the audit trail every component that changes a booking writes to
//! (the booking's own changes, payments credited by reconciliation, ...).
//!
//! A booking's comments are numbered 1, 2, ... in the order they are written. The next number
//! is one past the booking's last comment, read from the comments' index: no counter is
//! written besides the comment itself. Two transactions that read the same last comment both
//! write the next number expecting it absent, so one of them conflicts and is run again
//! ([`crate::retry_on_conflict`]), then numbers after the other's comment.

use chrono::{DateTime, FixedOffset};
use rental_domain::collections::booking_comments;
use rental_domain::{BookingComment, KeyPart};

use crate::store::{Expect, Range, StoreError, Transaction};

/// Adds a comment to booking `booking_id`, numbered after its last one. `user_name` is `None`
/// for the system.
pub fn add(
    tx: &Transaction,
    booking_id: i64,
    date: DateTime<FixedOffset>,
    user_name: Option<String>,
    text: String,
) -> Result<(), StoreError> {
    Numbering::after_last(tx, booking_id)?.add(tx, date, user_name, text)
}

/// The numbers a booking's next comments take, for a transaction that writes several, or
/// that reads where they start before its first write (SQLite's writer turn is taken there,
/// and the fewer statements run while it is held, the sooner other writers go on).
#[derive(Debug)]
pub struct Numbering {
    booking_id: i64,
    next: i64,
}

impl Numbering {
    /// For the comments of booking `booking_id` created in this transaction: from 1, with
    /// nothing to read. Booking ids come from the bookings' sequence, so no comment of a
    /// booking about to be created can exist.
    pub fn new_booking(booking_id: i64) -> Self {
        Self {
            booking_id,
            next: 1,
        }
    }

    /// After the last comment of booking `booking_id`: one index entry read.
    pub fn after_last(tx: &Transaction, booking_id: i64) -> Result<Self, StoreError> {
        let last = tx.keys(
            &Range::<BookingComment>::prefix(
                booking_comments::BY_BOOKING,
                vec![KeyPart::Int(booking_id)],
            )
            .scan()
            .descending(true)
            .limit(1),
        )?;
        let last_seq = match last.first().map(|entry| entry.key.as_slice()) {
            None => 0,
            Some([_, KeyPart::Int(seq)]) => *seq,
            Some(key) => {
                return Err(StoreError::Invalid(format!(
                    "booking {booking_id} has a comment under the malformed key {key:?}"
                )));
            }
        };
        Ok(Self {
            booking_id,
            next: last_seq + 1,
        })
    }

    /// Writes the comment `text` under the next number.
    pub fn add(
        &mut self,
        tx: &Transaction,
        date: DateTime<FixedOffset>,
        user_name: Option<String>,
        text: String,
    ) -> Result<(), StoreError> {
        let comment = BookingComment {
            booking_id: self.booking_id,
            seq: self.next,
            date,
            user_name,
            text,
        };
        tx.put(&comment, Expect::Absent)?;
        self.next += 1;
        Ok(())
    }
}
