//! Statements as data and the plans that run them.

use std::borrow::Cow;
use std::collections::VecDeque;

use crate::error::StoreError;

/// A parameter or a column value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    Text(String),
    Blob(Vec<u8>),
}

/// The kind of a result column, so a driver knows how to read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Int,
    Text,
    Blob,
}

/// How placeholders are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `?N`: the N-th parameter.
    Sqlite,
    /// `$N`.
    Postgres,
}

/// One SQL statement with its parameters (bound in order: the first is `$1`) and the kinds of
/// the columns it returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    sql: String,
    /// The text PostgreSQL runs instead, where it needs another form of the same statement.
    postgres: Option<String>,
    /// Its text on PostgreSQL as a clause of a put's one statement ([`Plan::for_dialect`]).
    gated: Option<String>,
    pub params: Vec<Value>,
    pub columns: &'static [Column],
}

impl Statement {
    pub fn new(sql: String, params: Vec<Value>, columns: &'static [Column]) -> Self {
        Self {
            sql,
            postgres: None,
            gated: None,
            params,
            columns,
        }
    }

    /// The same statement with `sql` as its text on PostgreSQL (same parameters and columns).
    pub(crate) fn on_postgres(mut self, sql: String) -> Self {
        self.postgres = Some(sql);
        self
    }

    /// The same statement with `sql` as its text on PostgreSQL when it runs as a clause after
    /// the document's write of a put, in one statement with it: `sql` writes only if that
    /// write, the clause `w`, returned a row ([`WRITTEN`]), and reads from `w` what it would
    /// otherwise have read of the document (its revision), since every clause of one statement
    /// sees the database as it was before the statement.
    pub(crate) fn gated_on_postgres(mut self, sql: String) -> Self {
        self.gated = Some(sql);
        self
    }

    /// The statement's text in `dialect`.
    pub fn sql(&self, dialect: Dialect) -> Cow<'_, str> {
        match dialect {
            Dialect::Postgres => Cow::Borrowed(self.postgres.as_deref().unwrap_or(&self.sql)),
            // Every statement a request runs passes here: the text between placeholders is
            // copied a run at a time, not a character at a time.
            Dialect::Sqlite => {
                let sql = &self.sql;
                let mut out = String::with_capacity(sql.len());
                let mut copied = 0;
                for (at, _) in sql.match_indices('$') {
                    if sql.as_bytes().get(at + 1).is_some_and(u8::is_ascii_digit) {
                        out.push_str(&sql[copied..at]);
                        out.push('?');
                        copied = at + 1;
                    }
                }
                out.push_str(&sql[copied..]);
                Cow::Owned(out)
            }
        }
    }
}

/// One result row, in the order of [`Statement::columns`].
pub type Row = Vec<Value>;

/// What an operation ends with.
pub type Outcome<T> = Result<T, StoreError>;

/// What a driver does next.
#[derive(Debug)]
pub enum Step<T> {
    /// Run this statement and pass its rows to the next [`Plan::step`].
    Run(Statement),
    /// The operation is over.
    Done(Outcome<T>),
}

/// The condition of a [gated](Statement::gated_on_postgres) clause: the put's document was
/// written. A put whose expectation fails writes nothing, so its other clauses write nothing.
/// A macro as well, for texts put together with `concat!`.
macro_rules! written {
    () => {
        "EXISTS (SELECT 1 FROM w)"
    };
}
pub(crate) use written;
pub(crate) const WRITTEN: &str = written!();

type Finish<T> = Box<dyn FnOnce(Vec<Vec<Row>>) -> Outcome<T> + Send>;

/// Looks at the rows of a plan's first statement; an error ends the plan there.
type Guard = fn(&[Row]) -> Option<StoreError>;

