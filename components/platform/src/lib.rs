//! What the platform is made of, named once for everything that names it: `rentald`, its queue
//! and CLI, the Spin adapter, the components and the tests.
//!
//! - [`Component`]: the platform's components, their names and the world each is linked
//!   against;
//! - [`PERMISSIONS`]: what an API user can be given;
//! - [`routes`]: every API endpoint, the component serving it and who may call it;
//! - [`CORRELATION_HEADER`]: the correlation id's name on the wire.
//!
//! Plain Rust: it builds for the host and for `wasm32-wasip2`.

mod component;
pub mod routes;

pub use component::{Component, UnknownComponent, World};

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
}
