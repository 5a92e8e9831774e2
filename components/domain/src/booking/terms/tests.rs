use std::str::FromStr;

use chrono_tz::Tz;
use serde_json::json;

use super::*;
use crate::fixtures;
use crate::json::parse_body;
use crate::models::BranchOffice;

fn at(value: &str) -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339(value).unwrap()
}

const NOW: &str = "2030-01-01T09:00:00-03:00";

fn offices() -> Vec<BranchOfficeDoc> {
    let place = |id, office, price: &str, custom| Place {
        id,
        name: format!("Place {id}"),
        branch_office_id: office,
        price: Decimal::from_str(price).unwrap(),
        can_add_custom_address: custom,
        ..Place::default()
    };
    vec![
        BranchOfficeDoc {
            office: BranchOffice {
                id: 1,
                name: "Buenos Aires".to_owned(),
                time_zone: Some("America/Argentina/Buenos_Aires".to_owned()),
                places: vec![place(1, 1, "15.00", false), place(3, 1, "0", true)],
                ..BranchOffice::default()
            },
            active: true,
        },
        BranchOfficeDoc {
            office: BranchOffice {
                id: 2,
                name: "Córdoba".to_owned(),
                places: vec![place(4, 2, "12.00", false)],
                ..BranchOffice::default()
            },
            active: true,
        },
    ]
}

fn customer() -> Customer {
    Customer {
        id: 3,
        name: Some("Valentina Fernández".to_owned()),
        birth_date: Some(at("1996-05-10T00:00:00Z")),
        ..Customer::default()
    }
}

fn agency(agreements: &[&str]) -> CustomerDoc {
    CustomerDoc {
        customer: Customer {
            id: 24,
            name: Some("Viajes del Sur S.A.".to_owned()),
            is_agency: true,
            commercial_agreements: agreements.iter().map(|a| (*a).to_owned()).collect(),
            ..Customer::default()
        },
        created_by_user_id: None,
    }
}

fn request(value: serde_json::Value) -> BookingRequest {
    let mut body = json!({
        "Customer": {"Id": 3},
        "Category": {"Id": 1},
        "FromDate": "2030-01-10T10:00:00-03:00",
        "ToDate": "2030-01-13T10:00:00-03:00",
        "DeliveryPlace": {"Id": 1},
        "ReturnPlace": {"Id": 1}
    });
    for (key, field) in value.as_object().unwrap() {
        body[key] = field.clone();
    }
    parse_body(body.to_string().as_bytes()).unwrap()
}

struct Tenant {
    settings: BookingSettings,
    pricing: PricingSettings,
}

impl Tenant {
    fn new(pairs: &[(&str, &str)]) -> Self {
        let lookup = |key: &str| {
            pairs
                .iter()
                .find(|(name, _)| *name == key)
                .map(|(_, value)| (*value).to_owned())
        };
        Self {
            settings: BookingSettings::from_lookup("demo", lookup).unwrap(),
            pricing: PricingSettings::from_lookup(lookup).unwrap(),
        }
    }

    fn rules(&self) -> Rules<'_> {
        Rules {
            settings: &self.settings,
            pricing: &self.pricing,
            zone: Tz::UTC,
            now: at(NOW),
        }
    }
}

/// [`check`] of a new booking sent by [`customer`], with no agency.
fn check_new<'a>(
    sent: &BookingRequest,
    offices: &'a [BranchOfficeDoc],
    tenant: &Tenant,
) -> Result<Terms<'a>, ApiError> {
    check(sent, None, &customer(), None, offices, &tenant.rules())
}

fn code(result: Result<Terms<'_>, ApiError>) -> i32 {
    result.unwrap_err().code.code()
}

#[test]
fn a_plain_request_passes_with_the_tenant_defaults() {
    let tenant = Tenant::new(&[]);
    let offices = offices();
    let terms = check_new(&request(json!({})), &offices, &tenant).unwrap();
    assert_eq!(terms.days, 3);
    assert_eq!(terms.delivery.place.id, 1);
    assert_eq!(terms.returned.office.id, 1);
    assert!(!terms.young_driver);
    assert_eq!(
        terms.distance,
        Distance {
            unlimited: false,
            max_by_day: 250,
            max: 750,
            unit: "km".to_owned()
        }
    );
    assert_eq!(terms.agency, None);
    assert_eq!(terms.commercial_agreement_code, None);
}

