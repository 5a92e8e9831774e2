//! The host side of each WIT interface, one module per interface. Every call is answered for
//! the tenant fixed in [`crate::runtime::RequestContext`] when the store was created: a guest
//! has no parameter through which it could name another tenant.

pub mod bank;
pub mod context;
pub mod secrets;
pub mod store;
