//! The status and version rules of an update (interface.md section 3 and 4.5 rules 4 and 5,
//! contract.md "Update rules we make stricter").

use rust_decimal::Decimal;

use crate::error::{ApiError, ErrorCode};
use crate::models::Booking;
use crate::status::BookingStatus;

/// What the status of a booking allows an update to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateAllowed {
    /// Quoted, Reserved or Confirmed: the update applies.
    Yes,
    /// Canceled: the update applies and makes the booking active again, if it can hold what
    /// it needs (else [`ErrorCode::BookingStatusNotAllowUpdate`]).
    Reactivating,
    /// Delivered or Closed: refused with [`ErrorCode::BookingStatusNotAllowUpdate`]; the
    /// attempt is recorded as a warning comment, which is kept.
    Refused,
}

/// What an update may do to a booking in `status`.
pub fn update_allowed(status: BookingStatus) -> UpdateAllowed {
    match status {
        BookingStatus::Quoted | BookingStatus::Reserved | BookingStatus::Confirmed => {
            UpdateAllowed::Yes
        }
        BookingStatus::Canceled => UpdateAllowed::Reactivating,
        BookingStatus::Delivered | BookingStatus::Closed => UpdateAllowed::Refused,
    }
}

/// The error of a refused update: a Delivered or Closed booking, or a Canceled one that
/// cannot have its vehicle back.
pub fn not_allowed() -> ApiError {
    ApiError::new(ErrorCode::BookingStatusNotAllowUpdate)
}

/// The status of `stored` after an update that asks `is_quotation` (`IsQuotation`, when
/// sent): a reactivated booking becomes Quoted when it is (still) a quotation, else Reserved;
/// a quotation that the update turns into a booking (`IsQuotation` false) becomes Reserved;
/// any other status stays. A booking never turns back into a quotation.
pub fn status_after_update(stored: &Booking, is_quotation: Option<bool>) -> BookingStatus {
    let quotation = stored.is_quotation && is_quotation != Some(false);
    match stored.current_status {
        BookingStatus::Canceled | BookingStatus::Quoted if quotation => BookingStatus::Quoted,
        BookingStatus::Canceled | BookingStatus::Quoted => BookingStatus::Reserved,
        other => other,
    }
}

/// The version rule: when both the `stored` and the `incoming` Version are numbers
/// ([`numeric_version`]), compared as decimals, an incoming one that is not greater is
/// [`ErrorCode::BookingVersionError`] and a greater one becomes the stored Version, as sent
/// (trimmed); otherwise there is no check and the stored Version is kept. Returns the Version
/// to store.
pub fn next_version(
    stored: Option<&str>,
    incoming: Option<&str>,
) -> Result<Option<String>, ApiError> {
    match (
        stored.and_then(numeric_version),
        incoming.and_then(numeric_version),
    ) {
        (Some(stored), Some(incoming)) if incoming <= stored => {
            Err(ApiError::new(ErrorCode::BookingVersionError))
        }
        (Some(_), Some(_)) => Ok(incoming.map(|text| text.trim().to_owned())),
        _ => Ok(stored.map(str::to_owned)),
    }
}