#[test]
fn each_setting_refuses_with_its_code() {
    let offices = offices();
    let plain = request(json!({}));
    for (setting, value, expected) in [
        ("min_booking_days", "4", 29),
        ("max_booking_days", "2", 30),
        ("min_driver_age", "40", 34),
        ("max_driver_age", "30", 34),
        ("blocked_customers", "3", 49),
        ("limited_km_enabled", "false", 27),
    ] {
        let tenant = if expected == 27 {
            Tenant::new(&[(setting, value), ("unlimited_km_enabled", "false")])
        } else {
            Tenant::new(&[(setting, value)])
        };
        let result = check_new(&plain, &offices, &tenant);
        assert_eq!(code(result), expected, "{setting} = {value}");
    }
    let tenant = Tenant::new(&[("limited_km_enabled", "false")]);
    let limited = request(json!({"IlimitedKm": false}));
    assert_eq!(code(check_new(&limited, &offices, &tenant)), 28);
    let tenant = Tenant::new(&[("one_way_allowed", "false")]);
    let one_way = request(json!({"ReturnPlace": {"Id": 4}}));
    assert_eq!(code(check_new(&one_way, &offices, &tenant)), 46);
    let tenant = Tenant::new(&[("out_of_hours_allowed", "false")]);
    let late = request(json!({"ToDate": "2030-01-13T21:00:00-03:00"}));
    assert_eq!(code(check_new(&late, &offices, &tenant)), 47);
    let early = request(json!({"FromDate": "2030-01-10T07:00:00-03:00"}));
    assert_eq!(code(check_new(&early, &offices, &tenant)), 47);
}

#[test]
fn dates_and_promotions() {
    let tenant = Tenant::new(&[]);
    let offices = offices();
    let check = |value| check_new(&request(value), &offices, &tenant).map(|_| ());
    let code = |value| check(value).unwrap_err().code.code();
    assert_eq!(code(json!({"ToDate": "2030-01-10T10:00:00-03:00"})), 13);
    assert_eq!(
        code(json!({"FromDate": "2030-01-01T07:59:00-03:00"})),
        13,
        "over an hour ago"
    );
    assert!(check(json!({"FromDate": "2030-01-01T08:00:00-03:00"})).is_ok());
    assert_eq!(code(json!({"PromotionCode": "SUMMER"})), 24);
}

