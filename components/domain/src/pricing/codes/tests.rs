use super::*;

#[test]
fn line_types_payers_and_surcharge_kinds_have_fixed_codes() {
    assert_eq!(PriceItemType::Rental.code(), 1);
    assert_eq!(PriceItemType::Additional.code(), 2);
    assert_eq!(PriceItemType::Place.code(), 3);
    assert_eq!(PriceItemType::Surcharge.code(), 4);
    assert_eq!(PriceItemType::Adjustment.code(), 5);
    assert_eq!(Payer::Customer.code(), 1);
    assert_eq!(Payer::Agency.code(), 2);
    assert_eq!(SurchargeKind::OneWay.code(), 1);
    assert_eq!(SurchargeKind::OutOfHours.code(), 2);
    assert_eq!(SurchargeKind::YoungDriver.code(), 3);
}
