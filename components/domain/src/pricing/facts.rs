//! Facts from dates and time zones, for the surcharges: the local times of pick-up and return
//! and whether the driver is young.

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, NaiveTime};
use chrono_tz::Tz;

use crate::dates::parse_time_zone;
use crate::models::BranchOffice;

/// Age from which a driver is no longer charged the young-driver surcharge.
pub const YOUNG_DRIVER_AGE: i32 = 25;

/// The local times of pick-up and return, each on the clock of its branch office: what the
/// out-of-hours surcharge compares with [`OfficeHours`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalTimes {
    /// Time of `FromDate` at the delivery place's branch office.
    pub pickup: NaiveTime,
    /// Time of `ToDate` at the return place's branch office.
    pub dropoff: NaiveTime,
}

impl LocalTimes {
    /// The local times of `from` in `delivery_zone` and of `to` in `return_zone` (see
    /// [`office_zone`]).
    pub fn at_offices(
        from: DateTime<FixedOffset>,
        to: DateTime<FixedOffset>,
        delivery_zone: Tz,
        return_zone: Tz,
    ) -> Self {
        Self {
            pickup: from.with_timezone(&delivery_zone).time(),
            dropoff: to.with_timezone(&return_zone).time(),
        }
    }
}

/// The time zone of a branch office: its `TimeZone` when that names a known IANA zone, the
/// tenant's (`time_zone` setting) otherwise.
pub fn office_zone(office: &BranchOffice, tenant_zone: Tz) -> Tz {
    office
        .time_zone
        .as_deref()
        .and_then(|name| parse_time_zone(name).ok())
        .unwrap_or(tenant_zone)
}

/// Whether a driver born on `birth_date` is under [`YOUNG_DRIVER_AGE`] on the day of the
/// pick-up, that day being the date of `pickup` in `zone` (the delivery office's). The
/// surcharge's opposite is the booking's `IsCustomerOver25`: 25 years old counts as over 25.
pub fn is_young_driver(birth_date: NaiveDate, pickup: DateTime<FixedOffset>, zone: Tz) -> bool {
    let day = pickup.with_timezone(&zone).date_naive();
    let mut age = day.year() - birth_date.year();
    if (day.month(), day.day()) < (birth_date.month(), birth_date.day()) {
        age -= 1;
    }
    age < YOUNG_DRIVER_AGE
}

#[cfg(test)]
mod tests;
