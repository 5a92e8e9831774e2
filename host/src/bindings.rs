//! Host bindings of the platform's WIT interfaces. All `bindgen!` output lives here.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "platform",
    imports: { default: async | trappable },
    with: {
        "rental:platform/store.transaction": crate::capabilities::store::Transaction,
    },
});

pub use rental::platform::{context, store};
