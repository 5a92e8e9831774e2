//! Outbound webhooks: the endpoints a tenant's operator registered, and their deliveries.
//!
//! Deliveries are made from the bookings' change feed, which the store writes in each write's
//! transaction (the outbox): an endpoint keeps the feed position up to which changes became
//! deliveries, and [`Storage::fan_out_webhooks`] moves it on in the transaction that inserts
//! the next ones, on condition that no other host moved it first. So every committed change
//! after an endpoint was added becomes its delivery once, whichever hosts run.
//!
//! A booking's deliveries to one endpoint are sent in their order: one is claimed only when no
//! earlier one of the same booking and endpoint is still pending or being sent.

use std::collections::HashMap;
use std::time::Duration;

use rental_domain::collections::BOOKING_ITEMS;
use rental_domain::events::{self, EventType};
use rental_store_sql::StoreError;
use serde::Serialize;
use sqlx::Row as _;

use super::documents::Change;
use super::{Result, Storage, micros_after, now_micros, read_rows, time};

/// A registered endpoint, as `rentald webhook list` shows it (never its secret).
#[derive(Debug, Clone, Serialize)]
pub struct Endpoint {
    pub id: i64,
    pub tenant: String,
    pub url: String,
    pub events: Vec<String>,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

/// A delivery as `rentald webhook deliveries` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct DeliveryRecord {
    pub id: i64,
    pub webhook: i64,
    /// The event's `Id`: the change's cursor in the feed.
    pub event: String,
    pub event_type: String,
    pub booking_id: String,
    pub status: String,
    pub attempts: i64,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub delivered_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The receiver's HTTP status at the last attempt; none when it did not answer.
    pub last_status: Option<i64>,
    pub last_latency_ms: Option<i64>,
    pub last_error: Option<String>,
}

/// A delivery claimed for sending. It stays invisible to other hosts until its lease ends;
/// [`Storage::settle_webhook_deliveries`] settles it while the claim is still the latest.
#[derive(Debug, Clone)]
pub struct ClaimedDelivery {
    pub id: i64,
    pub tenant: String,
    pub event_type: String,
    pub payload: String,
    /// Claims so far, this one included.
    pub attempts: i64,
    /// When the event was made, microseconds since the epoch.
    pub created_at: i64,
    /// Where to send it and the key to sign it with; `None` when the endpoint was removed.
    pub endpoint: Option<(String, String)>,
}

/// What became of one attempt at a delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The receiver's HTTP status, if it answered.
    pub status: Option<u16>,
    pub latency: Duration,
    /// Why the attempt failed; `None` when it succeeded.
    pub error: Option<String>,
}

/// What a settled delivery becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    Delivered,
    /// Tried again at this time (microseconds since the epoch).
    RetryAt(i64),
    Dead,
}

/// An endpoint as the fan-out reads it.
struct Fanned {
    id: i64,
    tenant: String,
    wanted: Vec<EventType>,
    /// The feed position up to which changes became its deliveries.
    position: i64,
}

/// One event told from a change of the feed.
struct Event {
    position: i64,
    event: EventType,
    booking: String,
    body: String,
}

/// A feed position as stored.
fn position_value(position: u64) -> i64 {
    i64::try_from(position).unwrap_or(i64::MAX)
}

impl Storage {
    /// Registers an endpoint of `tenant` for `events`; it receives the changes committed from
    /// now on. Returns its id.
    pub async fn add_webhook(
        &self,
        tenant: &str,
        url: &str,
        events: &[EventType],
        secret: &str,
    ) -> Result<i64> {
        self.require_tenant(tenant).await?;
        // The changes committed so far are behind its start, numbered or not yet.
        self.number_changes(tenant, BOOKING_ITEMS.collection)
            .await?;
        let names: Vec<&str> = events.iter().map(|event| event.name()).collect();
        let id = sqlx::query_scalar(
            "INSERT INTO webhook_endpoints (tenant, url, secret, events, position, created_at) \
             SELECT $1, $2, $3, $4, COALESCE(MAX(position), 0), $5 FROM changes \
             WHERE tenant = $1 AND collection = $6 RETURNING id",
        )
        .bind(tenant)
        .bind(url)
        .bind(secret)
        .bind(names.join(","))
        .bind(now_micros())
        .bind(BOOKING_ITEMS.collection)
        .fetch_one(self.pool())
        .await?;
        Ok(id)
    }

