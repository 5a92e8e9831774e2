//! Change feeds: every write and delete of a document whose collection has a view that keeps
//! a feed ([`View::feed`]) appends a change in the write's own transaction, so a change exists
//! exactly when its write committed; a reader pages through a view's changes in the order
//! they committed.
//!
//! A change's `position` is that order, from 1 and without gaps, so that a reader that
//! remembers the last position it read misses nothing and reads nothing twice:
//! - SQLite's writers take turns, so the order of writing is the order of committing: a change
//!   is numbered as it is written, one past the largest position.
//! - PostgreSQL's writers run side by side and may commit in another order than they wrote.
//!   A change is written unnumbered, and a reader first numbers every committed change that is
//!   not yet ([`Scope::number_changes`]), in a transaction of its own that holds the feed's
//!   lock: each numbering goes on from the last one, and what it cannot see yet (a change not
//!   committed when it looked) it leaves for the next, which numbers it after everything
//!   numbered before. A change numbered after a reader's read so always lands after what
//!   that reader has read. Two changes of one document are numbered in their order: the
//!   second write waited for the first to commit (the document's row is locked) before it
//!   wrote its change.

use rental_domain::collections;
pub use rental_domain::store::Change;
use rental_domain::store::View;

use crate::error::StoreError;
use crate::plan::{Column, Plan, Statement, Value, int, text};
use crate::store::{Scope, text_value};

/// The most changes one read returns.
pub const MAX_CHANGES: u32 = 1_000;

/// How many changes one numbering numbers at most: the others are left for the next, so that
/// the feed's lock is held briefly even after a burst of writes.
const NUMBERING_BATCH: i64 = 10_000;

/// The time of a change, microseconds since the epoch, as each database tells it.
const NOW_SQLITE: &str = "CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)";
const NOW_POSTGRES: &str = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)";

const CHANGE: &[Column] = &[
    Column::Int,
    Column::Text,
    Column::Int,
    Column::Int,
    Column::Text,
    Column::Int,
];

/// The view whose feed `collection` names, or why it has none.
fn fed_view(collection: &str) -> Result<&'static View, StoreError> {
    collections::view(collection)
        .filter(|view| view.feed)
        .ok_or_else(|| StoreError::Invalid(format!("`{collection}` keeps no change feed")))
}

impl Scope {
    /// The statement that appends to `view`'s feed the change the write of document `id`
    /// (already written, in this transaction) made: `rendered` is its rendering, `None` for a
    /// delete (which runs it before the document's row goes). A write's change, run as a
    /// clause of its put ([`Statement::gated_on_postgres`]), takes the revision from the
    /// put's clause `w` instead of the document's row, which that statement cannot see yet.
    pub(crate) fn change_statement(
        &self,
        view: &View,
        id: &str,
        rendered: Option<String>,
    ) -> Statement {
        let deleted = rendered.is_none();
        let mut params = vec![
            self.tenant_value(),
            text_value(view.collection),
            text_value(id),
            text_value(view.source),
        ];
        let body = match rendered {
            Some(body) => {
                params.push(Value::Text(body));
                "$5"
            }
            None => "NULL",
        };
        let revision = if deleted { "revision + 1" } else { "revision" };
        let document = "documents WHERE tenant = $1 AND collection = $4 AND id = $3";
        let insert = |position: &str, now: &str, from: &str| {
            format!(
                "INSERT INTO changes \
                     (tenant, collection, position, doc_id, revision, body, changed_at) \
                 SELECT $1, $2, {position}, $3, {revision}, {body}, {now} FROM {from}"
            )
        };
        let statement = Statement::new(
            insert(
                "(SELECT COALESCE(MAX(position), 0) + 1 FROM changes \
                  WHERE tenant = $1 AND collection = $2)",
                NOW_SQLITE,
                document,
            ),
            params,
            &[],
        )
        .on_postgres(insert("NULL", NOW_POSTGRES, document));
        if deleted {
            statement
        } else {
            statement.gated_on_postgres(insert("NULL", NOW_POSTGRES, "w"))
        }
    }

    /// Numbers the committed changes of `collection`'s feed that are not numbered yet, in the
    /// order they were written, after the last one numbered; returns how many. PostgreSQL
    /// only, in a read-write transaction of its own, committed before the feed is read (on
    /// SQLite every change is numbered as it is written).
    pub fn number_changes(&self, collection: &str) -> Plan<u64> {
        if let Err(e) = self
            .writable()
            .and_then(|()| fed_view(collection).map(|_| ()))
        {
            return Plan::refuse(e);
        }
        let params = || vec![self.tenant_value(), text_value(collection)];
        let lock = Statement::new(
            "SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 0))) l"
                .to_owned(),
            params(),
            &[Column::Int],
        );
        let mut numbered = params();
        numbered.push(Value::Int(NUMBERING_BATCH));
        let number = Statement::new(
            "UPDATE changes SET position = n.position \
             FROM (SELECT id, \
                       (SELECT COALESCE(MAX(position), 0) FROM changes \
                        WHERE tenant = $1 AND collection = $2) \
                       + ROW_NUMBER() OVER (ORDER BY id) AS position \
                   FROM changes WHERE tenant = $1 AND collection = $2 AND position IS NULL \
                   ORDER BY id LIMIT $3) n \
             WHERE changes.id = n.id RETURNING changes.position"
                .to_owned(),
            numbered,
            &[Column::Int],
        );
        Plan::new(vec![lock, number], |results| {
            let rows = results.get(1).map_or(0, Vec::len);
            Ok(u64::try_from(rows).unwrap_or(u64::MAX))
        })
    }

