//! Serde helpers for the JSON forms of the models.
//!
//! Dates are written as RFC 3339 with their offset. They are read leniently (see
//! [`crate::dates::parse_date_time`]): clients of the reference service often send a date-time
//! without an offset, or a plain date for a birth date, and both are taken as UTC. Use these
//! modules with `#[serde(with = "rental_domain::json::date_time")]` in request models too.

use chrono::{DateTime, FixedOffset};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::dates::parse_date_time;

/// Reads one date-time string leniently.
fn read<'de, D: Deserializer<'de>>(deserializer: D) -> Result<DateTime<FixedOffset>, D::Error> {
    let text = String::deserialize(deserializer)?;
    parse_date_time(&text).ok_or_else(|| {
        serde::de::Error::invalid_value(
            serde::de::Unexpected::Str(&text),
            &"an ISO 8601 date-time or date",
        )
    })
}

/// A required `DateTime<FixedOffset>`: written as RFC 3339, read leniently.
pub mod date_time {
    use super::*;

    /// Writes the date-time as RFC 3339 with its offset (`Z` for UTC).
    pub fn serialize<S: Serializer>(
        value: &DateTime<FixedOffset>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value.serialize(serializer)
    }

    /// Reads RFC 3339, a date-time without offset (UTC) or a plain date (midnight UTC).
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<DateTime<FixedOffset>, D::Error> {
        read(deserializer)
    }
}

/// A nullable `DateTime<FixedOffset>`: `null` when absent, otherwise as [`date_time`]. Pair it
/// with `#[serde(default)]` so that a missing field reads as `None`.
pub mod option_date_time {
    use super::*;

    /// Writes `null` or the date-time as RFC 3339.
    pub fn serialize<S: Serializer>(
        value: &Option<DateTime<FixedOffset>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value.serialize(serializer)
    }

    /// Reads `null` or a date-time as [`date_time::deserialize`] does.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<DateTime<FixedOffset>>, D::Error> {
        /// Lets `Option` drive the `null` check and delegates the value to [`read`].
        struct Lenient(DateTime<FixedOffset>);

        impl<'de> Deserialize<'de> for Lenient {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                read(deserializer).map(Lenient)
            }
        }

        Ok(Option::<Lenient>::deserialize(deserializer)?.map(|Lenient(value)| value))
    }
}

/// Always writes `null`: for values that are accepted on input but never returned nor stored,
/// such as a card's security code.
pub(crate) fn always_null<T, S: Serializer>(_: &T, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_none()
}

/// Writes a card number masked with [`mask_card_number`].
pub(crate) fn masked_card_number<S: Serializer>(
    value: &Option<String>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(number) => serializer.serialize_some(&mask_card_number(number)),
        None => serializer.serialize_none(),
    }
}

/// The masked form of a card number: every character but the last four becomes `*`, and
/// separators (spaces and dashes) are dropped. Masking a masked number changes nothing.
pub fn mask_card_number(number: &str) -> String {
    let kept: Vec<char> = number
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .collect();
    let hidden = kept.len().saturating_sub(4);
    kept.iter()
        .enumerate()
        .map(|(position, &c)| if position < hidden { '*' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_numbers_keep_only_the_last_four_digits() {
        assert_eq!(mask_card_number("4111 1111 1111 1234"), "************1234");
        assert_eq!(mask_card_number("4111-1111-1111-1234"), "************1234");
        assert_eq!(mask_card_number("************1234"), "************1234");
        assert_eq!(mask_card_number("123"), "123");
        assert_eq!(mask_card_number(""), "");
    }
}
