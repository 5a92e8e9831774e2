//! The store's operations: their types, limits, statements and rules.

use std::collections::{BTreeMap, HashMap};

use rental_domain::collections;
use rental_domain::store::{Bound, Counted, IndexKey, KeyPart, KeyRange, Record, View};
pub use rental_domain::store::{Expect, Mode};

use crate::error::StoreError;
use crate::keys::{self, PREFIX_END};
use crate::plan::{
    Column, Dialect, Holdable, Plan, Row, Statement, Value, WRITTEN, blob, int, take_text, text,
    written,
};

/// The largest page a scan may ask for; `keys` may return more since it loads no documents.
pub const MAX_SCAN: u32 = 1_000;
pub const MAX_KEYS: u32 = 100_000;
/// At most this many ids in one `get_many`.
pub const MAX_GET_MANY: usize = 1_000;
/// The most index entries one statement writes (two parameters each): a document's entries
/// past it go in further statements, well inside SQLite's 32,766 parameters and
/// PostgreSQL's 65,535 (a booking holds two entries a day of its period).
const INDEX_ROWS: usize = 4_000;

/// A range of one index of one collection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    pub collection: String,
    pub index: String,
    pub keys: KeyRange,
}

impl Range {
    /// The collection whose index entries the range covers: the view's source for a range
    /// over a view ([`View`]), which has no entries of its own.
    fn indexed_collection(&self) -> &str {
        collections::view(&self.collection).map_or(&self.collection, |view| view.source)
    }

    /// The half-open byte interval `[lo, hi)` of encoded keys.
    pub fn interval(&self) -> (Vec<u8>, Vec<u8>) {
        let lo = match &self.keys.lower {
            None => Vec::new(),
            Some(Bound::Inclusive(p)) => keys::encode(p),
            Some(Bound::Exclusive(p)) => keys::prefix_end(p),
        };
        let hi = match &self.keys.upper {
            None => vec![PREFIX_END],
            Some(Bound::Inclusive(p)) => keys::prefix_end(p),
            Some(Bound::Exclusive(p)) => keys::encode(p),
        };
        (lo, hi)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    pub range: Range,
    pub descending: bool,
    pub skip: u32,
    pub limit: u32,
}

/// An index entry to write with a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    pub name: String,
    pub parts: Vec<KeyPart>,
}

impl From<&IndexKey> for Index {
    fn from(key: &IndexKey) -> Self {
        Self {
            name: key.name.to_owned(),
            parts: key.parts.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub id: String,
    pub revision: u64,
    pub body: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub id: String,
    pub key: Vec<KeyPart>,
}

/// The statement that opens a transaction of `mode`. SQLite takes its single write lock up
/// front for writers, so a read followed by a write can never fail to upgrade; PostgreSQL
/// relies on row locks taken by the compare-and-swap statements themselves.
pub fn begin(dialect: Dialect, mode: Mode) -> &'static str {
    match (dialect, mode) {
        (Dialect::Sqlite, Mode::ReadOnly) => "BEGIN DEFERRED",
        (Dialect::Sqlite, Mode::ReadWrite) => "BEGIN IMMEDIATE",
        (Dialect::Postgres, Mode::ReadOnly) => "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
        (Dialect::Postgres, Mode::ReadWrite) => "BEGIN ISOLATION LEVEL READ COMMITTED",
    }
}

/// Creates the row of tenant `slug` unless it exists (the Spin adapter's one tenant).
pub fn insert_tenant(slug: &str, now_micros: i64) -> Statement {
    Statement::new(
        "INSERT INTO tenants (slug, enabled, created_at) VALUES ($1, 1, $2) \
         ON CONFLICT DO NOTHING"
            .to_owned(),
        vec![text_value(slug), Value::Int(now_micros)],
        &[],
    )
}

/// For records written in bulk: the largest numeric id per collection, to which the sequence
/// named like the collection is advanced.
fn sequence_advances(records: &[Record]) -> BTreeMap<&'static str, i64> {
    let mut largest = BTreeMap::new();
    for record in records {
        if let Ok(id) = record.id.parse::<i64>() {
            let max = largest.entry(record.collection).or_insert(id);
            *max = (*max).max(id);
        }
    }
    largest
}

/// An insert into `documents` of the row `$row` (tenant, collection, id, first revision,
/// body) that replaces a document already there.
macro_rules! put_any {
    ($row:expr) => {
        concat!(
            "INSERT INTO documents (tenant, collection, id, revision, body) ",
            $row,
            " ON CONFLICT (tenant, collection, id) \
             DO UPDATE SET revision = documents.revision + 1, body = excluded.body \
             RETURNING revision"
        )
    };
}

/// Creates or replaces a document (`Expect::Any`).
const PUT_ANY: &str = put_any!("VALUES ($1, $2, $3, 1, $4)");

/// [`PUT_ANY`] as a [gated](Statement::gated_on_postgres) clause: a view's write.
const PUT_ANY_WRITTEN: &str = put_any!(concat!("SELECT $1, $2, $3, 1, $4 WHERE ", written!()));

const DOCUMENT: &[Column] = &[Column::Text, Column::Int, Column::Text];
const ONE_INT: &[Column] = &[Column::Int];

/// The shard of a count a PostgreSQL connection writes (migration `0006_count_shards`): a
/// count kept in one row would make every transaction that adds a booking wait for the one
/// before it to commit, since the row stays locked until then. Each connection adds to its
/// own of 32 rows and a count is their sum. SQLite has one writer at a time and one row.
const COUNT_SHARD: &str = "pg_backend_pid() % 32";
const ENTRY: &[Column] = &[Column::Text, Column::Blob];