/// The value of a Version that is a plain decimal number (`2`, `1.5`, `-3`, ` 10 `): an
/// optional sign, digits, and optionally a point followed by digits. Anything else (`v2`,
/// `1e3`, `1.`, a number beyond [`Decimal`]'s range) is not numeric.
pub fn numeric_version(version: &str) -> Option<Decimal> {
    let text = version.trim();
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, "0"));
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    if !(digits(whole) && digits(fraction)) {
        return None;
    }
    Decimal::from_str_exact(text.strip_prefix('+').unwrap_or(text)).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::fixtures;

    fn booking(status: BookingStatus, is_quotation: bool) -> Booking {
        fixtures::booking(status, json!({"IsQuotation": is_quotation}))
    }

    #[test]
    fn what_each_status_allows() {
        use BookingStatus as S;
        for (status, allowed) in [
            (S::Quoted, UpdateAllowed::Yes),
            (S::Reserved, UpdateAllowed::Yes),
            (S::Confirmed, UpdateAllowed::Yes),
            (S::Delivered, UpdateAllowed::Refused),
            (S::Closed, UpdateAllowed::Refused),
            (S::Canceled, UpdateAllowed::Reactivating),
        ] {
            assert_eq!(update_allowed(status), allowed, "{status}");
        }
        assert_eq!(not_allowed().code.code(), 26);
    }

    #[test]
    fn statuses_after_an_update() {
        use BookingStatus as S;
        let after =
            |status, quotation, sent| status_after_update(&booking(status, quotation), sent);
        assert_eq!(after(S::Canceled, false, None), S::Reserved);
        assert_eq!(after(S::Canceled, true, None), S::Quoted);
        assert_eq!(after(S::Canceled, true, Some(false)), S::Reserved);
        assert_eq!(after(S::Quoted, true, None), S::Quoted);
        assert_eq!(after(S::Quoted, true, Some(true)), S::Quoted);
        assert_eq!(after(S::Quoted, true, Some(false)), S::Reserved);
        assert_eq!(after(S::Reserved, false, Some(true)), S::Reserved);
        assert_eq!(after(S::Confirmed, false, None), S::Confirmed);
    }

    #[test]
    fn version_rule() {
        let version_error = Err(ApiError::new(ErrorCode::BookingVersionError));
        assert_eq!(next_version(Some("1"), Some("2")), Ok(Some("2".to_owned())));
        assert_eq!(
            next_version(Some("1"), Some(" 10 ")),
            Ok(Some("10".to_owned()))
        );
        assert_eq!(next_version(Some("2"), Some("2")), version_error);
        assert_eq!(next_version(Some("3"), Some("2")), version_error);
        assert_eq!(
            next_version(Some("9"), Some("10")),
            Ok(Some("10".to_owned())),
            "numbers, not text"
        );
        // Missing or non-numeric on either side: no check, the stored Version is kept.
        assert_eq!(next_version(Some("2"), None), Ok(Some("2".to_owned())));
        assert_eq!(
            next_version(Some("2"), Some("abc")),
            Ok(Some("2".to_owned()))
        );
        assert_eq!(
            next_version(Some("v2"), Some("1")),
            Ok(Some("v2".to_owned()))
        );
        assert_eq!(next_version(None, Some("5")), Ok(None));
    }

    #[test]
    fn versions_are_compared_as_decimal_numbers() {
        let version_error = Err(ApiError::new(ErrorCode::BookingVersionError));
        let applied = |text: &str| Ok(Some(text.to_owned()));
        assert_eq!(next_version(Some("1"), Some("1.5")), applied("1.5"));
        assert_eq!(next_version(Some("1.5"), Some("2")), applied("2"));
        assert_eq!(next_version(Some("1.5"), Some("1.25")), version_error);
        assert_eq!(next_version(Some("1.5"), Some("1.50")), version_error);
        assert_eq!(next_version(Some("1.10"), Some("1.9")), applied("1.9"));
        assert_eq!(next_version(Some("-1"), Some("0")), applied("0"));
        assert_eq!(next_version(Some("2"), Some("+3")), applied("+3"));
        // Not plain decimal numbers: no check, the stored Version is kept.
        for text in ["1e3", "1.", ".5", "1.2.3", "0x10", "", " ", "1 000", "NaN"] {
            assert_eq!(numeric_version(text), None, "{text:?}");
            assert_eq!(
                next_version(Some("2"), Some(text)),
                applied("2"),
                "{text:?}"
            );
        }
        assert_eq!(numeric_version("99999999999999999999999999999999"), None);
        assert_eq!(numeric_version(" 1.50 "), Some(Decimal::new(150, 2)));
    }
}
