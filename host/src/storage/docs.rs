//! The document store behind the WIT `store` interface: tenant-scoped documents with
//! compare-and-swap revisions, ordered composite indexes, sequences and the transactional
//! outbox, all inside one database transaction.

use rental_domain::store::{Bound, KeyPart, KeyRange, Record};
use sqlx::any::AnyRow;
use sqlx::{Any, Row as _};

use super::keys::{self, PREFIX_END};
use super::{Storage, now_micros};

/// The largest page a scan may ask for; `keys` may return more since it loads no documents.
pub const MAX_SCAN: u32 = 1_000;
pub const MAX_KEYS: u32 = 100_000;
/// At most this many ids in one `get_many`.
pub const MAX_GET_MANY: usize = 1_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    ReadOnly,
    ReadWrite,
}

/// Errors a guest is expected to handle (mirrors the WIT `store-error`).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StoreError {
    #[error("conflict with a concurrent write")]
    Conflict,
    #[error("invalid request: {0}")]
    Invalid(String),
    #[error("database unavailable: {0}")]
    Unavailable(String),
}

/// What a write expects to find (mirrors the WIT `expect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Any,
    Absent,
    Revision(u64),
}

/// A range of one index of one collection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    pub collection: String,
    pub index: String,
    pub keys: KeyRange,
}

impl Range {
    /// The half-open byte interval `[lo, hi)` of encoded keys.
    fn interval(&self) -> (Vec<u8>, Vec<u8>) {
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

/// One open transaction of one tenant. Dropping it without [`DocTransaction::commit`] rolls
/// back.
pub struct DocTransaction {
    tx: sqlx::Transaction<'static, Any>,
    tenant: String,
    mode: Mode,
    /// Held until the transaction ends (SQLite writers only); see `Storage::writer_turn`.
    _turn: Option<tokio::sync::OwnedMutexGuard<()>>,
}

/// A database failure that is not the guest's to handle: the caller traps or answers 500.
pub type Fault = anyhow::Error;

/// `Ok(Err(_))` is an error the guest handles; `Err(_)` is a host fault.
pub type StoreResult<T> = Result<Result<T, StoreError>, Fault>;

impl Storage {
    pub async fn begin(&self, tenant: &str, mode: Mode) -> StoreResult<DocTransaction> {
        let turn = self.writer_turn(mode).await;
        match self
            .pool()
            .begin_with(self.backend().begin_statement(mode))
            .await
        {
            Ok(tx) => Ok(Ok(DocTransaction {
                tx,
                tenant: tenant.to_owned(),
                mode,
                _turn: turn,
            })),
            Err(e) => classify(e),
        }
    }

    /// Writes records in one transaction (demo data, catalogue import). Collections whose ids
    /// are numbers get their id sequence (named like the collection) moved past the largest id
    /// written, so that ids handed out later never collide with imported ones.
    pub async fn put_records(&self, tenant: &str, records: &[Record]) -> anyhow::Result<()> {
        let mut tx = self.begin(tenant, Mode::ReadWrite).await??;
        let mut largest: std::collections::BTreeMap<&str, i64> = Default::default();
        for record in records {
            if let Ok(id) = record.id.parse::<i64>() {
                let max = largest.entry(record.collection).or_insert(id);
                *max = (*max).max(id);
            }
            let indexes: Vec<Index> = record
                .indexes
                .iter()
                .map(|i| Index {
                    name: i.name.to_owned(),
                    parts: i.parts.clone(),
                })
                .collect();
            tx.put(
                record.collection,
                &record.id,
                &record.body,
                &indexes,
                Expect::Any,
            )
            .await??;
        }
        for (sequence, id) in largest {
            tx.advance_sequence(sequence, id).await??;
        }
        tx.commit().await??;
        Ok(())
    }
}

/// Sorts a database error into conflict (retry), unavailable (try later) or a host fault.
fn classify<T>(error: sqlx::Error) -> StoreResult<T> {
    match &error {
        sqlx::Error::Database(db) => {
            let code = db.code().unwrap_or_default();
            // PostgreSQL: serialization failure, deadlock. SQLite: busy, locked.
            if matches!(&*code, "40001" | "40P01" | "5" | "6" | "517" | "261") {
                Ok(Err(StoreError::Conflict))
            } else {
                Err(error.into())
            }
        }
        sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::PoolClosed => {
            Ok(Err(StoreError::Unavailable(error.to_string())))
        }
        _ => Err(error.into()),
    }
}

macro_rules! db {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return classify(e),
        }
    };
}

