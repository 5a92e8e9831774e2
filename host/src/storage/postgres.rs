//! The document store's transactions on PostgreSQL, on connections of their own.
//!
//! sqlx sends a statement and waits for its answer before it sends the next, so a transaction
//! costs a round trip for its `BEGIN`, one per statement and one for its `COMMIT`. A writer's
//! transaction holds rows its tenant's other writers wait for (the booking-id row, from
//! `next-id` to the commit), and every round trip inside it is time none of them can use.
//! tokio-postgres sends a request as soon as it is polled and reads the answers in order, so
//! here a transaction's `BEGIN` goes with its first statement, and the puts it still holds go
//! with its `COMMIT` (docs/decisions.md, "PostgreSQL's document transactions pipeline their
//! begin and commit"). The rest of the storage (tenants, queue, migrations) stays on sqlx.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use rental_store_sql::{Column, Dialect, Mode, Row, Statement, Value};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{IsNull, ToSql, Type};
use tokio_postgres::{Client, Config, NoTls};

use super::{Error, Result, StoreError};

/// The most connections one host opens for the document store: with sqlx's pool of 8 for
/// the rest, a host opens at most the 32 it opened before the document store had its own.
pub(super) const CONNECTIONS: usize = 24;

/// How long a transaction waits for a connection before the store is unavailable.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// The most statements a connection keeps prepared; past it, it forgets them all.
const PREPARED: usize = 256;

/// How long a connection may stay idle before it is closed: as long as sqlx's pool keeps its
/// own, so that a burst's connections do not stay open on the server for the host's life.
pub(super) const IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// The document store's connections to one PostgreSQL database, opened as they are needed and
/// closed once idle for longer than their idle timeout.
pub(super) struct Connections {
    config: Config,
    /// Idle connections, the most recently used last (taken first): those idle longest are
    /// at the front.
    idle: Mutex<Vec<Connection>>,
    seats: Arc<Semaphore>,
}

impl std::fmt::Debug for Connections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connections")
            .field("idle", &self.idle().len())
            .finish_non_exhaustive()
    }
}

/// One connection and the statements prepared on it.
struct Connection {
    client: Client,
    prepared: HashMap<String, tokio_postgres::Statement>,
    /// When it was last taken back.
    idle_since: Instant,
}

impl Connections {
    /// Connections to `url`; none is opened yet. A connection idle for longer than
    /// `idle_timeout` is closed (within a tenth of it more), by a task of the current runtime
    /// that ends with the connections.
    pub(super) fn new(url: &str, idle_timeout: Duration) -> anyhow::Result<Arc<Self>> {
        let connections = Arc::new(Self {
            config: url.parse()?,
            idle: Mutex::new(Vec::new()),
            seats: Arc::new(Semaphore::new(CONNECTIONS)),
        });
        tokio::spawn(close_idle(Arc::downgrade(&connections), idle_timeout));
        Ok(connections)
    }

    fn idle(&self) -> MutexGuard<'_, Vec<Connection>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A transaction on an idle connection, or on a new one. Nothing is sent yet: its `BEGIN`
    /// goes with its first statement.
    pub(super) async fn begin(self: &Arc<Self>, mode: Mode) -> Result<Transaction> {
        let seat = tokio::time::timeout(ACQUIRE_TIMEOUT, self.seats.clone().acquire_owned())
            .await
            .map_err(|_| {
                unavailable(format!(
                    "no PostgreSQL connection was free for {} s",
                    ACQUIRE_TIMEOUT.as_secs()
                ))
            })?
            .map_err(|e| unavailable(e.to_string()))?;
        let idle = std::iter::from_fn(|| self.idle().pop()).find(|c| !c.client.is_closed());
        let connection = match idle {
            Some(connection) => connection,
            None => self.connect().await?,
        };
        Ok(Transaction {
            connection: Some(connection),
            connections: Arc::clone(self),
            seat: Some(seat),
            begin: Some(rental_store_sql::begin(Dialect::Postgres, mode)),
            failed: false,
            refused: false,
        })
    }

    async fn connect(&self) -> Result<Connection> {
        let (client, connection) = self
            .config
            .connect(NoTls)
            .await
            .map_err(|e| unavailable(format!("connecting to PostgreSQL: {e}")))?;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "a document store connection ended");
            }
        });
        Ok(Connection {
            client,
            prepared: HashMap::new(),
            idle_since: Instant::now(),
        })
    }

    /// Takes `connection` back, unless it has closed.
    fn put_back(&self, mut connection: Connection) {
        if !connection.client.is_closed() {
            connection.idle_since = Instant::now();
            self.idle().push(connection);
        }
    }
}

/// Closes, every tenth of `timeout`, the connections idle for longer than `timeout`, until
/// the connections are dropped. A dropped client ends its connection.
async fn close_idle(connections: Weak<Connections>, timeout: Duration) {
    let mut ticks = tokio::time::interval(timeout / 10);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(connections) = connections.upgrade() else {
            return;
        };
        let closed: Vec<Connection> = {
            let mut idle = connections.idle();
            let stale = idle
                .iter()
                .take_while(|c| c.idle_since.elapsed() > timeout)
                .count();
            idle.drain(..stale).collect()
        };
        if !closed.is_empty() {
            tracing::debug!(
                closed = closed.len(),
                "closed idle document store connections"
            );
        }
    }
}

