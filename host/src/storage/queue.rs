//! The transactional outbox: messages are inserted by `publish` inside the transaction that
//! produced them, so a message exists exactly when its data was committed.

use serde::Serialize;
use sqlx::Row as _;

use super::Storage;

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

fn time(micros: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_micros(micros).unwrap_or_default()
}

impl Storage {
    /// Every message of a tenant, oldest first, optionally of one topic.
    pub async fn queue_messages(
        &self,
        tenant: &str,
        topic: Option<&str>,
    ) -> anyhow::Result<Vec<QueueMessage>> {
        let rows = sqlx::query(
            "SELECT id, tenant, topic, payload, dedupe_key, status, attempts, created_at, \
             delivered_at, last_error FROM queue \
             WHERE tenant = $1 AND ($2 IS NULL OR topic = $2) ORDER BY id",
        )
        .bind(tenant)
        .bind(topic)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
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
            .collect()
    }
}
