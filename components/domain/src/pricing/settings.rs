//! The tenant settings pricing reads.

use std::fmt;

use chrono::{NaiveTime, TimeDelta};
use rust_decimal::Decimal;

use super::tariffs::MINUTES_PER_DAY;
use crate::error::{ApiError, ErrorCode};

/// Names of the tenant settings pricing reads (`rentald setting set`).
pub mod setting {
    /// Minutes past the last whole day that are not charged as one more day; an integer from 0
    /// to 1439, default [`super::DEFAULT_GRACE_MINUTES`].
    pub const GRACE_MINUTES: &str = "grace_minutes";
    /// Currency code used when a tariff names none; no default.
    pub const CURRENCY: &str = "currency";
    /// Opening hours of every branch office, `HH:MM-HH:MM` on the office's own clock; default
    /// `08:00-20:00`.
    pub const OFFICE_HOURS: &str = "office_hours";
    /// Amount charged once when the car is returned to another branch office; default 0 (off).
    pub const ONE_WAY: &str = "surcharge.one_way";
    /// Amount charged for a pick-up, and again for a return, outside office hours; default 0
    /// (off).
    pub const OUT_OF_HOURS: &str = "surcharge.out_of_hours";
    /// Amount charged per rental day when the driver is under 25; default 0 (off).
    pub const YOUNG_DRIVER: &str = "surcharge.young_driver";
}

/// Default of the `grace_minutes` setting.
pub const DEFAULT_GRACE_MINUTES: u32 = 59;

/// A tenant setting pricing cannot read.
///
/// It is the operator's to fix, not the client's; as an [`ApiError`] it is
/// [`ErrorCode::SettingNotFound`] (105) naming the setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the setting '{key}' is not valid: {reason}")]
pub struct InvalidSetting {
    /// The setting's name, one of [`setting`].
    pub key: &'static str,
    /// What its value should look like.
    pub reason: &'static str,
}

impl From<InvalidSetting> for ApiError {
    fn from(error: InvalidSetting) -> Self {
        ApiError::new(ErrorCode::SettingNotFound)
            .with_field(error.key)
            .with_detail(error.reason)
    }
}

/// The surcharges a tenant configures; an amount of zero turns a surcharge off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Surcharges {
    /// Once per booking returned to another branch office ([`setting::ONE_WAY`]).
    pub one_way: Decimal,
    /// Per pick-up or return outside office hours ([`setting::OUT_OF_HOURS`]).
    pub out_of_hours: Decimal,
    /// Per rental day of a driver under 25 ([`setting::YOUNG_DRIVER`]).
    pub young_driver: Decimal,
}

/// Everything pricing reads from the tenant's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PricingSettings {
    /// Minutes past the last whole day that are not charged ([`setting::GRACE_MINUTES`]).
    pub grace_minutes: u32,
    /// Currency of a tariff that names none ([`setting::CURRENCY`]), upper case.
    pub currency: Option<String>,
    /// When the branch offices are open ([`setting::OFFICE_HOURS`]).
    pub office_hours: OfficeHours,
    /// The surcharges' amounts.
    pub surcharges: Surcharges,
}

impl Default for PricingSettings {
    /// The settings of a tenant that sets none: 59 minutes of grace, 08:00-20:00, no
    /// surcharge, no fallback currency.
    fn default() -> Self {
        Self {
            grace_minutes: DEFAULT_GRACE_MINUTES,
            currency: None,
            office_hours: OfficeHours::default(),
            surcharges: Surcharges::default(),
        }
    }
}

