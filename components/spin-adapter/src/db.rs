//! Spin's SQLite database: opening it, creating the host's schema and the development tenant,
//! and running the shared store statements.

use std::cell::RefCell;
use std::rc::Rc;

use rental_store_sql::{
    Column, Dialect, Driver, Mode, Plan, Row, Scope, Statement, StoreError, Value,
};

use crate::bindings::fermyon::spin::sqlite::{self, Connection};

/// The Spin database the adapter uses (`sqlite_databases = ["default"]` in spin.toml).
const DATABASE: &str = "default";

/// A database failure that is not the guest's to handle. Like `rentald`, the adapter traps on
/// it: Spin answers 500 and logs the message.
pub fn fault(what: &str, error: impl std::fmt::Display) -> ! {
    panic!("spin-adapter: {what}: {error}")
}

/// Sorts a Spin SQLite error: a busy or locked database is a conflict (the guest retries), a
/// database that cannot be opened is unavailable, anything else a fault.
fn classify(error: sqlite::Error) -> StoreError {
    match error {
        sqlite::Error::Io(message)
            if message.contains("database is locked") || message.contains("database is busy") =>
        {
            StoreError::Conflict
        }
        sqlite::Error::Io(message) => fault("SQLite", message),
        other => StoreError::Unavailable(format!("Spin SQLite database {DATABASE:?}: {other:?}")),
    }
}

thread_local! {
    /// The instance's connection. Spin instantiates a component per request, so this is one
    /// connection per request, opened on first use.
    static SHARED: RefCell<Option<Rc<Database>>> = const { RefCell::new(None) };
}

/// The connection to the tenant's database.
pub struct Database {
    connection: Connection,
    tenant: String,
}

/// Runs a shared plan to its end.
impl Driver for Database {
    fn run<T>(&self, plan: Plan<T>) -> Result<T, StoreError> {
        plan.run(|statement| self.execute(statement))
    }
}

impl Database {
    /// The instance's connection to the tenant's database, opened on first use.
    pub fn shared() -> Result<Rc<Self>, StoreError> {
        if let Some(db) = SHARED.with_borrow(Clone::clone) {
            return Ok(db);
        }
        let db = Rc::new(Self::open(&crate::context::tenant())?);
        SHARED.set(Some(db.clone()));
        Ok(db)
    }

    /// Opens the database, creating the host's schema and the tenant's row when missing (and
    /// the demo catalogue when asked and the tenant has no documents yet).
    fn open(tenant: &str) -> Result<Self, StoreError> {
        let connection = Connection::open(DATABASE).map_err(classify)?;
        let db = Self {
            connection,
            tenant: tenant.to_owned(),
        };
        // Index entries leave with their document by cascade, as in the host.
        db.execute_sql("PRAGMA foreign_keys = ON", &[], &[])?;
        db.create_schema()?;
        db.create_tenant()?;
        db.render_pending_views()?;
        if crate::variable("demo_data").as_deref() == Some("true") {
            crate::store::load_demo(&db)?;
        }
        Ok(db)
    }

    /// Runs SQL text (already in SQLite's dialect) and reads `columns` of each row.
    fn execute_sql(
        &self,
        sql: &str,
        params: &[Value],
        columns: &[Column],
    ) -> Result<Vec<Row>, StoreError> {
        let params: Vec<sqlite::Value> = params
            .iter()
            .map(|value| match value {
                Value::Int(v) => sqlite::Value::Integer(*v),
                Value::Text(v) => sqlite::Value::Text(v.clone()),
                Value::Blob(v) => sqlite::Value::Blob(v.clone()),
            })
            .collect();
        let result = self.connection.execute(sql, &params).map_err(classify)?;
        result
            .rows
            .into_iter()
            .map(|row| {
                rental_store_sql::read_row(columns, |i, kind| match (kind, row.values.get(i)) {
                    (Column::Int, Some(sqlite::Value::Integer(v))) => Ok(Value::Int(*v)),
                    (Column::Text, Some(sqlite::Value::Text(v))) => Ok(Value::Text(v.clone())),
                    (Column::Blob, Some(sqlite::Value::Blob(v))) => Ok(Value::Blob(v.clone())),
                    (_, other) => fault(sql, format!("column {i} is {other:?}, not {kind:?}")),
                })
            })
            .collect()
    }

    /// Runs a shared statement.
    pub fn execute(&self, statement: &Statement) -> Result<Vec<Row>, StoreError> {
        self.execute_sql(
            &statement.sql(Dialect::Sqlite),
            &statement.params,
            statement.columns,
        )
    }