/// The statements of one store operation and how to read their results. A driver calls
/// [`Plan::step`] with `None`, runs each statement it is given, passes its rows back, and stops
/// at [`Step::Done`].
pub struct Plan<T> {
    pending: VecDeque<Statement>,
    results: Vec<Vec<Row>>,
    guard: Option<Guard>,
    /// Whether only the first statement's rows are read, so that all may run as one.
    first_rows_only: bool,
    finish: Option<Finish<T>>,
    early: Option<Outcome<T>>,
    /// What the plan writes, when it is a put whose outcome is known before it runs
    /// ([`Plan::hold`]).
    holdable: Option<Holdable>,
}

impl<T> std::fmt::Debug for Plan<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

impl<T> Plan<T> {
    pub(crate) fn new(
        statements: Vec<Statement>,
        finish: impl FnOnce(Vec<Vec<Row>>) -> Outcome<T> + Send + 'static,
    ) -> Self {
        Self {
            pending: statements.into(),
            results: Vec::new(),
            guard: None,
            first_rows_only: false,
            finish: Some(Box::new(finish)),
            early: None,
            holdable: None,
        }
    }

    /// A plan that runs nothing and answers `outcome`.
    pub(crate) fn done(outcome: Outcome<T>) -> Self {
        Self {
            pending: VecDeque::new(),
            results: Vec::new(),
            guard: None,
            first_rows_only: false,
            finish: None,
            early: Some(outcome),
            holdable: None,
        }
    }

    /// A plan that refuses the operation.
    pub(crate) fn refuse(error: StoreError) -> Self {
        Self::done(Err(error))
    }

    pub(crate) fn guard_first(mut self, guard: Guard) -> Self {
        self.guard = Some(guard);
        self
    }

    /// Marks a plan whose outcome depends on its first statement's rows only (the others'
    /// are passed to it all the same, or none when [`Plan::for_dialect`] joined them all).
    pub(crate) fn reads_first_rows_only(mut self) -> Self {
        self.first_rows_only = true;
        self
    }

    /// The plan as a driver of `dialect` runs it best. On PostgreSQL, a plan that [reads only
    /// the first statement's rows](Plan::reads_first_rows_only) and whose other statements
    /// all have a [gated](Statement::gated_on_postgres) form becomes one statement: the first
    /// as the data-modifying `WITH` clause `w`, each of the others a clause after it that
    /// writes only if `w` did, and the rows of `w` as its result. One round trip instead of
    /// one each, which matters most in a write transaction holding rows other writers wait
    /// for. SQLite has no data-modifying `WITH` (and no round trip to save). Statements whose
    /// parameters add up to more than one statement binds stay apart.
    pub fn for_dialect(mut self, dialect: Dialect) -> Self {
        if dialect == Dialect::Postgres && self.pending.len() > 1 && self.joinable() {
            let mut statements = std::mem::take(&mut self.pending).into_iter();
            if let Some(first) = statements.next() {
                self.pending.push_back(joined(first, statements));
            }
        }
        self
    }

    /// Whether the plan's statements can run as one PostgreSQL statement: only the first's
    /// rows are read, every other has its gated form, and PostgreSQL binds all the parameters.
    fn joinable(&self) -> bool {
        self.early.is_none()
            && self.first_rows_only
            && self.pending.iter().skip(1).all(|s| s.gated.is_some())
            && params(&self.pending) <= POSTGRES_PARAMS
    }

    /// Takes the rows of the statement handed out last (`None` on the first call) and says
    /// what to do next.
    pub fn step(&mut self, rows: Option<Vec<Row>>) -> Step<T> {
        if let Some(rows) = rows {
            if self.results.is_empty()
                && let Some(error) = self.guard.and_then(|guard| guard(&rows))
            {
                return Step::Done(Err(error));
            }
            self.results.push(rows);
        }
        if let Some(outcome) = self.early.take() {
            return Step::Done(outcome);
        }
        if let Some(statement) = self.pending.pop_front() {
            return Step::Run(statement);
        }
        match self.finish.take() {
            Some(finish) => Step::Done(finish(std::mem::take(&mut self.results))),
            None => Step::Done(Err(StoreError::Fault(
                "the plan has already finished".to_owned(),
            ))),
        }
    }

