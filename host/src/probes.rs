//! What operators and orchestrators ask the host, with no tenant: liveness (`/healthz`),
//! readiness (`/readyz`) and the metrics (`/metrics`).
//!
//! The probes answer on the API listener, before tenant resolution, and on the metrics
//! listener. `/metrics` names tenants, so it is served on the metrics listener only
//! (`--metrics-listen`, meant for a private network), never on the API listener. Both
//! listeners are `server`'s.

use std::time::Duration;

use http::header::CONTENT_TYPE;
use http::{HeaderValue, Response, StatusCode};

use crate::app::App;
use crate::response::{Body, empty, json};
use crate::routes;

/// How long a probe or a scrape waits for the database.
const DATABASE_TIMEOUT: Duration = Duration::from_secs(2);

/// The content type of the exposition (OpenMetrics text, which Prometheus reads).
const METRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The answer to a probe path, or `None` when `path` is not one.
pub async fn probe(app: &App, path: &str) -> Option<Response<Body>> {
    match path {
        routes::HEALTHZ_PATH => Some(empty(StatusCode::OK)),
        routes::READYZ_PATH => Some(readiness(app).await),
        _ => None,
    }
}

/// 200 when the database answers within [`DATABASE_TIMEOUT`] and every platform component is
/// loaded; 503 otherwise. The body names what is not ready.
async fn readiness(app: &App) -> Response<Body> {
    let database = tokio::time::timeout(DATABASE_TIMEOUT, app.storage.ping())
        .await
        .unwrap_or(false);
    let missing = app.runtime.missing_platform_components();
    let ready = database && missing.is_empty();
    json(
        if ready {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        },
        &serde_json::json!({
            "ready": ready,
            "database": if database { "ok" } else { "unreachable" },
            "missing_components": missing,
        }),
    )
}

/// The metrics listener's answer to `path`: a probe, or the metrics.
pub async fn answer(app: &App, path: &str) -> Response<Body> {
    if let Some(response) = probe(app, path).await {
        return response;
    }
    if path != "/metrics" {
        return empty(StatusCode::NOT_FOUND);
    }
    let queue = match tokio::time::timeout(DATABASE_TIMEOUT, app.storage.queue_depth()).await {
        Ok(Ok(depth)) => Some(depth),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "reading the queue depth");
            None
        }
        Err(_) => {
            tracing::warn!("reading the queue depth timed out");
            None
        }
    };
    match app.metrics.encode(
        queue.as_deref(),
        app.runtime.component_stats().loaded,
        app.storage.tenant_generation(),
    ) {
        Ok(text) => {
            let mut response = Response::new(Body::from(text));
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static(METRICS_CONTENT_TYPE));
            response
        }
        Err(e) => {
            tracing::error!(error = %e, "encoding the metrics");
            empty(StatusCode::INTERNAL_SERVER_ERROR)
        }
    }
}
