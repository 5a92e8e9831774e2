//! Bindings to the platform's WIT imports (`rental:platform/context` and `store`; with the
//! `webhook` feature also `secrets` and `bank`) and to its `responder` export.
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

/// The `rental:platform/responder` export, which [`export_handler!`](crate::export_handler)
/// fills with the component's [`Handler`](crate::Handler) beside its `wasi:http` export.
pub mod responder_export {
    wit_bindgen::generate!({
        world: "responder-export",
        path: "wit",
        pub_export_macro: true,
        export_macro_name: "export_platform_responder",
    });
}
