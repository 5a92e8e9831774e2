//! The delivery and return places of a booking: which catalogue place each is, whether it can
//! serve, and whether the pair is allowed.

use super::request::{PlaceChoice, fields};
use super::settings::BookingSettings;
use crate::collections::BranchOfficeDoc;
use crate::error::{ApiError, ErrorCode};
use crate::models::{BranchOffice, Place};

/// Which end of the rental a place is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Where the car is delivered (picked up).
    Delivery,
    /// Where the car is returned (dropped off).
    Return,
}

/// A place of the catalogue as a booking holds it, with the branch office that owns it.
#[derive(Debug, Clone, PartialEq)]
pub struct BookedPlace<'a> {
    pub place: Place,
    pub office: &'a BranchOffice,
}

/// The place `choice` asks for as the `role` end of a booking, among the tenant's `offices`.
///
/// - no such place: [`ErrorCode::DeliveryPlaceNotFound`] or [`ErrorCode::ReturnPlaceNotFound`];
/// - a place of an office that is not active (a seasonal office, closed): it cannot serve,
///   [`ErrorCode::PlaceCantOperatesLikePickUp`] or [`ErrorCode::PlaceCantOperatesLikeDropOff`];
/// - a custom address at a place whose `CanAddCustomAddress` is false:
///   [`ErrorCode::PlaceDoesNotAcceptCustomAddresses`]; a custom address without `Address`:
///   [`ErrorCode::ModelNotValid`].
pub fn book_place<'a>(
    offices: &'a [BranchOfficeDoc],
    choice: &PlaceChoice,
    role: Role,
) -> Result<BookedPlace<'a>, ApiError> {
    let (id_field, not_found, cannot_serve, address_field) = match role {
        Role::Delivery => (
            fields::DELIVERY_PLACE_ID,
            ErrorCode::DeliveryPlaceNotFound,
            ErrorCode::PlaceCantOperatesLikePickUp,
            "DeliveryPlace.Address",
        ),
        Role::Return => (
            fields::RETURN_PLACE_ID,
            ErrorCode::ReturnPlaceNotFound,
            ErrorCode::PlaceCantOperatesLikeDropOff,
            "ReturnPlace.Address",
        ),
    };
    let (doc, place) = offices
        .iter()
        .find_map(|doc| {
            let place = doc
                .office
                .places
                .iter()
                .find(|place| place.id == choice.id)?;
            Some((doc, place))
        })
        .ok_or_else(|| ApiError::new(not_found).with_field(id_field))?;
    if !doc.active {
        return Err(ApiError::new(cannot_serve).with_field(id_field));
    }
    let mut place = place.clone();
    if let Some(custom) = &choice.custom_address {
        if !place.can_add_custom_address {
            return Err(
                ApiError::new(ErrorCode::PlaceDoesNotAcceptCustomAddresses).with_field(id_field)
            );
        }
        let address = custom
            .address
            .clone()
            .ok_or_else(|| ApiError::missing_field(address_field))?;
        place.is_custom_address = true;
        place.address = Some(address);
        place.city = custom.city.clone().or(place.city);
    }
    Ok(BookedPlace {
        place,
        office: &doc.office,
    })
}

/// Whether a car delivered at `delivery` may be returned at `returned`: at another branch
/// office only when the tenant allows one-way rentals (setting `one_way_allowed`), else
/// [`ErrorCode::ReturnPlaceNotAllowedForDeliveryPlace`].
pub fn check_pair(
    delivery: &BookedPlace<'_>,
    returned: &BookedPlace<'_>,
    settings: &BookingSettings,
) -> Result<(), ApiError> {
    if delivery.office.id != returned.office.id && !settings.one_way_allowed {
        return Err(
            ApiError::new(ErrorCode::ReturnPlaceNotAllowedForDeliveryPlace)
                .with_field(fields::RETURN_PLACE_ID),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::booking::request::CustomAddress;

    fn office(id: i64, active: bool, places: &[(i64, bool)]) -> BranchOfficeDoc {
        BranchOfficeDoc {
            office: BranchOffice {
                id,
                name: format!("Office {id}"),
                places: places
                    .iter()
                    .map(|&(id, custom)| Place {
                        id,
                        name: format!("Place {id}"),
                        city: Some("Town".to_owned()),
                        branch_office_id: 0,
                        can_add_custom_address: custom,
                        ..Place::default()
                    })
                    .collect(),
                ..BranchOffice::default()
            },
            active,
        }
    }

    fn offices() -> Vec<BranchOfficeDoc> {
        vec![
            office(1, true, &[(1, false), (3, true)]),
            office(2, true, &[(4, false)]),
            office(4, false, &[(9, false)]),
        ]
    }

    fn choice(id: i64) -> PlaceChoice {
        PlaceChoice {
            id,
            custom_address: None,
        }
    }

    fn code(result: Result<BookedPlace<'_>, ApiError>) -> i32 {
        result.unwrap_err().code.code()
    }

    #[test]
    fn places_are_found_in_active_offices() {
        let offices = offices();
        let booked = book_place(&offices, &choice(4), Role::Delivery).unwrap();
        assert_eq!(booked.place.id, 4);
        assert_eq!(booked.office.id, 2);
        assert_eq!(code(book_place(&offices, &choice(99), Role::Delivery)), 25);
        assert_eq!(code(book_place(&offices, &choice(99), Role::Return)), 23);
        assert_eq!(code(book_place(&offices, &choice(9), Role::Delivery)), 75);
        assert_eq!(code(book_place(&offices, &choice(9), Role::Return)), 76);
    }

    #[test]
    fn custom_addresses_only_where_accepted() {
        let offices = offices();
        let custom = |id, address: Option<&str>| PlaceChoice {
            id,
            custom_address: Some(CustomAddress {
                address: address.map(str::to_owned),
                city: None,
            }),
        };
        let booked = book_place(&offices, &custom(3, Some("Florida 100")), Role::Delivery).unwrap();
        assert!(booked.place.is_custom_address);
        assert_eq!(booked.place.address.as_deref(), Some("Florida 100"));
        assert_eq!(booked.place.city.as_deref(), Some("Town"));
        assert_eq!(
            code(book_place(&offices, &custom(1, Some("x")), Role::Delivery)),
            74
        );
        let error = book_place(&offices, &custom(3, None), Role::Return).unwrap_err();
        assert_eq!(error, ApiError::missing_field("ReturnPlace.Address"));
    }

    #[test]
    fn one_way_rentals_follow_the_setting() {
        let offices = offices();
        let first = book_place(&offices, &choice(1), Role::Delivery).unwrap();
        let same_office = book_place(&offices, &choice(3), Role::Return).unwrap();
        let other_office = book_place(&offices, &choice(4), Role::Return).unwrap();
        let mut settings = BookingSettings::from_lookup("demo", |_| None).unwrap();
        assert!(check_pair(&first, &other_office, &settings).is_ok());
        settings.one_way_allowed = false;
        assert!(check_pair(&first, &same_office, &settings).is_ok());
        assert_eq!(
            check_pair(&first, &other_office, &settings)
                .unwrap_err()
                .code
                .code(),
            46
        );
    }
}