pub(crate) fn text_value(s: &str) -> Value {
    Value::Text(s.to_owned())
}

/// The placeholders of [`index_values`], a `($4, $5)` pair per index.
fn index_pairs(indexes: &[Index]) -> String {
    let pairs: Vec<String> = (0..indexes.len())
        .map(|i| format!("(${}, ${})", 4 + 2 * i, 5 + 2 * i))
        .collect();
    pairs.join(", ")
}

/// The name and encoded key of each index, as bound after three leading parameters.
fn index_values(indexes: &[Index]) -> impl Iterator<Item = Value> + '_ {
    indexes.iter().flat_map(|index| {
        [
            text_value(&index.name),
            Value::Blob(keys::encode(&index.parts)),
        ]
    })
}

/// The encoded first `depth` parts of a counted index's key, which must be integers or times
/// ([`Counted`]): anything else is refused rather than counted under a wrong prefix.
fn counted_head(counted: &Counted, parts: &[KeyPart]) -> Result<Vec<u8>, StoreError> {
    match parts.get(..counted.depth) {
        Some(head)
            if head
                .iter()
                .all(|p| matches!(p, KeyPart::Int(_) | KeyPart::Time(_))) =>
        {
            Ok(keys::encode(head))
        }
        _ => Err(StoreError::Invalid(format!(
            "index `{}` of `{}` is counted by its first {} parts, which must be integers or times",
            counted.index, counted.collection, counted.depth
        ))),
    }
}

/// SQL for the counted prefix of a stored key: its first `depth` fixed-width parts.
fn head_sql(counted: &Counted) -> String {
    format!("substr(key, 1, {})", counted.depth * keys::FIXED_PART_LEN)
}

/// A revision as stored (a signed 64-bit column).
fn revision_value(revision: u64) -> Value {
    Value::Int(i64::try_from(revision).unwrap_or(i64::MAX))
}

/// The document of a row `id, revision, body`, its texts moved out of the row.
fn document(row: &mut [Value]) -> Result<Document, StoreError> {
    Ok(Document {
        id: take_text(row, 0)?,
        revision: u64::try_from(int(row, 1)?).unwrap_or_default(),
        body: take_text(row, 2)?,
    })
}

/// The documents of the rows of a plan's first statement.
fn documents(results: Vec<Vec<Row>>) -> Result<Vec<Document>, StoreError> {
    first_rows(results)
        .into_iter()
        .map(|mut row| document(&mut row))
        .collect()
}

/// The rows of a plan's first statement.
fn first_rows(results: Vec<Vec<Row>>) -> Vec<Row> {
    results.into_iter().next().unwrap_or_default()
}

/// The first integer of the first row of the first statement.
fn first_int(results: &[Vec<Row>]) -> Result<i64, StoreError> {
    let row = results
        .first()
        .and_then(|rows| rows.first())
        .ok_or_else(|| StoreError::Fault("the statement returned no row".to_owned()))?;
    int(row, 0)
}

/// The operations of one transaction of one tenant: each returns the [`Plan`] that performs
/// it. The tenant is fixed here, so no statement can reach another tenant's rows.
#[derive(Debug, Clone)]
pub struct Scope {
    tenant: String,
    mode: Mode,
}

impl Scope {
    pub fn new(tenant: &str, mode: Mode) -> Self {
        Self {
            tenant: tenant.to_owned(),
            mode,
        }
    }

    pub(crate) fn writable(&self) -> Result<(), StoreError> {
        match self.mode {
            Mode::ReadWrite => Ok(()),
            Mode::ReadOnly => Err(StoreError::Invalid(
                "write in a read-only transaction".to_owned(),
            )),
        }
    }

    pub(crate) fn tenant_value(&self) -> Value {
        text_value(&self.tenant)
    }

    /// Refuses a write that names a view's collection: only the store writes a view.
    fn not_a_view(collection: &str) -> Result<(), StoreError> {
        match collections::view(collection) {
            Some(view) => Err(StoreError::Invalid(format!(
                "`{collection}` is rendered by the store from `{}` and cannot be written",
                view.source
            ))),
            None => Ok(()),
        }
    }

    pub fn get(&self, collection: &str, id: &str) -> Plan<Option<Document>> {
        let statement = Statement::new(
            "SELECT id, revision, body FROM documents \
             WHERE tenant = $1 AND collection = $2 AND id = $3"
                .to_owned(),
            vec![self.tenant_value(), text_value(collection), text_value(id)],
            DOCUMENT,
        );
        Plan::new(vec![statement], |results| {
            first_rows(results)
                .first_mut()
                .map(|row| document(row))
                .transpose()
        })
    }

    /// Several documents, in the order of `ids`; missing ones are left out.
    pub fn get_many(&self, collection: &str, ids: &[String]) -> Plan<Vec<Document>> {
        if ids.len() > MAX_GET_MANY {
            return Plan::refuse(StoreError::Invalid(format!(
                "at most {MAX_GET_MANY} ids at once"
            )));
        }
        if ids.is_empty() {
            return Plan::done(Ok(Vec::new()));
        }
        let placeholders: Vec<String> = (0..ids.len()).map(|i| format!("${}", i + 3)).collect();
        let sql = format!(
            "SELECT id, revision, body FROM documents \
             WHERE tenant = $1 AND collection = $2 AND id IN ({})",
            placeholders.join(", ")
        );
        // On PostgreSQL each id is looked up by the whole primary key, as a scan's entries
        // are (see `range_rows`): without statistics the planner matched the tenant and the
        // collection in the key and filtered the ids over every document of the collection
        // (12 ms for three car locks of a tenant with 21,000, against 0.08 ms).
        let postgres = format!(
            "SELECT d.id, d.revision, d.body FROM (VALUES ({})) AS k(id) \
             CROSS JOIN LATERAL (SELECT id, revision, body FROM documents \
                 WHERE tenant = $1 AND collection = $2 AND id = k.id OFFSET 0) d",
            placeholders.join("), (")
        );
        let mut params = vec![self.tenant_value(), text_value(collection)];
        params.extend(ids.iter().map(|id| text_value(id)));
        let order = ids.to_vec();
        Plan::new(
            vec![Statement::new(sql, params, DOCUMENT).on_postgres(postgres)],
            move |results| {
                let mut found: HashMap<String, Document> = HashMap::new();
                for doc in documents(results)? {
                    found.insert(doc.id.clone(), doc);
                }
                Ok(order.iter().filter_map(|id| found.remove(id)).collect())
            },
        )
    }

