//! A long history for the demo tenant (`rentald tenant create <slug> --demo --bookings N`):
//! what a rental company with years of business has, so that the cost of the API can be
//! measured at 10^5 or 10^6 bookings.
//!
//! The past bookings are copies of the demo's closed and canceled ones, moved back in time
//! past the demo's own history and spread evenly over [`HISTORY_DAYS`], with ids after the
//! demo's. Being closed or canceled they hold no capacity, so they never change what is
//! available; those with a last change keep one, as far back as their dates, so an
//! `updatedSince` of the last weeks sees none of them. They are made lazily, one at a time: a
//! million of them are about 5 GB of JSON.

use chrono::TimeDelta;

use super::{DemoError, DemoTenant, booking_settings};
use crate::booking::settings::BookingSettings;
use crate::collections::bookings;
use crate::models::Booking;
use crate::status::BookingStatus;
use crate::store::{Record, Stored};

/// The past bookings end this many days before the demo's first ones begin.
const GAP_DAYS: i64 = 200;
/// They are spread over this many days (ten years) before that.
const HISTORY_DAYS: i64 = 3_650;

/// The iterator of [`DemoTenant::past_bookings`].
#[derive(Debug)]
pub struct PastBookings {
    templates: Vec<Booking>,
    settings: BookingSettings,
    first_id: i64,
    count: usize,
    next: usize,
}

impl DemoTenant {
    /// `count` bookings older than the demo's, with ids after its largest (see the module).
    ///
    /// Errors: when the demo's bookings cannot be read back, which its own data never causes.
    pub fn past_bookings(&self, count: usize) -> Result<PastBookings, DemoError> {
        let mut templates = Vec::new();
        let mut last_id = 0;
        for record in self
            .records
            .iter()
            .filter(|record| record.collection == bookings::COLLECTION)
        {
            let booking: Booking = serde_json::from_str(&record.body)?;
            last_id = last_id.max(booking.id);
            if matches!(
                booking.current_status,
                BookingStatus::Closed | BookingStatus::Canceled
            ) {
                templates.push(booking);
            }
        }
        Ok(PastBookings {
            templates,
            settings: booking_settings()?,
            first_id: last_id + 1,
            count: if last_id == 0 { 0 } else { count },
            next: 0,
        })
    }
}

impl Iterator for PastBookings {
    type Item = Result<Record, serde_json::Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.count || self.templates.is_empty() {
            return None;
        }
        let n = self.next;
        self.next += 1;
        let mut booking = self.templates[n % self.templates.len()].clone();
        // Evenly spread: the n-th of `count` lies `n / count` of the way back.
        let spread = i64::try_from(n as u128 * HISTORY_DAYS as u128 / self.count as u128)
            .unwrap_or(HISTORY_DAYS);
        let back = TimeDelta::days(GAP_DAYS + spread);
        booking.id = self.first_id + n as i64;
        booking.code = Some(self.settings.booking_code(booking.id));
        booking.from_date -= back;
        booking.to_date -= back;
        booking.creation_date -= back;
        booking.current_status_date -= back;
        booking.updated_on = booking.updated_on.map(|updated| updated - back);
        Some(booking.record())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.count.saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for PastBookings {}