    /// Runs the plan with a synchronous driver: `execute` runs one statement and returns its
    /// rows; its error ends the plan.
    pub fn run(
        mut self,
        mut execute: impl FnMut(&Statement) -> Result<Vec<Row>, StoreError>,
    ) -> Outcome<T> {
        let mut rows = None;
        loop {
            match self.step(rows.take()) {
                Step::Run(statement) => rows = Some(execute(&statement)?),
                Step::Done(outcome) => return outcome,
            }
        }
    }
}

/// The most parameters PostgreSQL binds to one statement.
const POSTGRES_PARAMS: usize = u16::MAX as usize;

/// `first` as the clause `w` of one PostgreSQL statement, the gated forms of `rest` after it,
/// their parameters numbered one after another, and the rows of `w` as its result.
fn joined(first: Statement, rest: impl Iterator<Item = Statement>) -> Statement {
    let columns = first.columns;
    let mut params = Vec::new();
    let clauses = put_clauses("w", first, rest, &mut params);
    Statement::new(
        format!("WITH {} SELECT * FROM w", clauses.join(", ")),
        params,
        columns,
    )
}

/// The `WITH` clauses of one put: `first` named `name`, the gated forms of `rest` after it
/// (named `name0`, `name1`, ...), each reading `name` where its text reads `w`. Their
/// parameters are numbered after those already in `params`, and appended to it.
fn put_clauses(
    name: &str,
    first: Statement,
    rest: impl Iterator<Item = Statement>,
    params: &mut Vec<Value>,
) -> Vec<String> {
    let mut clauses = vec![format!(
        "{name} AS ({})",
        shift_placeholders(&first.sql(Dialect::Postgres), params.len())
    )];
    params.extend(first.params);
    for (i, statement) in rest.enumerate() {
        // Every one has its gated form ([`Plan::for_dialect`], [`Plan::hold`]); an empty
        // clause would not parse, so a missing one could never write ungated.
        let gated = renamed(&statement.gated.unwrap_or_default(), name);
        clauses.push(format!(
            "{name}{i} AS ({})",
            shift_placeholders(&gated, params.len())
        ));
        params.extend(statement.params);
    }
    clauses
}

/// `sql` with every `w` that is a word of its own (the put's clause, as the gated texts name
/// it) made `name`.
fn renamed(sql: &str, name: &str) -> String {
    if name == "w" {
        return sql.to_owned();
    }
    let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$';
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut copied = 0;
    for (at, _) in sql.match_indices('w') {
        let alone = (at == 0 || !word(&bytes[at - 1])) && !bytes.get(at + 1).is_some_and(word);
        if alone {
            out.push_str(&sql[copied..at]);
            out.push_str(name);
            copied = at + 1;
        }
    }
    out.push_str(&sql[copied..]);
    out
}

/// A put as [`Plan::hold`] finds it: what it writes, and the revision it answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Holdable {
    pub collection: String,
    pub id: String,
    /// Whether the put moves counts of its collection's counted indexes: rows that other puts
    /// of the collection write too.
    pub counted: bool,
    pub revision: u64,
}

impl Plan<u64> {
    /// Marks a put whose answer is known before it runs: `holdable.revision`, unless its
    /// expectation fails, which is a conflict either way ([`Plan::hold`]).
    pub(crate) fn holdable(mut self, holdable: Holdable) -> Self {
        self.holdable = Some(holdable);
        self
    }

    /// On PostgreSQL, the put as a [`HeldPut`], which a driver may answer at once and send
    /// later, with the transaction's next puts, as one statement ([`HeldPuts`]): a put of
    /// `Expect::Absent` or `Expect::Revision`, whose statements [`Plan::for_dialect`] would
    /// join. Otherwise the plan itself, to run now.
    pub fn hold(mut self) -> Hold {
        if !self.joinable() {
            return Hold::Run(self);
        }
        let Some(holdable) = self.holdable.take() else {
            return Hold::Run(self);
        };
        match self.pending.pop_front() {
            Some(write) => Hold::Held(HeldPut {
                write,
                gated: self.pending.into(),
                holdable,
            }),
            None => Hold::Run(self),
        }
    }
}