    /// Writes the document if `expected` holds (else [`StoreError::Conflict`]) and replaces
    /// its index entries. Returns the new revision.
    pub fn put(
        &self,
        collection: &str,
        id: &str,
        body: &str,
        indexes: &[Index],
        expected: Expect,
    ) -> Plan<u64> {
        if let Err(e) = self.writable() {
            return Plan::refuse(e);
        }
        let mut params = vec![
            self.tenant_value(),
            text_value(collection),
            text_value(id),
            text_value(body),
        ];
        let sql = match expected {
            Expect::Absent => {
                "INSERT INTO documents (tenant, collection, id, revision, body) \
                 VALUES ($1, $2, $3, 1, $4) ON CONFLICT DO NOTHING RETURNING revision"
            }
            Expect::Revision(expected) => {
                params.push(revision_value(expected));
                "UPDATE documents SET revision = revision + 1, body = $4 \
                 WHERE tenant = $1 AND collection = $2 AND id = $3 AND revision = $5 \
                 RETURNING revision"
            }
            Expect::Any => PUT_ANY,
        };
        let fresh = expected == Expect::Absent;
        let statements = match self.put_statements(
            Statement::new(sql.to_owned(), params, ONE_INT),
            collection,
            id,
            body,
            indexes,
            fresh,
        ) {
            Ok(statements) => statements,
            Err(e) => return Plan::refuse(e),
        };
        let plan = Plan::new(statements, |results| {
            Ok(u64::try_from(first_int(&results)?).unwrap_or_default())
        })
        .guard_first(|rows| rows.is_empty().then_some(StoreError::Conflict))
        .reads_first_rows_only();
        let revision = match expected {
            Expect::Absent => 1,
            Expect::Revision(expected) => expected.saturating_add(1),
            Expect::Any => return plan,
        };
        plan.holdable(Holdable {
            collection: collection.to_owned(),
            id: id.to_owned(),
            counted: collections::COUNTED
                .iter()
                .any(|counted| counted.collection == collection),
            revision,
        })
    }

    /// The document's write, then its views ([`View`]), then the counts of its counted
    /// indexes ([`Counted`]), then its index entries: those no longer wanted are deleted and
    /// the new ones inserted, so an entry that stays (most of them, on an update) is not
    /// written again. A `fresh` document (written with [`Expect::Absent`]) has no entries yet,
    /// so nothing is deleted or decremented. A write into a view is refused.
    fn put_statements(
        &self,
        write: Statement,
        collection: &str,
        id: &str,
        body: &str,
        indexes: &[Index],
        fresh: bool,
    ) -> Result<Vec<Statement>, StoreError> {
        Self::not_a_view(collection)?;
        let mut statements = vec![write];
        for view in collections::views_of(collection) {
            let rendered = Self::rendering(view, id, body)?;
            if view.feed {
                statements.push(self.view_statement(view, id, rendered.clone()));
                statements.push(self.change_statement(view, id, Some(rendered)));
            } else {
                statements.push(self.view_statement(view, id, rendered));
            }
        }
        for counted in collections::COUNTED
            .iter()
            .filter(|c| c.collection == collection)
        {
            let head = match indexes.iter().find(|index| index.name == counted.index) {
                Some(index) => Some(counted_head(counted, &index.parts)?),
                None => None,
            };
            if !fresh {
                statements.push(self.uncount_statement(counted, id, head.as_deref()));
            }
            if let Some(head) = head {
                statements.push(self.count_statement(counted, id, head));
            }
        }
        let (tenant, collection, id) =
            (self.tenant_value(), text_value(collection), text_value(id));
        // A document with more entries than one statement binds has all of them deleted and
        // written again, in statements of at most `INDEX_ROWS` entries each.
        let diff = indexes.len() <= INDEX_ROWS;
        if !fresh {
            let mut params = vec![tenant.clone(), collection.clone(), id.clone()];
            let mut sql =
                "DELETE FROM doc_index WHERE tenant = $1 AND collection = $2 AND doc_id = $3"
                    .to_owned();
            if diff && !indexes.is_empty() {
                sql.push_str(&format!(
                    " AND (index_name, key) NOT IN (VALUES {})",
                    index_pairs(indexes)
                ));
                params.extend(index_values(indexes));
            }
            let gated = format!("{sql} AND {WRITTEN}");
            statements.push(Statement::new(sql, params, &[]).gated_on_postgres(gated));
        }
        for rows in indexes.chunks(INDEX_ROWS) {
            let values: Vec<String> = (0..rows.len())
                .map(|i| format!("($1, $2, ${}, ${}, $3)", 4 + 2 * i, 5 + 2 * i))
                .collect();
            let mut params = vec![tenant.clone(), collection.clone(), id.clone()];
            params.extend(index_values(rows));
            let insert = "INSERT INTO doc_index (tenant, collection, index_name, key, doc_id)";
            statements.push(
                Statement::new(
                    format!(
                        "{insert} VALUES {} ON CONFLICT DO NOTHING",
                        values.join(", ")
                    ),
                    params,
                    &[],
                )
                .gated_on_postgres(format!(
                    "{insert} SELECT $1, $2, v.index_name, v.key, $3 \
                     FROM (VALUES {}) AS v (index_name, key) WHERE {WRITTEN} \
                     ON CONFLICT DO NOTHING",
                    index_pairs(rows)
                )),
            );
        }
        Ok(statements)
    }

