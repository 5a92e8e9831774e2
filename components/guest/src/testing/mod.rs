//! A host for native tests of a component's handlers: no server, no database server, no
//! WebAssembly build.
//!
//! A [`TestHost`] answers every import a component makes (context, store, random bytes and,
//! with the `webhook` feature, secrets and the bank) from memory. Its store is an in-memory
//! SQLite database run by the store's own statements (`rental_store_sql`), so ranges, counts,
//! revisions, sequences and the outbox behave as under `rentald`. Each test makes its own
//! host, so every test starts from a fresh store:
//!
//! ```
//! use rental_guest::testing::TestHost;
//! use rental_guest::{Error, Handler, Request, Response};
//!
//! struct Hello;
//!
//! impl Handler for Hello {
//!     fn handle(_: Request) -> Result<Response, Error> {
//!         Ok(rental_guest::json(200, &rental_guest::context::tenant()))
//!     }
//! }
//!
//! let host = TestHost::demo().tenant("acme");
//! let response = host.call::<Hello>(Request::new("GET", "/hello"));
//! assert_eq!(response.status, 200);
//! assert_eq!(response.body.to_bytes(), br#""acme""#);
//! ```
//!
//! Outside [`TestHost::call`] and [`TestHost::run`] there is no request, and a call that
//! reaches the host panics saying so.

pub(crate) mod imports;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use rental_domain::Language;
use rental_domain::store::{Record, Stored};
use rental_store_sql::{self as sql, Dialect, Driver as _, Mode, OneTransaction, Scope, Statement};
use rusqlite::Connection;

use crate::context::Caller;
use crate::http::{Handler, Request, Response};
use crate::store::Document;

thread_local! {
    /// The host of the request running on this thread.
    static CURRENT: RefCell<Option<Rc<Host>>> = const { RefCell::new(None) };
}

/// The host running the current request.
fn current() -> Rc<Host> {
    CURRENT.with_borrow(Clone::clone).expect(
        "a platform import was called outside a request: run the code through \
         TestHost::call or TestHost::run",
    )
}

/// `read` applied to the host running the current request.
fn with_host<R>(read: impl FnOnce(&Host) -> R) -> R {
    read(&current())
}

/// An in-memory platform host for one test. See the [module documentation](self).
#[derive(Debug)]
pub struct TestHost {
    host: Rc<Host>,
}

/// What a [`TestHost`] answers with.
#[derive(Debug)]
struct Host {
    connection: Connection,
    tenant: String,
    caller: Option<Caller>,
    language: Language,
    correlation_id: String,
    settings: BTreeMap<String, String>,
    #[cfg(feature = "webhook")]
    secrets: BTreeMap<String, String>,
    #[cfg(feature = "webhook")]
    banks: BTreeMap<String, BTreeMap<String, imports::bank::Settlement>>,
    random: Cell<u64>,
    open: Cell<OneTransaction>,
    /// The bodies the current request kept (`scan-kept`).
    kept: RefCell<sql::KeptBodies>,
}

/// A message a request published on the queue, as [`TestHost::published`] shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    pub topic: String,
    /// The message as JSON text.
    pub payload: String,
    pub dedupe_key: Option<String>,
}

impl Default for TestHost {
    fn default() -> Self {
        Self::new()
    }
}

impl TestHost {
    /// A host with an empty store for tenant `test`, answering in English to an API user
    /// (`test`, id 1) who holds every permission, with no settings (so the time zone is UTC).
    pub fn new() -> Self {
        let connection = Connection::open_in_memory()
            .and_then(|connection| {
                connection.execute_batch("PRAGMA foreign_keys = ON;")?;
                rental_store_sql::embedded::create_schema(&connection)?;
                Ok(connection)
            })
            .unwrap_or_else(|error| panic!("the test host's database: {error}"));
        let host = Host {
            connection,
            tenant: String::new(),
            caller: Some(Caller {
                user_id: 1,
                user_name: "test".to_owned(),
                permissions: rental_platform::PERMISSIONS
                    .iter()
                    .map(|&permission| permission.to_owned())
                    .collect(),
            }),
            language: Language::En,
            correlation_id: "test-request".to_owned(),
            settings: BTreeMap::new(),
            #[cfg(feature = "webhook")]
            secrets: BTreeMap::new(),
            #[cfg(feature = "webhook")]
            banks: BTreeMap::new(),
            random: Cell::new(0),
            open: Cell::new(OneTransaction::new()),
            kept: RefCell::default(),
        };
        Self {
            host: Rc::new(host),
        }
        .tenant("test")
    }