/// One transaction on one connection. Dropped without [`Transaction::commit`], it rolls back
/// on a task of its own, and its connection is taken back once that is done.
pub(super) struct Transaction {
    connection: Option<Connection>,
    connections: Arc<Connections>,
    /// The connection's place among [`CONNECTIONS`], given up with it.
    seat: Option<OwnedSemaphorePermit>,
    /// The statement that begins the transaction, until it has gone with the first statement.
    begin: Option<&'static str>,
    /// Whether a statement failed: PostgreSQL then ends the transaction at its `COMMIT` with a
    /// rollback, which must not be told as a commit.
    failed: bool,
    /// Whether the held puts' statement failed (one of them found its expectation failed):
    /// the guest was told they were written, so every later call is a conflict.
    refused: bool,
}

impl Transaction {
    /// Runs `held` (the puts held until now), if any, then `statement`, in one round trip
    /// (the first with the `BEGIN`), and returns the rows of `statement`.
    pub(super) async fn execute(
        &mut self,
        held: Option<&Statement>,
        statement: &Statement,
    ) -> Result<Vec<Row>> {
        self.run(held, Some(statement), false).await
    }

    /// Runs `held`, the puts held until now.
    pub(super) async fn send(&mut self, held: &Statement) -> Result<()> {
        self.run(Some(held), None, false).await.map(drop)
    }

    /// Runs `held`, if any, and commits, as one round trip; returns once the commit is
    /// durable. A failed statement, this one or an earlier one, is a failed commit:
    /// PostgreSQL has rolled the transaction back.
    pub(super) async fn commit(mut self, held: Option<&Statement>) -> Result<()> {
        // A refused held put failed its statement too.
        if self.failed {
            return Err(StoreError::Conflict.into());
        }
        // A transaction that sent nothing has nothing to commit.
        if held.is_some() || self.begin.is_none() {
            self.run(held, None, true).await?;
        }
        self.begin = None;
        if let Some(connection) = self.connection.take() {
            self.connections.put_back(connection);
        }
        Ok(())
    }

    fn connection_mut(&mut self) -> Result<&mut Connection> {
        self.connection
            .as_mut()
            .ok_or_else(|| StoreError::Fault("the transaction has no connection".to_owned()).into())
    }

    /// `held` and `statement` prepared on the connection (a round trip for each not prepared
    /// on it before).
    async fn prepare<'s>(
        &mut self,
        held: Option<&'s Statement>,
        statement: Option<&'s Statement>,
    ) -> Result<(Option<Prepared<'s>>, Option<Prepared<'s>>)> {
        let connection = self.connection_mut()?;
        Ok((
            connection.prepare(held).await?,
            connection.prepare(statement).await?,
        ))
    }

    /// Sends, before any answer: the `BEGIN` if it has not gone yet, `held`, `statement`, and
    /// `COMMIT` when `commit`; reads the answers in order and returns the rows of `statement`.
    async fn run(
        &mut self,
        held: Option<&Statement>,
        statement: Option<&Statement>,
        commit: bool,
    ) -> Result<Vec<Row>> {
        if self.refused {
            return Err(StoreError::Conflict.into());
        }
        // Preparing may fail inside the transaction, which PostgreSQL then ends.
        let (held, statement) = match self.prepare(held, statement).await {
            Ok(prepared) => prepared,
            Err(error) => {
                self.failed = true;
                return Err(error);
            }
        };
        let begin = self.begin.take();
        let client = &self.connection_mut()?.client;
        // Each request is sent when it is first polled: `biased` polls them in this order.
        let (begun, held_rows, rows, committed) = tokio::join!(
            biased;
            simple(client, begin),
            query(client, held.as_ref()),
            query(client, statement.as_ref()),
            simple(client, commit.then_some("COMMIT")),
        );
        // The first error is the one to tell: PostgreSQL fails every later statement of the
        // transaction (25P02) once one has failed.
        let answered = match (begun, held_rows, rows, committed) {
            (Err(error), ..) => Err(error),
            (Ok(()), Err(error), ..) => {
                self.refused = true;
                Err(error)
            }
            (Ok(()), Ok(_), Err(error), _) | (Ok(()), Ok(_), Ok(_), Err(error)) => Err(error),
            (Ok(()), Ok(_), Ok(rows), Ok(())) => Ok(rows),
        };
        self.failed |= answered.is_err();
        let rows = answered?;
        let Some((_, statement)) = statement else {
            return Ok(Vec::new());
        };
        rows.iter()
            .map(|r| read(statement, r))
            .collect::<std::result::Result<_, _>>()
            .map_err(Error::from)
    }
}

/// A statement with its form prepared on the transaction's connection.
type Prepared<'s> = (tokio_postgres::Statement, &'s Statement);

