//! `rental:platform/store`: the tenant-scoped document store, bound to the request's tenant.

use wasmtime::component::Resource;

use crate::bindings::store::{self as wit, StoreError};
use crate::runtime::HostState;
use crate::storage::docs::{self, DocTransaction, StoreResult};

/// The host half of a WIT `transaction` resource. `None` once committed.
pub struct Transaction(Option<DocTransaction>);

rental_store_sql::wit_store_conversions!(crate::bindings::store);

/// Turns a storage result into what the guest sees: its own errors as values, host faults as
/// traps.
fn answer<T, U>(
    result: StoreResult<T>,
    map: impl FnOnce(T) -> U,
) -> wasmtime::Result<Result<U, StoreError>> {
    Ok(result
        .map_err(wasmtime::Error::from_anyhow)?
        .map(map)
        .map_err(store_error))
}

const COMMITTED: &str = "the transaction has already been committed";

impl HostState {
    fn transaction(
        &mut self,
        handle: &Resource<Transaction>,
    ) -> wasmtime::Result<Result<&mut DocTransaction, StoreError>> {
        let tx = self.table.get_mut(handle)?;
        Ok(tx
            .0
            .as_mut()
            .ok_or_else(|| StoreError::Invalid(COMMITTED.to_owned())))
    }
}

/// Runs one storage call on an open transaction, or answers `invalid` when it is committed.
macro_rules! with_tx {
    ($state:expr, $handle:expr, |$tx:ident| $call:expr, $map:expr) => {{
        let $tx = match $state.transaction(&$handle)? {
            Ok(tx) => tx,
            Err(e) => return Ok(Err(e)),
        };
        answer($call.await, $map)
    }};
}

impl wit::Host for HostState {
    async fn begin(
        &mut self,
        requested: wit::Mode,
    ) -> wasmtime::Result<Result<Resource<Transaction>, StoreError>> {
        if self.open_transactions > 0 {
            return Ok(Err(StoreError::Invalid(
                "a transaction is already open in this request".to_owned(),
            )));
        }
        let mode = mode(requested);
        let tenant = self.request.tenant.slug.clone();
        match self
            .storage
            .begin(&tenant, mode)
            .await
            .map_err(wasmtime::Error::from_anyhow)?
        {
            Ok(tx) => {
                self.open_transactions += 1;
                Ok(Ok(self.table.push(Transaction(Some(tx)))?))
            }
            Err(e) => Ok(Err(store_error(e))),
        }
    }
}

impl wit::HostTransaction for HostState {
    async fn get(
        &mut self,
        handle: Resource<Transaction>,
        collection: String,
        id: String,
    ) -> wasmtime::Result<Result<Option<wit::Document>, StoreError>> {
        with_tx!(self, handle, |tx| tx.get(&collection, &id), |d: Option<
            _,
        >| d
            .map(document))
    }

    async fn get_many(
        &mut self,
        handle: Resource<Transaction>,
        collection: String,
        ids: Vec<String>,
    ) -> wasmtime::Result<Result<Vec<wit::Document>, StoreError>> {
        with_tx!(
            self,
            handle,
            |tx| tx.get_many(&collection, &ids),
            |d: Vec<_>| d.into_iter().map(document).collect()
        )
    }

    async fn put(
        &mut self,
        handle: Resource<Transaction>,
        collection: String,
        id: String,
        body: String,
        indexes: Vec<wit::IndexKey>,
        expected: wit::Expect,
    ) -> wasmtime::Result<Result<u64, StoreError>> {
        let indexes = index_keys(indexes);
        with_tx!(
            self,
            handle,
            |tx| tx.put(&collection, &id, &body, &indexes, expect(expected)),
            |r| r
        )
    }

    async fn delete(
        &mut self,
        handle: Resource<Transaction>,
        collection: String,
        id: String,
        expected: wit::Expect,
    ) -> wasmtime::Result<Result<(), StoreError>> {
        with_tx!(
            self,
            handle,
            |tx| tx.delete(&collection, &id, expect(expected)),
            |r| r
        )
    }

    async fn scan(
        &mut self,
        handle: Resource<Transaction>,
        query: wit::Scan,
    ) -> wasmtime::Result<Result<Vec<wit::Document>, StoreError>> {
        let query = scan(query);
        with_tx!(self, handle, |tx| tx.scan(&query), |d: Vec<_>| d
            .into_iter()
            .map(document)
            .collect())
    }

    async fn keys(
        &mut self,
        handle: Resource<Transaction>,
        query: wit::Scan,
    ) -> wasmtime::Result<Result<Vec<wit::Entry>, StoreError>> {
        let query = scan(query);
        with_tx!(self, handle, |tx| tx.keys(&query), |entries: Vec<
            docs::Entry,
        >| entries
            .into_iter()
            .map(entry)
            .collect())
    }

    async fn count(
        &mut self,
        handle: Resource<Transaction>,
        query: wit::Range,
    ) -> wasmtime::Result<Result<u64, StoreError>> {
        let query = range(query);
        with_tx!(self, handle, |tx| tx.count(&query), |n| n)
    }

    async fn next_id(
        &mut self,
        handle: Resource<Transaction>,
        sequence: String,
    ) -> wasmtime::Result<Result<i64, StoreError>> {
        with_tx!(self, handle, |tx| tx.next_id(&sequence), |n| n)
    }

    async fn publish(
        &mut self,
        handle: Resource<Transaction>,
        topic: String,
        payload: String,
        dedupe_key: Option<String>,
    ) -> wasmtime::Result<Result<bool, StoreError>> {
        with_tx!(
            self,
            handle,
            |tx| tx.publish(&topic, &payload, dedupe_key.as_deref()),
            |b| b
        )
    }

    async fn commit(
        &mut self,
        handle: Resource<Transaction>,
    ) -> wasmtime::Result<Result<(), StoreError>> {
        let Some(tx) = self.table.get_mut(&handle)?.0.take() else {
            return Ok(Err(StoreError::Invalid(COMMITTED.to_owned())));
        };
        self.open_transactions -= 1;
        answer(tx.commit().await, |()| ())
    }

    async fn drop(&mut self, handle: Resource<Transaction>) -> wasmtime::Result<()> {
        // Dropping an uncommitted sqlx transaction rolls it back.
        if self.table.delete(handle)?.0.is_some() {
            self.open_transactions -= 1;
        }
        Ok(())
    }
}
