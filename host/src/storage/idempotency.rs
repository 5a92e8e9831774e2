//! Idempotency keys: each write a client sent with an `Idempotency-Key`, per tenant and API
//! user, claimed by the host serving it and answered once (docs/contract.md, "Idempotency
//! keys"; docs/decisions.md).
//!
//! A claim is a row in state `running` that names its owner and a lease. The owner records
//! the answer of a request that wrote in the transaction of its writes
//! ([`DocTransaction::record_answer`]), so that the key has an answer exactly when the work
//! committed: a host that dies before its commit leaves a claim whose lease runs out and which
//! the next request with the key takes over; one that dies after it has already recorded the
//! answer. Every statement here but the sweep's runs in a transaction of the document store,
//! on SQLite under its writer turn.

use std::time::Duration;

use rental_store_sql::{Column, Statement, Value, blob, int, text};
use sha2::{Digest as _, Sha256};

use super::documents::DocTransaction;
use super::{Result, Storage, now_micros};

/// How long a key is remembered after its first use.
pub const KEY_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);

/// How often a host forgets the keys past their lifetime.
const EXPIRY_INTERVAL: Duration = Duration::from_secs(10 * 60);

/// The longest key accepted, in bytes.
pub const MAX_KEY_LEN: usize = 255;

/// Whom a key belongs to: a tenant's API user.
#[derive(Debug, Clone)]
pub struct KeyScope {
    pub tenant: String,
    pub user_id: i64,
    pub key: String,
}

/// The right to serve a key's request and record its answer.
#[derive(Debug, Clone)]
pub struct Claim {
    pub scope: KeyScope,
    /// Names the claim's owner in the row: a claim taken over is no longer this one.
    token: String,
}

/// A request's answer as a key keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    /// Empty when the answer had none.
    pub content_type: String,
    pub body: Vec<u8>,
}

/// What a key holds for a request that brings it.
#[derive(Debug)]
pub enum Claimed {
    /// Nobody served it yet (or an earlier claim was abandoned before its commit): serve it.
    Serve(Claim),
    /// Its answer, to be sent again.
    Answered(Answer),
    /// The key was used with another request.
    Mismatch,
    /// Another request with the key is being served.
    Running,
    /// The key's request committed its writes, but its host stopped before recording its
    /// answer.
    InDoubt,
}

/// The digest a key's request is recognised by: its method, target and body.
pub fn fingerprint(method: &str, target: &str, body: &[u8]) -> String {
    let mut digest = Sha256::new();
    for part in [method.as_bytes(), b"\n", target.as_bytes(), b"\n", body] {
        digest.update(part);
    }
    hex::encode(digest.finalize())
}

const OWNER: &[Column] = &[Column::Text];
const STORED: &[Column] = &[
    Column::Text,
    Column::Text,
    Column::Int,
    Column::Int,
    Column::Text,
    Column::Blob,
];

/// The condition naming a key's row, its parameters numbered from `first`. (Parameters are
/// numbered in the order they appear, which is the order SQLite binds them in.)
fn where_key(first: usize) -> String {
    format!(
        "tenant = ${first} AND user_id = ${} AND client_key = ${}",
        first + 1,
        first + 2
    )
}

fn key_params(scope: &KeyScope) -> Vec<Value> {
    vec![
        Value::Text(scope.tenant.clone()),
        Value::Int(scope.user_id),
        Value::Text(scope.key.clone()),
    ]
}

fn micros(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}

impl Storage {
    /// Claims `scope`'s key for a request recognised by `fingerprint`, for `lease`; or tells
    /// what the key holds already.
    pub async fn claim_key(
        &self,
        scope: &KeyScope,
        fingerprint: &str,
        lease: Duration,
    ) -> Result<Claimed> {
        let now = now_micros();
        let token = uuid::Uuid::new_v4().simple().to_string();
        let lease_until = now.saturating_add(micros(lease));
        let mut tx = self.begin_locked(&scope.tenant).await?;
        let mut params = key_params(scope);
        params.extend([
            Value::Text(fingerprint.to_owned()),
            Value::Text(token.clone()),
            Value::Int(lease_until),
            Value::Blob(Vec::new()),
            Value::Int(now),
        ]);
        // A key past its lifetime is a new key; a claim whose lease ran out before its commit
        // served nothing, and passes to a request that is the same one.
        params.extend([
            Value::Int(now.saturating_sub(micros(KEY_LIFETIME))),
            Value::Int(now),
        ]);
        let claimed = !tx
            .execute(&Statement::new(
                "INSERT INTO idempotency_keys (tenant, user_id, client_key, fingerprint, state, \
                 owner, lease_until, status, content_type, body, created_at) \
                 VALUES ($1, $2, $3, $4, 'running', $5, $6, 0, '', $7, $8) \
                 ON CONFLICT (tenant, user_id, client_key) DO UPDATE SET \
                 fingerprint = excluded.fingerprint, state = 'running', owner = excluded.owner, \
                 lease_until = excluded.lease_until, status = 0, content_type = '', \
                 body = excluded.body, created_at = excluded.created_at \
                 WHERE idempotency_keys.created_at < $9 \
                 OR (idempotency_keys.state = 'running' AND idempotency_keys.lease_until < $10 \
                 AND idempotency_keys.fingerprint = excluded.fingerprint) \
                 RETURNING owner"
                    .to_owned(),
                params,
                OWNER,
            ))
            .await?
            .is_empty();
        if claimed {
            tx.commit().await?;
            return Ok(Claimed::Serve(Claim {
                scope: scope.clone(),
                token,
            }));
        }
        let rows = tx
            .execute(&Statement::new(
                format!(
                    "SELECT fingerprint, state, lease_until, status, content_type, body \
                     FROM idempotency_keys WHERE {}",
                    where_key(1)
                ),
                key_params(scope),
                STORED,
            ))
            .await?;
        // An answer read is sent again: wait until its commit is durable.
        tx.roll_back().await?;
        // The row exists: the insert found it and nothing deletes it but the sweep, which
        // leaves keys within their lifetime.
        let Some(row) = rows.first() else {
            return Ok(Claimed::Running);
        };
        if text(row, 0)? != fingerprint {
            return Ok(Claimed::Mismatch);
        }
        Ok(match text(row, 1)?.as_str() {
            "answered" => Claimed::Answered(Answer {
                status: u16::try_from(int(row, 3)?).unwrap_or(500),
                content_type: text(row, 4)?,
                body: blob(row, 5)?.to_vec(),
            }),
            "committed" if int(row, 2)? < now => Claimed::InDoubt,
            _ => Claimed::Running,
        })
    }