    /// At most `limit` (capped at [`MAX_CHANGES`]) changes of `collection`'s feed after
    /// position `after`, in order.
    pub fn changes(&self, collection: &str, after: u64, limit: u32) -> Plan<Vec<Change>> {
        if let Err(e) = fed_view(collection) {
            return Plan::refuse(e);
        }
        let statement = Statement::new(
            "SELECT position, doc_id, revision, CASE WHEN body IS NULL THEN 1 ELSE 0 END, \
                 COALESCE(body, ''), changed_at \
             FROM changes WHERE tenant = $1 AND collection = $2 AND position > $3 \
             ORDER BY position LIMIT $4"
                .to_owned(),
            vec![
                self.tenant_value(),
                text_value(collection),
                Value::Int(i64::try_from(after).unwrap_or(i64::MAX)),
                Value::Int(i64::from(limit.min(MAX_CHANGES))),
            ],
            CHANGE,
        );
        Plan::new(vec![statement], |results| {
            let rows = results.first().map(Vec::as_slice).unwrap_or_default();
            rows.iter().map(|row| change(row)).collect()
        })
    }
}

fn change(row: &[Value]) -> Result<Change, StoreError> {
    let unsigned = |i| {
        u64::try_from(int(row, i)?)
            .map_err(|_| StoreError::Fault(format!("column {i} of a change is negative")))
    };
    let deleted = int(row, 3)? != 0;
    let micros = int(row, 5)?;
    Ok(Change {
        position: unsigned(0)?,
        id: text(row, 1)?,
        revision: unsigned(2)?,
        body: (!deleted).then(|| text(row, 4)).transpose()?,
        changed_at: chrono::DateTime::from_timestamp_micros(micros).ok_or_else(|| {
            StoreError::Fault(format!("a change's time is out of range: {micros}"))
        })?,
    })
}

#[cfg(test)]
mod tests {
    use rental_domain::collections::{BOOKING_ITEMS, bookings};

    use super::*;
    use crate::{Dialect, Mode, Step};

    fn statements<T: std::fmt::Debug>(mut plan: Plan<T>) -> Vec<Statement> {
        let mut ran = Vec::new();
        let mut rows = None;
        loop {
            match plan.step(rows.take()) {
                Step::Run(statement) => {
                    ran.push(statement);
                    rows = Some(Vec::new());
                }
                Step::Done(_) => return ran,
            }
        }
    }

    #[test]
    fn only_a_view_with_a_feed_has_changes() {
        let scope = Scope::new("t", Mode::ReadWrite);
        for collection in [bookings::COLLECTION, "nope"] {
            let refused = scope.changes(collection, 0, 10).run(|_| Ok(Vec::new()));
            assert_eq!(
                refused,
                Err(StoreError::Invalid(format!(
                    "`{collection}` keeps no change feed"
                )))
            );
        }
        let read = scope
            .changes(BOOKING_ITEMS.collection, 0, 10)
            .run(|_| Ok(Vec::new()));
        assert_eq!(read, Ok(Vec::new()));
    }

    #[test]
    fn numbering_writes_and_reads_are_capped() {
        let read_only = Scope::new("t", Mode::ReadOnly);
        assert!(matches!(
            read_only
                .number_changes(BOOKING_ITEMS.collection)
                .run(|_| Ok(Vec::new())),
            Err(StoreError::Invalid(_))
        ));
        let [read] = statements(read_only.changes(BOOKING_ITEMS.collection, 7, 5_000))
            .try_into()
            .expect("one statement");
        assert_eq!(read.params[2], Value::Int(7));
        assert_eq!(read.params[3], Value::Int(i64::from(MAX_CHANGES)));
    }

    #[test]
    fn sqlite_numbers_a_change_as_it_is_written_and_postgres_leaves_it() {
        let scope = Scope::new("t", Mode::ReadWrite);
        let written = scope.change_statement(&BOOKING_ITEMS, "12", Some("{}".to_owned()));
        assert!(written.sql(Dialect::Sqlite).contains("MAX(position)"));
        assert!(
            written
                .sql(Dialect::Postgres)
                .contains("$2, NULL, $3, revision, $5")
        );
        let deleted = scope.change_statement(&BOOKING_ITEMS, "12", None);
        assert!(
            deleted
                .sql(Dialect::Postgres)
                .contains("revision + 1, NULL")
        );
        assert_eq!(deleted.params.len(), 4);
    }

    #[test]
    fn a_deleted_document_has_no_body() {
        let row = |deleted: i64| {
            vec![
                Value::Int(3),
                Value::Text("12".to_owned()),
                Value::Int(2),
                Value::Int(deleted),
                Value::Text(String::new()),
                Value::Int(99),
            ]
        };
        assert_eq!(change(&row(1)).map(|c| c.body), Ok(None));
        assert_eq!(change(&row(0)).map(|c| c.body), Ok(Some(String::new())));
    }
}
