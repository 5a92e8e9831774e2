//! The bookings' change feed, `GET /api/bookings/changes` (contract.md, "Change feed"): its
//! query and its page.
//!
//! Every write of a booking is a change, numbered by the store in the order the writes
//! committed. A client keeps the `Cursor` of the last change it processed and asks for the
//! changes after it: it gets each change once, in commit order, also those committed while it
//! was reading. The cursor is opaque to clients; it is the change's position in the feed,
//! written in decimal.

use chrono::{DateTime, SecondsFormat, Utc};

use crate::error::ApiError;
use crate::paging::{LIMIT, effective_limit, parse_int};
use crate::query::QueryParams;

/// Query parameter: the cursor of the last change the client has; none for the first.
pub const CURSOR: &str = "cursor";

/// A request for a page of the feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangesQuery {
    /// The position after which the page begins: 0 for the feed's first change.
    pub after: u64,
    /// Changes per page: 30 by default, cut to 100 ([`effective_limit`]).
    pub limit: i64,
}

impl ChangesQuery {
    /// Reads the query from a query string's decoded pairs, under the one rule for query
    /// parameters ([`QueryParams`]).
    ///
    /// Errors: a `cursor` that is not one this feed hands out, or a `limit` that is not an
    /// integer: [`ErrorCode::ModelNotValid`](crate::ErrorCode::ModelNotValid) naming it.
    pub fn parse<K, V>(params: impl IntoIterator<Item = (K, V)>) -> Result<Self, ApiError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let params = QueryParams::collect(params);
        Ok(Self {
            after: params.get(CURSOR, parse_cursor)?.unwrap_or(0),
            limit: effective_limit(params.get(LIMIT, parse_int)?),
        })
    }

    /// The page of `changes` read after the cursor (at most [`Self::limit`] of them), with
    /// whether more followed them when they were read.
    pub fn page(&self, changes: Vec<FeedChange>, has_more: bool) -> ChangePage {
        ChangePage {
            cursor: changes.last().map_or(self.after, |change| change.position),
            has_more,
            changes,
        }
    }
}

/// A cursor as this feed writes them: a position in plain decimal digits.
fn parse_cursor(name: &str, value: &str) -> Result<u64, ApiError> {
    let value = value.trim();
    let plain = value.bytes().all(|b| b.is_ascii_digit());
    value
        .parse::<u64>()
        .ok()
        .filter(|_| plain)
        .ok_or_else(|| ApiError::invalid_field(name, "must be a Cursor this feed returned"))
}

/// One change of a booking, with the booking as the change left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedChange {
    /// The change's position in the feed: its `Cursor`.
    pub position: u64,
    /// The booking's Id.
    pub id: i64,
    /// The booking's revision after the change: 1 when it was created, one more with every
    /// write.
    pub revision: u64,
    pub changed_on: DateTime<Utc>,
    /// The booking in list form ([`BookingDescription`](crate::BookingDescription)), as JSON;
    /// `None` when the change deleted it.
    pub booking: Option<String>,
}

/// A page of the feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangePage {
    /// The cursor to ask from next: the last change's, or the one asked with when the page is
    /// empty.
    pub cursor: u64,
    /// Whether more changes follow this page already: ask again at once.
    pub has_more: bool,
    pub changes: Vec<FeedChange>,
}

impl ChangePage {
    /// The page as JSON, each booking written in as the store rendered it.
    pub fn to_json(&self) -> String {
        let bodies: usize = self
            .changes
            .iter()
            .map(|change| change.booking.as_ref().map_or(4, String::len) + 128)
            .sum();
        let mut json = String::with_capacity(bodies + 64);
        json.push_str(&format!(
            r#"{{"Cursor":"{}","HasMore":{},"Changes":["#,
            self.cursor, self.has_more
        ));
        for (n, change) in self.changes.iter().enumerate() {
            if n > 0 {
                json.push(',');
            }
            json.push_str(&format!(
                r#"{{"Cursor":"{}","Id":{},"Revision":{},"ChangedOn":"{}","Deleted":{},"Booking":{}}}"#,
                change.position,
                change.id,
                change.revision,
                change
                    .changed_on
                    .to_rfc3339_opts(SecondsFormat::Micros, true),
                change.booking.is_none(),
                change.booking.as_deref().unwrap_or("null"),
            ));
        }
        json.push_str("]}");
        json
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn query(pairs: &[(&str, &str)]) -> Result<ChangesQuery, ApiError> {
        ChangesQuery::parse(pairs.iter().copied())
    }

    #[test]
    fn no_cursor_is_the_first_change_and_the_limit_is_the_lists() {
        assert_eq!(
            query(&[]),
            Ok(ChangesQuery {
                after: 0,
                limit: 30
            })
        );
        assert_eq!(
            query(&[("cursor", "17"), ("limit", "500")]),
            Ok(ChangesQuery {
                after: 17,
                limit: 100
            })
        );
        assert_eq!(query(&[("cursor", " ")]).map(|q| q.after), Ok(0));
    }

    #[test]
    fn a_cursor_is_plain_digits() {
        for bad in ["-1", "+3", "1.5", "abc", "18446744073709551616", "0x10"] {
            let error = query(&[("cursor", bad)]).expect_err(bad);
            assert_eq!(error.code, crate::ErrorCode::ModelNotValid, "{bad}");
            assert_eq!(error.field.as_deref(), Some("cursor"), "{bad}");
        }
    }

    #[test]
    fn a_page_carries_the_last_cursor_and_the_bookings_as_stored() {
        let at = DateTime::from_timestamp_micros(1_790_000_000_123_456).expect("an instant");
        let change = |position, booking: Option<&str>| FeedChange {
            position,
            id: 7,
            revision: position,
            changed_on: at,
            booking: booking.map(str::to_owned),
        };
        let q = ChangesQuery {
            after: 4,
            limit: 30,
        };
        let page = q.page(
            vec![
                change(5, Some(r#"{"Id":7,"CurrentStatus":1}"#)),
                change(6, None),
            ],
            true,
        );
        let read: Value = serde_json::from_str(&page.to_json()).expect("JSON");
        assert_eq!(
            read,
            json!({
                "Cursor": "6",
                "HasMore": true,
                "Changes": [
                    {"Cursor": "5", "Id": 7, "Revision": 5,
                     "ChangedOn": "2026-09-21T14:13:20.123456Z", "Deleted": false,
                     "Booking": {"Id": 7, "CurrentStatus": 1}},
                    {"Cursor": "6", "Id": 7, "Revision": 6,
                     "ChangedOn": "2026-09-21T14:13:20.123456Z", "Deleted": true,
                     "Booking": null},
                ]
            })
        );
        let empty = q.page(Vec::new(), false);
        assert_eq!(
            empty.to_json(),
            r#"{"Cursor":"4","HasMore":false,"Changes":[]}"#
        );
    }
}