    /// The rendering into `view` of the `view.source` document `id` whose body is `body`.
    fn rendering(view: &View, id: &str, body: &str) -> Result<String, StoreError> {
        (view.render)(body).map_err(|e| {
            StoreError::Invalid(format!(
                "document {}/{id} cannot be rendered into `{}`: {e}",
                view.source, view.collection
            ))
        })
    }

    /// Writes `rendered`, the rendering of a `view.source` document, into the view, whatever
    /// is there.
    fn view_statement(&self, view: &View, id: &str, rendered: String) -> Statement {
        Statement::new(
            PUT_ANY.to_owned(),
            vec![
                self.tenant_value(),
                text_value(view.collection),
                text_value(id),
                Value::Text(rendered),
            ],
            ONE_INT,
        )
        .gated_on_postgres(PUT_ANY_WRITTEN.to_owned())
    }

    /// Takes the document's current entry of a counted index off its count, unless the entry
    /// stays under the same `head` (then the count is not touched, so that updates of one
    /// document do not contend for the count's row). On PostgreSQL the count is split into
    /// shards ([`COUNT_SHARD`]) and this adds -1 to the connection's own.
    fn uncount_statement(&self, counted: &Counted, id: &str, head: Option<&[u8]>) -> Statement {
        let mut params = vec![
            self.tenant_value(),
            text_value(counted.collection),
            text_value(counted.index),
            text_value(id),
        ];
        let head_sql = head_sql(counted);
        let entries = "FROM doc_index \
             WHERE tenant = $1 AND collection = $2 AND index_name = $3 AND doc_id = $4";
        let mut sql = format!(
            "UPDATE index_counts SET n = n - 1 \
             WHERE tenant = $1 AND collection = $2 AND index_name = $3 AND prefix IN \
                 (SELECT {head_sql} {entries})",
        );
        let mut postgres = format!(
            "INSERT INTO index_counts (tenant, collection, index_name, prefix, shard, n) \
             SELECT DISTINCT tenant, collection, index_name, {head_sql}, {COUNT_SHARD}, -1 \
             {entries}",
        );
        if let Some(head) = head {
            params.push(Value::Blob(head.to_vec()));
            sql.push_str(" AND prefix <> $5");
            postgres.push_str(&format!(" AND {head_sql} <> $5"));
        }
        let on_conflict = " ON CONFLICT (tenant, collection, index_name, prefix, shard) \
             DO UPDATE SET n = index_counts.n - 1";
        let gated = format!("{postgres} AND {WRITTEN}{on_conflict}");
        postgres.push_str(on_conflict);
        Statement::new(sql, params, &[])
            .on_postgres(postgres)
            .gated_on_postgres(gated)
    }

    /// Adds the document's new entry of a counted index to the count of its `head`, unless
    /// the document already has an entry there (on PostgreSQL, to the connection's shard of
    /// the count).
    fn count_statement(&self, counted: &Counted, id: &str, head: Vec<u8>) -> Statement {
        // `shard`: the value of the count's shard column, on PostgreSQL only; `gate`, a
        // condition the count is taken on besides.
        let count = |shard: Option<&str>, gate: &str| {
            let (column, value) = match shard {
                Some(shard) => (", shard", format!(", {shard}")),
                None => ("", String::new()),
            };
            format!(
                "INSERT INTO index_counts (tenant, collection, index_name, prefix{column}, n) \
                 SELECT $1, $2, $3, $4{value}, 1 WHERE NOT EXISTS \
                     (SELECT 1 FROM doc_index WHERE tenant = $1 AND collection = $2 \
                      AND index_name = $3 AND doc_id = $5 AND {head} = $4){gate} \
                 ON CONFLICT (tenant, collection, index_name, prefix{column}) \
                 DO UPDATE SET n = index_counts.n + 1",
                head = head_sql(counted),
            )
        };
        Statement::new(
            count(None, ""),
            vec![
                self.tenant_value(),
                text_value(counted.collection),
                text_value(counted.index),
                Value::Blob(head),
                text_value(id),
            ],
            &[],
        )
        .on_postgres(count(Some(COUNT_SHARD), ""))
        .gated_on_postgres(count(Some(COUNT_SHARD), &format!(" AND {WRITTEN}")))
    }

    /// Writes records in bulk (demo data, catalogue import), whatever is there, and moves the
    /// sequence named like each collection past the largest numeric id written
    /// ([`sequence_advances`]), so ids handed out later never collide with written ones.
    pub fn put_records(&self, records: &[Record]) -> Plan<()> {
        if let Err(e) = self.writable() {
            return Plan::refuse(e);
        }
        let mut statements = Vec::new();
        for record in records {
            let write = Statement::new(
                PUT_ANY.to_owned(),
                vec![
                    self.tenant_value(),
                    text_value(record.collection),
                    text_value(&record.id),
                    text_value(&record.body),
                ],
                ONE_INT,
            );
            let indexes: Vec<Index> = record.indexes.iter().map(Index::from).collect();
            match self.put_statements(
                write,
                record.collection,
                &record.id,
                &record.body,
                &indexes,
                false,
            ) {
                Ok(more) => statements.extend(more),
                Err(e) => return Plan::refuse(e),
            }
        }
        for (sequence, id) in sequence_advances(records) {
            statements.push(self.advance_statement(sequence, id));
        }
        Plan::new(statements, |_| Ok(()))
    }

