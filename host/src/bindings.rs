//! Host bindings of the platform's WIT interfaces. All `bindgen!` output lives here.
//!
//! One `bindgen!` of the widest world, `webhook-platform` (`context`, `store`, `secrets`,
//! `bank`); which of its interfaces a component is linked against is decided per component
//! kind by [`add_api_imports`] and [`add_webhook_imports`].

use wasmtime::component::{HasSelf, Linker};

use crate::runtime::HostState;

wasmtime::component::bindgen!({
    path: "../wit",
    world: "webhook-platform",
    imports: { default: async | trappable },
    with: {
        "rental:platform/store.transaction": crate::capabilities::store::Transaction,
    },
    trappable_error_type: {
        "rental:platform/store.store-error" => crate::capabilities::store::StoreFailure,
        "rental:platform/bank.bank-error" => crate::capabilities::bank::BankFailure,
    },
});

pub use rental::platform::{bank, context, secrets, store};

/// The `platform` world: what every API component may import.
pub fn add_api_imports(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    context::add_to_linker::<_, HasSelf<HostState>>(linker, |s| s)?;
    store::add_to_linker::<_, HasSelf<HostState>>(linker, |s| s)?;
    Ok(())
}

/// The `webhook-platform` world: the platform plus the component's own secrets and the bank,
/// for the bank webhook components only.
pub fn add_webhook_imports(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    add_api_imports(linker)?;
    secrets::add_to_linker::<_, HasSelf<HostState>>(linker, |s| s)?;
    bank::add_to_linker::<_, HasSelf<HostState>>(linker, |s| s)?;
    Ok(())
}

/// The `rental:platform/responder` export: the entry point the runtime calls instead of
/// `wasi:http/incoming-handler` when a component has it.
pub mod responder {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "responder-export",
        exports: { default: async },
    });

    pub use exports::rental::platform::responder::{Part, Request};
}

/// The `rental:platform/handler` export of components built before `responder`, called when
/// a component has it and no `responder`.
pub mod handler {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "handler-export",
        exports: { default: async },
    });

    pub use exports::rental::platform::handler::Request;
}
