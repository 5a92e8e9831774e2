//! Black-box tests: the real `rentald` with the real components, over HTTP.

#![expect(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod auth;
mod booking;
mod cli;
mod front;
mod listing;
mod sandbox;
mod selfcheckin;
mod webhooks;
