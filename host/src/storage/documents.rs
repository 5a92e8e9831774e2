//! The document store behind the WIT `store` interface: tenant-scoped documents with
//! compare-and-swap revisions, ordered composite indexes, sequences and the transactional
//! outbox, all inside one database transaction.
//!
//! The statements and their rules are `rental_store_sql`'s, shared with the Spin adapter; this
//! module runs them, on PostgreSQL on connections that pipeline ([`super::postgres`]), on
//! SQLite on the request's own thread ([`super::sqlite`]), and sorts database errors.

use std::collections::BTreeMap;

use rental_domain::store::Record;
use rental_store_sql::{HeldPuts, Hold, Plan, Row, Scope, Statement, Step};
use sqlx::Row as _;

use super::{DocumentStore, Result, Storage, now_micros, postgres, read_rows, sqlite};

pub use rental_store_sql::{Change, Document, Entry, Expect, Index, Mode, Range, Scan};

/// One open transaction of one tenant. Dropping it without [`DocTransaction::commit`] rolls
/// back.
pub struct DocTransaction {
    tx: Tx,
    scope: Scope,
    mode: Mode,
    /// PostgreSQL puts answered and not yet sent ([`DocTransaction::put`]).
    held: HeldPuts,
    /// A PostgreSQL writer's turn among its tenant's writers ([`Storage::bound_writers`]),
    /// given up once the transaction has ended.
    _turn: Option<tokio::sync::OwnedSemaphorePermit>,
}

/// Where a transaction's statements run.
enum Tx {
    /// PostgreSQL, on the document store's own connections.
    Postgres(postgres::Transaction),
    /// SQLite, on a leased connection, on the caller's thread.
    Sqlite(sqlite::Transaction),
}

impl Storage {
    /// Begins a transaction. On SQLite a writer reads without holding the writer turn and
    /// takes it before its first write ([`sqlite::Transaction::execute`]).
    pub async fn begin(&self, tenant: &str, mode: Mode) -> Result<DocTransaction> {
        self.begin_transaction(tenant, mode, false).await
    }

    /// Begins a read-write transaction that holds the writer turn from the start: for a request
    /// whose write has already failed once because what it read changed meanwhile, so that it
    /// cannot fail that way twice.
    pub async fn begin_locked(&self, tenant: &str) -> Result<DocTransaction> {
        self.begin_transaction(tenant, Mode::ReadWrite, true).await
    }

    async fn begin_transaction(
        &self,
        tenant: &str,
        mode: Mode,
        locked: bool,
    ) -> Result<DocTransaction> {
        let (tx, turn) = match &self.documents {
            DocumentStore::Sqlite(connections) => {
                (Tx::Sqlite(connections.begin(mode, locked).await?), None)
            }
            DocumentStore::Postgres(connections) => {
                let turn = match (mode, &self.writers) {
                    (Mode::ReadWrite, Some(writers)) => Some(writers.enter(tenant).await),
                    _ => None,
                };
                (Tx::Postgres(connections.begin(mode).await?), turn)
            }
        };
        Ok(DocTransaction {
            tx,
            scope: Scope::new(tenant, mode),
            mode,
            held: HeldPuts::default(),
            _turn: turn,
        })
    }

    /// Writes records in one transaction (demo data, catalogue import). Collections whose ids
    /// are numbers get their id sequence (named like the collection) moved past the largest id
    /// written, so that ids handed out later never collide with imported ones.
    pub async fn put_records(&self, tenant: &str, records: &[Record]) -> Result<()> {
        let mut tx = self.begin(tenant, Mode::ReadWrite).await?;
        let plan = tx.scope.put_records(records);
        tx.run(plan).await?;
        tx.commit().await
    }
}

/// How many documents one transaction of [`Storage::render_pending_views`] renders.
const PENDING_VIEWS_BATCH: u32 = 500;

