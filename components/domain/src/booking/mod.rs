//! The booking rules: creation, update, cancellation, delivery and return (interface.md
//! sections 3, 4.4, 4.5 and 7.3; contract.md "Booking statuses", "Update rules we make
//! stricter" and "Pricing"). docs/booking.md describes them for clients and operators.
//!
//! Pure, like the rest of the crate: the booking component reads the store, calls these
//! rules with what it read and the instant of the request, and writes what they decide.
//!
//! - [`request`]: the request bodies and what they ask for (98 naming the field);
//! - [`settings`]: the tenant settings the rules read;
//! - [`customer`]: finding or creating the customer (1, 5, 109), who may book (34, 49), and
//!   rule 6 (name and e-mail, only by the customer's creator);
//! - [`places`]: delivery and return places (23, 25, 46, 74, 75, 76);
//! - [`terms`]: the whole request checked (13, 27, 28, 29, 30, 47, 51, 110), priced (pricing's
//!   codes and 50) and written into the booking;
//! - [`additionals`]: rule 7 and the insurance requirement;
//! - [`availability`]: what must be held (rule 3) and whether a car or category has room (3);
//! - [`rules`]: the status (26) and version (35) rules of an update;
//! - [`operations`]: cancel (8, 9), deliver (2, 13, 36, 39, 40, 72, 73) and return (13, 37,
//!   39, 42, 72);
//! - [`changes`]: the comments recorded on a booking (rule 2);
//! - [`response`]: the simplified and price responses.

pub mod additionals;
pub mod availability;
pub mod changes;
pub mod customer;
pub mod operations;
pub mod places;
pub mod request;
pub mod response;
pub mod rules;
pub mod search;
pub mod settings;
pub mod terms;
