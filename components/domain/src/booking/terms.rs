//! The terms of a booking a creation or an update asks for: checked against the catalogue and
//! the tenant's settings ([`check`]), priced once its vehicle is known ([`price`]) and written
//! into the booking ([`apply`]).
//!
//! A creation and an update go through the same steps; an update passes the booking as it is
//! stored, whose values stand for every field the request leaves out.

use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset, TimeDelta};
use chrono_tz::Tz;
use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::additionals;
use super::customer::check_may_book;
use super::places::{BookedPlace, Role, book_place, check_pair};
use super::request::{BookingRequest, Period, fields};
use super::settings::BookingSettings;
use crate::collections::{BranchOfficeDoc, CustomerDoc};
use crate::error::{ApiError, ErrorCode};
use crate::models::{
    Additional, Booking, BookingAdditional, Car, Category, Customer, Model, Place, PriceDetails,
    Tariff,
};
use crate::pricing::{
    self, LocalTimes, PricingSettings, Quote, QuoteRequest, YOUNG_DRIVER_AGE, office_zone,
    select_tariff,
};
use crate::status::BookingStatus;

/// How long ago a new (or moved) booking may start: a counter booking "now" arrives a little
/// late.
pub const PAST_START_TOLERANCE: TimeDelta = TimeDelta::hours(1);
/// `DistanceUnit` when neither the request nor the booking has one.
pub const DEFAULT_DISTANCE_UNIT: &str = "km";

/// The tenant's rules and the request's instant.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    pub settings: &'a BookingSettings,
    pub pricing: &'a PricingSettings,
    /// The tenant's time zone (setting `time_zone`), for offices that name none.
    pub zone: Tz,
    pub now: DateTime<FixedOffset>,
}

/// A booking's vehicle: the car (when one is held), its model (when known) and its category.
#[derive(Debug, Clone, PartialEq)]
pub struct Vehicle {
    pub car: Option<Car>,
    pub model: Option<Model>,
    pub category: Category,
}

/// The checked terms of a booking, before its vehicle and price are settled.
#[derive(Debug, Clone, PartialEq)]
pub struct Terms<'a> {
    pub period: Period,
    /// Rental days ([`pricing::rental_days`]).
    pub days: i64,
    pub delivery: BookedPlace<'a>,
    pub returned: BookedPlace<'a>,
    pub local_times: LocalTimes,
    pub young_driver: bool,
    pub distance: Distance,
    /// `Agency` as stored: `{"Id", "Name"}` of the agency customer, or none.
    pub agency: Option<Value>,
    pub commercial_agreement_code: Option<String>,
}

/// The kilometres a booking allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Distance {
    pub unlimited: bool,
    pub max_by_day: i64,
    pub max: i64,
    pub unit: String,
}

/// The agency a booking's terms depend on, when any: the one the request (or, on an update,
/// the booking) names, else the tenant's agency when there is a commercial agreement. The
/// caller reads it for [`check`].
pub fn agency_to_read(
    request: &BookingRequest,
    stored: Option<&Booking>,
    settings: &BookingSettings,
) -> Option<i64> {
    named_agency(request, stored).or_else(|| {
        agreement(request, stored)
            .is_some()
            .then_some(settings.agency_customer_id)
            .flatten()
    })
}

