//! What the host routes: the platform's route table ([`rental_platform::routes`]), whose
//! endpoints components serve, and the paths the host answers itself.

use http::Method;

pub use rental_platform::routes::{Access, Matched, Route, find};

/// The paths the host answers itself, without a component.
pub const TOKEN_PATH: &str = "/auth/token";
pub const HEALTHZ_PATH: &str = "/healthz";
pub const READYZ_PATH: &str = "/readyz";
pub const OPENAPI_PATH: &str = "/openapi.json";
pub const DOCS_PATH: &str = "/docs";

/// Every endpoint the host answers itself, with its method: the token endpoint (after tenant
/// resolution) and the operational ones (on any Host). With the platform's
/// [`ROUTES`](rental_platform::routes::ROUTES), every endpoint of the API document
/// (`docs/openapi.yaml`).
pub static HOST_ROUTES: &[(Method, &str)] = &[
    (Method::POST, TOKEN_PATH),
    (Method::GET, HEALTHZ_PATH),
    (Method::GET, READYZ_PATH),
    (Method::GET, OPENAPI_PATH),
    (Method::GET, DOCS_PATH),
];

/// The method the host answers at `path` when it answers it itself.
pub fn host_method(path: &str) -> Option<&'static Method> {
    HOST_ROUTES
        .iter()
        .find(|(_, p)| *p == path)
        .map(|(method, _)| method)
}
