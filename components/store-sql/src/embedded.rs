//! The store's statements on an SQLite connection of the calling thread (feature `rusqlite`):
//! `rentald`'s SQLite transactions and the guest SDK's test host run them here.

use rusqlite::types::ValueRef;
use rusqlite::{CachedStatement, Connection};

use crate::{Column, Dialect, Row, Statement, Value};

/// Runs one statement on `connection` and reads its rows as the shared rules expect them.
///
/// Errors: SQLite's, among them a column whose type is not the statement's
/// (`InvalidColumnType`).
pub fn execute(connection: &Connection, statement: &Statement) -> rusqlite::Result<Vec<Row>> {
    let sql = statement.sql(Dialect::Sqlite);
    run(&mut connection.prepare_cached(&sql)?, statement)
}

/// Runs `statement` as [`execute`] does when it only reads (SQLite's `sqlite3_stmt_readonly`);
/// leaves one that writes unrun and answers `None`.
///
/// Errors: as [`execute`].
pub fn execute_if_reading(
    connection: &Connection,
    statement: &Statement,
) -> rusqlite::Result<Option<Vec<Row>>> {
    let sql = statement.sql(Dialect::Sqlite);
    let mut prepared = connection.prepare_cached(&sql)?;
    if !prepared.readonly() {
        return Ok(None);
    }
    run(&mut prepared, statement).map(Some)
}

/// Room for a statement's rows once the first one is read. A page of 30 then fits without
/// the three `realloc`s of doubling: glibc serves each under its arena's lock, which other
/// threads' frees of this memory contend for, where a first allocation of this size (768
/// bytes) comes from the thread's own cache (docs/benchmarks.md). A statement that reads no
/// row (most of a write's) allocates nothing.
const ROWS_AT_FIRST: usize = 32;

fn run(prepared: &mut CachedStatement<'_>, statement: &Statement) -> rusqlite::Result<Vec<Row>> {
    for (position, value) in statement.params.iter().enumerate() {
        let index = position + 1;
        match value {
            Value::Int(v) => prepared.raw_bind_parameter(index, v),
            Value::Text(v) => prepared.raw_bind_parameter(index, v.as_str()),
            Value::Blob(v) => prepared.raw_bind_parameter(index, v.as_slice()),
        }?;
    }
    let mut rows = prepared.raw_query();
    let mut read = Vec::new();
    while let Some(row) = rows.next()? {
        if read.capacity() == 0 {
            read.reserve_exact(ROWS_AT_FIRST);
        }
        read.push(crate::read_row(statement.columns, |i, kind| {
            let value = row.get_ref(i)?;
            column(value, kind).ok_or_else(|| {
                rusqlite::Error::InvalidColumnType(i, String::new(), value.data_type())
            })
        })?);
    }
    Ok(read)
}

/// Creates the store's tables ([`crate::SQLITE_SCHEMA`]) on an empty database.
///
/// Errors: SQLite's.
pub fn create_schema(connection: &Connection) -> rusqlite::Result<()> {
    for (_, file) in crate::SQLITE_SCHEMA {
        connection.execute_batch(file)?;
    }
    Ok(())
}

/// One column as the shared rules read it, when it has the expected type.
fn column(value: ValueRef<'_>, kind: Column) -> Option<Value> {
    match (kind, value) {
        (Column::Int, ValueRef::Integer(v)) => Some(Value::Int(v)),
        // A page's bodies are checked here, 150 KB for 30 bookings: the SIMD check takes two
        // fifths of the standard library's time (docs/benchmarks.md).
        (Column::Text, ValueRef::Text(v)) => simdutf8::basic::from_utf8(v)
            .ok()
            .map(|text| Value::Text(text.to_owned())),
        (Column::Blob, ValueRef::Blob(v)) => Some(Value::Blob(v.to_vec())),
        _ => None,
    }
}