impl PricingSettings {
    /// Reads the settings through `lookup`, which returns a setting's value or `None` when it
    /// is not set (the guests' `context::setting`). A missing or blank setting takes its
    /// default.
    ///
    /// Errors: a value that does not parse, naming the setting: `grace_minutes` not an integer
    /// from 0 to 1439; `currency` not three letters; `office_hours` not `HH:MM-HH:MM` with the
    /// opening before the closing; a surcharge not a number or negative.
    pub fn from_lookup(
        mut lookup: impl FnMut(&str) -> Option<String>,
    ) -> Result<Self, InvalidSetting> {
        let mut read = |key: &str| {
            lookup(key)
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        let defaults = Self::default();
        let grace_minutes = match read(setting::GRACE_MINUTES) {
            None => defaults.grace_minutes,
            Some(value) => value
                .parse::<u32>()
                .ok()
                .filter(|&minutes| i64::from(minutes) < MINUTES_PER_DAY)
                .ok_or(InvalidSetting {
                    key: setting::GRACE_MINUTES,
                    reason: "must be a whole number of minutes from 0 to 1439",
                })?,
        };
        let currency = match read(setting::CURRENCY) {
            None => None,
            Some(value) if value.len() == 3 && value.chars().all(|c| c.is_ascii_alphabetic()) => {
                Some(value.to_ascii_uppercase())
            }
            Some(_) => {
                return Err(InvalidSetting {
                    key: setting::CURRENCY,
                    reason: "must be a three-letter currency code",
                });
            }
        };
        let office_hours = match read(setting::OFFICE_HOURS) {
            None => defaults.office_hours,
            Some(value) => OfficeHours::parse(&value).ok_or(InvalidSetting {
                key: setting::OFFICE_HOURS,
                reason: "must be HH:MM-HH:MM with the opening before the closing",
            })?,
        };
        let mut amount = |key: &'static str| match read(key) {
            None => Ok(Decimal::ZERO),
            Some(value) => value
                .parse::<Decimal>()
                .ok()
                .filter(|amount| !amount.is_sign_negative())
                .ok_or(InvalidSetting {
                    key,
                    reason: "must be an amount of zero or more",
                }),
        };
        let surcharges = Surcharges {
            one_way: amount(setting::ONE_WAY)?,
            out_of_hours: amount(setting::OUT_OF_HOURS)?,
            young_driver: amount(setting::YOUNG_DRIVER)?,
        };
        Ok(Self {
            grace_minutes,
            currency,
            office_hours,
            surcharges,
        })
    }
}

/// The hours a branch office is open, on its own clock: from `open` to `close`, both included.
///
/// Built only through [`OfficeHours::new`] or [`OfficeHours::parse`], so `open` is always
/// before `close` (an office open overnight is not modelled).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OfficeHours {
    open: NaiveTime,
    close: NaiveTime,
}

impl Default for OfficeHours {
    /// 08:00-20:00.
    fn default() -> Self {
        Self {
            open: NaiveTime::MIN + TimeDelta::hours(8),
            close: NaiveTime::MIN + TimeDelta::hours(20),
        }
    }
}

impl OfficeHours {
    /// Hours from `open` to `close`; `None` unless `open` is before `close`.
    pub fn new(open: NaiveTime, close: NaiveTime) -> Option<Self> {
        (open < close).then_some(Self { open, close })
    }

    /// Reads `HH:MM-HH:MM` (spaces around the dash allowed), e.g. `08:00-20:00`.
    pub fn parse(value: &str) -> Option<Self> {
        let (open, close) = value.split_once('-')?;
        let time = |text: &str| NaiveTime::parse_from_str(text.trim(), "%H:%M").ok();
        Self::new(time(open)?, time(close)?)
    }

    /// Opening time.
    pub fn open(&self) -> NaiveTime {
        self.open
    }

    /// Closing time.
    pub fn close(&self) -> NaiveTime {
        self.close
    }

    /// Whether the office is open at `time`: from the opening to the closing minute included
    /// (20:00 is within 08:00-20:00; 20:00:01 is not).
    pub fn contains(&self, time: NaiveTime) -> bool {
        self.open <= time && time <= self.close
    }
}

impl fmt::Display for OfficeHours {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}-{}",
            self.open.format("%H:%M"),
            self.close.format("%H:%M")
        )
    }
}

#[cfg(test)]
mod tests;
