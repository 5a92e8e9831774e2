//! The tenant settings the booking rules read (`rentald setting set --tenant T KEY VALUE`),
//! with their defaults. docs/booking.md lists which error code each one drives; pricing reads
//! its own ([`crate::pricing::PricingSettings`]).
//!
//! As with pricing's, a setting whose value does not read is the operator's to fix: it is
//! refused as [`InvalidSetting`] (105 SettingNotFound, naming the setting).

use std::collections::BTreeSet;

use crate::pricing::InvalidSetting;

/// `model` (default) or `category`: how availability is checked ([`AvailabilityMode`]).
pub const AVAILABILITY_MODE: &str = "availability_mode";
/// Prefix of booking codes (`<PREFIX>-<Id, 6 digits>`); default: the tenant slug, upper case.
pub const BOOKING_CODE_PREFIX: &str = "booking_code_prefix";
/// Fewest rental days of a booking (29 MinimunDaysOfBookingNotReached); default 1.
pub const MIN_BOOKING_DAYS: &str = "min_booking_days";
/// Most rental days of a booking (30 MaxDaysOfBookingReached); default 365 (availability writes
/// a lock per day of a booking, so a booking's length is bounded).
pub const MAX_BOOKING_DAYS: &str = "max_booking_days";
/// Youngest driver, in years at the start of the rental (34 DriverAgeNotAllowed); default 18.
pub const MIN_DRIVER_AGE: &str = "min_driver_age";
/// Oldest driver, in years at the start of the rental (34); default: no limit.
pub const MAX_DRIVER_AGE: &str = "max_driver_age";
/// Whether unlimited kilometres can be booked (27 IlimitedKmNotEnabled); default true.
pub const UNLIMITED_KM_ENABLED: &str = "unlimited_km_enabled";
/// Whether limited kilometres can be booked (28 LimitedKmNotEnabled); default true.
pub const LIMITED_KM_ENABLED: &str = "limited_km_enabled";
/// Kilometres a day of a limited-kilometre booking that sends none; default 250.
pub const MAX_DISTANCE_BY_DAY: &str = "max_distance_by_day";
/// Whether a car may be returned at another branch office than the one it was delivered at
/// (46 ReturnPlaceNotAllowedForDeliveryPlace); default true.
pub const ONE_WAY_ALLOWED: &str = "one_way_allowed";
/// Whether every booking needs at least one insurance additional (50
/// MustHaveAtLeastOneInsurance); default false.
pub const REQUIRE_INSURANCE: &str = "require_insurance";
/// Whether a booking may start or end outside office hours (47
/// BookingOutOfOfficeHoursNotAllowed); default true (pricing then charges its out-of-hours
/// surcharge). The hours are pricing's `office_hours` setting.
pub const OUT_OF_HOURS_ALLOWED: &str = "out_of_hours_allowed";
/// Customer Ids that may not book, comma-separated (49 BlockedCustomerToBook); default none.
pub const BLOCKED_CUSTOMERS: &str = "blocked_customers";
/// Customer Id of the agency configured for API bookings, used when a booking with a
/// commercial agreement names no agency of its own (110 AgencyNotConfigured); default none.
pub const AGENCY_CUSTOMER_ID: &str = "agency_customer_id";
/// Whether delivery needs the balance paid (73 CannotDeliverBookingWithBalance); default
/// false.
pub const REQUIRE_PAID_BEFORE_DELIVERY: &str = "require_paid_before_delivery";

/// How the platform decides whether a booking can have a vehicle (interface.md 4.5 rule 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AvailabilityMode {
    /// Every booking holds a car; a booking for a model or a category is given a free car of
    /// it, and keeps it while it stays free.
    #[default]
    Model,
    /// A booking holds a place in its category's quota (the category's cars); a car is only
    /// held when one is assigned.
    Category,
}

