//! Serde helpers for the JSON forms of the models.
//!
//! Dates are written as RFC 3339 with their offset. They are read leniently (see
//! [`crate::dates::parse_date_time`]): clients of the reference service often send a date-time
//! without an offset, or a plain date for a birth date, and both are taken as UTC. Use these
//! modules with `#[serde(with = "rental_domain::json::date_time")]` in request models too.

use chrono::{DateTime, FixedOffset};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::dates::parse_date_time;
use crate::error::ApiError;

/// The field named by a [`parse_body`] error that is about the body as a whole (not JSON, not
/// an object, trailing characters).
pub const BODY: &str = "body";

/// Reads a JSON request body as `T`.
///
/// Errors are [`crate::ErrorCode::ModelNotValid`] (98) naming the field at fault as a path
/// from the body's root (`FromDate`, `Customer.BirthDate`, `Additionals[1].Quantity`), or
/// [`BODY`] when the body is not JSON or not of the expected shape, with serde's description
/// as the detail. Request models make every field optional and check what is required
/// themselves, so that a missing field is named too ([`ApiError::missing_field`]).
pub fn parse_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        // A syntax error inside an object ends the path with the unknown key `?`.
        let path = error_path(error.path());
        let field = path.trim_end_matches('?').trim_end_matches('.');
        let field = if field.is_empty() { BODY } else { field };
        ApiError::invalid_field(field, error.into_inner().to_string())
    })?;
    deserializer
        .end()
        .map_err(|error| ApiError::invalid_field(BODY, error.to_string()))?;
    Ok(value)
}

/// The path of the value a serde error is about (`Customer.BirthDate`,
/// `Additionals[1].Quantity`), empty for the document's root. A number is read through a map
/// with one private key (serde_json's `arbitrary_precision`), which the path would otherwise
/// show as one more field.
pub fn error_path(path: &serde_path_to_error::Path) -> String {
    const NUMBER: &str = ".$serde_json::private::Number";
    let text = path.to_string();
    let text = text.strip_suffix(NUMBER).unwrap_or(&text);
    if text == "." {
        String::new()
    } else {
        text.to_owned()
    }
}

/// A nullable field of an update, which tells a missing field (`None`: keep what is stored)
/// from an explicit `null` (`Some(None)`: clear it). Use with `#[serde(default,
/// deserialize_with = "rental_domain::json::nullable")]` on an `Option<Option<T>>`.
pub fn nullable<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// A field that is not optional in the model but, like every field of the interface, may be
/// sent as `null` (interface.md 2: "Unless said otherwise, a field can be null"): `null` reads
/// as the field's default, exactly as if the field were left out. Use with
/// `#[serde(deserialize_with = "rental_domain::json::null_as_default")]` on a field of a
/// `#[serde(default)]` struct (lists, flags, ids, nested objects).
pub fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}

/// A text that clients may send as a JSON string or a JSON number (a booking's `Version`),
/// a number kept as written (`1.50` stays `1.50`); `null` when absent. Use with
/// `#[serde(default, deserialize_with = ...)]`.
pub fn text_or_number<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    // An untagged enum cannot read numbers under serde_json's `arbitrary_precision` (see
    // `crate::models`), so go through a `Value`, which keeps a number's text.
    let value = Option::<serde_json::Value>::deserialize(deserializer)?;
    match value {
        None => Ok(None),
        Some(serde_json::Value::String(text)) => Ok(Some(text)),
        Some(serde_json::Value::Number(number)) => Ok(Some(number.to_string())),
        Some(_) => Err(serde::de::Error::custom("expected a string or a number")),
    }
}

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
    fn a_number_out_of_range_is_named_by_its_field() {
        let error = parse_body::<crate::booking::request::BookingRequest>(
            br#"{"Customer": {"Id": 1}, "Price": 1e300}"#,
        )
        .unwrap_err();
        assert_eq!(error.field.as_deref(), Some("Price"), "{error:?}");
        let error = parse_body::<crate::booking::request::BookingRequest>(
            br#"{"Additionals": [{"Quantity": 1e300}]}"#,
        )
        .unwrap_err();
        assert_eq!(
            error.field.as_deref(),
            Some("Additionals[0].Quantity"),
            "{error:?}"
        );
    }

    #[test]
    fn card_numbers_keep_only_the_last_four_digits() {
        assert_eq!(mask_card_number("4111 1111 1111 1234"), "************1234");
        assert_eq!(mask_card_number("4111-1111-1111-1234"), "************1234");
        assert_eq!(mask_card_number("************1234"), "************1234");
        assert_eq!(mask_card_number("123"), "123");
        assert_eq!(mask_card_number(""), "");
    }
}