/// Checks what `request` asks for (with `stored` standing for what it leaves out on an
/// update) for the booking's `customer`, with `agency` as [`agency_to_read`] named it (`None`
/// when there is none or it was not found), against the tenant's `offices` and `rules`.
///
/// Errors, in this order:
/// - a promotion: 24 PromotionNotFound (the platform has none);
/// - the customer: 49 BlockedCustomerToBook, 34 DriverAgeNotAllowed ([`check_may_book`]);
/// - the dates: 98 when missing, 13 InvlaidDates when `ToDate` is not after `FromDate` or a
///   new start is more than [`PAST_START_TOLERANCE`] ago; 29 MinimunDaysOfBookingNotReached
///   and 30 MaxDaysOfBookingReached (settings `min_booking_days`, `max_booking_days`);
/// - the places: 25, 23, 75, 76, 74 ([`book_place`]), 46 ([`check_pair`]), and 47
///   BookingOutOfOfficeHoursNotAllowed when a pick-up or return falls outside pricing's
///   `office_hours` and the setting `out_of_hours_allowed` is false;
/// - the kilometres: 27 IlimitedKmNotEnabled, 28 LimitedKmNotEnabled (settings
///   `unlimited_km_enabled`, `limited_km_enabled`), checked when the request sends
///   `IlimitedKm` or creates the booking;
/// - the agency: 110 AgencyNotConfigured when a commercial agreement has no valid agency (a
///   customer with `IsAgency`: the one sent, else setting `agency_customer_id`), or an agency
///   is sent that is none; 51 InvalidCommercialAgreement when the agreement is not one of the
///   agency's `CommercialAgreements`.
pub fn check<'a>(
    request: &BookingRequest,
    stored: Option<&Booking>,
    customer: &Customer,
    agency: Option<&CustomerDoc>,
    offices: &'a [BranchOfficeDoc],
    rules: &Rules<'_>,
) -> Result<Terms<'a>, ApiError> {
    let stored_period = stored.map(|booking| Period {
        from: booking.from_date,
        to: booking.to_date,
    });
    let period = request.period(stored_period)?;
    request.check_promotion()?;
    check_may_book(customer, rules.settings, period.from)?;
    let moved_start = stored_period.is_none_or(|stored| stored.from != period.from);
    if moved_start && period.from < rules.now - PAST_START_TOLERANCE {
        return Err(ApiError::new(ErrorCode::InvlaidDates).with_field(fields::FROM_DATE));
    }
    let days = pricing::rental_days(period.from, period.to, rules.pricing.grace_minutes)?;
    if days < rules.settings.min_days {
        return Err(
            ApiError::new(ErrorCode::MinimunDaysOfBookingNotReached).with_field(fields::TO_DATE)
        );
    }
    if days > rules.settings.max_days {
        return Err(ApiError::new(ErrorCode::MaxDaysOfBookingReached).with_field(fields::TO_DATE));
    }

    let delivery = book_place(
        offices,
        &request.delivery_place(stored.map(|booking| &booking.delivery_place))?,
        Role::Delivery,
    )?;
    let returned = book_place(
        offices,
        &request.return_place(stored.map(|booking| &booking.return_place))?,
        Role::Return,
    )?;
    check_pair(&delivery, &returned, rules.settings)?;
    let delivery_zone = office_zone(delivery.office, rules.zone);
    let local_times = LocalTimes::at_offices(
        period.from,
        period.to,
        delivery_zone,
        office_zone(returned.office, rules.zone),
    );
    let hours = rules.pricing.office_hours;
    if !rules.settings.out_of_hours_allowed {
        if !hours.contains(local_times.pickup) {
            return Err(ApiError::new(ErrorCode::BookingOutOfOfficeHoursNotAllowed)
                .with_field(fields::FROM_DATE));
        }
        if !hours.contains(local_times.dropoff) {
            return Err(ApiError::new(ErrorCode::BookingOutOfOfficeHoursNotAllowed)
                .with_field(fields::TO_DATE));
        }
    }

    let young_driver = match (customer.birth_date, customer.age) {
        (Some(birth), _) => {
            pricing::is_young_driver(birth.date_naive(), period.from, delivery_zone)
        }
        (None, Some(age)) => age < i64::from(YOUNG_DRIVER_AGE),
        (None, None) => request
            .is_customer_over25
            .or(stored.map(|booking| booking.is_customer_over25))
            .is_some_and(|over25| !over25),
    };

    Ok(Terms {
        period,
        days,
        delivery,
        returned,
        local_times,
        young_driver,
        distance: distance(request, stored, rules.settings, days)?,
        agency: checked_agency(request, stored, agency, rules.settings)?,
        commercial_agreement_code: agreement(request, stored),
    })
}

