//! Bindings to the platform's WIT imports (`rental:platform/context` and `store`; with the
//! `webhook` feature also `secrets` and `bank`).
//!
//! The only place where `wit_bindgen::generate!` runs. The rest of the crate wraps these raw
//! types in the typed API the components use; nothing here is public.

wit_bindgen::generate!({
    world: "platform",
    path: "wit",
});

/// The webhook world's own imports, reusing the platform bindings above. A component only
/// imports what it calls, so an API component built in the same workspace never imports these.
#[cfg(feature = "webhook")]
pub(crate) mod webhook {
    wit_bindgen::generate!({
        world: "webhook-platform",
        path: "wit",
        with: {
            "rental:platform/context@0.1.0": crate::bindings::rental::platform::context,
            "rental:platform/store@0.1.0": crate::bindings::rental::platform::store,
        },
    });
}
