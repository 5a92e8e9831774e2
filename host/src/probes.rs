//! What operators and orchestrators ask the host, with no tenant: liveness (`/healthz`),
//! readiness (`/readyz`) and the metrics (`/metrics`).
//!
//! The probes answer on the API listener, before tenant resolution, and on the metrics
//! listener. `/metrics` names tenants, so it is served on the metrics listener only
//! (`--metrics-listen`, meant for a private network), never on the API listener. Both
//! listeners are `server`'s.

use std::time::Duration;

use http::header::CONTENT_TYPE;
use http::{HeaderValue, Method, Response, StatusCode};

use crate::app::App;
use crate::response::{Body, empty, json, method_not_allowed};
use crate::routes;

/// Where the metrics listener serves the metrics.
const METRICS_PATH: &str = "/metrics";

/// How long a probe or a scrape waits for the database.
const DATABASE_TIMEOUT: Duration = Duration::from_secs(2);

/// The content type of the exposition (OpenMetrics text, which Prometheus reads).
const METRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The answer to a probe path, or `None` when `path` is not one. Probes are read with GET
/// only: any other method is 405.
pub async fn probe(app: &App, method: &Method, path: &str) -> Option<Response<Body>> {
    if path != routes::HEALTHZ_PATH && path != routes::READYZ_PATH {
        return None;
    }
    if method != Method::GET {
        return Some(method_not_allowed(&[Method::GET]));
    }
    Some(match path {
        routes::HEALTHZ_PATH => empty(StatusCode::OK),
        _ => readiness(app).await,
    })
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

/// The metrics listener's answer to `method` at `path`: a probe, or the metrics (GET only).
pub async fn answer(app: &App, method: &Method, path: &str) -> Response<Body> {
    if let Some(response) = probe(app, method, path).await {
        return response;
    }
    if path != METRICS_PATH {
        return empty(StatusCode::NOT_FOUND);
    }
    if method != Method::GET {
        return method_not_allowed(&[Method::GET]);
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