/// The kilometres of the booking: unlimited when asked (or, on an update, as stored; by
/// default when the tenant offers no limited kilometres); otherwise the kilometres a day sent
/// or stored or of the setting `max_distance_by_day`, and in total the sent
/// `MaxAllowedDistance` or a day's kilometres times the rental days.
fn distance(
    request: &BookingRequest,
    stored: Option<&Booking>,
    settings: &BookingSettings,
    days: i64,
) -> Result<Distance, ApiError> {
    let unlimited = request
        .ilimited_km
        .or(stored.map(|booking| booking.ilimited_km))
        .unwrap_or(!settings.limited_km_enabled);
    if request.ilimited_km.is_some() || stored.is_none() {
        if unlimited && !settings.unlimited_km_enabled {
            return Err(
                ApiError::new(ErrorCode::IlimitedKmNotEnabled).with_field(fields::ILIMITED_KM)
            );
        }
        if !unlimited && !settings.limited_km_enabled {
            return Err(
                ApiError::new(ErrorCode::LimitedKmNotEnabled).with_field(fields::ILIMITED_KM)
            );
        }
    }
    let unit = request
        .distance_unit
        .clone()
        .filter(|unit| !unit.trim().is_empty())
        .or(stored
            .map(|booking| booking.distance_unit.clone())
            .filter(|unit| !unit.is_empty()))
        .unwrap_or_else(|| DEFAULT_DISTANCE_UNIT.to_owned());
    if unlimited {
        return Ok(Distance {
            unlimited,
            max_by_day: 0,
            max: 0,
            unit,
        });
    }
    let positive = |value: Option<i64>| value.filter(|value| *value > 0);
    let max_by_day = positive(request.max_allowed_distance_by_day)
        .or(positive(
            stored.map(|booking| booking.max_allowed_distance_by_day),
        ))
        .unwrap_or(settings.max_distance_by_day);
    let max = positive(request.max_allowed_distance).unwrap_or(max_by_day.saturating_mul(days));
    Ok(Distance {
        unlimited,
        max_by_day,
        max,
        unit,
    })
}

/// The agency id the request names, or on an update that does not, the booking's.
fn named_agency(request: &BookingRequest, stored: Option<&Booking>) -> Option<i64> {
    if request.agency.is_some() {
        return request.agency_id();
    }
    let stored = stored?.agency.as_ref()?;
    stored
        .get("Id")
        .and_then(Value::as_i64)
        .filter(|id| *id > 0)
}

/// The commercial agreement code sent, or on an update that sends none, the booking's.
fn agreement(request: &BookingRequest, stored: Option<&Booking>) -> Option<String> {
    let code = match &request.commercial_agreement_code {
        Some(sent) => sent.clone(),
        None => stored
            .and_then(|booking| booking.commercial_agreement_code.as_ref())
            .and_then(Value::as_str)
            .map(str::to_owned),
    };
    code.map(|code| code.trim().to_owned())
        .filter(|code| !code.is_empty())
}

/// `Agency` of the booking, checked (see [`check`]).
fn checked_agency(
    request: &BookingRequest,
    stored: Option<&Booking>,
    agency: Option<&CustomerDoc>,
    settings: &BookingSettings,
) -> Result<Option<Value>, ApiError> {
    let named = named_agency(request, stored);
    let agreement = agreement(request, stored);
    if named.is_none() && agreement.is_none() {
        return Ok(None);
    }
    let expected = named.or(settings.agency_customer_id);
    let agency = agency
        .map(|doc| &doc.customer)
        .filter(|customer| customer.is_agency && Some(customer.id) == expected)
        .ok_or_else(|| ApiError::new(ErrorCode::AgencyNotConfigured).with_field(fields::AGENCY))?;
    if let Some(code) = &agreement {
        let known = agency
            .commercial_agreements
            .iter()
            .any(|known| known.trim().eq_ignore_ascii_case(code));
        if !known {
            return Err(ApiError::new(ErrorCode::InvalidCommercialAgreement)
                .with_field(fields::COMMERCIAL_AGREEMENT_CODE));
        }
    }
    Ok(Some(json!({"Id": agency.id, "Name": agency.name})))
}