#[test]
fn an_update_keeps_what_it_does_not_send() {
    let tenant = Tenant::new(&[]);
    let offices = offices();
    let first = check(
        &request(json!({"IlimitedKm": true, "Agency": {"Id": 24}, "CommercialAgreementCode": "AGENCIAS-10"})),
        None,
        &customer(),
        Some(&agency(&["AGENCIAS-10"])),
        &offices,
        &tenant.rules(),
    )
    .unwrap();
    let mut stored = new_booking(
        9,
        "DEMO-000009".to_owned(),
        &request(json!({})),
        Decision {
            quote: priced(&first, None, &tenant).unwrap(),
            terms: first,
            vehicle: vehicle(),
            customer: customer(),
        },
        at(NOW),
        "api",
    );
    stored.from_date = at("2029-12-31T10:00:00-03:00");
    // Only ToDate is sent: the start (now in the past) is not re-checked, the kilometres
    // and the agency stay; the agency is read again because the booking names it.
    let update =
        parse_body::<BookingRequest>(br#"{"Id": 9, "ToDate": "2030-01-14T10:00:00-03:00"}"#)
            .unwrap();
    assert_eq!(
        agency_to_read(&update, Some(&stored), &tenant.settings),
        Some(24)
    );
    let terms = check(
        &update,
        Some(&stored),
        &customer(),
        Some(&agency(&["AGENCIAS-10"])),
        &offices,
        &tenant.rules(),
    )
    .unwrap();
    assert_eq!(terms.period.from, stored.from_date);
    assert!(terms.distance.unlimited);
    assert_eq!(
        terms.commercial_agreement_code.as_deref(),
        Some("AGENCIAS-10")
    );
    // The agency's agreements changed since: the kept agreement is refused.
    assert_eq!(
        code(check(
            &update,
            Some(&stored),
            &customer(),
            Some(&agency(&["OTHER"])),
            &offices,
            &tenant.rules(),
        )),
        51
    );
}

#[test]
fn agencies_and_agreements() {
    let offices = offices();
    let tenant = Tenant::new(&[]);
    let check_with = |value, agency: Option<&CustomerDoc>, tenant: &Tenant| {
        check(
            &request(value),
            None,
            &customer(),
            agency,
            &offices,
            &tenant.rules(),
        )
        .map(|terms| terms.agency)
    };
    let agreement = json!({"CommercialAgreementCode": "AGENCIAS-10"});
    assert_eq!(
        agency_to_read(&request(agreement.clone()), None, &tenant.settings),
        None
    );
    assert_eq!(
        check_with(agreement.clone(), None, &tenant)
            .unwrap_err()
            .code
            .code(),
        110
    );
    let configured = Tenant::new(&[("agency_customer_id", "24")]);
    assert_eq!(
        agency_to_read(&request(agreement.clone()), None, &configured.settings),
        Some(24)
    );
    let agency_doc = agency(&["agencias-10"]);
    assert_eq!(
        check_with(agreement, Some(&agency_doc), &configured).unwrap(),
        Some(json!({"Id": 24, "Name": "Viajes del Sur S.A."}))
    );
    let not_an_agency = CustomerDoc {
        customer: customer(),
        created_by_user_id: None,
    };
    assert_eq!(
        check_with(json!({"Agency": {"Id": 3}}), Some(&not_an_agency), &tenant)
            .unwrap_err()
            .code
            .code(),
        110
    );
    let sent = json!({"Agency": {"Id": 24}, "CommercialAgreementCode": "CORP"});
    assert_eq!(
        check_with(sent, Some(&agency_doc), &tenant)
            .unwrap_err()
            .code
            .code(),
        51
    );
}

fn tariff() -> Tariff {
    fixtures::tariff(1, "Economy", 1, &[(1, 30, "40")])
}

/// [`price`] of [`vehicle`] at [`tariff`], with no additional, and the price `sent`.
fn priced(terms: &Terms<'_>, sent: Option<Decimal>, tenant: &Tenant) -> Result<Quote, ApiError> {
    price(
        terms,
        &vehicle(),
        &[],
        PriceLists {
            additionals: &[],
            tariffs: &[tariff()],
        },
        sent,
        &tenant.rules(),
        |_| Vec::new(),
    )
}

fn vehicle() -> Vehicle {
    Vehicle {
        car: Some(Car {
            id: "AA100AA".to_owned(),
            ..Car::default()
        }),
        model: Some(Model {
            id: 2,
            franchise: Some(Decimal::from(800)),
            ..Model::default()
        }),
        category: Category {
            id: 1,
            name: "Económico".to_owned(),
            franchise: Some(Decimal::from(900)),
            models: vec![Model::default()],
            ..Category::default()
        },
    }
}

#[test]
fn priced_and_written_into_a_new_booking() {
    let tenant = Tenant::new(&[]);
    let offices = offices();
    let body = request(json!({
        "IsQuotation": true,
        "DeliveryTransportationId": "AR1234",
        "Attributes": {"Canal": "API"}
    }));
    let terms = check_new(&body, &offices, &tenant).unwrap();
    let quote = priced(&terms, None, &tenant).unwrap();
    // 3 days at 40.00, delivery and return at 15.00 each.
    assert_eq!(quote.price, Decimal::from(150));
    let booking = new_booking(
        42,
        "DEMO-000042".to_owned(),
        &body,
        Decision {
            terms,
            vehicle: vehicle(),
            quote,
            customer: customer(),
        },
        at(NOW),
        "api",
    );
    assert_eq!(booking.id, 42);
    assert_eq!(booking.code.as_deref(), Some("DEMO-000042"));
    assert_eq!(booking.version.as_deref(), Some("1"));
    assert_eq!(booking.current_status, BookingStatus::Quoted);
    assert!(booking.is_quotation);
    assert_eq!(booking.creation_date, at(NOW));
    assert_eq!(booking.updated_on, Some(at(NOW)));
    assert_eq!(booking.updated_by_user_name.as_deref(), Some("api"));
    assert_eq!(
        booking.car.as_ref().map(|car| car.id.as_str()),
        Some("AA100AA")
    );
    assert!(
        booking.category.models.is_empty(),
        "the category without its models"
    );
    assert_eq!(
        booking.franchise,
        Some(Decimal::from(800)),
        "the model's franchise"
    );
    assert_eq!(booking.price, Decimal::from(150));
    assert_eq!(booking.balance, booking.price);
    assert_eq!(booking.price_details.price, booking.price);
    assert_eq!(booking.currency, "USD");
    assert_eq!(booking.total_days, Decimal::from(3));
    assert_eq!(booking.additionals, Vec::new());
    assert_eq!(booking.delivery_transportation_id, Some(json!("AR1234")));
    assert_eq!(booking.attributes.get("Canal"), Some(&json!("API")));
    assert_eq!(booking.max_allowed_distance, 750);
}

#[test]
fn a_sent_price_and_the_insurance_requirement() {
    let offices = offices();
    let tenant = Tenant::new(&[]);
    let terms = check_new(&request(json!({})), &offices, &tenant).unwrap();
    let priced = |sent, tenant: &Tenant| priced(&terms, sent, tenant);
    assert_eq!(
        priced(Some(Decimal::from(160)), &tenant)
            .unwrap_err()
            .code
            .code(),
        4
    );
    assert_eq!(
        priced(Some(Decimal::from(149)), &tenant).unwrap().price,
        Decimal::from(149)
    );
    let insured = Tenant::new(&[("require_insurance", "true")]);
    assert_eq!(priced(None, &insured).unwrap_err().code.code(), 50);
    assert_eq!(
        price(
            &terms,
            &vehicle(),
            &[],
            PriceLists {
                additionals: &[],
                tariffs: &[],
            },
            None,
            &tenant.rules(),
            |_| Vec::new()
        )
        .unwrap_err()
        .code
        .code(),
        21
    );
}
