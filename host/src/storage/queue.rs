//! The transactional outbox: messages are inserted by `publish` inside the transaction that
//! produced them, so a message exists exactly when its data was committed.

use serde::Serialize;
use sqlx::Row as _;

use super::{Result, Storage, micros_after, read_rows, time};

/// A queued message as the operator sees it (`rentald queue list --json`).
#[derive(Debug, Clone, Serialize)]
pub struct QueueMessage {
    pub id: i64,
    pub tenant: String,
    pub topic: String,
    pub payload: serde_json::Value,
    pub dedupe_key: Option<String>,
    pub status: String,
    pub attempts: i64,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub delivered_at: Option<chrono::DateTime<chrono::Utc>>,
    pub last_error: Option<String>,
}

impl Storage {
    /// Every message of a tenant, oldest first, optionally of one topic.
    pub async fn queue_messages(
        &self,
        tenant: &str,
        topic: Option<&str>,
    ) -> Result<Vec<QueueMessage>> {
        let rows = sqlx::query(
            "SELECT id, tenant, topic, payload, dedupe_key, status, attempts, created_at, \
             delivered_at, last_error FROM queue \
             WHERE tenant = $1 AND ($2 IS NULL OR topic = $2) ORDER BY id",
        )
        .bind(tenant)
        .bind(topic)
        .fetch_all(self.pool())
        .await?;
        read_rows(&rows, |row| {
            let payload: String = row.try_get(3)?;
            Ok(QueueMessage {
                id: row.try_get(0)?,
                tenant: row.try_get(1)?,
                topic: row.try_get(2)?,
                payload: serde_json::from_str(&payload)
                    .unwrap_or(serde_json::Value::String(payload)),
                dedupe_key: row.try_get(4)?,
                status: row.try_get(5)?,
                attempts: row.try_get(6)?,
                created_at: time(row.try_get(7)?),
                delivered_at: row.try_get::<Option<i64>, _>(8)?.map(time),
                last_error: row.try_get(9)?,
            })
        })
    }
}

/// A message claimed for delivery. It stays invisible to other consumers until its lease
/// ends; [`Storage::ack_message`], [`Storage::retry_message`] and
/// [`Storage::dead_letter_message`] settle it, and only while this claim is still the latest
/// (`attempts` identifies the claim).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    pub id: i64,
    pub tenant: String,
    pub topic: String,
    pub payload: String,
    /// Claims so far, this one included.
    pub attempts: i64,
}

impl Storage {
    /// Claims up to `limit` due messages of `topic`, oldest due first: pending ones whose
    /// backoff has passed, and processing ones whose lease ran out (their consumer died).
    /// Each becomes `processing` with one more attempt and a lease of `lease`. Messages whose
    /// lease ran out after `max_attempts` claims are dead-lettered instead.
    pub async fn claim_messages(
        &self,
        topic: &str,
        limit: i64,
        lease: std::time::Duration,
        max_attempts: i64,
    ) -> Result<Vec<Claimed>> {
        let now = super::now_micros();
        let _turn = self.writer_turn().await;
        sqlx::query(
            "UPDATE queue SET status = 'dead', \
             last_error = 'its consumer did not finish in time, attempts exhausted' \
             WHERE status = 'processing' AND available_at <= $1 AND topic = $2 \
             AND attempts >= $3",
        )
        .bind(now)
        .bind(topic)
        .bind(max_attempts)
        .execute(self.pool())
        .await?;
        let lease_end = micros_after(now, lease);
        let sql = format!(
            "UPDATE queue SET status = 'processing', attempts = attempts + 1, available_at = $1 \
             WHERE id IN (SELECT id FROM queue \
                 WHERE status IN ('pending', 'processing') AND available_at <= $2 \
                 AND topic = $3 ORDER BY available_at, id LIMIT $4{lock}) \
             RETURNING id, tenant, topic, payload, attempts",
            lock = self.backend().claim_lock()
        );
        let rows = sqlx::query(&sql)
            .bind(lease_end)
            .bind(now)
            .bind(topic)
            .bind(limit)
            .fetch_all(self.pool())
            .await?;
        let mut claimed = read_rows(&rows, |row| {
            Ok(Claimed {
                id: row.try_get(0)?,
                tenant: row.try_get(1)?,
                topic: row.try_get(2)?,
                payload: row.try_get(3)?,
                attempts: row.try_get(4)?,
            })
        })?;
        claimed.sort_by_key(|m| m.id);
        Ok(claimed)
    }

