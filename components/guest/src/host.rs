//! The platform's imports as the rest of the crate calls them: a component's WIT bindings when
//! built for WebAssembly, the [`testing`](crate::testing) host in a native build, with the
//! same names and signatures, so that nothing above this module knows which one it runs on.

#[cfg(target_arch = "wasm32")]
pub(crate) use crate::bindings::rental::platform::{context, store};
#[cfg(all(target_arch = "wasm32", feature = "webhook"))]
pub(crate) use crate::bindings::webhook::rental::platform::{bank, secrets};

#[cfg(all(not(target_arch = "wasm32"), feature = "webhook"))]
pub(crate) use crate::testing::imports::{bank, secrets};
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use crate::testing::imports::{context, store};

/// `len` random bytes from the host's secure source (`wasi:random`).
#[cfg(target_arch = "wasm32")]
pub(crate) fn random_bytes(len: u64) -> Vec<u8> {
    wasip2::random::random::get_random_bytes(len)
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) use crate::testing::imports::random_bytes;