    /// Opens a transaction of `mode`.
    pub fn begin(&self, mode: Mode) -> Result<Scope, StoreError> {
        self.execute_sql(rental_store_sql::begin(Dialect::Sqlite, mode), &[], &[])?;
        Ok(Scope::new(&self.tenant, mode))
    }

    pub fn commit(&self) -> Result<(), StoreError> {
        self.execute_sql("COMMIT", &[], &[]).map(drop)
    }

    /// Rolls back whatever is open; nothing to do when nothing is.
    pub fn rollback(&self) {
        // An error here means no transaction was open (it failed to begin or committed).
        let _ = self.connection.execute("ROLLBACK", &[]);
    }

    /// Creates the host's tables unless they exist, in one transaction, so concurrent first
    /// requests create them once; a database made by an earlier version gets the files it
    /// lacks.
    fn create_schema(&self) -> Result<(), StoreError> {
        if let Some((last, _)) = rental_store_sql::SQLITE_SCHEMA.last()
            && self.table_exists(last)?
        {
            return Ok(());
        }
        // As in rentald: readers proceed while one writer commits; the mode stays in the file.
        self.execute_sql("PRAGMA journal_mode = WAL", &[], &[])?;
        self.begin(Mode::ReadWrite)?;
        let created = (|| {
            for (table, file) in rental_store_sql::SQLITE_SCHEMA {
                if !self.table_exists(table)? {
                    for statement in rental_store_sql::sqlite_schema_statements(file) {
                        self.execute_sql(&statement, &[], &[])?;
                    }
                }
            }
            self.commit()
        })();
        if created.is_err() {
            self.rollback();
        }
        created
    }

    /// Renders the views of the tenant's documents stored before their views were declared
    /// (`views_pending`), as `rentald` does when it starts: a batch per transaction. Asking
    /// whether any is pending takes no write lock, so that requests do not queue for it.
    fn render_pending_views(&self) -> Result<(), StoreError> {
        const BATCH: u32 = 500;
        let asking = Scope::new(&self.tenant, Mode::ReadOnly);
        while !self.run(asking.pending_views(1))?.is_empty() {
            let scope = self.begin(Mode::ReadWrite)?;
            let rendered = self
                .run(scope.pending_views(BATCH))
                .and_then(|pending| self.run(scope.render_pending_views(&pending)));
            match rendered {
                Ok(()) => self.commit()?,
                Err(e) => {
                    self.rollback();
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    fn table_exists(&self, table: &str) -> Result<bool, StoreError> {
        let rows = self.execute_sql(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            &[Value::Text(table.to_owned())],
            &[Column::Int],
        )?;
        Ok(rows.first().and_then(|row| row.first()) == Some(&Value::Int(1)))
    }

    /// Creates the tenant's row unless it exists (documents reference it).
    fn create_tenant(&self) -> Result<(), StoreError> {
        let rows = self.execute_sql(
            "SELECT 1 FROM tenants WHERE slug = ?1",
            &[Value::Text(self.tenant.clone())],
            &[Column::Int],
        )?;
        if rows.is_empty() {
            let now = chrono::Utc::now().timestamp_micros();
            self.execute(&rental_store_sql::insert_tenant(&self.tenant, now))?;
        }
        Ok(())
    }

    /// Whether the tenant has any document yet.
    pub fn has_documents(&self) -> Result<bool, StoreError> {
        let rows = self.execute_sql(
            "SELECT 1 FROM documents WHERE tenant = ?1 LIMIT 1",
            &[Value::Text(self.tenant.clone())],
            &[Column::Int],
        )?;
        Ok(!rows.is_empty())
    }

    /// A tenant setting stored in the database (the demo catalogue's settings).
    pub fn setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        let rows = self.execute_sql(
            "SELECT value FROM tenant_settings WHERE tenant = ?1 AND key = ?2",
            &[
                Value::Text(self.tenant.clone()),
                Value::Text(key.to_owned()),
            ],
            &[Column::Text],
        )?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|row| row.into_iter().next())
            .and_then(|value| match value {
                Value::Text(text) => Some(text),
                _ => None,
            }))
    }

    /// Stores a tenant setting (in the caller's transaction).
    pub fn put_setting(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.execute_sql(
            "INSERT INTO tenant_settings (tenant, key, value) VALUES (?1, ?2, ?3) \
             ON CONFLICT (tenant, key) DO UPDATE SET value = excluded.value",
            &[
                Value::Text(self.tenant.clone()),
                Value::Text(key.to_owned()),
                Value::Text(value.to_owned()),
            ],
            &[],
        )
        .map(drop)
    }
}
