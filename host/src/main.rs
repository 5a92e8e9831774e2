//! `rentald`: the car-rental platform host.

use clap::Parser as _;

/// Frees from another thread go back without a lock shared with that thread: with glibc's
/// allocator they contended for its arenas on every request (docs/decisions.md, "The host
/// allocates with mimalloc").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