    /// Deletes the document (and, by cascade, its index entries). With a revision, a document
    /// at another revision or none at all is a [`StoreError::Conflict`].
    pub fn delete(&self, collection: &str, id: &str, expected: Expect) -> Plan<()> {
        if let Err(e) = self.writable().and_then(|()| Self::not_a_view(collection)) {
            return Plan::refuse(e);
        }
        let mut params = vec![self.tenant_value(), text_value(collection), text_value(id)];
        let sql = match expected {
            Expect::Any => {
                "DELETE FROM documents WHERE tenant = $1 AND collection = $2 AND id = $3 \
                 RETURNING id"
            }
            Expect::Revision(revision) => {
                params.push(revision_value(revision));
                "DELETE FROM documents WHERE tenant = $1 AND collection = $2 AND id = $3 \
                 AND revision = $4 RETURNING id"
            }
            Expect::Absent => {
                return Plan::refuse(StoreError::Invalid(
                    "a delete cannot expect the document to be absent".to_owned(),
                ));
            }
        };
        // The counts of the document's counted entries are taken off first, while the entries
        // are there, its views deleted and its deletion appended to their feeds: after the
        // document's row is locked and its revision checked by a write that changes nothing,
        // so a delete that then fails its condition cannot have counted or deleted anything.
        let mut statements = Vec::new();
        let mut counted = collections::COUNTED
            .iter()
            .filter(|c| c.collection == collection)
            .peekable();
        let mut views = collections::views_of(collection).peekable();
        if counted.peek().is_some() || views.peek().is_some() {
            statements.push(Statement::new(
                sql.replacen(
                    "DELETE FROM documents",
                    "UPDATE documents SET revision = revision",
                    1,
                ),
                params.clone(),
                &[Column::Text],
            ));
        }
        statements.extend(counted.map(|c| self.uncount_statement(c, id, None)));
        for view in views {
            if view.feed {
                statements.push(self.change_statement(view, id, None));
            }
            statements.push(Statement::new(
                "DELETE FROM documents WHERE tenant = $1 AND collection = $2 AND id = $3"
                    .to_owned(),
                vec![
                    self.tenant_value(),
                    text_value(view.collection),
                    text_value(id),
                ],
                &[],
            ));
        }
        statements.push(Statement::new(sql.to_owned(), params, &[Column::Text]));
        let plan = Plan::new(statements, move |results| {
            let deleted = results.last().is_some_and(|rows| !rows.is_empty());
            match expected {
                Expect::Revision(_) if !deleted => Err(StoreError::Conflict),
                _ => Ok(()),
            }
        });
        match expected {
            Expect::Revision(_) => {
                plan.guard_first(|rows| rows.is_empty().then_some(StoreError::Conflict))
            }
            _ => plan,
        }
    }

    /// The rows of a scan in index order: `columns` of `doc_index i`, joined to `documents d`
    /// when `with_documents`, at most `cap` of them whatever the scan asks.
    ///
    /// On PostgreSQL each entry's document is looked up by its whole key (a `LATERAL`
    /// subquery the planner may not flatten). A plain join leaves that choice to the planner,
    /// which, on tables it has no statistics for (a fresh database, or one growing faster than
    /// autovacuum analyses it), took every row of the collection once per entry: 500 ms instead
    /// of 35 ms for 1,000 entries of a 3,500-booking tenant (docs/benchmarks.md).
    fn range_rows(
        &self,
        scan: &Scan,
        columns: &str,
        kinds: &'static [Column],
        with_documents: bool,
        cap: u32,
    ) -> Statement {
        let (lo, hi) = scan.range.interval();
        // The entries are the indexed collection's; the documents, the range's own ($8): those
        // of a view, for a range over one.
        let select = |join: &str| {
            format!(
                "SELECT {columns} FROM doc_index i {join} \
                 WHERE i.tenant = $1 AND i.collection = $2 AND i.index_name = $3 \
                     AND i.key >= $4 AND i.key < $5 \
                 ORDER BY i.key {dir}, i.doc_id {dir} LIMIT $6 OFFSET $7",
                dir = if scan.descending { "DESC" } else { "ASC" }
            )
        };
        let mut params = vec![
            self.tenant_value(),
            text_value(scan.range.indexed_collection()),
            text_value(&scan.range.index),
            Value::Blob(lo),
            Value::Blob(hi),
            Value::Int(i64::from(scan.limit.min(cap))),
            Value::Int(i64::from(scan.skip)),
        ];
        if with_documents {
            params.push(text_value(&scan.range.collection));
        }
        let statement = Statement::new(
            select(if with_documents {
                "JOIN documents d ON d.tenant = i.tenant AND d.collection = $8 \
                     AND d.id = i.doc_id"
            } else {
                ""
            }),
            params,
            kinds,
        );
        if with_documents {
            statement.on_postgres(select(
                "CROSS JOIN LATERAL (SELECT id, revision, body FROM documents \
                     WHERE tenant = i.tenant AND collection = $8 AND id = i.doc_id \
                     OFFSET 0) d",
            ))
        } else {
            statement
        }
    }

