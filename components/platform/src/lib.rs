//! What the platform is made of, named once for everything that names it: `rentald`, its queue
//! and CLI, the Spin adapter, the components and the tests.
//!
//! - [`Component`]: the platform's components, their names and the world each is linked
//!   against;
//! - [`PERMISSIONS`]: what an API user can be given;
//! - [`routes`]: every API endpoint, the component serving it and who may call it;
//! - [`CORRELATION_HEADER`] and [`spin_variable`]: names on the wire and under Spin.
//!
//! Plain Rust: it builds for the host and for `wasm32-wasip2`.

mod component;
pub mod routes;

pub use component::{Component, UnknownComponent, WIT_VERSION, World};

pub const BOOKINGS_READ: &str = "bookings:read";
pub const BOOKINGS_WRITE: &str = "bookings:write";
pub const SELFCHECKIN_WRITE: &str = "selfcheckin:write";
pub const CATALOG_READ: &str = "catalog:read";

/// Every permission an API user can be given.
pub const PERMISSIONS: &[&str] = &[
    BOOKINGS_READ,
    BOOKINGS_WRITE,
    SELFCHECKIN_WRITE,
    CATALOG_READ,
];

/// The response header carrying the request's correlation id: set by the guest library on
/// every component's answer and by `rentald` on every answer it sends.
pub const CORRELATION_HEADER: &str = "x-correlation-id";

/// The Spin variable name for a platform name such as `bankone.signing_secret`
/// (`bankone_signing_secret`) or, with a prefix, a setting (`setting_time_zone`); `None` when
/// the name cannot be one (Spin allows lower-case letters, digits and underscores, starting
/// with a letter).
pub fn spin_variable(prefix: &str, name: &str) -> Option<String> {
    let mut out = String::from(prefix);
    for c in name.chars() {
        match c {
            'a'..='z' | '0'..='9' | '_' => out.push(c),
            'A'..='Z' => out.push(c.to_ascii_lowercase()),
            '.' | '-' => out.push('_'),
            _ => return None,
        }
    }
    out.starts_with(|c: char| c.is_ascii_lowercase())
        .then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permissions_keep_their_names() {
        assert_eq!(
            PERMISSIONS,
            [
                "bookings:read",
                "bookings:write",
                "selfcheckin:write",
                "catalog:read"
            ]
        );
    }

    #[test]
    fn platform_names_become_spin_variable_names() {
        assert_eq!(
            spin_variable("", "bankone.signing_secret").as_deref(),
            Some("bankone_signing_secret")
        );
        assert_eq!(
            spin_variable("", "banktwo.base_url").as_deref(),
            Some("banktwo_base_url")
        );
        assert_eq!(
            spin_variable("setting_", "time_zone").as_deref(),
            Some("setting_time_zone")
        );
        assert_eq!(spin_variable("", "a b"), None);
        assert_eq!(spin_variable("", "1x"), None);
    }
}
