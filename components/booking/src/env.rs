//! What every write request needs besides its body: the caller, the tenant's rules and the
//! instant of the request.

use chrono::{DateTime, FixedOffset, SubsecRound as _, Utc};
use chrono_tz::Tz;
use rental_domain::booking::settings::BookingSettings;
use rental_domain::booking::terms::Rules;
use rental_domain::pricing::PricingSettings;
use rental_guest::Error;
use rental_guest::context::{self, Caller};

/// The request's caller, the tenant's settings and the request's instant.
pub struct Env {
    pub caller: Caller,
    pub settings: BookingSettings,
    pub pricing: PricingSettings,
    pub zone: Tz,
    /// The instant of the request, on the tenant's clock, to the microsecond (the store's
    /// resolution for times).
    pub now: DateTime<FixedOffset>,
}

impl Env {
    /// Reads it all from the host. A tenant setting that does not read is 105 SettingNotFound
    /// naming it; a request without caller (the host never sends one to these endpoints) is an
    /// internal error.
    pub fn load() -> Result<Self, Error> {
        let caller =
            context::caller().ok_or_else(|| Error::internal("a booking request without caller"))?;
        let settings = BookingSettings::from_lookup(&context::tenant(), context::setting)
            .map_err(rental_domain::ApiError::from)?;
        let pricing = PricingSettings::from_lookup(context::setting)
            .map_err(rental_domain::ApiError::from)?;
        let zone = context::time_zone();
        Ok(Self {
            caller,
            settings,
            pricing,
            zone,
            now: Utc::now()
                .trunc_subsecs(6)
                .with_timezone(&zone)
                .fixed_offset(),
        })
    }

    /// The rules the domain's booking functions take.
    pub fn rules(&self) -> Rules<'_> {
        Rules {
            settings: &self.settings,
            pricing: &self.pricing,
            zone: self.zone,
            now: self.now,
        }
    }

    /// The caller's name, as recorded in `UpdatedByUserName` and comments.
    pub fn user(&self) -> &str {
        &self.caller.user_name
    }
}
