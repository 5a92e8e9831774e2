//! `rental:platform/store` on Spin's SQLite: every operation is a plan of the shared store
//! rules (`rental_store_sql`), the same statements `rentald` runs.

use std::cell::{Cell, RefCell};

use rental_store_sql::{
    self as sql, Driver as _, KeptBodies, Mode, OneTransaction, OpenTransaction, Scope,
};

use crate::Adapter;
use crate::bindings::exports::rental::platform::store::{self as wit, StoreError};
use crate::db::{Database, fault};

thread_local! {
    /// The request's transaction slot (Spin instantiates a component per request).
    static OPEN: Cell<OneTransaction> = const { Cell::new(OneTransaction::new()) };
    /// The bodies the request kept (`scan-kept`), which the component's `wasi:http` export
    /// reads back to write its answer.
    static KEPT: RefCell<KeptBodies> = RefCell::default();
}

rental_store_sql::wit_store_conversions!(crate::bindings::exports::rental::platform::store);

/// The guest's view of a store error; a fault traps.
fn guest_error(error: sql::StoreError) -> StoreError {
    store_error(error).unwrap_or_else(|message| fault("store", message))
}

/// Applies `change` to the request's transaction slot.
fn slot<T>(change: impl FnOnce(&mut OneTransaction) -> T) -> T {
    let mut slot = OPEN.get();
    let result = change(&mut slot);
    OPEN.set(slot);
    result
}

/// An open transaction: its connection and its scope (tenant and mode), until commit.
pub struct Transaction {
    open: OpenTransaction<Database>,
}

impl Transaction {
    /// Runs the plan that `build` makes for the open transaction.
    fn with<T, U>(
        &self,
        build: impl FnOnce(&Scope) -> sql::Plan<T>,
        map: impl FnOnce(T) -> U,
    ) -> Result<U, StoreError> {
        self.open.run(build).map(map).map_err(guest_error)
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        if let Some(db) = self.open.end() {
            db.rollback();
            slot(OneTransaction::end);
        }
    }
}

impl Transaction {
    /// Takes the request's transaction slot and begins a transaction of `mode`.
    fn begin(mode: Mode) -> Result<Self, StoreError> {
        slot(OneTransaction::begin).map_err(guest_error)?;
        let begun = Database::shared().and_then(|db| {
            let scope = db.begin(mode)?;
            Ok((db, scope))
        });
        let (db, scope) = begun.map_err(|error| {
            slot(OneTransaction::end);
            guest_error(error)
        })?;
        Ok(Self {
            open: OpenTransaction::new(db, scope),
        })
    }
}

impl wit::Guest for Adapter {
    type Transaction = Transaction;

    fn begin(requested: wit::Mode) -> Result<wit::Transaction, StoreError> {
        Transaction::begin(mode(requested)).map(wit::Transaction::new)
    }

    fn read_kept(body: u32) -> Option<String> {
        KEPT.with_borrow(|kept| kept.get(body).map(str::to_owned))
    }

    /// SQLite numbers every change as it is written: a read-only transaction reads the feed.
    fn changes(collection: String, after: u64, limit: u32) -> Result<Vec<wit::Change>, StoreError> {
        Transaction::begin(Mode::ReadOnly)?.with(
            |s| s.changes(&collection, after, limit),
            |changes| changes.into_iter().map(change).collect(),
        )
    }
}

impl wit::GuestTransaction for Transaction {
    fn get(&self, collection: String, id: String) -> Result<Option<wit::Document>, StoreError> {
        self.with(|s| s.get(&collection, &id), |d| d.map(document))
    }

    fn get_many(
        &self,
        collection: String,
        ids: Vec<String>,
    ) -> Result<Vec<wit::Document>, StoreError> {
        self.with(
            |s| s.get_many(&collection, &ids),
            |d| d.into_iter().map(document).collect(),
        )
    }

    fn put(
        &self,
        collection: String,
        id: String,
        body: String,
        indexes: Vec<wit::IndexKey>,
        expected: wit::Expect,
    ) -> Result<u64, StoreError> {
        let indexes = index_keys(indexes);
        self.with(
            |s| s.put(&collection, &id, &body, &indexes, expect(expected)),
            |r| r,
        )
    }

    fn delete(
        &self,
        collection: String,
        id: String,
        expected: wit::Expect,
    ) -> Result<(), StoreError> {
        self.with(|s| s.delete(&collection, &id, expect(expected)), |r| r)
    }

    fn scan(&self, query: wit::Scan) -> Result<Vec<wit::Document>, StoreError> {
        let query = scan(query);
        self.with(
            |s| s.scan(&query),
            |d| d.into_iter().map(document).collect(),
        )
    }

    fn scan_kept(&self, query: wit::Scan) -> Result<Vec<wit::KeptDocument>, StoreError> {
        let query = scan(query);
        let found = self.with(|s| s.scan(&query), |found| found)?;
        let kept = KEPT
            .with_borrow_mut(|kept| kept.keep(found))
            .map_err(guest_error)?;
        Ok(kept.into_iter().map(kept_document).collect())
    }

    fn keys(&self, query: wit::Scan) -> Result<Vec<wit::Entry>, StoreError> {
        let query = scan(query);
        self.with(
            |s| s.keys(&query),
            |entries| entries.into_iter().map(entry).collect(),
        )
    }

    fn count(&self, query: wit::Range) -> Result<u64, StoreError> {
        let query = range(query);
        self.with(|s| s.count(&query), |n| n)
    }

    fn next_id(&self, sequence: String) -> Result<i64, StoreError> {
        self.with(|s| s.next_id(&sequence), |n| n)
    }

    fn publish(
        &self,
        topic: String,
        payload: String,
        dedupe_key: Option<String>,
    ) -> Result<bool, StoreError> {
        let now = chrono::Utc::now().timestamp_micros();
        self.with(
            |s| s.publish(&topic, &payload, dedupe_key.as_deref(), now),
            |published| published,
        )
    }

    fn commit(&self) -> Result<(), StoreError> {
        let Some(db) = self.open.end() else {
            return Err(guest_error(sql::StoreError::committed()));
        };
        slot(OneTransaction::end);
        let committed = db.commit().map_err(guest_error);
        if committed.is_err() {
            db.rollback();
        }
        committed
    }
}

/// Loads the demo catalogue (and its settings) into an empty tenant, through the same store
/// plans as every write, in one transaction.
pub fn load_demo(db: &Database) -> Result<(), sql::StoreError> {
    if db.has_documents()? {
        return Ok(());
    }
    let demo = match rental_domain::demo::demo_tenant(chrono::Utc::now()) {
        Ok(demo) => demo,
        Err(error) => {
            eprintln!("spin-adapter: the demo catalogue could not be built: {error}");
            return Ok(());
        }
    };
    let scope = db.begin(Mode::ReadWrite)?;
    let loaded = (|| {
        if db.has_documents()? {
            return Ok(());
        }
        for (key, value) in &demo.settings {
            db.put_setting(key, value)?;
        }
        db.run(scope.put_records(&demo.records))?;
        db.commit()
    })();
    if loaded.is_err() {
        db.rollback();
    }
    loaded
}