/// The booking settings of a tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BookingSettings {
    pub availability: AvailabilityMode,
    pub code_prefix: String,
    pub min_days: i64,
    pub max_days: i64,
    pub min_driver_age: Option<i64>,
    pub max_driver_age: Option<i64>,
    pub unlimited_km_enabled: bool,
    pub limited_km_enabled: bool,
    pub max_distance_by_day: i64,
    pub one_way_allowed: bool,
    pub out_of_hours_allowed: bool,
    pub require_insurance: bool,
    pub blocked_customers: BTreeSet<i64>,
    pub agency_customer_id: Option<i64>,
    pub require_paid_before_delivery: bool,
}

/// Longest booking, in rental days, when the tenant sets none.
const DEFAULT_MAX_BOOKING_DAYS: i64 = 365;
/// Youngest driver when the tenant sets none.
const DEFAULT_MIN_DRIVER_AGE: i64 = 18;
/// Kilometres a day when the tenant sets none.
const DEFAULT_MAX_DISTANCE_BY_DAY: i64 = 250;

impl BookingSettings {
    /// The settings of the tenant `slug`, each read with `lookup` (which gives `None` for a
    /// setting that is not set), with the defaults above; a blank value is not set.
    ///
    /// Errors: the first value that does not read, naming its setting.
    pub fn from_lookup(
        slug: &str,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, InvalidSetting> {
        let read = Reader(lookup);
        let availability = read
            .parse(
                AVAILABILITY_MODE,
                "must be model or category",
                |value| match value.to_ascii_lowercase().as_str() {
                    "model" => Some(AvailabilityMode::Model),
                    "category" => Some(AvailabilityMode::Category),
                    _ => None,
                },
            )?
            .unwrap_or_default();
        Ok(Self {
            availability,
            code_prefix: read
                .parse(BOOKING_CODE_PREFIX, "", |value| Some(value.to_owned()))?
                .unwrap_or_else(|| slug.to_uppercase()),
            min_days: read.count(MIN_BOOKING_DAYS)?.unwrap_or(1),
            max_days: read
                .count(MAX_BOOKING_DAYS)?
                .unwrap_or(DEFAULT_MAX_BOOKING_DAYS),
            min_driver_age: read.count(MIN_DRIVER_AGE)?.or(Some(DEFAULT_MIN_DRIVER_AGE)),
            max_driver_age: read.count(MAX_DRIVER_AGE)?,
            unlimited_km_enabled: read.flag(UNLIMITED_KM_ENABLED)?.unwrap_or(true),
            limited_km_enabled: read.flag(LIMITED_KM_ENABLED)?.unwrap_or(true),
            max_distance_by_day: read
                .count(MAX_DISTANCE_BY_DAY)?
                .unwrap_or(DEFAULT_MAX_DISTANCE_BY_DAY),
            one_way_allowed: read.flag(ONE_WAY_ALLOWED)?.unwrap_or(true),
            out_of_hours_allowed: read.flag(OUT_OF_HOURS_ALLOWED)?.unwrap_or(true),
            require_insurance: read.flag(REQUIRE_INSURANCE)?.unwrap_or(false),
            blocked_customers: read
                .parse(
                    BLOCKED_CUSTOMERS,
                    "must be customer Ids separated by commas",
                    |value| {
                        value
                            .split(',')
                            .map(str::trim)
                            .filter(|id| !id.is_empty())
                            .map(|id| id.parse::<i64>().ok())
                            .collect()
                    },
                )?
                .unwrap_or_default(),
            agency_customer_id: read.count(AGENCY_CUSTOMER_ID)?,
            require_paid_before_delivery: read.flag(REQUIRE_PAID_BEFORE_DELIVERY)?.unwrap_or(false),
        })
    }

    /// The code of booking `id`: `<prefix>-<id, at least 6 digits>`, e.g. `DEMO-000142`.
    pub fn booking_code(&self, id: i64) -> String {
        format!("{}-{id:06}", self.code_prefix)
    }
}

/// Reads settings through a lookup.
struct Reader<F>(F);

impl<F: Fn(&str) -> Option<String>> Reader<F> {
    /// The setting `key` read by `parse`: `None` when unset or blank; `reason` when `parse`
    /// refuses it.
    fn parse<T>(
        &self,
        key: &'static str,
        reason: &'static str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<Option<T>, InvalidSetting> {
        let Some(value) = (self.0)(key)
            .map(|value| value.trim().to_owned())
            .filter(|value| !value.is_empty())
        else {
            return Ok(None);
        };
        parse(&value)
            .map(Some)
            .ok_or(InvalidSetting { key, reason })
    }

