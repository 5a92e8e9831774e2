//! The platform's interfaces for components running under Spin (`spin up`), for local
//! development.
//!
//! This component exports `rental:platform/{context,store,secrets,bank}` and imports only
//! what Spin 4.0 provides: the synchronous `fermyon:spin/sqlite@2.0.0` and
//! `fermyon:spin/variables@2.0.0`, and `wasi:http/outgoing-handler` for the bank. spin.toml
//! composes it into every HTTP component as a component dependency (docs/spin.md).
//!
//! Development mode: one tenant and one caller, both named by Spin variables, holding every
//! permission; no token is read. The store runs exactly the statements of
//! `rental_store_sql` that `rentald` runs, on the host's SQLite schema.

mod bank;
mod context;
mod db;
mod store;

mod bindings {
    wit_bindgen::generate!({
        world: "spin-adapter",
        path: "../../wit",
        generate_all,
    });
}

use bindings::fermyon::spin::variables;

/// The adapter's exports.
struct Adapter;

/// The C ABI entry points of the exports, which wit-bindgen generates. Only for WebAssembly:
/// natively (clippy, unit tests) a linker rejects the export names.
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code, reason = "wit-bindgen's export glue is unsafe C ABI code")]
mod export {
    use crate::Adapter;

    crate::bindings::export!(Adapter with_types_in crate::bindings);
}

/// A Spin variable; `None` when it is undefined, empty, or its name is not a valid Spin
/// variable name (lower-case letters, digits and underscores).
fn variable(name: &str) -> Option<String> {
    variables::get(name).ok().filter(|value| !value.is_empty())
}

/// A Spin variable, or `default` when it is not set.
fn variable_or(name: &str, default: &str) -> String {
    variable(name).unwrap_or_else(|| default.to_owned())
}