/// What [`Plan::hold`] makes of a put.
#[derive(Debug)]
pub enum Hold {
    /// Answered now, sent later.
    Held(HeldPut),
    /// To run now.
    Run(Plan<u64>),
}

#[cfg(test)]
impl Hold {
    pub(crate) fn held(self) -> Option<HeldPut> {
        match self {
            Hold::Held(put) => Some(put),
            Hold::Run(_) => None,
        }
    }
}

fn params<'a>(statements: impl IntoIterator<Item = &'a Statement>) -> usize {
    statements.into_iter().map(|s| s.params.len()).sum()
}

/// A put a driver has answered and not yet sent ([`Plan::hold`]).
#[derive(Debug)]
pub struct HeldPut {
    /// The document's write.
    write: Statement,
    /// The rest of the put, each run as a gated clause after `write`.
    gated: Vec<Statement>,
    holdable: Holdable,
}

impl HeldPut {
    /// The revision the put answers: the document's once it is written.
    pub fn revision(&self) -> u64 {
        self.holdable.revision
    }

    fn params(&self) -> usize {
        self.write.params.len() + params(&self.gated)
    }
}

/// The puts a PostgreSQL driver holds, to be sent as one statement before the transaction's
/// next other statement or its commit: a creation's booking and its comment then cost one
/// round trip, not two, while the transaction holds rows that other writers wait for.
#[derive(Debug, Default)]
pub struct HeldPuts {
    puts: Vec<HeldPut>,
}

impl HeldPuts {
    /// Whether `put` may be held with the puts held already, in one statement: it writes
    /// another document; it moves no count that one of them moves (every clause of one
    /// statement sees the database as it was before it, so two would both start from the same
    /// count); and the statement binds no more parameters than PostgreSQL takes.
    pub fn admits(&self, put: &HeldPut) -> bool {
        let new = &put.holdable;
        self.puts.iter().all(|held| {
            let held = &held.holdable;
            (held.collection != new.collection || held.id != new.id)
                && !(held.counted && new.counted && held.collection == new.collection)
        }) && self
            .puts
            .iter()
            .chain([put])
            .map(HeldPut::params)
            .sum::<usize>()
            <= POSTGRES_PARAMS
    }

    /// Holds `put`, which [`HeldPuts::admits`].
    pub fn push(&mut self, put: HeldPut) {
        self.puts.push(put);
    }

    /// The statement that sends every held put, as one, and fails with a conflict unless each
    /// of them wrote; `None` when none is held. Nothing is held afterwards. The check is the
    /// statement's own (`held_puts_written`, PostgreSQL's migration 0012 raises a
    /// serialization failure), so that a transaction sent on with its `COMMIT` before the
    /// statement is answered rolls back instead of committing without one of its puts.
    pub fn take(&mut self) -> Option<Statement> {
        if self.puts.is_empty() {
            return None;
        }
        let puts = std::mem::take(&mut self.puts);
        let count = puts.len();
        let mut params = Vec::new();
        let mut clauses = Vec::new();
        let mut written = Vec::new();
        for (k, put) in puts.into_iter().enumerate() {
            let name = format!("w{k}_");
            clauses.extend(put_clauses(
                &name,
                put.write,
                put.gated.into_iter(),
                &mut params,
            ));
            written.push(format!("SELECT 1 FROM {name}"));
        }
        let sql = format!(
            "WITH {} SELECT held_puts_written((SELECT count(*) FROM ({}) AS written), {count})",
            clauses.join(", "),
            written.join(" UNION ALL ")
        );
        Some(Statement::new(sql, params, &[Column::Int]))
    }
}