fn document(row: &AnyRow) -> Result<Document, sqlx::Error> {
    Ok(Document {
        id: row.try_get(0)?,
        revision: u64::try_from(row.try_get::<i64, _>(1)?).unwrap_or_default(),
        body: row.try_get(2)?,
    })
}

impl DocTransaction {
    fn writable(&self) -> Result<(), StoreError> {
        match self.mode {
            Mode::ReadWrite => Ok(()),
            Mode::ReadOnly => Err(StoreError::Invalid(
                "write in a read-only transaction".to_owned(),
            )),
        }
    }

    pub async fn get(&mut self, collection: &str, id: &str) -> StoreResult<Option<Document>> {
        let row = db!(sqlx::query(
            "SELECT id, revision, body FROM documents \
                 WHERE tenant = $1 AND collection = $2 AND id = $3",
        )
        .bind(&self.tenant)
        .bind(collection)
        .bind(id)
        .fetch_optional(&mut *self.tx)
        .await);
        Ok(Ok(db!(row.as_ref().map(document).transpose())))
    }

    pub async fn get_many(
        &mut self,
        collection: &str,
        ids: &[String],
    ) -> StoreResult<Vec<Document>> {
        if ids.len() > MAX_GET_MANY {
            return Ok(Err(StoreError::Invalid(format!(
                "at most {MAX_GET_MANY} ids at once"
            ))));
        }
        if ids.is_empty() {
            return Ok(Ok(Vec::new()));
        }
        let placeholders: Vec<String> = (0..ids.len()).map(|i| format!("${}", i + 3)).collect();
        let sql = format!(
            "SELECT id, revision, body FROM documents \
             WHERE tenant = $1 AND collection = $2 AND id IN ({})",
            placeholders.join(", ")
        );
        let mut query = sqlx::query(&sql).bind(&self.tenant).bind(collection);
        for id in ids {
            query = query.bind(id);
        }
        let rows = db!(query.fetch_all(&mut *self.tx).await);
        let mut found: std::collections::HashMap<String, Document> =
            std::collections::HashMap::new();
        for row in &rows {
            let doc = db!(document(row));
            found.insert(doc.id.clone(), doc);
        }
        Ok(Ok(ids.iter().filter_map(|id| found.remove(id)).collect()))
    }