impl Storage {
    /// Renders the views of the documents stored before their views were declared
    /// (`views_pending`), a batch per transaction, so that a list never reads a view that is
    /// missing. Returns how many documents were rendered: all of them the first time a
    /// database is opened after such a migration, none after that.
    pub(super) async fn render_pending_views(&self) -> Result<u64> {
        let tenants: Vec<String> = sqlx::query_scalar("SELECT DISTINCT tenant FROM views_pending")
            .fetch_all(self.pool())
            .await?;
        let mut rendered = 0;
        for tenant in tenants {
            loop {
                let mut tx = self.begin(&tenant, Mode::ReadWrite).await?;
                let plan = tx.scope.pending_views(PENDING_VIEWS_BATCH);
                let pending = tx.run(plan).await?;
                if pending.is_empty() {
                    break;
                }
                let plan = tx.scope.render_pending_views(&pending);
                tx.run(plan).await?;
                tx.commit().await?;
                rendered += u64::try_from(pending.len()).unwrap_or(u64::MAX);
                if pending.len() < PENDING_VIEWS_BATCH as usize {
                    break; // the last batch: no write transaction just to find none left
                }
            }
        }
        Ok(rendered)
    }
}

impl Storage {
    /// At most `limit` changes of the feed of view `collection` after position `after`, in
    /// the order they committed. On PostgreSQL the committed changes not numbered yet are
    /// numbered first, in a transaction of their own ([`Scope::number_changes`]), so that the
    /// read finds every change committed before it began.
    pub async fn changes(
        &self,
        tenant: &str,
        collection: &str,
        after: u64,
        limit: u32,
    ) -> Result<Vec<Change>> {
        self.number_changes(tenant, collection).await?;
        let mut tx = self.begin(tenant, Mode::ReadOnly).await?;
        let plan = tx.scope.changes(collection, after, limit);
        let changes = tx.run(plan).await?;
        tx.roll_back().await?;
        Ok(changes)
    }
    /// Numbers the committed changes of the feed of view `collection` not numbered yet, in a
    /// transaction of its own ([`Scope::number_changes`]): on PostgreSQL, where writers leave
    /// them unnumbered. SQLite's are numbered as they are written.
    pub async fn number_changes(&self, tenant: &str, collection: &str) -> Result<()> {
        if self.sqlite().is_none() {
            let mut tx = self.begin(tenant, Mode::ReadWrite).await?;
            let plan = tx.scope.number_changes(collection);
            tx.run(plan).await?;
            tx.commit().await?;
        }
        Ok(())
    }
}

/// A document's place: its collection and id.
pub type DocumentKey = (String, String);

impl Storage {
    /// The revision of every document of a tenant, read outside the document store's
    /// transactions: for the operator's tools, which compare them before and after a request.
    /// The views' documents are left out: the store writes them with their sources.
    pub async fn document_revisions(&self, tenant: &str) -> Result<BTreeMap<DocumentKey, i64>> {
        let rows = sqlx::query("SELECT collection, id, revision FROM documents WHERE tenant = $1")
            .bind(tenant)
            .fetch_all(self.pool())
            .await?;
        let revisions = read_rows(&rows, |row| {
            Ok(((row.try_get(0)?, row.try_get(1)?), row.try_get(2)?))
        })?;
        Ok(revisions
            .into_iter()
            .filter(|((collection, _), _): &(DocumentKey, i64)| {
                rental_domain::collections::view(collection).is_none()
            })
            .collect())
    }
}

impl DocTransaction {
    /// Whether the transaction holds what a writer holds while it writes: on SQLite the
    /// writer turn, which a writer takes at its first write; on PostgreSQL a writer from its
    /// beginning.
    pub fn holds_write(&self) -> bool {
        match &self.tx {
            Tx::Sqlite(tx) => tx.holds_write(),
            Tx::Postgres(_) => self.mode == Mode::ReadWrite,
        }
    }

    /// Runs one statement in the transaction and returns its rows. On PostgreSQL the puts
    /// held ([`DocTransaction::put`]) go with it, before it, in one round trip: a conflict if
    /// one of them found its expectation failed, and from then on for every call of the
    /// transaction, its commit included.
    pub(super) async fn execute(&mut self, statement: &Statement) -> Result<Vec<Row>> {
        match &mut self.tx {
            Tx::Sqlite(tx) => tx.execute(statement).await,
            Tx::Postgres(tx) => tx.execute(self.held.take().as_ref(), statement).await,
        }
    }