    /// [`TestHost::new`] with the demo tenant of `rentald tenant create --demo`: its settings
    /// and its catalogue, customers and bookings around the present instant.
    pub fn demo() -> Self {
        let demo = rental_domain::demo::demo_tenant(chrono::Utc::now())
            .unwrap_or_else(|error| panic!("the demo tenant: {error}"));
        let mut host = Self::new();
        for (key, value) in demo.settings {
            host = host.setting(&key, &value);
        }
        host.put_records(&demo.records);
        host
    }

    /// The host while it is being configured, before any request holds it.
    fn configure(&mut self) -> &mut Host {
        Rc::get_mut(&mut self.host).expect("a test host is configured before its requests run")
    }

    /// Serves tenant `slug` from now on (the store keeps the documents of each tenant apart).
    pub fn tenant(mut self, slug: &str) -> Self {
        let host = self.configure();
        host.tenant = slug.to_owned();
        let exists = host
            .connection
            .query_row(
                "SELECT COUNT(*) FROM tenants WHERE slug = ?1",
                [slug],
                |row| row.get::<_, i64>(0),
            )
            .unwrap_or_else(|error| panic!("reading tenant {slug}: {error}"));
        if exists == 0 {
            host.execute(&rental_store_sql::insert_tenant(slug, 0))
                .unwrap_or_else(|error| panic!("creating tenant {slug}: {error}"));
        }
        self
    }

    /// Requests come from this API user.
    pub fn caller(mut self, caller: Caller) -> Self {
        self.configure().caller = Some(caller);
        self
    }

    /// Requests are anonymous, as the bank webhooks' are.
    pub fn anonymous(mut self) -> Self {
        self.configure().caller = None;
        self
    }

    /// Requests are answered in `language`.
    pub fn language(mut self, language: Language) -> Self {
        self.configure().language = language;
        self
    }

    /// A tenant setting, as `rentald setting set` makes one (e.g. `time_zone`).
    pub fn setting(mut self, key: &str, value: &str) -> Self {
        self.configure()
            .settings
            .insert(key.to_owned(), value.to_owned());
        self
    }

    /// A tenant secret, as `rentald secret set` makes one (e.g. `bankone.shared_secret`).
    #[cfg(feature = "webhook")]
    pub fn secret(mut self, name: &str, value: &str) -> Self {
        self.configure()
            .secrets
            .insert(name.to_owned(), value.to_owned());
        self
    }

    /// A settlement bank `bank` confirms. A bank given no settlement is not configured.
    #[cfg(feature = "webhook")]
    pub fn settlement(mut self, bank: &str, settlement: crate::webhook::Settlement) -> Self {
        let settlement = imports::bank::Settlement {
            settlement_id: settlement.settlement_id,
            reference: settlement.reference,
            amount: settlement.amount,
            currency: settlement.currency,
            status: settlement.status,
        };
        self.configure()
            .banks
            .entry(bank.to_owned())
            .or_default()
            .insert(settlement.settlement_id.clone(), settlement);
        self
    }

    /// Writes `value` into the tenant's store with its index entries, whatever is there, as
    /// `rentald catalog import` and the demo do.
    pub fn put<T: Stored>(&self, value: &T) {
        let record = value
            .record()
            .unwrap_or_else(|error| panic!("a {} does not serialise: {error}", T::COLLECTION));
        self.put_records(&[record]);
    }

    fn put_records(&self, records: &[Record]) {
        let host = &self.host;
        let written = host.begin(Mode::ReadWrite).and_then(|scope| {
            host.run(scope.put_records(records))?;
            host.commit()
        });
        if let Err(error) = written {
            host.rollback();
            panic!("writing to the test host's store: {error}");
        }
    }

    /// The tenant's document of `T` with this id, as the last request left it.
    pub fn get<T: Stored>(&self, id: &str) -> Option<Document<T>> {
        self.documents_where::<T>(Some(id)).pop()
    }

    /// Every document of `T` of the tenant, by id.
    pub fn documents<T: Stored>(&self) -> Vec<Document<T>> {
        self.documents_where::<T>(None)
    }

