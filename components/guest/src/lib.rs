//! Shared glue for the platform's API components.
//!
//! A component is a `cdylib` for `wasm32-wasip2` that exports `wasi:http/incoming-handler` and
//! imports `rental:platform/context` and `rental:platform/store`. This crate holds everything
//! such a component needs besides its own logic:
//!
//! - [`http`]: the [`Request`] and [`Response`] a handler sees, [`json`], and
//!   [`export_handler!`], which exports a [`Handler`] as the component's `wasi:http` handler;
//! - [`error`]: the one [`Error`] type of a handler and its mapping to the interface's error
//!   body (`{"ErrorMessage", "ErrorCode", "Id"}`);
//! - [`context`]: what the host says about the request (tenant, caller, language, settings,
//!   time zone);
//! - [`random`]: random bytes from the host;
//! - [`store`]: typed transactions over the tenant's document store, and
//!   [`retry_on_conflict`];
//! - `webhook` (feature `webhook`, for the bank webhook components only): the component's
//!   secrets, the bank's confirmation of a settlement, and queueing a payment for a booking.
//!
//! A component then only writes its handler:
//!
//! ```
//! struct Component;
//!
//! impl rental_guest::Handler for Component {
//!     fn handle(
//!         request: rental_guest::Request,
//!     ) -> Result<rental_guest::Response, rental_guest::Error> {
//!         Ok(rental_guest::Response::not_found())
//!     }
//! }
//!
//! rental_guest::export_handler!(Component);
//! ```
//!
//! Everything compiles natively as well. There, the calls that reach the host (the [`context`]
//! functions, [`store::Transaction`], [`random`]) are answered by a [`testing::TestHost`]: an
//! in-memory host with the store's own rules, so a handler is tested with `cargo test` and no
//! server.
//!
//! The crate carries the WIT package it binds to (`wit/`), so it builds outside this
//! repository; `rentald component wit DIR` writes the same package as a running host offers it.

mod bindings;
pub mod comments;
pub mod context;
pub mod error;
mod host;
pub mod http;
pub mod random;
pub mod store;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;
#[cfg(feature = "webhook")]
pub mod webhook;

pub use error::{Error, log};
pub use http::{Handler, Request, Response, json, json_text, path_id};
pub use store::retry_on_conflict;

/// Items the exported macros refer to; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use wasip2;

    pub use crate::bindings::responder_export;
}
