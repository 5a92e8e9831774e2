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