/// `sql` with every placeholder `$N` made `$(N + by)`.
fn shift_placeholders(sql: &str, by: usize) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        match rest[..digits].parse::<usize>() {
            Ok(n) => out.push_str(&(n + by).to_string()),
            Err(_) => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// Reads column `i` of `row` as an integer.
pub fn int(row: &[Value], i: usize) -> Result<i64, StoreError> {
    match row.get(i) {
        Some(Value::Int(v)) => Ok(*v),
        other => Err(StoreError::Fault(format!(
            "column {i} is not an integer: {other:?}"
        ))),
    }
}

/// Reads column `i` of `row` as text.
pub fn text(row: &[Value], i: usize) -> Result<String, StoreError> {
    match row.get(i) {
        Some(Value::Text(v)) => Ok(v.clone()),
        other => Err(StoreError::Fault(format!(
            "column {i} is not text: {other:?}"
        ))),
    }
}

/// Takes column `i` of `row` as text, leaving it empty: a document's body is moved out of its
/// row, not copied.
pub fn take_text(row: &mut [Value], i: usize) -> Result<String, StoreError> {
    match row.get_mut(i) {
        Some(Value::Text(v)) => Ok(std::mem::take(v)),
        other => Err(StoreError::Fault(format!(
            "column {i} is not text: {other:?}"
        ))),
    }
}

/// Reads column `i` of `row` as bytes.
pub fn blob(row: &[Value], i: usize) -> Result<&[u8], StoreError> {
    match row.get(i) {
        Some(Value::Blob(v)) => Ok(v),
        other => Err(StoreError::Fault(format!(
            "column {i} is not a blob: {other:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_placeholders_are_positional() {
        let statement = Statement::new(
            "UPDATE t SET b = $4 WHERE a = $1 AND c = $10 AND d = '$x'".to_owned(),
            Vec::new(),
            &[],
        );
        assert_eq!(
            statement.sql(Dialect::Sqlite),
            "UPDATE t SET b = ?4 WHERE a = ?1 AND c = ?10 AND d = '$x'"
        );
        assert_eq!(statement.sql(Dialect::Postgres), statement.sql);
        let ending = Statement::new("SELECT $2 || '€$' || $".to_owned(), Vec::new(), &[]);
        assert_eq!(ending.sql(Dialect::Sqlite), "SELECT ?2 || '€$' || $");
    }

    #[test]
    fn postgres_may_run_its_own_text() {
        let statement = Statement::new("SELECT $1".to_owned(), Vec::new(), &[])
            .on_postgres("SELECT $1 OFFSET 0".to_owned());
        assert_eq!(statement.sql(Dialect::Sqlite), "SELECT ?1");
        assert_eq!(statement.sql(Dialect::Postgres), "SELECT $1 OFFSET 0");
    }

    #[test]
    fn placeholders_shift_and_dollars_without_digits_stay() {
        assert_eq!(
            shift_placeholders("SELECT $1, $10 WHERE a = $2 AND b = '$'", 3),
            "SELECT $4, $13 WHERE a = $5 AND b = '$'"
        );
        assert_eq!(shift_placeholders("SELECT 1", 3), "SELECT 1");
    }

    #[test]
    fn on_postgres_a_put_with_gated_statements_runs_as_one() {
        let statement =
            |sql: &str, params: Vec<Value>| Statement::new(sql.to_owned(), params, &[Column::Int]);
        let plan = |tail: Vec<Statement>| {
            let mut statements = vec![statement(
                "INSERT INTO a VALUES ($1) RETURNING x",
                vec![Value::Int(1)],
            )];
            statements.extend(tail);
            Plan::new(statements, |results| Ok(results.len())).reads_first_rows_only()
        };
        let gated = || {
            vec![
                statement(
                    "INSERT INTO b VALUES ($1, $2)",
                    vec![Value::Int(2), Value::Int(3)],
                )
                .gated_on_postgres(format!("INSERT INTO b SELECT $1, $2 WHERE {WRITTEN}")),
                statement("DELETE FROM c WHERE y = $1", vec![Value::Int(4)])
                    .gated_on_postgres(format!("DELETE FROM c WHERE y = $1 AND {WRITTEN}")),
            ]
        };
        let mut ran = Vec::new();
        let outcome = plan(gated()).for_dialect(Dialect::Postgres).run(|s| {
            ran.push((s.sql(Dialect::Postgres).into_owned(), s.params.clone()));
            Ok(Vec::new())
        });
        assert_eq!(outcome, Ok(1));
        assert_eq!(
            ran,
            [(
                "WITH w AS (INSERT INTO a VALUES ($1) RETURNING x), \
                 w0 AS (INSERT INTO b SELECT $2, $3 WHERE EXISTS (SELECT 1 FROM w)), \
                 w1 AS (DELETE FROM c WHERE y = $4 AND EXISTS (SELECT 1 FROM w)) \
                 SELECT * FROM w"
                    .to_owned(),
                vec![Value::Int(1), Value::Int(2), Value::Int(3), Value::Int(4)]
            )]
        );
        // SQLite runs them one by one, as does a plan that reads every statement's rows, and
        // one with a statement that has no gated form.
        assert_eq!(
            plan(gated())
                .for_dialect(Dialect::Sqlite)
                .run(|_| Ok(Vec::new())),
            Ok(3)
        );
        let unmarked = Plan::new(plan(gated()).pending.into(), |results| Ok(results.len()));
        assert_eq!(
            unmarked
                .for_dialect(Dialect::Postgres)
                .run(|_| Ok(Vec::new())),
            Ok(3)
        );
        let mut partly = gated();
        partly.push(statement("DELETE FROM d", Vec::new()));
        assert_eq!(
            plan(partly)
                .for_dialect(Dialect::Postgres)
                .run(|_| Ok(Vec::new())),
            Ok(4)
        );
        // Nor statements whose parameters together pass what one statement binds.
        let mut wide = gated();
        let params = vec![Value::Int(5); POSTGRES_PARAMS];
        wide.push(
            statement("INSERT INTO e VALUES ($1)", params)
                .gated_on_postgres(format!("INSERT INTO e SELECT $1 WHERE {WRITTEN}")),
        );
        assert_eq!(
            plan(wide)
                .for_dialect(Dialect::Postgres)
                .run(|_| Ok(Vec::new())),
            Ok(4)
        );
    }

    /// A put of document `id` of `collection` as [`Plan::hold`] takes it: a write and one
    /// gated clause, `params` parameters in all.
    fn holdable_put(collection: &str, id: &str, counted: bool, params: usize) -> Plan<u64> {
        let write = Statement::new(
            "INSERT INTO d VALUES ($1) RETURNING r".to_owned(),
            vec![Value::Int(1)],
            &[Column::Int],
        );
        let entries = Statement::new(
            "INSERT INTO e VALUES ($1)".to_owned(),
            vec![Value::Int(2); params - 1],
            &[],
        )
        .gated_on_postgres(format!("INSERT INTO e SELECT $1 FROM w WHERE {WRITTEN}"));
        Plan::new(vec![write, entries], |_| Ok(1))
            .reads_first_rows_only()
            .holdable(Holdable {
                collection: collection.to_owned(),
                id: id.to_owned(),
                counted,
                revision: 1,
            })
    }

    #[test]
    fn held_puts_are_sent_as_one_statement_that_checks_each_wrote() {
        let mut held = HeldPuts::default();
        assert!(held.take().is_none());
        for id in ["a", "b"] {
            let put = holdable_put("c", id, false, 2).hold().held().unwrap();
            assert_eq!(put.revision(), 1);
            assert!(held.admits(&put));
            held.push(put);
        }
        let sent = held.take().unwrap();
        assert_eq!(
            (sent.sql(Dialect::Postgres).into_owned(), sent.params),
            (
                "WITH w0_ AS (INSERT INTO d VALUES ($1) RETURNING r), \
                 w0_0 AS (INSERT INTO e SELECT $2 FROM w0_ WHERE EXISTS (SELECT 1 FROM w0_)), \
                 w1_ AS (INSERT INTO d VALUES ($3) RETURNING r), \
                 w1_0 AS (INSERT INTO e SELECT $4 FROM w1_ WHERE EXISTS (SELECT 1 FROM w1_)) \
                 SELECT held_puts_written((SELECT count(*) FROM \
                 (SELECT 1 FROM w0_ UNION ALL SELECT 1 FROM w1_) AS written), 2)"
                    .to_owned(),
                vec![Value::Int(1), Value::Int(2), Value::Int(1), Value::Int(2)]
            )
        );
        assert!(held.take().is_none(), "nothing is held once sent");
    }

    #[test]
    fn puts_that_share_rows_or_pass_the_parameters_are_not_held_together() {
        let mut held = HeldPuts::default();
        held.push(holdable_put("c", "a", true, 2).hold().held().unwrap());
        let admits = |put: Plan<u64>| held.admits(&put.hold().held().unwrap());
        assert!(
            !admits(holdable_put("c", "a", false, 2)),
            "the same document"
        );
        assert!(
            !admits(holdable_put("c", "b", true, 2)),
            "counts of one collection"
        );
        assert!(admits(holdable_put("c", "b", false, 2)));
        assert!(admits(holdable_put("k", "a", true, 2)));
        assert!(!admits(holdable_put("k", "a", false, POSTGRES_PARAMS - 1)));
        assert!(admits(holdable_put("k", "a", false, POSTGRES_PARAMS - 2)));
    }

    #[test]
    fn only_a_put_whose_answer_is_known_and_whose_statements_join_is_held() {
        assert!(holdable_put("c", "a", false, 2).hold().held().is_some());
        let unmarked = Plan::new(holdable_put("c", "a", false, 2).pending.into(), |_| Ok(1))
            .reads_first_rows_only();
        let Hold::Run(unmarked) = unmarked.hold() else {
            panic!("its answer is not known: held");
        };
        let mut ran = Vec::new();
        let outcome = unmarked.for_dialect(Dialect::Postgres).run(|statement| {
            ran.push(statement.sql(Dialect::Postgres).into_owned());
            Ok(Vec::new())
        });
        assert_eq!(outcome, Ok(1));
        assert!(
            ran[0].starts_with("WITH w AS (INSERT INTO d"),
            "run as it was: {ran:?}"
        );
        let mut all_rows = holdable_put("c", "a", false, 2);
        all_rows.first_rows_only = false;
        assert!(
            all_rows.hold().held().is_none(),
            "it reads every statement's rows"
        );
        let wide = holdable_put("c", "a", false, POSTGRES_PARAMS + 1);
        assert!(wide.hold().held().is_none(), "its statements cannot join");
        let refused: Plan<u64> = Plan::refuse(StoreError::Conflict);
        assert!(refused.hold().held().is_none());
    }

    #[test]
    fn a_clause_is_renamed_where_it_is_a_word_of_its_own() {
        assert_eq!(
            renamed("SELECT w.a, wx, xw, w_1, $w FROM w WHERE new = w", "v"),
            "SELECT v.a, wx, xw, w_1, $w FROM v WHERE new = v"
        );
        assert_eq!(renamed(WRITTEN, "w"), WRITTEN);
    }

    #[test]
    fn a_guard_stops_the_plan_after_the_first_statement() {
        let statements = vec![
            Statement::new("first".to_owned(), Vec::new(), &[]),
            Statement::new("second".to_owned(), Vec::new(), &[]),
        ];
        let plan: Plan<()> = Plan::new(statements, |_| Ok(()))
            .guard_first(|rows| rows.is_empty().then_some(StoreError::Conflict));
        let mut ran = Vec::new();
        let outcome = plan.run(|s| {
            ran.push(s.sql(Dialect::Postgres).into_owned());
            Ok(Vec::new())
        });
        assert_eq!(outcome, Err(StoreError::Conflict));
        assert_eq!(ran, ["first"]);
    }
}