    /// Records `answer` for `claim`, in a transaction of its own: for a request that wrote
    /// nothing (or committed already). False when the claim was taken over.
    pub async fn answer_key(&self, claim: &Claim, answer: &Answer) -> Result<bool> {
        let mut tx = self.begin_locked(&claim.scope.tenant).await?;
        let recorded = tx.record_answer(claim, answer).await?;
        tx.commit().await?;
        Ok(recorded)
    }

    /// Gives `claim` up, unless its request committed: a request that wrote nothing lasting
    /// may be sent again with its key.
    pub async fn release_key(&self, claim: &Claim) -> Result<()> {
        let mut tx = self.begin_locked(&claim.scope.tenant).await?;
        let mut params = key_params(&claim.scope);
        params.push(Value::Text(claim.token.clone()));
        tx.execute(&Statement::new(
            format!(
                "DELETE FROM idempotency_keys WHERE {} AND owner = $4 AND state = 'running'",
                where_key(1)
            ),
            params,
            &[],
        ))
        .await?;
        tx.commit().await
    }

    /// Forgets the keys past their lifetime; returns how many.
    pub async fn expire_keys(&self) -> Result<u64> {
        let expired = now_micros().saturating_sub(micros(KEY_LIFETIME));
        let _turn = self.writer_turn().await;
        let deleted = sqlx::query("DELETE FROM idempotency_keys WHERE created_at < $1")
            .bind(expired)
            .execute(self.pool())
            .await?;
        Ok(deleted.rows_affected())
    }

    /// Forgets the keys past their lifetime every [`EXPIRY_INTERVAL`], forever. (A key past
    /// its lifetime is a new key before that already: the sweep only bounds the table.)
    pub async fn expire_keys_forever(self) {
        loop {
            tokio::time::sleep(EXPIRY_INTERVAL).await;
            match self.expire_keys().await {
                Ok(0) => {}
                Ok(expired) => tracing::info!(expired, "forgot expired idempotency keys"),
                Err(e) => tracing::warn!(error = %e, "forgetting expired idempotency keys"),
            }
        }
    }
}

impl DocTransaction {
    /// Records `answer` for `claim` with the transaction's writes. False when the claim was
    /// taken over (the transaction must then not commit).
    pub async fn record_answer(&mut self, claim: &Claim, answer: &Answer) -> Result<bool> {
        let mut params = vec![
            Value::Int(i64::from(answer.status)),
            Value::Text(answer.content_type.clone()),
            Value::Blob(answer.body.clone()),
        ];
        params.extend(key_params(&claim.scope));
        params.push(Value::Text(claim.token.clone()));
        let rows = self
            .execute(&Statement::new(
                format!(
                "UPDATE idempotency_keys SET state = 'answered', status = $1, content_type = $2, \
                 body = $3 WHERE {} AND owner = $7 RETURNING owner",
                where_key(4)
            ),
                params,
                OWNER,
            ))
            .await?;
        Ok(!rows.is_empty())
    }

    /// Records that `claim`'s request committed, with the transaction's writes, for a request
    /// that goes on to another transaction before it answers. False when the claim was taken
    /// over or has an answer already (the transaction must then not commit).
    pub async fn record_committed(&mut self, claim: &Claim) -> Result<bool> {
        let mut params = key_params(&claim.scope);
        params.push(Value::Text(claim.token.clone()));
        let rows = self
            .execute(&Statement::new(
                format!(
                    "UPDATE idempotency_keys SET state = 'committed' \
                     WHERE {} AND owner = $4 AND state = 'running' RETURNING owner",
                    where_key(1)
                ),
                params,
                OWNER,
            ))
            .await?;
        Ok(!rows.is_empty())
    }
}
