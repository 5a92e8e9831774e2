//! The document store behind the WIT `store` interface, as data: the types of its operations,
//! the SQL statements each operation runs and the rules that read their results.
//!
//! `rentald` (over sqlx, on SQLite or PostgreSQL) and the Spin adapter (over Spin's SQLite)
//! both execute these [`Plan`]s, so the two stores cannot drift apart: a driver only runs the
//! statements a plan hands out, in order, and feeds back the rows. Everything else — which
//! statement, which parameters, what an empty answer means, which writes a read-only
//! transaction refuses, the limits — lives here.
//!
//! Statements are written once with PostgreSQL's `$N` placeholders and rendered per
//! [`Dialect`]: SQLite gets `?N`, which is the N-th parameter (a `$N` there would be a *named*
//! parameter, numbered by first appearance).
//!
//! The crate is plain Rust (no database driver), so it compiles for the host and for
//! `wasm32-wasip2`; the feature `rusqlite` adds a driver for an SQLite connection of the
//! calling thread ([`embedded`]).

#[cfg(feature = "rusqlite")]
pub mod embedded;
mod error;
mod feed;
mod kept;
pub mod keys;
mod open;
mod plan;
mod store;
mod wit;

/// The domain crate, for [`wit_store_conversions!`].
#[doc(hidden)]
pub use rental_domain as domain;

pub use error::{OneTransaction, StoreError};
pub use feed::{Change, MAX_CHANGES};
pub use kept::{KeptBodies, KeptDocument, MAX_KEPT_BYTES};
pub use open::{Driver, OpenTransaction};
pub use plan::{
    Column, Dialect, HeldPut, HeldPuts, Hold, Outcome, Plan, Row, Statement, Step, Value, blob,
    int, text,
};
pub use store::{
    Document, Entry, Expect, Index, MAX_GET_MANY, MAX_KEYS, MAX_SCAN, Mode, Range, Scan, Scope,
    begin, insert_tenant, read_row,
};

/// The SQLite schema of the store: the host's migrations that create the tables the store
/// uses, verbatim, so that a database created by the Spin adapter has the host's tables. Each
/// comes with a table it creates, by which a driver tells whether a database has it already.
pub const SQLITE_SCHEMA: &[(&str, &str)] = &[
    (
        "documents",
        include_str!("../migrations/sqlite/0001_init.sql"),
    ),
    (
        "index_counts",
        include_str!("../migrations/sqlite/0003_index_counts.sql"),
    ),
    (
        "views_pending",
        include_str!("../migrations/sqlite/0005_views_pending.sql"),
    ),
    (
        "changes",
        include_str!("../migrations/sqlite/0008_changes.sql"),
    ),
];

/// The statements of one file of [`SQLITE_SCHEMA`], one by one, without comments (drivers
/// that prepare one statement per call, like Spin's SQLite, cannot run a file at once).
pub fn sqlite_schema_statements(file: &str) -> Vec<String> {
    let text: String = file
        .lines()
        .map(|line| line.split("--").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    text.split(';')
        .map(|statement| statement.trim().to_owned())
        .filter(|statement| !statement.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_splits_into_its_statements() {
        let statements: Vec<String> = SQLITE_SCHEMA
            .iter()
            .flat_map(|(_, file)| sqlite_schema_statements(file))
            .collect();
        assert!(
            statements
                .iter()
                .any(|s| s.starts_with("CREATE TABLE documents"))
        );
        assert!(statements.iter().all(|s| !s.contains("--")));
        assert_eq!(
            statements
                .iter()
                .filter(|s| s.starts_with("CREATE TABLE"))
                .count(),
            11
        );
    }
}