    /// Extends a claim's lease to `lease` from now, so that a message waiting its turn in a
    /// long batch is not claimed again meanwhile. False when the claim was lost already.
    pub async fn renew_lease(&self, message: &Claimed, lease: std::time::Duration) -> Result<bool> {
        let lease_end = micros_after(super::now_micros(), lease);
        self.update_claim(message, "available_at = $3", lease_end)
            .await
    }

    /// Marks a claimed message delivered. False when the claim was lost (its lease ran out
    /// and another consumer took it).
    pub async fn ack_message(&self, message: &Claimed) -> Result<bool> {
        self.update_claim(
            message,
            "status = 'delivered', delivered_at = $3, last_error = NULL",
            super::now_micros(),
        )
        .await
    }

    /// Puts a claimed message back for another attempt after `backoff`, or dead-letters it
    /// when it has had `max_attempts`; `error` is kept as its `last_error`.
    pub async fn retry_message(
        &self,
        message: &Claimed,
        error: &str,
        backoff: std::time::Duration,
        max_attempts: i64,
    ) -> Result<bool> {
        let due = micros_after(super::now_micros(), backoff);
        let _turn = self.writer_turn().await;
        let updated = sqlx::query(
            "UPDATE queue SET status = CASE WHEN attempts >= $4 THEN 'dead' ELSE 'pending' END, \
             available_at = $3, last_error = $5 \
             WHERE id = $1 AND attempts = $2 AND status = 'processing'",
        )
        .bind(message.id)
        .bind(message.attempts)
        .bind(due)
        .bind(max_attempts)
        .bind(error)
        .execute(self.pool())
        .await?;
        Ok(updated.rows_affected() == 1)
    }

    /// Dead-letters a claimed message that can never be delivered, with the reason.
    pub async fn dead_letter_message(&self, message: &Claimed, reason: &str) -> Result<bool> {
        self.update_claim(
            message,
            "status = 'dead', last_error = $3",
            reason.to_owned(),
        )
        .await
    }

    /// Updates a claimed message with `set`, whose one parameter, `$3`, is `value`, while the
    /// claim is still the latest. False when it is not (its lease ran out and another consumer
    /// took the message).
    async fn update_claim<T>(&self, message: &Claimed, set: &str, value: T) -> Result<bool>
    where
        T: Send + for<'q> sqlx::Encode<'q, sqlx::Any> + sqlx::Type<sqlx::Any>,
    {
        let sql = format!(
            "UPDATE queue SET {set} WHERE id = $1 AND attempts = $2 AND status = 'processing'"
        );
        let _turn = self.writer_turn().await;
        let updated = sqlx::query(&sql)
            .bind(message.id)
            .bind(message.attempts)
            .bind(value)
            .execute(self.pool())
            .await?;
        Ok(updated.rows_affected() == 1)
    }
}

/// How many messages of one tenant are in one open or dead state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueDepth {
    pub tenant: String,
    pub status: String,
    pub messages: i64,
}

impl Storage {
    /// The messages of every tenant that are pending, processing or dead, counted by tenant
    /// and status (for the metrics). Delivered messages, the bulk of the table, are left out,
    /// so the `(status, available_at)` index keeps this a short range scan.
    pub async fn queue_depth(&self) -> Result<Vec<QueueDepth>> {
        let rows = sqlx::query(
            "SELECT tenant, status, COUNT(*) FROM queue \
             WHERE status IN ('pending', 'processing', 'dead') GROUP BY tenant, status",
        )
        .fetch_all(self.pool())
        .await?;
        read_rows(&rows, |row| {
            Ok(QueueDepth {
                tenant: row.try_get(0)?,
                status: row.try_get(1)?,
                messages: row.try_get(2)?,
            })
        })
    }
}