    fn documents_where<T: Stored>(&self, id: Option<&str>) -> Vec<Document<T>> {
        let read = || -> rusqlite::Result<Vec<imports::store::Document>> {
            let mut statement = self.host.connection.prepare(
                "SELECT id, revision, body FROM documents \
                 WHERE tenant = ?1 AND collection = ?2 AND (?3 IS NULL OR id = ?3) ORDER BY id",
            )?;
            let rows = statement.query_map(
                rusqlite::params![self.host.tenant, T::COLLECTION, id],
                |row| {
                    Ok(imports::store::Document {
                        id: row.get(0)?,
                        revision: row.get(1)?,
                        body: row.get(2)?,
                    })
                },
            )?;
            rows.collect()
        };
        read()
            .unwrap_or_else(|error| panic!("reading the test host's store: {error}"))
            .into_iter()
            .map(|document| Document::decode(document).unwrap_or_else(|error| panic!("{error}")))
            .collect()
    }

    /// Every message the tenant's requests published, oldest first.
    pub fn published(&self) -> Vec<Published> {
        let read = || -> rusqlite::Result<Vec<Published>> {
            let mut statement = self.host.connection.prepare(
                "SELECT topic, payload, dedupe_key FROM queue WHERE tenant = ?1 ORDER BY id",
            )?;
            let rows = statement.query_map([&self.host.tenant], |row| {
                Ok(Published {
                    topic: row.get(0)?,
                    payload: row.get(1)?,
                    dedupe_key: row.get(2)?,
                })
            })?;
            rows.collect()
        };
        read().unwrap_or_else(|error| panic!("reading the test host's queue: {error}"))
    }

    /// Answers `request` with `H` as the exported component would: a method the platform
    /// serves the path with only otherwise is 405 with `Allow`, an error is its error body,
    /// and the response carries the correlation id. As `rentald` does, the host puts the
    /// bodies the request kept into the response: its body comes back as bytes only.
    pub fn call<H: Handler>(&self, request: Request) -> Response {
        let response = self.run(|| {
            let mut response = crate::http::respond::<H>(request);
            response.body = response.body.to_bytes().into();
            response
        });
        self.host.kept.take();
        response
    }

    /// Runs `code` as the current request of this host: the platform's functions called in it
    /// ([`context`](crate::context), [`store`](crate::store), ...) reach this host.
    pub fn run<R>(&self, code: impl FnOnce() -> R) -> R {
        let previous = CURRENT.replace(Some(self.host.clone()));
        let _restore = Restore(previous);
        code()
    }
}

/// Puts back the host that was current before [`TestHost::run`], also when the code panics.
struct Restore(Option<Rc<Host>>);

impl Drop for Restore {
    fn drop(&mut self) {
        CURRENT.set(self.0.take());
    }
}

impl sql::Driver for Host {
    fn run<T>(&self, plan: sql::Plan<T>) -> sql::Outcome<T> {
        plan.run(|statement| self.execute(statement))
    }
}

impl Host {
    /// Runs one statement on the host's database.
    fn execute(&self, statement: &Statement) -> Result<Vec<sql::Row>, sql::StoreError> {
        rental_store_sql::embedded::execute(&self.connection, statement)
            .map_err(|error| sql::StoreError::Fault(error.to_string()))
    }

    /// Takes the request's transaction slot and begins a transaction for the tenant.
    fn begin(&self, mode: Mode) -> Result<Scope, sql::StoreError> {
        let mut slot = self.open.get();
        slot.begin()?;
        self.open.set(slot);
        let begun = self
            .connection
            .execute_batch(rental_store_sql::begin(Dialect::Sqlite, mode));
        if let Err(error) = begun {
            self.end();
            return Err(sql::StoreError::Fault(error.to_string()));
        }
        Ok(Scope::new(&self.tenant, mode))
    }

    fn commit(&self) -> Result<(), sql::StoreError> {
        let committed = self.connection.execute_batch("COMMIT");
        if committed.is_err() {
            self.rollback();
        } else {
            self.end();
        }
        committed.map_err(|error| sql::StoreError::Fault(error.to_string()))
    }

    fn rollback(&self) {
        // An error here means no transaction was open (it failed to begin or committed).
        let _ = self.connection.execute_batch("ROLLBACK");
        self.end();
    }

    fn end(&self) {
        let mut slot = self.open.get();
        slot.end();
        self.open.set(slot);
    }
}
