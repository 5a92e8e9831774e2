//! `rental:platform/store`: the tenant-scoped document store, bound to the request's tenant.
//!
//! Every call answers `Result<T, StoreFailure>`: a storage error the guest handles (conflict,
//! invalid, unavailable) reaches it as a WIT `store-error`; anything else (a database fault, a
//! bad resource handle) traps, through [`wit::Host::convert_store_error`].

use std::time::Instant;

use rental_store_sql::StoreError;
use wasmtime::component::Resource;
use wasmtime_wasi::TrappableError;

use crate::bindings::store as wit;
use crate::runtime::HostState;
use crate::storage::{self, documents::DocTransaction};

/// The host half of a WIT `transaction` resource. `None` once committed.
pub struct Transaction(Option<DocTransaction>);

/// What a store call fails with: a WIT `store-error` for the guest, or a trap.
pub type StoreFailure = TrappableError<wit::StoreError>;

rental_store_sql::wit_store_conversions!(crate::bindings::store);

/// The guest's error for a store error, or a trap for a fault.
fn failure(error: StoreError) -> StoreFailure {
    match store_error(error) {
        Ok(error) => error.into(),
        Err(fault) => StoreFailure::trap(wasmtime::Error::msg(fault)),
    }
}

impl From<storage::Error> for StoreFailure {
    fn from(error: storage::Error) -> Self {
        match error {
            storage::Error::Store(error) => failure(error),
            other => StoreFailure::trap(other),
        }
    }
}

impl HostState {
    /// The open transaction behind `handle`, or `invalid` when it has committed. A guest past
    /// its write deadline traps here too, between statements as between epoch ticks.
    fn transaction(
        &mut self,
        handle: &Resource<Transaction>,
    ) -> Result<&mut DocTransaction, StoreFailure> {
        if let Some(overrun) = self.write_overrun() {
            return Err(StoreFailure::trap(wasmtime::Error::new(overrun)));
        }
        let tx = self
            .table
            .get_mut(handle)
            .map_err(StoreFailure::trap)?
            .0
            .as_mut()
            .ok_or_else(|| failure(StoreError::committed()))?;
        Ok(tx)
    }

    /// Runs `call` on the open transaction behind `handle`, noting how long it took, which
    /// the write deadline may leave out (see [`HostState::write_overrun`]), whether it has
    /// begun to write, and whether it lost a race.
    async fn on_transaction<T>(
        &mut self,
        handle: &Resource<Transaction>,
        call: impl AsyncFnOnce(&mut DocTransaction) -> storage::Result<T>,
    ) -> Result<T, StoreFailure> {
        let started = Instant::now();
        let tx = self.transaction(handle)?;
        let result = call(&mut *tx).await;
        let writes = tx.holds_write();
        self.store_call_returned(started, writes);
        if matches!(result, Err(storage::Error::Store(StoreError::Conflict))) {
            self.lost_a_race = true;
        }
        Ok(result?)
    }
}

impl HostState {
    /// The documents of a scan (`scan`, `scan-kept`).
    async fn scanned(
        &mut self,
        handle: &Resource<Transaction>,
        query: wit::Scan,
    ) -> Result<Vec<rental_store_sql::Document>, StoreFailure> {
        let query = scan(query);
        self.on_transaction(handle, async |tx| tx.scan(&query).await)
            .await
    }

    /// Commits the write the guest committed before, held for the answer, now that the guest
    /// goes on to another transaction.
    async fn commit_held(&mut self) -> Result<(), StoreFailure> {
        let Some(tx) = self.held.as_ref().and_then(|held| held.write.take()) else {
            return Ok(());
        };
        self.held_write_ended();
        self.commit_unanswered(tx).await
    }

    /// Commits `tx`, a write of a request with an idempotency key whose answer is not known
    /// yet: the key is recorded as committed with it.
    async fn commit_unanswered(&mut self, mut tx: DocTransaction) -> Result<(), StoreFailure> {
        if let Some(held) = &self.held
            && !tx.record_committed(&held.claim).await?
        {
            return Err(StoreFailure::trap(wasmtime::Error::msg(
                "the request's idempotency key no longer names it as running",
            )));
        }
        Ok(tx.commit().await?)
    }
}

impl wit::Host for HostState {
    async fn begin(&mut self, requested: wit::Mode) -> Result<Resource<Transaction>, StoreFailure> {
        self.transactions.begin().map_err(failure)?;
        if let Err(error) = self.commit_held().await {
            self.transaction_ended();
            return Err(error);
        }
        let tenant = self.request.tenant.slug.clone();
        let begun = match mode(requested) {
            // A request that lost a race once writes with the turn from the start.
            storage::documents::Mode::ReadWrite if self.lost_a_race => {
                self.storage.begin_locked(&tenant).await
            }
            mode => self.storage.begin(&tenant, mode).await,
        };
        let tx = match begun {
            Ok(tx) => tx,
            Err(error) => {
                self.transaction_ended();
                return Err(error.into());
            }
        };
        if tx.holds_write() {
            self.writing();
        }
        self.table
            .push(Transaction(Some(tx)))
            .map_err(StoreFailure::trap)
    }

