//! Booking statuses: the values of `CurrentStatus` and of the booking list's `status` filter.
//!
//! The interface does not show them; contract.md, "Booking statuses", fixes the numbers.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The status of a booking, serialized as its integer value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i32)]
pub enum BookingStatus {
    /// Created with `IsQuotation` = true.
    Quoted = 1,
    /// Created otherwise.
    Reserved = 2,
    /// A reconciled payment left `Balance` <= 0.
    Confirmed = 3,
    /// The car was handed to the customer (delivery operation).
    Delivered = 4,
    /// The car was returned (return operation); `CurrentStatusDate` is the close date.
    Closed = 5,
    /// Canceled (cancel operation).
    Canceled = 6,
}

impl BookingStatus {
    /// Every status, in numeric order.
    pub const ALL: [BookingStatus; 6] = [
        BookingStatus::Quoted,
        BookingStatus::Reserved,
        BookingStatus::Confirmed,
        BookingStatus::Delivered,
        BookingStatus::Closed,
        BookingStatus::Canceled,
    ];

    /// The integer sent in `CurrentStatus`.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The status with this number, if any.
    pub const fn from_i32(value: i32) -> Option<Self> {
        match value {
            1 => Some(BookingStatus::Quoted),
            2 => Some(BookingStatus::Reserved),
            3 => Some(BookingStatus::Confirmed),
            4 => Some(BookingStatus::Delivered),
            5 => Some(BookingStatus::Closed),
            6 => Some(BookingStatus::Canceled),
            _ => None,
        }
    }

    /// The contract's name of the status, e.g. `"Canceled"`.
    pub const fn name(self) -> &'static str {
        match self {
            BookingStatus::Quoted => "Quoted",
            BookingStatus::Reserved => "Reserved",
            BookingStatus::Confirmed => "Confirmed",
            BookingStatus::Delivered => "Delivered",
            BookingStatus::Closed => "Closed",
            BookingStatus::Canceled => "Canceled",
        }
    }

    /// Whether a booking in this status holds its car (and a place in its category's quota)
    /// for its period: Quoted, Reserved, Confirmed and Delivered do; Closed (the car is back)
    /// and Canceled do not. A quotation holds capacity so that accepting it never finds its
    /// car taken, and so that no two bookings that show a car ever overlap (docs/booking.md).
    pub const fn holds_capacity(self) -> bool {
        matches!(
            self,
            BookingStatus::Quoted
                | BookingStatus::Reserved
                | BookingStatus::Confirmed
                | BookingStatus::Delivered
        )
    }

    /// Reads a status as a query value gives it: its number (`"5"`) or its name in any case
    /// (`"closed"`), as ASP.NET binds enums.
    pub fn parse(value: &str) -> Option<Self> {
        match value.parse::<i32>() {
            Ok(number) => Self::from_i32(number),
            Err(_) => Self::ALL
                .into_iter()
                .find(|status| status.name().eq_ignore_ascii_case(value)),
        }
    }
}

impl fmt::Display for BookingStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for BookingStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i32(self.code())
    }
}

impl<'de> Deserialize<'de> for BookingStatus {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = i32::deserialize(deserializer)?;
        BookingStatus::from_i32(value).ok_or_else(|| {
            serde::de::Error::invalid_value(
                serde::de::Unexpected::Signed(value.into()),
                &"a booking status from 1 to 6",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_the_contract() {
        let expected = [
            (1, "Quoted"),
            (2, "Reserved"),
            (3, "Confirmed"),
            (4, "Delivered"),
            (5, "Closed"),
            (6, "Canceled"),
        ];
        for (status, (code, name)) in BookingStatus::ALL.into_iter().zip(expected) {
            assert_eq!(status.code(), code);
            assert_eq!(status.name(), name);
            assert_eq!(BookingStatus::from_i32(code), Some(status));
        }
        assert_eq!(BookingStatus::from_i32(0), None);
        assert_eq!(BookingStatus::from_i32(7), None);
    }

    #[test]
    fn serialized_as_an_integer() {
        assert_eq!(serde_json::to_string(&BookingStatus::Closed).unwrap(), "5");
        let status: BookingStatus = serde_json::from_str("6").unwrap();
        assert_eq!(status, BookingStatus::Canceled);
        assert!(serde_json::from_str::<BookingStatus>("0").is_err());
        assert!(serde_json::from_str::<BookingStatus>("\"Closed\"").is_err());
    }

    #[test]
    fn active_bookings_hold_capacity() {
        let holding: Vec<_> = BookingStatus::ALL
            .into_iter()
            .filter(|status| status.holds_capacity())
            .collect();
        assert_eq!(
            holding,
            [
                BookingStatus::Quoted,
                BookingStatus::Reserved,
                BookingStatus::Confirmed,
                BookingStatus::Delivered
            ]
        );
    }

    #[test]
    fn parse_accepts_numbers_and_names() {
        assert_eq!(BookingStatus::parse("3"), Some(BookingStatus::Confirmed));
        assert_eq!(BookingStatus::parse("closed"), Some(BookingStatus::Closed));
        assert_eq!(
            BookingStatus::parse("CANCELED"),
            Some(BookingStatus::Canceled)
        );
        assert_eq!(BookingStatus::parse("9"), None);
        assert_eq!(BookingStatus::parse("open"), None);
        assert_eq!(BookingStatus::parse(""), None);
    }
}
