//! `rentald`: the car-rental platform host.

use clap::Parser as _;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match rentald::cli::Cli::parse().run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rentald: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