/// Prices the booking of `terms` with its `vehicle` (the model's tariff when it has one, else
/// the category's), the additionals `requested`, the tenant's additionals (`catalog`) and
/// `tariffs`, accepting a `sent` price within 1%; then checks the tenant's insurance
/// requirement on the additionals taken.
///
/// Errors: pricing's (21, 30, 31, 32, 98, 100, 4), then 50 MustHaveAtLeastOneInsurance.
pub fn price(
    terms: &Terms<'_>,
    vehicle: &Vehicle,
    requested: &[BookingAdditional],
    catalog: &[Additional],
    tariffs: &[Tariff],
    sent: Option<Decimal>,
    rules: &Rules<'_>,
) -> Result<Quote, ApiError> {
    let tariff = select_tariff(
        tariffs,
        vehicle.category.id,
        vehicle.model.as_ref().map(|model| model.id),
    );
    let quote = pricing::quote(
        &QuoteRequest {
            from_date: terms.period.from,
            to_date: terms.period.to,
            tariff,
            requested_additionals: requested,
            catalog,
            delivery_place: &terms.delivery.place,
            return_place: &terms.returned.place,
            local_times: terms.local_times,
            young_driver: terms.young_driver,
            has_agency: terms.agency.is_some(),
        },
        rules.pricing,
    )?;
    let quote = pricing::accept_sent_price(quote, sent)?;
    additionals::check_insurance(&quote.additionals, rules.settings.require_insurance)?;
    Ok(quote)
}

/// What a creation or an update decided: its checked terms, its vehicle, its price and its
/// customer.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision<'a> {
    pub terms: Terms<'a>,
    pub vehicle: Vehicle,
    pub quote: Quote,
    pub customer: Customer,
}

/// A new booking `id` with its `code`, as `request` asks and `decision` decided, created at
/// `now` by `user`: Version "1", Quoted when `IsQuotation` is true, else Reserved.
pub fn new_booking(
    id: i64,
    code: String,
    request: &BookingRequest,
    decision: Decision<'_>,
    now: DateTime<FixedOffset>,
    user: &str,
) -> Booking {
    let is_quotation = request.is_quotation == Some(true);
    let mut booking = Booking {
        id,
        version: Some("1".to_owned()),
        customer: Customer::default(),
        balance: Decimal::ZERO,
        total_payed: Decimal::ZERO,
        extra: None,
        promotion: None,
        is_quotation,
        car: None,
        model: None,
        category: Category::default(),
        from_date: now,
        to_date: now,
        delivery_place: Place::default(),
        return_place: Place::default(),
        total_days_string: String::new(),
        total_days: Decimal::ZERO,
        price: Decimal::ZERO,
        agency_price: Decimal::ZERO,
        customer_price: Decimal::ZERO,
        currency: String::new(),
        franchise: None,
        franchise_damage: None,
        franchise_rollover: None,
        franchise_theft: None,
        franchise_hail: None,
        ilimited_km: false,
        max_allowed_distance: 0,
        max_allowed_distance_by_day: 0,
        distance_unit: String::new(),
        has_franchise_modifiers: false,
        will_leave_country: None,
        average_day_price: Decimal::ZERO,
        price_items: Vec::new(),
        additionals: Vec::new(),
        available_promotions: None,
        current_status: if is_quotation {
            BookingStatus::Quoted
        } else {
            BookingStatus::Reserved
        },
        current_status_date: now,
        delivery_transportation_id: None,
        return_transportation_id: None,
        is_customer_over25: true,
        external_system_id: None,
        prepaid_amount: Decimal::ZERO,
        elegible_sipp_code_upgrade: None,
        attributes: BTreeMap::new(),
        exchange_rate: None,
        daily_rate: Decimal::ZERO,
        hourly_rate: Decimal::ZERO,
        extra_day_rate: Decimal::ZERO,
        extra_hour_rate: Decimal::ZERO,
        rate_plan: None,
        is_on_request: false,
        delivery_info: None,
        dropoff_info: None,
        origin: None,
        brand: None,
        agency: None,
        creation_date: now,
        updated_on: Some(now),
        updated_by_user_name: Some(user.to_owned()),
        payed_by_agency: Decimal::ZERO,
        payed_by_customer: Decimal::ZERO,
        commercial_agreement_code: None,
        purchase_order: None,
        sales_commision: Decimal::ZERO,
        is_transfer: false,
        price_details: PriceDetails::default(),
        is_self_checkin: false,
        links: None,
        code: Some(code),
    };
    apply(&mut booking, request, decision);
    booking
}

