//! The additionals of a booking (interface.md 4.5 rule 7).
//!
//! Pricing ([`crate::pricing::quote`]) checks the additionals a booking asks for against the
//! catalogue (31 AdditionalNotFound, 32 AdditionalMaxQuantityExceeded) and adds every required
//! one; the charges the system adds by itself (out of office hours, one-way, young driver) are
//! its surcharge lines, computed again with every quote. What is left here: which additionals
//! an update asks for, and the tenant's insurance requirement.

use crate::error::{ApiError, ErrorCode};
use crate::models::BookingAdditional;

/// `Additional.Type` of an insurance (the interface does not show the values; the platform's
/// catalogues use 1 for insurances).
pub const INSURANCE_TYPE: i64 = 1;

/// The additionals an update asks for: its request's `Additionals` (`sent`) when it has them,
/// so that optional additionals left out are removed; otherwise the booking's `stored` optional
/// ones, unchanged. Required additionals need not be asked for: pricing adds them back.
pub fn requested_by_update(
    sent: Option<Vec<BookingAdditional>>,
    stored: &[BookingAdditional],
) -> Vec<BookingAdditional> {
    sent.unwrap_or_else(|| {
        stored
            .iter()
            .filter(|taken| !taken.additional.is_required)
            .cloned()
            .collect()
    })
}

/// When the tenant requires it (setting `require_insurance`), the additionals `taken` must
/// include an insurance ([`INSURANCE_TYPE`]), else [`ErrorCode::MustHaveAtLeastOneInsurance`].
pub fn check_insurance(taken: &[BookingAdditional], required: bool) -> Result<(), ApiError> {
    if required
        && !taken
            .iter()
            .any(|taken| taken.additional.kind == INSURANCE_TYPE)
    {
        return Err(ApiError::new(ErrorCode::MustHaveAtLeastOneInsurance));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::Additional;

    fn taken(id: i64, kind: i64, required: bool, quantity: i64) -> BookingAdditional {
        BookingAdditional {
            additional: Additional {
                id,
                kind,
                is_required: required,
                ..Additional::default()
            },
            quantity,
        }
    }

    fn ids(taken: &[BookingAdditional]) -> Vec<(i64, i64)> {
        taken
            .iter()
            .map(|taken| (taken.additional.id, taken.quantity))
            .collect()
    }

    #[test]
    fn an_update_without_additionals_keeps_the_optional_ones() {
        let stored = [
            taken(1, INSURANCE_TYPE, true, 1),
            taken(3, 2, false, 1),
            taken(4, 2, false, 2),
        ];
        assert_eq!(ids(&requested_by_update(None, &stored)), [(3, 1), (4, 2)]);
        let sent = vec![taken(4, 0, false, 1)];
        assert_eq!(
            ids(&requested_by_update(Some(sent), &stored)),
            [(4, 1)],
            "the GPS left out is removed"
        );
        assert!(requested_by_update(Some(Vec::new()), &stored).is_empty());
    }

    #[test]
    fn insurance_requirement() {
        let gps = [taken(3, 2, false, 1)];
        assert!(check_insurance(&gps, false).is_ok());
        assert_eq!(
            check_insurance(&gps, true).unwrap_err().code,
            ErrorCode::MustHaveAtLeastOneInsurance
        );
        assert!(check_insurance(&[taken(2, INSURANCE_TYPE, false, 1)], true).is_ok());
    }
}
