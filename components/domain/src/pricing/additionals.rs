//! The additionals a booking takes.

use std::collections::{BTreeMap, BTreeSet};

use super::ADDITIONALS;
use super::tariffs::out_of_range;
use crate::error::{ApiError, ErrorCode};
use crate::models::{Additional, BookingAdditional};

/// The additionals a booking takes, in catalogue order (`Order`, then `Id`), with their
/// quantities: those requested with a quantity above zero, and every required one (at least
/// once).
///
/// Errors: a negative quantity is [`ErrorCode::ModelNotValid`] (98); an id the catalogue does
/// not have is [`ErrorCode::AdditionalNotFound`] (31); a quantity above
/// `MaxQuantityPerBooking` or `Stock`, when that is above zero, is
/// [`ErrorCode::AdditionalMaxQuantityExceeded`] (32). All name `Additionals`.
pub(super) fn taken_additionals<'a>(
    requested: &[BookingAdditional],
    catalog: &'a [Additional],
) -> Result<Vec<(&'a Additional, i64)>, ApiError> {
    let mut quantities: BTreeMap<i64, i64> = BTreeMap::new();
    for taken in requested {
        let id = taken.additional.id;
        if taken.quantity < 0 {
            return Err(ApiError::invalid_field(
                ADDITIONALS,
                format!("the quantity of additional {id} must not be negative"),
            ));
        }
        if !catalog.iter().any(|additional| additional.id == id) {
            return Err(ApiError::new(ErrorCode::AdditionalNotFound)
                .with_field(ADDITIONALS)
                .with_detail(format!("no additional has Id {id}")));
        }
        let quantity = quantities.entry(id).or_default();
        *quantity = quantity
            .checked_add(taken.quantity)
            .ok_or_else(|| out_of_range(ADDITIONALS))?;
    }
    let mut seen = BTreeSet::new();
    let mut taken: Vec<(&Additional, i64)> = catalog
        .iter()
        .filter(|additional| seen.insert(additional.id))
        .filter_map(|additional| {
            let requested = quantities.get(&additional.id).copied().unwrap_or(0);
            let quantity = if additional.is_required {
                requested.max(1)
            } else {
                requested
            };
            (quantity > 0).then_some((additional, quantity))
        })
        .collect();
    taken.sort_by_key(|(additional, _)| (additional.order, additional.id));
    for &(additional, quantity) in &taken {
        let exceeded = |limit: &str| {
            ApiError::new(ErrorCode::AdditionalMaxQuantityExceeded)
                .with_field(ADDITIONALS)
                .with_detail(format!(
                    "additional {} ({}): {quantity} requested, {limit}",
                    additional.id, additional.name
                ))
        };
        let max = additional.max_quantity_per_booking;
        if max > 0 && quantity > max {
            return Err(exceeded(&format!("at most {max} per booking")));
        }
        let stock = additional.stock;
        if stock > 0 && quantity > stock {
            return Err(exceeded(&format!("{stock} in stock")));
        }
    }
    Ok(taken)
}

#[cfg(test)]
mod tests;