    /// Documents in index order (at most [`MAX_SCAN`]).
    pub fn scan(&self, scan: &Scan) -> Plan<Vec<Document>> {
        let statement = self.range_rows(scan, "d.id, d.revision, d.body", DOCUMENT, true, MAX_SCAN);
        Plan::new(vec![statement], documents)
    }

    /// Index entries in index order (at most [`MAX_KEYS`]).
    pub fn keys(&self, scan: &Scan) -> Plan<Vec<Entry>> {
        let statement = self.range_rows(scan, "i.doc_id, i.key", ENTRY, false, MAX_KEYS);
        Plan::new(vec![statement], |results| {
            let rows = results.first().map(Vec::as_slice).unwrap_or_default();
            let mut entries = Vec::with_capacity(rows.len());
            for row in rows {
                entries.push(Entry {
                    id: text(row, 0)?,
                    key: keys::decode(blob(row, 1)?)
                        .map_err(|e| StoreError::Fault(e.to_string()))?,
                });
            }
            Ok(entries)
        })
    }

    /// At most `limit` of the tenant's documents whose views are still to be rendered
    /// (`views_pending`, filled by the migration that declares a view), with their
    /// collections.
    pub fn pending_views(&self, limit: u32) -> Plan<Vec<(String, Document)>> {
        let statement = Statement::new(
            "SELECT d.collection, d.id, d.revision, d.body FROM views_pending p \
             JOIN documents d ON d.tenant = p.tenant AND d.collection = p.collection \
                 AND d.id = p.id \
             WHERE p.tenant = $1 ORDER BY p.collection, p.id LIMIT $2"
                .to_owned(),
            vec![self.tenant_value(), Value::Int(i64::from(limit))],
            &[Column::Text, Column::Text, Column::Int, Column::Text],
        );
        Plan::new(vec![statement], |results| {
            first_rows(results)
                .into_iter()
                .map(|mut row| Ok((take_text(&mut row, 0)?, document(&mut row[1..])?)))
                .collect()
        })
    }

    /// Renders the views of documents [`Self::pending_views`] returned and takes them off the
    /// pending list.
    pub fn render_pending_views(&self, pending: &[(String, Document)]) -> Plan<()> {
        if let Err(e) = self.writable() {
            return Plan::refuse(e);
        }
        let mut statements = Vec::new();
        for (collection, document) in pending {
            for view in collections::views_of(collection) {
                match Self::rendering(view, &document.id, &document.body) {
                    Ok(rendered) => {
                        statements.push(self.view_statement(view, &document.id, rendered));
                    }
                    Err(e) => return Plan::refuse(e),
                }
            }
            statements.push(Statement::new(
                "DELETE FROM views_pending WHERE tenant = $1 AND collection = $2 AND id = $3"
                    .to_owned(),
                vec![
                    self.tenant_value(),
                    text_value(collection),
                    text_value(&document.id),
                ],
                &[],
            ));
        }
        Plan::new(statements, |_| Ok(()))
    }

    /// The number of index entries in a range: one row read when the range is a prefix the
    /// store keeps counted ([`collections::COUNTED`]), else counted entry by entry.
    pub fn count(&self, range: &Range) -> Plan<u64> {
        let collection = range.indexed_collection();
        let kept = range.keys.as_prefix().and_then(|prefix| {
            let counted = collections::counted(collection, &range.index, prefix.len())?;
            counted_head(counted, prefix).ok()
        });
        if let Some(head) = kept {
            let statement = Statement::new(
                "SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM index_counts \
                 WHERE tenant = $1 AND collection = $2 AND index_name = $3 AND prefix = $4"
                    .to_owned(),
                vec![
                    self.tenant_value(),
                    text_value(collection),
                    text_value(&range.index),
                    Value::Blob(head),
                ],
                ONE_INT,
            );
            return Plan::new(vec![statement], |results| {
                Ok(u64::try_from(first_int(&results)?).unwrap_or_default())
            });
        }
        let (lo, hi) = range.interval();
        let statement = Statement::new(
            "SELECT COUNT(*) FROM doc_index \
             WHERE tenant = $1 AND collection = $2 AND index_name = $3 \
                 AND key >= $4 AND key < $5"
                .to_owned(),
            vec![
                self.tenant_value(),
                text_value(collection),
                text_value(&range.index),
                Value::Blob(lo),
                Value::Blob(hi),
            ],
            ONE_INT,
        );
        Plan::new(vec![statement], |results| {
            Ok(u64::try_from(first_int(&results)?).unwrap_or_default())
        })
    }

    /// The next value of a sequence, starting at 1; the sequence's row stays locked until the
    /// transaction ends.
    pub fn next_id(&self, sequence: &str) -> Plan<i64> {
        if let Err(e) = self.writable() {
            return Plan::refuse(e);
        }
        let statement = Statement::new(
            "INSERT INTO sequences (tenant, name, value) VALUES ($1, $2, 1) \
             ON CONFLICT (tenant, name) DO UPDATE SET value = sequences.value + 1 \
             RETURNING value"
                .to_owned(),
            vec![self.tenant_value(), text_value(sequence)],
            ONE_INT,
        );
        Plan::new(vec![statement], |results| first_int(&results))
    }

    fn advance_statement(&self, sequence: &str, value: i64) -> Statement {
        Statement::new(
            "INSERT INTO sequences (tenant, name, value) VALUES ($1, $2, $3) \
             ON CONFLICT (tenant, name) DO UPDATE \
             SET value = CASE WHEN sequences.value > $3 THEN sequences.value ELSE $3 END"
                .to_owned(),
            vec![self.tenant_value(), text_value(sequence), Value::Int(value)],
            &[],
        )
    }