    pub async fn put(
        &mut self,
        collection: &str,
        id: &str,
        body: &str,
        indexes: &[Index],
        expected: Expect,
    ) -> StoreResult<u64> {
        if let Err(e) = self.writable() {
            return Ok(Err(e));
        }
        let tenant = self.tenant.as_str();
        let revision: Option<i64> = match expected {
            Expect::Absent => db!(sqlx::query_scalar(
                "INSERT INTO documents (tenant, collection, id, revision, body) \
                     VALUES ($1, $2, $3, 1, $4) ON CONFLICT DO NOTHING RETURNING revision",
            )
            .bind(tenant)
            .bind(collection)
            .bind(id)
            .bind(body)
            .fetch_optional(&mut *self.tx)
            .await),
            Expect::Revision(expected) => db!(sqlx::query_scalar(
                "UPDATE documents SET revision = revision + 1, body = $4 \
                     WHERE tenant = $1 AND collection = $2 AND id = $3 AND revision = $5 \
                     RETURNING revision",
            )
            .bind(tenant)
            .bind(collection)
            .bind(id)
            .bind(body)
            .bind(i64::try_from(expected).unwrap_or(i64::MAX))
            .fetch_optional(&mut *self.tx)
            .await),
            Expect::Any => db!(sqlx::query_scalar(
                "INSERT INTO documents (tenant, collection, id, revision, body) \
                     VALUES ($1, $2, $3, 1, $4) \
                     ON CONFLICT (tenant, collection, id) \
                     DO UPDATE SET revision = documents.revision + 1, body = excluded.body \
                     RETURNING revision",
            )
            .bind(tenant)
            .bind(collection)
            .bind(id)
            .bind(body)
            .fetch_optional(&mut *self.tx)
            .await),
        };
        let Some(revision) = revision else {
            return Ok(Err(StoreError::Conflict));
        };
        db!(sqlx::query(
            "DELETE FROM doc_index WHERE tenant = $1 AND collection = $2 AND doc_id = $3"
        )
        .bind(tenant)
        .bind(collection)
        .bind(id)
        .execute(&mut *self.tx)
        .await);
        for index in indexes {
            db!(sqlx::query(
                "INSERT INTO doc_index (tenant, collection, index_name, key, doc_id) \
                     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            )
            .bind(tenant)
            .bind(collection)
            .bind(&index.name)
            .bind(keys::encode(&index.parts))
            .bind(id)
            .execute(&mut *self.tx)
            .await);
        }
        Ok(Ok(u64::try_from(revision).unwrap_or_default()))
    }

    pub async fn delete(
        &mut self,
        collection: &str,
        id: &str,
        expected: Expect,
    ) -> StoreResult<()> {
        if let Err(e) = self.writable() {
            return Ok(Err(e));
        }
        let revision = match expected {
            Expect::Any => None,
            Expect::Revision(r) => Some(i64::try_from(r).unwrap_or(i64::MAX)),
            Expect::Absent => {
                return Ok(Err(StoreError::Invalid(
                    "a delete cannot expect the document to be absent".to_owned(),
                )));
            }
        };
        let result = db!(sqlx::query(
            "DELETE FROM documents WHERE tenant = $1 AND collection = $2 AND id = $3 \
                 AND ($4 IS NULL OR revision = $4)",
        )
        .bind(&self.tenant)
        .bind(collection)
        .bind(id)
        .bind(revision)
        .execute(&mut *self.tx)
        .await);
        if result.rows_affected() == 0 && revision.is_some() {
            return Ok(Err(StoreError::Conflict));
        }
        Ok(Ok(()))
    }

    /// The rows of a scan in index order: `columns` of `doc_index i`, joined to `documents d`
    /// when `with_documents`, at most `cap` of them whatever the scan asks.
    async fn range_rows(
        &mut self,
        scan: &Scan,
        columns: &str,
        with_documents: bool,
        cap: u32,
    ) -> Result<Vec<AnyRow>, sqlx::Error> {
        let (lo, hi) = scan.range.interval();
        let join = if with_documents {
            "JOIN documents d ON d.tenant = i.tenant AND d.collection = i.collection \
                 AND d.id = i.doc_id"
        } else {
            ""
        };
        let sql = format!(
            "SELECT {columns} FROM doc_index i {join} \
             WHERE i.tenant = $1 AND i.collection = $2 AND i.index_name = $3 \
                 AND i.key >= $4 AND i.key < $5 \
             ORDER BY i.key {dir}, i.doc_id {dir} LIMIT $6 OFFSET $7",
            dir = if scan.descending { "DESC" } else { "ASC" }
        );
        sqlx::query(&sql)
            .bind(&self.tenant)
            .bind(&scan.range.collection)
            .bind(&scan.range.index)
            .bind(lo)
            .bind(hi)
            .bind(i64::from(scan.limit.min(cap)))
            .bind(i64::from(scan.skip))
            .fetch_all(&mut *self.tx)
            .await
    }

    pub async fn scan(&mut self, scan: &Scan) -> StoreResult<Vec<Document>> {
        let rows = db!(self
            .range_rows(scan, "d.id, d.revision, d.body", true, MAX_SCAN)
            .await);
        let docs: Result<Vec<_>, _> = rows.iter().map(document).collect();
        Ok(Ok(db!(docs)))
    }

    pub async fn keys(&mut self, scan: &Scan) -> StoreResult<Vec<Entry>> {
        let rows = db!(self
            .range_rows(scan, "i.doc_id, i.key", false, MAX_KEYS)
            .await);
        let mut entries = Vec::with_capacity(rows.len());
        for row in &rows {
            let id: String = db!(row.try_get(0));
            let raw: Vec<u8> = db!(row.try_get(1));
            entries.push(Entry {
                id,
                key: keys::decode(&raw)?,
            });
        }
        Ok(Ok(entries))
    }

    pub async fn count(&mut self, range: &Range) -> StoreResult<u64> {
        let (lo, hi) = range.interval();
        let n: i64 = db!(sqlx::query_scalar(
            "SELECT COUNT(*) FROM doc_index \
                 WHERE tenant = $1 AND collection = $2 AND index_name = $3 \
                     AND key >= $4 AND key < $5",
        )
        .bind(&self.tenant)
        .bind(&range.collection)
        .bind(&range.index)
        .bind(lo)
        .bind(hi)
        .fetch_one(&mut *self.tx)
        .await);
        Ok(Ok(u64::try_from(n).unwrap_or_default()))
    }

    pub async fn next_id(&mut self, sequence: &str) -> StoreResult<i64> {
        if let Err(e) = self.writable() {
            return Ok(Err(e));
        }
        let value: i64 = db!(sqlx::query_scalar(
            "INSERT INTO sequences (tenant, name, value) VALUES ($1, $2, 1) \
                 ON CONFLICT (tenant, name) DO UPDATE SET value = sequences.value + 1 \
                 RETURNING value",
        )
        .bind(&self.tenant)
        .bind(sequence)
        .fetch_one(&mut *self.tx)
        .await);
        Ok(Ok(value))
    }

    /// Makes the sequence hand out values greater than `value` from now on.
    pub async fn advance_sequence(&mut self, sequence: &str, value: i64) -> StoreResult<()> {
        if let Err(e) = self.writable() {
            return Ok(Err(e));
        }
        db!(sqlx::query(
            "INSERT INTO sequences (tenant, name, value) VALUES ($1, $2, $3) \
                 ON CONFLICT (tenant, name) DO UPDATE \
                 SET value = CASE WHEN sequences.value > $3 THEN sequences.value ELSE $3 END",
        )
        .bind(&self.tenant)
        .bind(sequence)
        .bind(value)
        .execute(&mut *self.tx)
        .await);
        Ok(Ok(()))
    }

    pub async fn publish(
        &mut self,
        topic: &str,
        payload: &str,
        dedupe_key: Option<&str>,
    ) -> StoreResult<bool> {
        if let Err(e) = self.writable() {
            return Ok(Err(e));
        }
        let now = now_micros();
        let inserted: Option<i64> = db!(sqlx::query_scalar(
            "INSERT INTO queue (tenant, topic, payload, dedupe_key, available_at, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT DO NOTHING RETURNING id",
        )
        .bind(&self.tenant)
        .bind(topic)
        .bind(payload)
        .bind(dedupe_key)
        .bind(now)
        .fetch_optional(&mut *self.tx)
        .await);
        Ok(Ok(inserted.is_some()))
    }

    pub async fn commit(self) -> StoreResult<()> {
        db!(self.tx.commit().await);
        Ok(Ok(()))
    }
}
