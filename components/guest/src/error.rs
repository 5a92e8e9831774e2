//! The one error type of a handler and its answer: the error body of interface.md 2.7,
//! `{"ErrorMessage", "ErrorCode", "Id"}`, with the message in the response language and the
//! request's correlation id.
//!
//! The client gets the stable envelope; the cause of an internal error goes to the
//! component's standard error, which the host logs.

use std::fmt;
use std::io::Write as _;

use rental_domain::{ApiError, ErrorCode, ErrorResponse, Language};

use crate::context;
use crate::http::{Response, json};
use crate::store::{IsConflict, StoreError};

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A business or validation error: 400 with its code.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The store failed or refused: 500 with ErrorCode 99.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Something else the component cannot recover from: 500 with ErrorCode 99.
    #[error("{0}")]
    Internal(String),
}

impl Error {
    /// An internal error with a description of its cause (logged, never sent).
    pub fn internal(cause: impl Into<String>) -> Self {
        Error::Internal(cause.into())
    }

    /// The HTTP status of the answer: 400 for business errors, 500 otherwise.
    pub fn status(&self) -> u16 {
        match self {
            Error::Api(_) => 400,
            Error::Store(_) | Error::Internal(_) => 500,
        }
    }

    /// The error as the client sees it: a business error as it is, anything else
    /// [`ErrorCode::Unknown`] (99).
    pub fn api_error(&self) -> ApiError {
        match self {
            Error::Api(error) => error.clone(),
            Error::Store(_) | Error::Internal(_) => ApiError::new(ErrorCode::Unknown),
        }
    }

    /// The error response, in the request's language and with its correlation id (both read
    /// from [`context`]). An internal error's cause is logged first.
    pub fn into_response(self) -> Response {
        if !matches!(self, Error::Api(_)) {
            log(format_args!("internal error: {self}"));
        }
        self.response(context::language(), context::correlation_id())
    }

    /// The error response in `language`, carrying `correlation_id` as its `Id`.
    pub fn response(&self, language: Language, correlation_id: String) -> Response {
        let body = ErrorResponse::new(&self.api_error(), language, Some(correlation_id));
        json(self.status(), &body)
    }
}

/// Writes one line to the component's standard error, which the host logs. Never fails:
/// standard error may be closed, and a log line must not change the answer.
pub fn log(message: impl fmt::Display) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

impl From<Error> for Response {
    fn from(error: Error) -> Self {
        error.into_response()
    }
}

impl IsConflict for Error {
    fn is_conflict(&self) -> bool {
        matches!(self, Error::Store(error) if error.is_conflict())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::store::retry_on_conflict;

    fn body(response: &Response) -> Value {
        serde_json::from_slice(&response.body.to_bytes()).unwrap()
    }

    #[test]
    fn business_error_is_400_with_translated_message_and_id() {
        let error = Error::from(ApiError::invalid_field(
            "status",
            "must be a booking status",
        ));
        let response = error.response(Language::Es, "corr-1".to_owned());
        assert_eq!(response.status, 400);
        let body = body(&response);
        assert_eq!(body["ErrorCode"], json!(98));
        assert_eq!(body["Id"], json!("corr-1"));
        let message = body["ErrorMessage"].as_str().unwrap();
        assert!(message.contains("status"), "{message}");
        assert_eq!(
            message,
            ApiError::invalid_field("status", "must be a booking status").message(Language::Es)
        );
    }

    #[test]
    fn store_and_internal_errors_are_500_unknown_without_their_cause() {
        for error in [
            Error::from(StoreError::Unavailable(
                "database is down at 10.0.0.7".to_owned(),
            )),
            Error::internal("secret detail"),
        ] {
            let response = error.response(Language::En, "corr-2".to_owned());
            assert_eq!(response.status, 500);
            let body = body(&response);
            assert_eq!(body["ErrorCode"], json!(99));
            assert_eq!(body["Id"], json!("corr-2"));
            let message = body["ErrorMessage"].as_str().unwrap();
            assert!(!message.contains("10.0.0.7") && !message.contains("secret"));
        }
    }

    #[test]
    fn conflicts_are_retried_a_bounded_number_of_times() {
        let mut calls = 0;
        let outcome: Result<(), Error> = retry_on_conflict(|| {
            calls += 1;
            Err(StoreError::Conflict.into())
        });
        assert!(outcome.unwrap_err().is_conflict());
        assert_eq!(calls, crate::store::MAX_ATTEMPTS);

        let mut calls = 0;
        let outcome = retry_on_conflict(|| {
            calls += 1;
            if calls < 3 {
                Err(StoreError::Conflict)
            } else {
                Ok(calls)
            }
        });
        assert_eq!(outcome.unwrap(), 3);
    }

    #[test]
    fn other_errors_are_not_retried() {
        let mut calls = 0;
        let outcome: Result<(), Error> = retry_on_conflict(|| {
            calls += 1;
            Err(ApiError::new(ErrorCode::BookingVersionError).into())
        });
        assert!(matches!(outcome, Err(Error::Api(_))));
        assert_eq!(calls, 1);
    }
}