    /// Queues a message with this transaction; `false` when a message with the same topic and
    /// dedupe key exists.
    pub fn publish(
        &self,
        topic: &str,
        payload: &str,
        dedupe_key: Option<&str>,
        now_micros: i64,
    ) -> Plan<bool> {
        if let Err(e) = self.writable() {
            return Plan::refuse(e);
        }
        let mut params = vec![self.tenant_value(), text_value(topic), text_value(payload)];
        // No NULL parameter: PostgreSQL could not tell its type.
        let (dedupe, now) = match dedupe_key {
            Some(key) => {
                params.push(text_value(key));
                ("$4", "$5")
            }
            None => ("NULL", "$4"),
        };
        params.push(Value::Int(now_micros));
        let statement = Statement::new(
            format!(
                "INSERT INTO queue (tenant, topic, payload, dedupe_key, available_at, created_at) \
                 VALUES ($1, $2, $3, {dedupe}, {now}, {now}) ON CONFLICT DO NOTHING RETURNING id"
            ),
            params,
            ONE_INT,
        );
        Plan::new(vec![statement], |results| {
            Ok(results.first().is_some_and(|rows| !rows.is_empty()))
        })
    }
}

/// Reads the rows of a statement from a driver's own row type: one call per column, with
/// the kind [`Statement::columns`] names.
pub fn read_row<E>(
    columns: &[Column],
    mut read: impl FnMut(usize, Column) -> Result<Value, E>,
) -> Result<Row, E> {
    columns
        .iter()
        .enumerate()
        .map(|(i, kind)| read(i, *kind))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(mode: Mode) -> Scope {
        Scope::new("t", mode)
    }

    /// A scan of all of index `i` of collection `c`, at most `limit` entries.
    fn whole_index(limit: u32) -> Scan {
        Scan {
            range: Range {
                collection: "c".to_owned(),
                index: "i".to_owned(),
                keys: KeyRange::default(),
            },
            descending: false,
            skip: 0,
            limit,
        }
    }

    fn first_statement<T: std::fmt::Debug>(mut plan: Plan<T>) -> Statement {
        match plan.step(None) {
            crate::Step::Run(statement) => statement,
            crate::Step::Done(outcome) => panic!("no statement: {outcome:?}"),
        }
    }

    #[test]
    fn writes_in_a_read_only_transaction_are_invalid() {
        let ro = scope(Mode::ReadOnly);
        let outcome = ro.put("c", "1", "{}", &[], Expect::Any).run(|_| Ok(vec![]));
        assert!(matches!(outcome, Err(StoreError::Invalid(_))));
        let outcome = ro.next_id("s").run(|_| Ok(vec![]));
        assert!(matches!(outcome, Err(StoreError::Invalid(_))));
        let outcome = ro.publish("t", "{}", None, 0).run(|_| Ok(vec![]));
        assert!(matches!(outcome, Err(StoreError::Invalid(_))));
    }

    #[test]
    fn a_put_that_returns_no_row_conflicts_and_writes_no_index() {
        let index = Index {
            name: "by".to_owned(),
            parts: vec![KeyPart::Int(1)],
        };
        let mut ran = 0;
        let outcome = scope(Mode::ReadWrite)
            .put("c", "1", "{}", &[index], Expect::Revision(3))
            .run(|_| {
                ran += 1;
                Ok(vec![])
            });
        assert_eq!(outcome, Err(StoreError::Conflict));
        assert_eq!(ran, 1);
    }

    #[test]
    fn a_booking_and_its_comment_are_held_together_and_two_bookings_are_not() {
        let tx = scope(Mode::ReadWrite);
        let booking = |id: &str, expected| {
            let body = r#"{"Id": 1, "Customer": {"Id": 1}, "Category": {"Id": 1},
                "FromDate": "2030-01-10T10:00:00Z", "ToDate": "2030-01-12T10:00:00Z",
                "DeliveryPlace": {"Id": 1}, "ReturnPlace": {"Id": 1}, "CurrentStatus": 1,
                "CurrentStatusDate": "2030-01-01T10:00:00Z",
                "CreationDate": "2030-01-01T10:00:00Z"}"#;
            let id_index = Index {
                name: collections::bookings::BY_ID.to_owned(),
                parts: vec![KeyPart::Int(1)],
            };
            tx.put(bookings(), id, body, &[id_index], expected)
        };
        fn bookings() -> &'static str {
            collections::bookings::COLLECTION
        }
        let mut held = crate::HeldPuts::default();
        let first = booking("1", Expect::Absent).hold().held().unwrap();
        assert_eq!(first.revision(), 1);
        held.push(first);
        let comment = tx
            .put(
                collections::booking_comments::COLLECTION,
                "1/1",
                "{}",
                &[],
                Expect::Absent,
            )
            .hold()
            .held()
            .unwrap();
        assert!(held.admits(&comment));
        let second = booking("2", Expect::Revision(4)).hold().held().unwrap();
        assert_eq!(second.revision(), 5);
        assert!(!held.admits(&second), "both move the bookings' counts");
        assert!(booking("3", Expect::Any).hold().held().is_none());
    }

    #[test]
    fn a_delete_cannot_expect_absence() {
        let outcome = scope(Mode::ReadWrite)
            .delete("c", "1", Expect::Absent)
            .run(|_| Ok(vec![]));
        assert!(matches!(outcome, Err(StoreError::Invalid(_))));
    }

    #[test]
    fn get_many_keeps_the_asked_order_and_its_limit() {
        let ids = vec!["b".to_owned(), "x".to_owned(), "a".to_owned()];
        let outcome = scope(Mode::ReadOnly).get_many("c", &ids).run(|_| {
            Ok(vec![
                vec![
                    Value::Text("a".into()),
                    Value::Int(1),
                    Value::Text("{}".into()),
                ],
                vec![
                    Value::Text("b".into()),
                    Value::Int(2),
                    Value::Text("{}".into()),
                ],
            ])
        });
        let ids: Vec<String> = outcome.unwrap().into_iter().map(|d| d.id).collect();
        assert_eq!(ids, ["b", "a"]);
        let too_many = vec![String::new(); MAX_GET_MANY + 1];
        let outcome = scope(Mode::ReadOnly)
            .get_many("c", &too_many)
            .run(|_| Ok(vec![]));
        assert!(matches!(outcome, Err(StoreError::Invalid(_))));
    }

    #[test]
    fn scans_are_capped() {
        let scan = whole_index(u32::MAX);
        let statement = first_statement(scope(Mode::ReadOnly).scan(&scan));
        assert_eq!(statement.params[5], Value::Int(i64::from(MAX_SCAN)));
        let statement = first_statement(scope(Mode::ReadOnly).keys(&scan));
        assert_eq!(statement.params[5], Value::Int(i64::from(MAX_KEYS)));
    }

    #[test]
    fn publish_without_a_key_binds_no_null() {
        let statement = first_statement(scope(Mode::ReadWrite).publish("t", "{}", None, 7));
        assert_eq!(statement.params.len(), 4);
        assert!(statement.sql(Dialect::Sqlite).contains("NULL, ?4, ?4"));
    }

    #[test]
    fn malformed_stored_keys_are_faults() {
        let scan = whole_index(10);
        let outcome = scope(Mode::ReadOnly)
            .keys(&scan)
            .run(|_| Ok(vec![vec![Value::Text("1".into()), Value::Blob(vec![9])]]));
        assert!(matches!(outcome, Err(StoreError::Fault(_))));
    }

    /// Every statement of a plan, each answered with no rows.
    fn statements<T: std::fmt::Debug>(plan: Plan<T>) -> (Vec<Statement>, crate::Outcome<T>) {
        let mut ran = Vec::new();
        let outcome = plan.run(|statement| {
            ran.push(statement.clone());
            Ok(vec![vec![Value::Int(1)]])
        });
        (ran, outcome)
    }

    /// A stored booking's body.
    fn booking_body(id: i64) -> String {
        format!(
            r#"{{"Id": {id}, "Customer": {{"Id": 1}}, "Category": {{"Id": 1}},
            "FromDate": "2030-01-10T10:00:00-03:00", "ToDate": "2030-01-12T10:00:00-03:00",
            "DeliveryPlace": {{"Id": 1}}, "ReturnPlace": {{"Id": 1}}, "CurrentStatus": 1,
            "CurrentStatusDate": "2030-01-01T10:00:00Z", "CreationDate": "2030-01-01T10:00:00Z"}}"#
        )
    }

    #[test]
    fn a_write_of_a_source_renders_its_view_and_a_view_cannot_be_written() {
        let rw = scope(Mode::ReadWrite);
        let body = booking_body(7);
        let (ran, outcome) = statements(rw.put("bookings", "7", &body, &[], Expect::Any));
        outcome.unwrap();
        let rendered = (collections::BOOKING_ITEMS.render)(&body).unwrap();
        let view = ran
            .iter()
            .find(|s| s.params.get(1) == Some(&text_value("booking-items")))
            .expect("the view is written with its source");
        assert_eq!(view.params[2], text_value("7"));
        assert_eq!(view.params[3], Value::Text(rendered.clone()));
        let change = ran
            .iter()
            .find(|s| s.sql(Dialect::Sqlite).starts_with("INSERT INTO changes"))
            .expect("the write is appended to the view's feed");
        assert_eq!(change.params[4], Value::Text(rendered));

        let outcome = rw
            .put("bookings", "8", "{}", &[], Expect::Any)
            .run(|_| Ok(vec![]));
        assert!(matches!(outcome, Err(StoreError::Invalid(m)) if m.contains("booking-items")));
        let outcome = rw
            .put("booking-items", "7", "{}", &[], Expect::Any)
            .run(|_| Ok(vec![]));
        assert!(matches!(outcome, Err(StoreError::Invalid(_))));
        let outcome = rw
            .delete("booking-items", "7", Expect::Any)
            .run(|_| Ok(vec![]));
        assert!(matches!(outcome, Err(StoreError::Invalid(_))));
        let (ran, outcome) = statements(rw.delete("bookings", "7", Expect::Revision(2)));
        outcome.unwrap();
        assert!(ran[0].sql(Dialect::Sqlite).starts_with("UPDATE documents"));
        assert!(
            ran.iter()
                .any(|s| s.params.get(1) == Some(&text_value("booking-items")))
        );
        assert!(
            ran.iter()
                .any(|s| s.sql(Dialect::Sqlite).starts_with("INSERT INTO changes"))
        );
    }

    #[test]
    fn a_scan_of_a_view_walks_its_sources_entries() {
        let mut scan = whole_index(10);
        scan.range.collection = "booking-items".to_owned();
        let statement = first_statement(scope(Mode::ReadOnly).scan(&scan));
        assert_eq!(statement.params[1], text_value("bookings"));
        assert_eq!(statement.params[7], text_value("booking-items"));
        let statement = first_statement(scope(Mode::ReadOnly).count(&scan.range));
        assert_eq!(statement.params[1], text_value("bookings"));
        let statement = first_statement(scope(Mode::ReadOnly).scan(&whole_index(10)));
        assert_eq!(statement.params[1], statement.params[7]);
    }
}