/// Runs `sql`, if any, as a simple query (`BEGIN`, `COMMIT`).
async fn simple(
    client: &Client,
    sql: Option<&str>,
) -> std::result::Result<(), tokio_postgres::Error> {
    match sql {
        Some(sql) => client.batch_execute(sql).await,
        None => Ok(()),
    }
}

/// Runs a prepared statement, if any, with its parameters.
async fn query(
    client: &Client,
    statement: Option<&Prepared<'_>>,
) -> std::result::Result<Vec<tokio_postgres::Row>, tokio_postgres::Error> {
    let Some((prepared, statement)) = statement else {
        return Ok(Vec::new());
    };
    let params: Vec<Param<'_>> = statement.params.iter().map(Param).collect();
    let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as _).collect();
    client.query(prepared, &params).await
}

impl Drop for Transaction {
    fn drop(&mut self) {
        let Some(connection) = self.connection.take() else {
            return;
        };
        let seat = self.seat.take();
        if self.begin.is_some() {
            // Nothing was sent.
            self.connections.put_back(connection);
            return;
        }
        let connections = Arc::clone(&self.connections);
        // Without a runtime the connection is dropped, which ends the transaction as well.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if connection.client.batch_execute("ROLLBACK").await.is_ok() {
                    connections.put_back(connection);
                }
                drop(seat);
            });
        }
    }
}

impl Connection {
    /// `statement`, if any, with its prepared form.
    async fn prepare<'s>(
        &mut self,
        statement: Option<&'s Statement>,
    ) -> Result<Option<Prepared<'s>>> {
        Ok(match statement {
            Some(statement) => Some((self.prepared(statement).await?, statement)),
            None => None,
        })
    }

    /// `statement` prepared on this connection, with its parameters' types.
    async fn prepared(&mut self, statement: &Statement) -> Result<tokio_postgres::Statement> {
        let sql = statement.sql(Dialect::Postgres);
        if let Some(prepared) = self.prepared.get(sql.as_ref())
            && prepared
                .params()
                .iter()
                .eq(statement.params.iter().map(type_of))
        {
            return Ok(prepared.clone());
        }
        let types: Vec<Type> = statement
            .params
            .iter()
            .map(|v| type_of(v).clone())
            .collect();
        let prepared = self.client.prepare_typed(&sql, &types).await?;
        if self.prepared.len() >= PREPARED {
            self.prepared.clear();
        }
        self.prepared.insert(sql.into_owned(), prepared.clone());
        Ok(prepared)
    }
}

/// The type a value is bound as (as sqlx binds it): PostgreSQL converts it where the
/// statement needs another.
fn type_of(value: &Value) -> &'static Type {
    match value {
        Value::Int(_) => &Type::INT8,
        Value::Text(_) => &Type::TEXT,
        Value::Blob(_) => &Type::BYTEA,
    }
}

/// A value bound to a parameter.
#[derive(Debug)]
struct Param<'a>(&'a Value);

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self.0 {
            Value::Int(v) => v.to_sql(ty, out),
            Value::Text(v) => v.to_sql(ty, out),
            Value::Blob(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        [&Type::INT8, &Type::TEXT, &Type::BYTEA].contains(&ty)
    }

    fn to_sql_checked(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self.0 {
            Value::Int(v) => v.to_sql_checked(ty, out),
            Value::Text(v) => v.to_sql_checked(ty, out),
            Value::Blob(v) => v.to_sql_checked(ty, out),
        }
    }
}

/// A result row as the shared rules read it.
fn read(
    statement: &Statement,
    row: &tokio_postgres::Row,
) -> std::result::Result<Row, tokio_postgres::Error> {
    rental_store_sql::read_row(statement.columns, |i, kind| {
        Ok(match kind {
            Column::Int => Value::Int(match row.columns().get(i).map(|c| c.type_()) {
                Some(&Type::INT4) => i64::from(row.try_get::<_, i32>(i)?),
                Some(&Type::INT2) => i64::from(row.try_get::<_, i16>(i)?),
                _ => row.try_get(i)?,
            }),
            Column::Text => Value::Text(row.try_get(i)?),
            Column::Blob => Value::Blob(row.try_get(i)?),
        })
    })
}

fn unavailable(why: String) -> Error {
    StoreError::Unavailable(why).into()
}

/// Sorts a PostgreSQL error as the sqlx ones are: a serialization failure or a deadlock is a
/// conflict (the guest retries), a lost connection unavailable, anything else a fault.
impl From<tokio_postgres::Error> for Error {
    fn from(error: tokio_postgres::Error) -> Self {
        match error.code() {
            Some(code)
                if *code == SqlState::T_R_SERIALIZATION_FAILURE
                    || *code == SqlState::T_R_DEADLOCK_DETECTED =>
            {
                Self::Store(StoreError::Conflict)
            }
            None if error.is_closed() => Self::Store(StoreError::Unavailable(error.to_string())),
            _ => Self::Postgres(error),
        }
    }
}