    /// Runs a plan of the shared store rules to its end, the puts held going with its first
    /// statement.
    async fn run<T>(&mut self, plan: Plan<T>) -> Result<T> {
        let plan = plan.for_dialect(match self.tx {
            Tx::Postgres(_) => rental_store_sql::Dialect::Postgres,
            Tx::Sqlite(_) => rental_store_sql::Dialect::Sqlite,
        });
        self.drive(plan).await
    }

    /// Runs `plan`'s statements as they come.
    async fn drive<T>(&mut self, mut plan: Plan<T>) -> Result<T> {
        let mut rows = None;
        loop {
            match plan.step(rows.take()) {
                Step::Run(statement) => rows = Some(self.execute(&statement).await?),
                Step::Done(outcome) => return Ok(outcome?),
            }
        }
    }

    pub async fn get(&mut self, collection: &str, id: &str) -> Result<Option<Document>> {
        let plan = self.scope.get(collection, id);
        self.run(plan).await
    }

    pub async fn get_many(&mut self, collection: &str, ids: &[String]) -> Result<Vec<Document>> {
        let plan = self.scope.get_many(collection, ids);
        self.run(plan).await
    }

    pub async fn put(
        &mut self,
        collection: &str,
        id: &str,
        body: &str,
        indexes: &[Index],
        expected: Expect,
    ) -> Result<u64> {
        let plan = self.scope.put(collection, id, body, indexes, expected);
        if !matches!(self.tx, Tx::Postgres(_)) {
            return self.run(plan).await;
        }
        // On PostgreSQL a put whose answer is known before it runs is answered now and sent
        // with the transaction's next statement: consecutive puts (a booking and its comment,
        // a booking's locks) then cost one round trip, and the last ones go with the commit. A
        // failed expectation is still a conflict, told by that statement's call or by the
        // commit.
        match plan.hold() {
            Hold::Held(put) => {
                if !self.held.admits(&put)
                    && let (Tx::Postgres(tx), Some(held)) = (&mut self.tx, self.held.take())
                {
                    tx.send(&held).await?;
                }
                let revision = put.revision();
                self.held.push(put);
                Ok(revision)
            }
            Hold::Run(plan) => self.run(plan).await,
        }
    }

    pub async fn delete(&mut self, collection: &str, id: &str, expected: Expect) -> Result<()> {
        let plan = self.scope.delete(collection, id, expected);
        self.run(plan).await
    }

    pub async fn scan(&mut self, scan: &Scan) -> Result<Vec<Document>> {
        let plan = self.scope.scan(scan);
        self.run(plan).await
    }

    pub async fn keys(&mut self, scan: &Scan) -> Result<Vec<Entry>> {
        let plan = self.scope.keys(scan);
        self.run(plan).await
    }

    pub async fn count(&mut self, range: &Range) -> Result<u64> {
        let plan = self.scope.count(range);
        self.run(plan).await
    }

    pub async fn next_id(&mut self, sequence: &str) -> Result<i64> {
        let plan = self.scope.next_id(sequence);
        self.run(plan).await
    }

    pub async fn publish(
        &mut self,
        topic: &str,
        payload: &str,
        dedupe_key: Option<&str>,
    ) -> Result<bool> {
        let plan = self.scope.publish(topic, payload, dedupe_key, now_micros());
        self.run(plan).await
    }

    /// Sends the puts held, commits, and returns once the commit is durable.
    pub async fn commit(mut self) -> Result<()> {
        match self.tx {
            // The puts held (only PostgreSQL's are) go with the `COMMIT`, in one round trip.
            Tx::Postgres(tx) => tx.commit(self.held.take().as_ref()).await,
            // The writer turn is given up with the commit: the next writer may begin while
            // this one waits for its sync.
            Tx::Sqlite(tx) => tx.commit()?.durable().await,
        }
    }

    /// Rolls back, and returns once every commit the transaction may have read is durable,
    /// so that nothing answered from it can be lost. (Dropping a transaction rolls it back
    /// without that wait: for a caller that answers nothing from it.)
    pub async fn roll_back(self) -> Result<()> {
        match self.tx {
            // PostgreSQL shows a commit only once it is durable; dropping rolls back.
            Tx::Postgres(_) => Ok(()),
            Tx::Sqlite(tx) => tx.roll_back().durable().await,
        }
    }
}