/// Writes what `decision` decided into `booking`, with the descriptive fields the `request`
/// sends (`Attributes`, `Origin`, `Brand`, `Extra`, `ExternalSystemId`,
/// `ElegibleSIPPCodeUpgrade`, `RatePlan`, `ExchangeRate`, `PrepaidAmount`, `IsOnRequest`, the
/// transportation ids); fields the request leaves out keep what `booking` has. `Balance` is
/// the new price less what was paid.
pub fn apply(booking: &mut Booking, request: &BookingRequest, decision: Decision<'_>) {
    let Decision {
        terms,
        vehicle,
        quote,
        customer,
    } = decision;
    let franchises = match &vehicle.model {
        Some(model) => [
            model.franchise,
            model.franchise_damage,
            model.franchise_rollover,
            model.franchise_theft,
            model.franchise_hail,
        ],
        None => [
            vehicle.category.franchise,
            vehicle.category.franchise_damage,
            vehicle.category.franchise_rollover,
            vehicle.category.franchise_theft,
            vehicle.category.franchise_hail,
        ],
    };
    [
        booking.franchise,
        booking.franchise_damage,
        booking.franchise_rollover,
        booking.franchise_theft,
        booking.franchise_hail,
    ] = franchises;
    booking.customer = customer;
    booking.car = vehicle.car;
    booking.model = vehicle.model;
    booking.category = Category {
        models: Vec::new(),
        ..vehicle.category
    };
    booking.from_date = terms.period.from;
    booking.to_date = terms.period.to;
    booking.delivery_place = terms.delivery.place;
    booking.return_place = terms.returned.place;
    booking.is_customer_over25 = !terms.young_driver;
    booking.ilimited_km = terms.distance.unlimited;
    booking.max_allowed_distance_by_day = terms.distance.max_by_day;
    booking.max_allowed_distance = terms.distance.max;
    booking.distance_unit = terms.distance.unit;
    booking.agency = terms.agency;
    booking.commercial_agreement_code = terms.commercial_agreement_code.map(Value::String);

    booking.total_days = Decimal::from(quote.total_days);
    booking.total_days_string = quote.total_days_string;
    booking.price = quote.price;
    booking.customer_price = quote.customer_price;
    booking.agency_price = quote.agency_price;
    booking.average_day_price = quote.average_day_price;
    booking.daily_rate = quote.daily_rate;
    booking.price_items = quote.lines;
    booking.additionals = quote.additionals;
    booking.balance = booking.price - booking.total_payed;
    booking.price_details = PriceDetails {
        price: booking.price,
        customer_price: booking.customer_price,
        agency_price: booking.agency_price,
        sales_commission: booking.sales_commision,
        currency: quote.currency.clone(),
    };
    booking.currency = quote.currency;

    let replace = |field: &mut Option<Value>, sent: &Option<Option<Value>>| {
        if let Some(sent) = sent {
            field.clone_from(sent);
        }
    };
    replace(&mut booking.origin, &request.origin);
    replace(&mut booking.brand, &request.brand);
    replace(&mut booking.extra, &request.extra);
    replace(&mut booking.external_system_id, &request.external_system_id);
    replace(
        &mut booking.elegible_sipp_code_upgrade,
        &request.elegible_sipp_code_upgrade,
    );
    replace(&mut booking.rate_plan, &request.rate_plan);
    replace(
        &mut booking.delivery_transportation_id,
        &request.delivery_transportation_id,
    );
    replace(
        &mut booking.return_transportation_id,
        &request.return_transportation_id,
    );
    if let Some(attributes) = &request.attributes {
        booking.attributes = crate::selfcheckin::sent_attributes(&booking.attributes, attributes);
    }
    if let Some(rate) = request.exchange_rate {
        booking.exchange_rate = rate;
    }
    if let Some(prepaid) = request.prepaid_amount {
        booking.prepaid_amount = prepaid;
    }
    if let Some(on_request) = request.is_on_request {
        booking.is_on_request = on_request;
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use chrono_tz::Tz;
    use serde_json::json;

    use super::*;
    use crate::json::parse_body;
    use crate::models::{BranchOffice, TariffBracket};

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

    fn code(result: Result<Terms<'_>, ApiError>) -> i32 {
        result.unwrap_err().code.code()
    }

    #[test]
    fn a_plain_request_passes_with_the_tenant_defaults() {
        let tenant = Tenant::new(&[]);
        let offices = offices();
        let terms = check(
            &request(json!({})),
            None,
            &customer(),
            None,
            &offices,
            &tenant.rules(),
        )
        .unwrap();
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
            let result = check(&plain, None, &customer(), None, &offices, &tenant.rules());
            assert_eq!(code(result), expected, "{setting} = {value}");
        }
        let tenant = Tenant::new(&[("limited_km_enabled", "false")]);
        let limited = request(json!({"IlimitedKm": false}));
        assert_eq!(
            code(check(
                &limited,
                None,
                &customer(),
                None,
                &offices,
                &tenant.rules()
            )),
            28
        );
        let tenant = Tenant::new(&[("one_way_allowed", "false")]);
        let one_way = request(json!({"ReturnPlace": {"Id": 4}}));
        assert_eq!(
            code(check(
                &one_way,
                None,
                &customer(),
                None,
                &offices,
                &tenant.rules()
            )),
            46
        );
        let tenant = Tenant::new(&[("out_of_hours_allowed", "false")]);
        let late = request(json!({"ToDate": "2030-01-13T21:00:00-03:00"}));
        assert_eq!(
            code(check(
                &late,
                None,
                &customer(),
                None,
                &offices,
                &tenant.rules()
            )),
            47
        );
        let early = request(json!({"FromDate": "2030-01-10T07:00:00-03:00"}));
        assert_eq!(
            code(check(
                &early,
                None,
                &customer(),
                None,
                &offices,
                &tenant.rules()
            )),
            47
        );
    }

    #[test]
    fn dates_and_promotions() {
        let tenant = Tenant::new(&[]);
        let offices = offices();
        let check = |value| {
            check(
                &request(value),
                None,
                &customer(),
                None,
                &offices,
                &tenant.rules(),
            )
            .map(|_| ())
        };
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
                quote: price(
                    &first,
                    &vehicle(),
                    &[],
                    &[],
                    &[tariff()],
                    None,
                    &tenant.rules(),
                )
                .unwrap(),
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
        Tariff {
            id: 1,
            name: "Economy".to_owned(),
            category_id: 1,
            model_id: None,
            currency: "USD".to_owned(),
            brackets: vec![TariffBracket {
                days_from: 1,
                days_to: 30,
                daily_amount: Decimal::from(40),
            }],
        }
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
        let terms = check(&body, None, &customer(), None, &offices, &tenant.rules()).unwrap();
        let quote = price(
            &terms,
            &vehicle(),
            &[],
            &[],
            &[tariff()],
            None,
            &tenant.rules(),
        )
        .unwrap();
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
        let terms = check(
            &request(json!({})),
            None,
            &customer(),
            None,
            &offices,
            &tenant.rules(),
        )
        .unwrap();
        let priced = |sent, tenant: &Tenant| {
            price(
                &terms,
                &vehicle(),
                &[],
                &[],
                &[tariff()],
                sent,
                &tenant.rules(),
            )
        };
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
            price(&terms, &vehicle(), &[], &[], &[], None, &tenant.rules())
                .unwrap_err()
                .code
                .code(),
            21
        );
    }
}
