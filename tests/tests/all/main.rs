//! Black-box tests: the real `rentald` with the real components, over HTTP.

#![expect(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod apidocs;
mod auth;
mod availability;
mod booking;
mod catalog;
mod changes;
mod cli;
mod component_run;
mod components;
mod conformance;
mod dev;
mod events;
mod feed;
mod front;
mod guide;
mod hosts;
mod idempotency;
mod limits;
mod listing;
mod log;
mod login;
mod observability;
mod reference;
mod sandbox;
mod selfcheckin;
mod spin;
mod tls;
mod webhooks;
