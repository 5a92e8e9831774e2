//! Query parameters: one rule for every parameter of every endpoint, read by the host (for
//! `language`) and by the components alike.
//!
//! - Names are case-sensitive, as the interface spells them.
//! - When a name repeats, its last occurrence decides.
//! - A value that is empty or blank counts as absent (`?language=` is no language), so the
//!   last occurrence being empty makes the parameter absent.

use std::collections::BTreeMap;

use crate::error::ApiError;

/// A query string's decoded pairs, by name, under the rule above.
///
/// Ordered rather than hashed: a component's first `HashMap` asks the host for a random seed,
/// which makes the host build the guest a WASI context, a per cent of a small request
/// (docs/benchmarks.md, "A WASI context only when the guest asks"); a query has a handful of
/// names, and an ordered map has no hash for a client to flood.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryParams(BTreeMap<String, String>);

impl QueryParams {
    /// Collects decoded `(name, value)` pairs, in the order the query string gives them.
    pub fn collect<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut values = BTreeMap::new();
        for (name, value) in pairs {
            values.insert(name.as_ref().to_owned(), value.as_ref().to_owned());
        }
        Self(values)
    }

    /// The value of `name`, when the query gives it one.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str).and_then(given)
    }

    /// The value of `name` read by `parse` (which takes the name, for its error), when given.
    pub fn get<T>(
        &self,
        name: &str,
        parse: impl Fn(&str, &str) -> Result<T, ApiError>,
    ) -> Result<Option<T>, ApiError> {
        self.value(name).map(|value| parse(name, value)).transpose()
    }
}

/// The value of `name` among decoded pairs in query-string order, under the same rule as
/// [`QueryParams`], without collecting them.
pub fn value<K, V>(pairs: impl IntoIterator<Item = (K, V)>, name: &str) -> Option<V>
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    pairs
        .into_iter()
        .filter(|(key, _)| key.as_ref() == name)
        .last()
        .map(|(_, value)| value)
        .filter(|value| given(value.as_ref()).is_some())
}

/// A value that counts: not empty nor blank.
fn given(value: &str) -> Option<&str> {
    (!value.trim().is_empty()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAIRS: [(&str, &str); 6] = [
        ("limit", "5"),
        ("limit", "7"),
        ("offset", "3"),
        ("offset", ""),
        ("language", " "),
        ("status", "2"),
    ];

    #[test]
    fn the_last_occurrence_decides_and_empty_is_absent() {
        let params = QueryParams::collect(PAIRS);
        for (name, expected) in [
            ("limit", Some("7")),
            ("offset", None),
            ("language", None),
            ("status", Some("2")),
            ("Status", None),
            ("missing", None),
        ] {
            assert_eq!(params.value(name), expected, "{name}");
            assert_eq!(value(PAIRS, name), expected, "{name}");
        }
    }

    #[test]
    fn a_later_value_overrides_an_empty_one() {
        let pairs = [("language", ""), ("language", "es")];
        assert_eq!(QueryParams::collect(pairs).value("language"), Some("es"));
        assert_eq!(value(pairs, "language"), Some("es"));
    }
}
