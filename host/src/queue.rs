//! The queue's consumer: delivers each queued message to the component that consumes its
//! topic, with the message's tenant bound, and settles the message by the answer.
//!
//! The business rule (crediting a payment) stays in the sandbox: the host only claims, invokes
//! and settles. A message is delivered at least once; the consumer component makes its effect
//! happen once (the `reconcile` component's payment record). Several hosts may run consumers
//! on one database: PostgreSQL hands each message to one of them (`FOR UPDATE SKIP LOCKED`),
//! SQLite serialises the claims.
//!
//! The consumer is invoked with `POST /queue/{topic}` and the payload as the body. Its answer:
//!
//! | answer | the message |
//! |---|---|
//! | 2xx | `delivered` |
//! | 422 | `dead`, with the body's `Reason` (or the body) as `last_error`: it can never succeed |
//! | anything else, a trap, a timeout | `pending` again after a backoff, `dead` after [`Policy::max_attempts`] |

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use rental_domain::Language;
use rental_domain::payments;
use rental_platform::Component;
use tracing::Instrument as _;

use crate::app::App;
use crate::runtime::{Outcome, RequestContext};
use crate::storage::queue::Claimed;
use crate::telemetry::truncate;

/// Each consumed topic and the component that consumes it. A topic that is not listed stays
/// in the queue for `rentald queue list`.
pub const CONSUMERS: &[(&str, Component)] = &[(payments::TOPIC, Component::Reconcile)];

/// Messages claimed at once per topic.
const BATCH: i64 = 16;
/// The longest `last_error` kept.
const MAX_ERROR: usize = 1_000;

/// How the consumer retries.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// How often an idle consumer looks for due messages.
    pub poll: Duration,
    /// How long a claimed message stays invisible to other consumers: longer than a delivery
    /// can take (the request deadline), so that only a consumer that died loses its claim.
    pub lease: Duration,
    /// Deliveries before a message is dead-lettered.
    pub max_attempts: i64,
    /// The wait after the first failed delivery; it doubles with every further failure.
    pub backoff: Duration,
    /// The longest wait between deliveries.
    pub max_backoff: Duration,
}

impl Policy {
    /// The policy of a host whose requests may take `deadline`.
    pub fn new(poll: Duration, deadline: Duration) -> Self {
        Self {
            poll,
            lease: deadline * 2 + Duration::from_secs(5),
            max_attempts: 8,
            backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(300),
        }
    }

    /// The wait before the next delivery of a message that has had `attempts`.
    pub fn backoff_after(&self, attempts: i64) -> Duration {
        let doublings = u32::try_from(attempts.saturating_sub(1).clamp(0, 20)).unwrap_or(20);
        self.backoff
            .saturating_mul(2u32.saturating_pow(doublings))
            .min(self.max_backoff)
    }
}

/// Runs the consumer until the process ends.
pub async fn run(app: Arc<App>, policy: Policy) {
    loop {
        let mut delivered_any = false;
        for (topic, component) in CONSUMERS {
            match app
                .storage
                .claim_messages(topic, BATCH, policy.lease, policy.max_attempts)
                .await
            {
                Ok(messages) => {
                    let claimed = Instant::now();
                    for message in messages {
                        delivered_any = true;
                        if claimed.elapsed() > policy.lease / 2
                            && !keep_claim(&app, &policy, &message).await
                        {
                            continue;
                        }
                        deliver(&app, &policy, *component, message).await;
                    }
                }
                Err(e) => tracing::error!(topic, error = %e, "claiming queued messages"),
            }
        }
        if !delivered_any {
            tokio::time::sleep(policy.poll).await;
        }
    }
}

/// Renews the lease of a message whose batch has run for half a lease already: a delivery
/// takes at most the request deadline, under half a lease, so a message delivered with its
/// lease renewed (or within the first half of its batch's) is never claimed twice by a live
/// consumer. False when the claim is lost (the message is another consumer's now, or will be
/// claimed again when its lease ends).
async fn keep_claim(app: &App, policy: &Policy, message: &Claimed) -> bool {
    match app.storage.renew_lease(message, policy.lease).await {
        Ok(true) => true,
        Ok(false) => {
            tracing::warn!(
                message = message.id,
                "the message's lease ran out while it waited in its batch"
            );
            false
        }
        Err(e) => {
            tracing::error!(message = message.id, error = %e, "renewing a message's lease");
            false
        }
    }
}

/// What a delivery says about its message.
#[derive(Debug, PartialEq, Eq)]
enum Settle {
    Ack,
    Retry(String),
    Dead(String),
}

