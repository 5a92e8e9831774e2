//! Response envelopes: pages of a list (interface.md 2.6) and the error body (2.7).

use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorCode};
use crate::i18n::Language;
use crate::status::BookingStatus;

/// A page of a list. Build one with [`PagedResult::by_cursor`] (booking list) or
/// [`PagedResult::by_skip`] (other lists), which apply the `NextOffset` rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PagedResult<T> {
    /// The offset applied to this page.
    pub offset: i64,
    /// The limit applied to this page.
    pub limit: i64,
    /// Items across all pages that match the filters.
    pub total: i64,
    /// The items of this page.
    #[serde(default)]
    pub results: Option<Vec<T>>,
    /// The offset for the next page.
    pub next_offset: i64,
}

/// A list item already in JSON, as a [`View`](crate::store::View) stores it, with the Id a
/// booking page's cursor moves by. The JSON is text (`J = String`) or whatever stands for
/// it where the page is written (a body the host keeps, in a component).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedItem<J = String> {
    pub id: i64,
    pub json: J,
}

/// A piece of a page of [`RenderedItem`]s as [`PagedResult::write_json`] writes it: the
/// envelope's text, or an item's JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a, J> {
    Text(&'a str),
    Item(&'a J),
}

impl RenderedItem {
    /// The `CurrentStatus` of a booking in list form, read without decoding the rest of it.
    pub fn booking_status(&self) -> Result<BookingStatus, serde_json::Error> {
        #[derive(Deserialize)]
        struct Status {
            #[serde(rename = "CurrentStatus")]
            current_status: BookingStatus,
        }
        serde_json::from_str::<Status>(&self.json).map(|status| status.current_status)
    }
}

impl<J> PagedResult<RenderedItem<J>> {
    /// Writes the page as JSON into `out`, piece by piece, each item's JSON as it is: the
    /// bytes `serde_json` writes for the page of the same items decoded, without decoding
    /// them.
    pub fn write_json(&self, mut out: impl FnMut(Piece<'_, J>)) {
        out(Piece::Text(&format!(
            r#"{{"Offset":{},"Limit":{},"Total":{},"Results":"#,
            self.offset, self.limit, self.total
        )));
        match &self.results {
            None => out(Piece::Text("null")),
            Some(items) => {
                out(Piece::Text("["));
                for (n, item) in items.iter().enumerate() {
                    if n > 0 {
                        out(Piece::Text(","));
                    }
                    out(Piece::Item(&item.json));
                }
                out(Piece::Text("]"));
            }
        }
        out(Piece::Text(&format!(
            r#","NextOffset":{}}}"#,
            self.next_offset
        )));
    }
}

impl PagedResult<RenderedItem> {
    /// The page as JSON text ([`Self::write_json`]).
    pub fn to_json(&self) -> String {
        let items = self.results.as_deref().unwrap_or_default();
        let mut json =
            String::with_capacity(items.iter().map(|item| item.json.len() + 1).sum::<usize>() + 96);
        self.write_json(|piece| match piece {
            Piece::Text(text) => json.push_str(text),
            Piece::Item(item) => json.push_str(item),
        });
        json
    }
}

/// The body of a 400 (and of the 500 and 503 the contract adds): `WebApiErrorResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ErrorResponse {
    /// Human-readable message, in the response language.
    #[serde(default)]
    pub error_message: Option<String>,
    /// The error code, always an integer.
    pub error_code: ErrorCode,
    /// Correlation identifier to give to support.
    #[serde(default)]
    pub id: Option<String>,
}

impl ErrorResponse {
    /// The body for `error`, with its message in `language` and the request's correlation id.
    pub fn new(error: &ApiError, language: Language, correlation_id: Option<String>) -> Self {
        Self {
            error_message: Some(error.message(language)),
            error_code: error.code,
            id: correlation_id,
        }
    }
}
