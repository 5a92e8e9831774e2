//! Bindings to the platform's WIT imports (`rental:platform/context` and `store`).
//!
//! The only place where `wit_bindgen::generate!` runs. The rest of the crate wraps these raw
//! types in the typed API the components use; nothing here is public.

wit_bindgen::generate!({
    world: "platform",
    path: "../../wit",
});