async fn deliver(app: &App, policy: &Policy, component: Component, message: Claimed) {
    let span = tracing::info_span!(
        "queue",
        message = message.id,
        tenant = %message.tenant,
        topic = %message.topic,
        attempt = message.attempts,
    );
    async {
        let settle = invoke(app, component, &message).await;
        let settled = match &settle {
            Settle::Ack => app.storage.ack_message(&message).await,
            Settle::Retry(error) => {
                tracing::warn!(error = %error, "delivery failed, will retry");
                app.storage
                    .retry_message(
                        &message,
                        error,
                        policy.backoff_after(message.attempts),
                        policy.max_attempts,
                    )
                    .await
            }
            Settle::Dead(reason) => {
                tracing::warn!(reason = %reason, "message dead-lettered");
                app.storage.dead_letter_message(&message, reason).await
            }
        };
        match settled {
            Ok(true) => tracing::info!(outcome = ?settle, "message settled"),
            Ok(false) => tracing::warn!("the message's lease ran out before it was settled"),
            Err(e) => tracing::error!(error = %e, "settling a message"),
        }
    }
    .instrument(span)
    .await;
}

/// Runs the consumer component on one message.
async fn invoke(app: &App, component: Component, message: &Claimed) -> Settle {
    let tenant = match app.storage.cached_tenant(&message.tenant).await {
        Ok(Some(cached)) if cached.tenant.enabled => cached.tenant.clone(),
        Ok(Some(_)) => return Settle::Retry("the tenant is disabled".to_owned()),
        Ok(None) => return Settle::Dead("the tenant does not exist".to_owned()),
        Err(e) => return Settle::Retry(format!("reading the tenant: {e}")),
    };
    let loaded = match app
        .runtime
        .component_for(&app.storage, &tenant.slug, component)
        .await
    {
        Ok(loaded) => loaded,
        Err(e) => return Settle::Retry(format!("{e:#}")),
    };
    let request = Request::builder()
        .method(Method::POST)
        .uri(format!("/queue/{}", message.topic))
        .header(
            http::header::HOST,
            format!("{}.queue.internal", tenant.slug),
        )
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Bytes::from(message.payload.clone()));
    let request = match request {
        Ok(request) => request,
        Err(e) => return Settle::Dead(format!("not a deliverable message: {e}")),
    };
    let context = RequestContext {
        tenant,
        component,
        caller: None,
        language: Language::En,
        correlation_id: format!("queue-{}-{}", message.id, message.attempts),
    };
    let outcome = app
        .runtime
        .handle(&loaded, app.storage.clone(), context, request)
        .await;
    settle(outcome)
}

fn settle(outcome: Outcome) -> Settle {
    match outcome {
        Outcome::Response(response) if response.status().is_success() => Settle::Ack,
        Outcome::Response(response) if response.status() == StatusCode::UNPROCESSABLE_ENTITY => {
            Settle::Dead(reason(response.body()))
        }
        Outcome::Response(response) => Settle::Retry(format!(
            "the consumer answered {}: {}",
            response.status(),
            reason(response.body())
        )),
        Outcome::Trap(trap) => Settle::Retry(truncate(
            format!("the consumer failed: {trap:#}"),
            MAX_ERROR,
        )),
        Outcome::Timeout => Settle::Retry("the consumer ran past its deadline".to_owned()),
        Outcome::Busy => Settle::Retry("the tenant's components were all running".to_owned()),
    }
}

/// The `Reason` of a JSON answer, else the answer as text.
fn reason(body: &[u8]) -> String {
    let text = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("Reason").and_then(|r| r.as_str()).map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    truncate(text, MAX_ERROR)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, body: &str) -> Outcome {
        let mut response = http::Response::new(Bytes::from(body.to_owned()));
        *response.status_mut() = StatusCode::from_u16(status).unwrap();
        Outcome::Response(response)
    }

    #[test]
    fn answers_settle_messages() {
        assert_eq!(settle(response(200, "")), Settle::Ack);
        assert_eq!(
            settle(response(422, r#"{"Reason":"booking 7 does not exist"}"#)),
            Settle::Dead("booking 7 does not exist".to_owned())
        );
        assert_eq!(
            settle(response(422, "plain")),
            Settle::Dead("plain".to_owned())
        );
        assert!(matches!(settle(response(500, "{}")), Settle::Retry(_)));
        assert!(matches!(settle(Outcome::Timeout), Settle::Retry(_)));
        assert!(matches!(
            settle(Outcome::Trap(anyhow::anyhow!("boom"))),
            Settle::Retry(e) if e.contains("boom")
        ));
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let policy = Policy::new(Duration::from_millis(500), Duration::from_secs(5));
        assert_eq!(policy.backoff_after(1), Duration::from_secs(1));
        assert_eq!(policy.backoff_after(2), Duration::from_secs(2));
        assert_eq!(policy.backoff_after(4), Duration::from_secs(8));
        assert_eq!(policy.backoff_after(30), Duration::from_secs(300));
        assert_eq!(policy.lease, Duration::from_secs(15));
    }
}
