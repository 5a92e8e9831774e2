//! What the host knows about the request being served (`rental:platform/context`).
//!
//! Every value is fixed by the host before the component runs: the component can read it but
//! never choose it. These functions call the host: inside a component, the platform; in a
//! native build, the current [`TestHost`](crate::testing::TestHost).

use rental_domain::Language;
use rental_domain::dates;

use crate::host::context as wit;

/// The API user behind the request's bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The user's id.
    pub user_id: i64,
    /// The user's name (the `client_id` of the token request).
    pub user_name: String,
    /// The permissions granted to the user, e.g. `bookings:read`.
    pub permissions: Vec<String>,
}

/// Slug of the tenant the request belongs to. Informational: every store call is already
/// bound to this tenant.
pub fn tenant() -> String {
    wit::tenant()
}

/// The authenticated caller; `None` on anonymous endpoints (the bank webhooks).
pub fn caller() -> Option<Caller> {
    wit::caller().map(|caller| Caller {
        user_id: caller.user_id,
        user_name: caller.user_name,
        permissions: caller.permissions,
    })
}

/// The response language. The host has already validated it, so an unexpected value (a host
/// newer than this component) falls back to the default language rather than failing.
pub fn language() -> Language {
    Language::parse(&wit::language()).unwrap_or_default()
}

/// Correlation identifier of the request: the `Id` of error bodies.
pub fn correlation_id() -> String {
    wit::correlation_id()
}

/// A tenant setting (`rentald setting set`), e.g. `"time_zone"`; `None` when it is not set.
pub fn setting(key: &str) -> Option<String> {
    wit::setting(key)
}

/// The tenant setting naming its IANA time zone.
pub const TIME_ZONE_SETTING: &str = "time_zone";

/// The tenant's time zone: its `time_zone` setting, UTC when it has none. A name that is no
/// IANA zone is a configuration mistake: it is logged and UTC is used.
pub fn time_zone() -> chrono_tz::Tz {
    match setting(TIME_ZONE_SETTING)
        .as_deref()
        .map(dates::parse_time_zone)
    {
        Some(Ok(zone)) => zone,
        Some(Err(error)) => {
            crate::log(format_args!(
                "setting {TIME_ZONE_SETTING}: {error}; using UTC"
            ));
            chrono_tz::Tz::UTC
        }
        None => chrono_tz::Tz::UTC,
    }
}
