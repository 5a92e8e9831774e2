//! `rentald`: the car-rental platform host.

mod apidocs;
mod app;
mod auth;
mod bindings;
mod capabilities;
mod catalog;
mod cli;
mod config;
mod metrics;
mod probes;
mod queue;
mod response;
mod routes;
mod runtime;
mod server;
mod storage;
mod telemetry;
mod tenancy;
mod tls;

use clap::Parser as _;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match cli::Cli::parse().run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rentald: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