    /// The endpoints of `tenant`, oldest first.
    pub async fn webhooks(&self, tenant: &str) -> Result<Vec<Endpoint>> {
        let rows = sqlx::query(
            "SELECT id, tenant, url, events, created_at FROM webhook_endpoints \
             WHERE tenant = $1 ORDER BY id",
        )
        .bind(tenant)
        .fetch_all(self.pool())
        .await?;
        read_rows(&rows, |row| {
            let events: String = row.try_get(3)?;
            Ok(Endpoint {
                id: row.try_get(0)?,
                tenant: row.try_get(1)?,
                url: row.try_get(2)?,
                events: events.split(',').map(str::to_owned).collect(),
                created_at: time(row.try_get(4)?),
            })
        })
    }

    /// Removes an endpoint of `tenant`; its deliveries not made yet are dead, and all stay in
    /// the log. False when it has no such endpoint.
    pub async fn remove_webhook(&self, tenant: &str, id: i64) -> Result<bool> {
        let mut tx = self.pool().begin().await?;
        let removed = sqlx::query("DELETE FROM webhook_endpoints WHERE tenant = $1 AND id = $2")
            .bind(tenant)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if removed.rows_affected() == 0 {
            return Ok(false);
        }
        sqlx::query(
            "UPDATE webhook_deliveries SET status = 'dead', last_error = 'the webhook was removed' \
             WHERE endpoint_id = $1 AND status IN ('pending', 'processing')",
        )
        .bind(id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The deliveries of `tenant`, oldest first, optionally of one endpoint.
    pub async fn webhook_deliveries(
        &self,
        tenant: &str,
        endpoint: Option<i64>,
    ) -> Result<Vec<DeliveryRecord>> {
        let rows = sqlx::query(
            "SELECT id, endpoint_id, position, event_type, booking_id, status, attempts, \
                 created_at, delivered_at, last_status, last_latency_ms, last_error \
             FROM webhook_deliveries WHERE tenant = $1 AND ($2 IS NULL OR endpoint_id = $2) \
             ORDER BY id",
        )
        .bind(tenant)
        .bind(endpoint)
        .fetch_all(self.pool())
        .await?;
        read_rows(&rows, |row| {
            Ok(DeliveryRecord {
                id: row.try_get(0)?,
                webhook: row.try_get(1)?,
                event: row.try_get::<i64, _>(2)?.to_string(),
                event_type: row.try_get(3)?,
                booking_id: row.try_get(4)?,
                status: row.try_get(5)?,
                attempts: row.try_get(6)?,
                created_at: time(row.try_get(7)?),
                delivered_at: row.try_get::<Option<i64>, _>(8)?.map(time),
                last_status: row.try_get(9)?,
                last_latency_ms: row.try_get(10)?,
                last_error: row.try_get(11)?,
            })
        })
    }

    /// Turns the changes committed after each endpoint's position into its deliveries, of the
    /// events it receives. A tenant's changes are read, and their events told, once for all
    /// its endpoints: at most `batch` of them, after the endpoint furthest behind. Returns the
    /// most changes read for one tenant: as many as `batch` means more may wait.
    pub async fn fan_out_webhooks(&self, batch: u32) -> Result<usize> {
        let rows = sqlx::query(
            "SELECT id, tenant, events, position FROM webhook_endpoints ORDER BY tenant, id",
        )
        .fetch_all(self.pool())
        .await?;
        let endpoints = read_rows(&rows, |row| {
            let events: String = row.try_get(2)?;
            Ok(Fanned {
                id: row.try_get(0)?,
                tenant: row.try_get(1)?,
                wanted: events.split(',').filter_map(|e| e.parse().ok()).collect(),
                position: row.try_get(3)?,
            })
        })?;
        let mut most = 0;
        for endpoints in endpoints.chunk_by(|a, b| a.tenant == b.tenant) {
            let tenant = &endpoints[0].tenant;
            let after = endpoints
                .iter()
                .map(|e| e.position)
                .min()
                .unwrap_or_default();
            let changes = self
                .changes(
                    tenant,
                    BOOKING_ITEMS.collection,
                    u64::try_from(after).unwrap_or_default(),
                    batch,
                )
                .await?;
            let Some(end) = changes.last().map(|change| position_value(change.position)) else {
                continue;
            };
            most = most.max(changes.len());
            let events = self.events_of(tenant, &changes).await?;
            for endpoint in endpoints {
                self.make_deliveries(endpoint, &events, end).await?;
            }
        }
        Ok(most)
    }

    /// The event each of `changes` (a page of `tenant`'s feed, in order) is, with its body and
    /// its position; changes that are no event are left out.
    async fn events_of(&self, tenant: &str, changes: &[Change]) -> Result<Vec<Event>> {
        let mut latest: HashMap<&str, Option<&str>> = HashMap::new();
        let mut out = Vec::new();
        for change in changes {
            let previous = match latest.get(change.id.as_str()) {
                Some(body) => body.map(str::to_owned),
                None => {
                    self.previous_change(tenant, &change.id, change.position)
                        .await?
                }
            };
            let event = events::event_of(previous.as_deref(), change)
                .map_err(|e| StoreError::Invalid(e.to_string()))?;
            latest.insert(&change.id, change.body.as_deref());
            let Some(event) = event else {
                continue;
            };
            let booking_id: i64 = change.id.parse().map_err(|_| {
                StoreError::Invalid(format!("booking Id {:?} is no number", change.id))
            })?;
            out.push(Event {
                position: position_value(change.position),
                event,
                booking: change.id.clone(),
                body: events::event_body(event, change, booking_id),
            });
        }
        Ok(out)
    }

    /// Makes `endpoint`'s deliveries of `events` after its position, of the types it receives,
    /// and moves it to `end` (the position of the last change read), in one transaction;
    /// nothing when another host moved it first (or it was removed).
    async fn make_deliveries(&self, endpoint: &Fanned, events: &[Event], end: i64) -> Result<()> {
        if end <= endpoint.position {
            return Ok(());
        }
        let _turn = self.writer_turn().await;
        let mut tx = self.pool().begin().await?;
        let moved = sqlx::query(
            "UPDATE webhook_endpoints SET position = $3 WHERE id = $1 AND position = $2",
        )
        .bind(endpoint.id)
        .bind(endpoint.position)
        .bind(end)
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() == 0 {
            return Ok(());
        }
        let now = now_micros();
        let wanted = events.iter().filter(|event| {
            event.position > endpoint.position && endpoint.wanted.contains(&event.event)
        });
        for event in wanted {
            sqlx::query(
                "INSERT INTO webhook_deliveries (tenant, endpoint_id, position, event_type, \
                     booking_id, payload, status, available_at, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $7)",
            )
            .bind(&endpoint.tenant)
            .bind(endpoint.id)
            .bind(event.position)
            .bind(event.event.name())
            .bind(&event.booking)
            .bind(&event.body)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The booking's list form as the change before `position` of booking `id` left it; `None`
    /// when there is no such change, or it was a delete.
    async fn previous_change(
        &self,
        tenant: &str,
        id: &str,
        position: u64,
    ) -> Result<Option<String>> {
        let body: Option<Option<String>> = sqlx::query_scalar(
            "SELECT body FROM changes WHERE tenant = $1 AND collection = $2 AND doc_id = $3 \
             AND position < $4 ORDER BY position DESC LIMIT 1",
        )
        .bind(tenant)
        .bind(BOOKING_ITEMS.collection)
        .bind(id)
        .bind(position_value(position))
        .fetch_optional(self.pool())
        .await?;
        Ok(body.flatten())
    }

    /// Claims up to `limit` due deliveries, oldest due first, each the earliest of its booking
    /// and endpoint not made yet: pending ones whose wait has passed, and ones being sent whose
    /// lease ran out (their host died). Each gets one more attempt and a lease of `lease`.
    pub async fn claim_webhook_deliveries(
        &self,
        limit: i64,
        lease: Duration,
    ) -> Result<Vec<ClaimedDelivery>> {
        let now = now_micros();
        let sql = format!(
            "UPDATE webhook_deliveries SET status = 'processing', attempts = attempts + 1, \
                 available_at = $1 \
             WHERE id IN (SELECT d.id FROM webhook_deliveries d \
                 WHERE d.status IN ('pending', 'processing') AND d.available_at <= $2 \
                 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e \
                     WHERE e.endpoint_id = d.endpoint_id AND e.booking_id = d.booking_id \
                     AND e.id < d.id AND e.status IN ('pending', 'processing')) \
                 ORDER BY d.available_at, d.id LIMIT $3{lock}) \
             RETURNING id, tenant, endpoint_id, event_type, payload, attempts, created_at",
            lock = self.backend().claim_lock()
        );
        let turn = self.writer_turn().await;
        let rows = sqlx::query(&sql)
            .bind(micros_after(now, lease))
            .bind(now)
            .bind(limit)
            .fetch_all(self.pool())
            .await?;
        drop(turn);
        let claimed = read_rows(&rows, |row| {
            Ok((
                row.try_get::<i64, _>(2)?,
                ClaimedDelivery {
                    id: row.try_get(0)?,
                    tenant: row.try_get(1)?,
                    event_type: row.try_get(3)?,
                    payload: row.try_get(4)?,
                    attempts: row.try_get(5)?,
                    created_at: row.try_get(6)?,
                    endpoint: None,
                },
            ))
        })?;
        let mut endpoints: HashMap<i64, Option<(String, String)>> = HashMap::new();
        let mut out = Vec::with_capacity(claimed.len());
        for (endpoint, mut delivery) in claimed {
            let found = match endpoints.get(&endpoint) {
                Some(found) => found.clone(),
                None => {
                    let row =
                        sqlx::query("SELECT url, secret FROM webhook_endpoints WHERE id = $1")
                            .bind(endpoint)
                            .fetch_optional(self.pool())
                            .await?;
                    let found = match row {
                        Some(row) => Some((row.try_get(0)?, row.try_get(1)?)),
                        None => None,
                    };
                    endpoints.insert(endpoint, found.clone());
                    found
                }
            };
            delivery.endpoint = found;
            out.push(delivery);
        }
        out.sort_by_key(|delivery| delivery.id);
        Ok(out)
    }

    /// Records each attempt at a claimed delivery and what the delivery becomes, in one
    /// transaction. Returns how many claims were lost (their lease ran out and another host
    /// took them): those are not recorded.
    pub async fn settle_webhook_deliveries(
        &self,
        sent: &[(ClaimedDelivery, Attempt, Settled)],
    ) -> Result<usize> {
        if sent.is_empty() {
            return Ok(0);
        }
        let now = now_micros();
        let _turn = self.writer_turn().await;
        let mut tx = self.pool().begin().await?;
        let mut lost = 0;
        for (delivery, attempt, settled) in sent {
            let (status, available_at, delivered_at) = match *settled {
                Settled::Delivered => ("delivered", now, Some(now)),
                Settled::RetryAt(at) => ("pending", at, None),
                Settled::Dead => ("dead", now, None),
            };
            let updated = sqlx::query(
                "UPDATE webhook_deliveries SET status = $3, available_at = $4, \
                     delivered_at = $5, last_status = $6, last_latency_ms = $7, last_error = $8 \
                 WHERE id = $1 AND attempts = $2 AND status = 'processing'",
            )
            .bind(delivery.id)
            .bind(delivery.attempts)
            .bind(status)
            .bind(available_at)
            .bind(delivered_at)
            .bind(attempt.status.map(i64::from))
            .bind(i64::try_from(attempt.latency.as_millis()).unwrap_or(i64::MAX))
            .bind(attempt.error.as_deref())
            .execute(&mut *tx)
            .await?;
            if updated.rows_affected() == 0 {
                lost += 1;
            }
        }
        tx.commit().await?;
        Ok(lost)
    }
}