    /// A whole number of at least 0.
    fn count(&self, key: &'static str) -> Result<Option<i64>, InvalidSetting> {
        self.parse(key, "must be a whole number of 0 or more", |value| {
            value.parse::<i64>().ok().filter(|number| *number >= 0)
        })
    }

    /// `true` or `false`, in any case.
    fn flag(&self, key: &'static str) -> Result<Option<bool>, InvalidSetting> {
        self.parse(key, "must be true or false", |value| {
            if value.eq_ignore_ascii_case("true") {
                Some(true)
            } else if value.eq_ignore_ascii_case("false") {
                Some(false)
            } else {
                None
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn read(pairs: &[(&str, &str)]) -> Result<BookingSettings, InvalidSetting> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        BookingSettings::from_lookup("demo", |key| map.get(key).cloned())
    }

    #[test]
    fn defaults() {
        let settings = read(&[("max_booking_days", " ")]).unwrap();
        assert_eq!(
            settings,
            BookingSettings {
                availability: AvailabilityMode::Model,
                code_prefix: "DEMO".to_owned(),
                min_days: 1,
                max_days: 365,
                min_driver_age: Some(18),
                max_driver_age: None,
                unlimited_km_enabled: true,
                limited_km_enabled: true,
                max_distance_by_day: 250,
                one_way_allowed: true,
                out_of_hours_allowed: true,
                require_insurance: false,
                blocked_customers: BTreeSet::new(),
                agency_customer_id: None,
                require_paid_before_delivery: false,
            }
        );
        assert_eq!(settings.booking_code(42), "DEMO-000042");
        assert_eq!(settings.booking_code(1_234_567), "DEMO-1234567");
    }

    #[test]
    fn values_are_read() {
        let settings = read(&[
            ("availability_mode", "Category"),
            ("booking_code_prefix", " RNT "),
            ("min_booking_days", "2"),
            ("max_booking_days", "30"),
            ("min_driver_age", "21"),
            ("max_driver_age", "75"),
            ("unlimited_km_enabled", "FALSE"),
            ("limited_km_enabled", "true"),
            ("max_distance_by_day", "300"),
            ("one_way_allowed", "false"),
            ("out_of_hours_allowed", "false"),
            ("require_insurance", "true"),
            ("blocked_customers", "3, 7,"),
            ("agency_customer_id", "24"),
            ("require_paid_before_delivery", "true"),
        ])
        .unwrap();
        assert_eq!(settings.availability, AvailabilityMode::Category);
        assert_eq!(settings.booking_code(5), "RNT-000005");
        assert_eq!((settings.min_days, settings.max_days), (2, 30));
        assert_eq!(
            (settings.min_driver_age, settings.max_driver_age),
            (Some(21), Some(75))
        );
        assert!(!settings.unlimited_km_enabled && settings.limited_km_enabled);
        assert_eq!(settings.max_distance_by_day, 300);
        assert!(!settings.one_way_allowed && !settings.out_of_hours_allowed);
        assert!(settings.require_insurance && settings.require_paid_before_delivery);
        assert_eq!(settings.blocked_customers, BTreeSet::from([3, 7]));
        assert_eq!(settings.agency_customer_id, Some(24));
    }

    #[test]
    fn unreadable_values_name_their_setting() {
        for (key, value) in [
            ("availability_mode", "fleet"),
            ("min_booking_days", "-1"),
            ("one_way_allowed", "yes"),
            ("blocked_customers", "3,x"),
        ] {
            let error = read(&[(key, value)]).unwrap_err();
            assert_eq!(error.key, key);
        }
    }
}
