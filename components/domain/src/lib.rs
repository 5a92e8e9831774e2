//! The rental platform's domain: API models, error codes, translated messages and the pure
//! business rules every component shares.
//!
//! Plain Rust with no I/O: it builds for the host and for `wasm32-wasip2`, and never reads the
//! clock (callers pass instants in). Money is [`rust_decimal::Decimal`]; time is chrono with
//! explicit offsets.
//!
//! - [`models`] holds the interface's resources with their exact JSON names;
//! - [`error`] holds [`ErrorCode`] (interface.md 7.2) and [`ApiError`];
//! - [`i18n`] holds [`Language`] and the English, Spanish and Portuguese messages;
//! - [`status`] holds [`BookingStatus`];
//! - [`feed`] holds the query and the page of the bookings' change feed;
//! - [`events`] tells what a change of a booking did, as the tenant's webhooks receive it;
//! - [`paging`] holds limits, offsets, the booking list's id cursor and the lists' queries;
//! - [`query`] holds the one rule for reading query parameters (last occurrence, empty is
//!   absent);
//! - [`dates`] holds lenient date-time parsing, tenant time zones and the close-date range;
//! - [`payments`] holds the bank payments' queue message, the crediting rule and the
//!   settlement question to a bank with the reading of its answer;
//! - [`store`] and [`collections`] say how documents are laid out in the store;
//! - [`catalog`] reads, validates and writes the catalogue file of `rentald catalog`;
//! - [`json`] holds serde helpers, also for request models;
//! - [`booking`] holds the booking rules: requests, availability, status, version, customer
//!   and additionals rules, operations and the comments they record;
//! - [`selfcheckin`] holds the self-check-in model and rules (docs/selfcheckin.md).

pub mod booking;
pub mod catalog;
pub mod collections;
pub mod dates;
#[cfg(feature = "demo")]
pub mod demo;
pub mod error;
pub mod events;
pub mod feed;
#[cfg(test)]
mod fixtures;
pub mod i18n;
pub mod json;
pub mod models;
pub mod paging;
pub mod payments;
pub mod pricing;
pub mod query;
pub mod selfcheckin;
pub mod status;
pub mod store;

pub use collections::{BranchOfficeDoc, CustomerDoc};
pub use dates::{CloseDateRange, UnknownTimeZone};
pub use error::{ApiError, ErrorCode};
pub use i18n::Language;
pub use models::*;
pub use paging::{BookingListQuery, ClosedListQuery, IdCursor, Page};
pub use status::BookingStatus;
pub use store::{Bound, IndexKey, KeyPart, KeyRange, Record, Stored};

/// The type of every amount of money, for crates that build on the models.
pub use rust_decimal::Decimal;
