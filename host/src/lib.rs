//! `rentald`: the car-rental platform host, as a library for its binary (`main.rs`) and for
//! the benchmarks' native reference server (`benches/reference`), which reads the same
//! database through [`storage`].

mod apidocs;
mod app;
mod auth;
mod bindings;
mod capabilities;
mod catalog;
pub mod cli;
mod component_run;
mod config;
mod connection;
mod counted;
mod files;
mod front;
mod idempotency;
mod metrics;
mod probes;
mod queue;
mod response;
mod routes;
mod runtime;
mod scaffold;
mod server;
pub mod storage;
mod telemetry;
mod tenancy;
mod tls;
mod webhook;

/// The allocator of every program built on this library: `rentald`, and the native reference,
/// which so differs from it only by the sandbox. Frees from another thread take no lock the
/// allocating thread holds; with glibc's allocator they contended for its arenas on every
/// request (docs/decisions.md, "The host allocates with mimalloc").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
