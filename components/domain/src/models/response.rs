//! Response envelopes: pages of a list (interface.md 2.6) and the error body (2.7).

use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorCode};
use crate::i18n::Language;

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