    async fn changes(
        &mut self,
        collection: String,
        after: u64,
        limit: u32,
    ) -> Result<Vec<wit::Change>, StoreFailure> {
        // The feed is read in transactions of its own: none may be open meanwhile (on SQLite
        // a numbering would wait for the writer turn the request itself holds).
        self.transactions.begin().map_err(failure)?;
        let read = match self.commit_held().await {
            Ok(()) => {
                let tenant = &self.request.tenant.slug;
                (self
                    .storage
                    .changes(tenant, &collection, after, limit)
                    .await)
                    .map_err(StoreFailure::from)
            }
            Err(error) => Err(error),
        };
        self.transaction_ended();
        Ok(read?.into_iter().map(change).collect())
    }

    async fn read_kept(&mut self, body: u32) -> wasmtime::Result<Option<String>> {
        Ok(self.kept.get(body).map(str::to_owned))
    }

    fn convert_store_error(&mut self, error: StoreFailure) -> wasmtime::Result<wit::StoreError> {
        error.downcast()
    }
}

impl wit::HostTransaction for HostState {
    async fn get(
        &mut self,
        handle: Resource<Transaction>,
        collection: String,
        id: String,
    ) -> Result<Option<wit::Document>, StoreFailure> {
        let found = self
            .on_transaction(&handle, async |tx| tx.get(&collection, &id).await)
            .await?;
        Ok(found.map(document))
    }

    async fn get_many(
        &mut self,
        handle: Resource<Transaction>,
        collection: String,
        ids: Vec<String>,
    ) -> Result<Vec<wit::Document>, StoreFailure> {
        let found = self
            .on_transaction(&handle, async |tx| tx.get_many(&collection, &ids).await)
            .await?;
        Ok(found.into_iter().map(document).collect())
    }

    async fn put(
        &mut self,
        handle: Resource<Transaction>,
        collection: String,
        id: String,
        body: String,
        indexes: Vec<wit::IndexKey>,
        expected: wit::Expect,
    ) -> Result<u64, StoreFailure> {
        let indexes = index_keys(indexes);
        self.on_transaction(&handle, async |tx| {
            tx.put(&collection, &id, &body, &indexes, expect(expected))
                .await
        })
        .await
    }

    async fn delete(
        &mut self,
        handle: Resource<Transaction>,
        collection: String,
        id: String,
        expected: wit::Expect,
    ) -> Result<(), StoreFailure> {
        self.on_transaction(&handle, async |tx| {
            tx.delete(&collection, &id, expect(expected)).await
        })
        .await
    }

    async fn scan(
        &mut self,
        handle: Resource<Transaction>,
        query: wit::Scan,
    ) -> Result<Vec<wit::Document>, StoreFailure> {
        let found = self.scanned(&handle, query).await?;
        Ok(found.into_iter().map(document).collect())
    }

    async fn scan_kept(
        &mut self,
        handle: Resource<Transaction>,
        query: wit::Scan,
    ) -> Result<Vec<wit::KeptDocument>, StoreFailure> {
        let found = self.scanned(&handle, query).await?;
        let kept = self.kept.keep(found).map_err(failure)?;
        Ok(kept.into_iter().map(kept_document).collect())
    }

    async fn keys(
        &mut self,
        handle: Resource<Transaction>,
        query: wit::Scan,
    ) -> Result<Vec<wit::Entry>, StoreFailure> {
        let query = scan(query);
        let found = self
            .on_transaction(&handle, async |tx| tx.keys(&query).await)
            .await?;
        Ok(found.into_iter().map(entry).collect())
    }

    async fn count(
        &mut self,
        handle: Resource<Transaction>,
        query: wit::Range,
    ) -> Result<u64, StoreFailure> {
        let query = range(query);
        self.on_transaction(&handle, async |tx| tx.count(&query).await)
            .await
    }

    async fn next_id(
        &mut self,
        handle: Resource<Transaction>,
        sequence: String,
    ) -> Result<i64, StoreFailure> {
        self.on_transaction(&handle, async |tx| tx.next_id(&sequence).await)
            .await
    }

    async fn publish(
        &mut self,
        handle: Resource<Transaction>,
        topic: String,
        payload: String,
        dedupe_key: Option<String>,
    ) -> Result<bool, StoreFailure> {
        self.on_transaction(&handle, async |tx| {
            tx.publish(&topic, &payload, dedupe_key.as_deref()).await
        })
        .await
    }

    async fn commit(&mut self, handle: Resource<Transaction>) -> Result<(), StoreFailure> {
        let tx = self
            .table
            .get_mut(&handle)
            .map_err(StoreFailure::trap)?
            .0
            .take()
            .ok_or_else(|| failure(StoreError::committed()))?;
        let tx = match &self.held {
            Some(held) if tx.holds_write() => match held.write.hold(tx) {
                None => {
                    self.transaction_held();
                    return Ok(());
                }
                Some(tx) => {
                    self.transaction_ended();
                    return self.commit_unanswered(tx).await;
                }
            },
            _ => tx,
        };
        self.transaction_ended();
        Ok(tx.commit().await?)
    }

    async fn drop(&mut self, handle: Resource<Transaction>) -> wasmtime::Result<()> {
        // The guest may answer from what it read: wait until that is durable.
        if let Some(tx) = self.table.delete(handle)?.0 {
            self.transaction_ended();
            tx.roll_back().await?;
        }
        Ok(())
    }
}
