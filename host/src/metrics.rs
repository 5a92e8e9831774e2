//! Prometheus metrics: one registry, owned here and shared through the `App` (and the
//! runtime), exposed in the OpenMetrics text format on the metrics listener only
//! (`--metrics-listen`, see `ops`), never to tenants.
//!
//! Every label has a bounded set of values: endpoints are route templates from the route
//! table (never raw paths), tenants are only those that exist, components those that are
//! loaded, statuses HTTP codes.

use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};

use rental_platform::Component as PlatformComponent;

use crate::runtime::Build;
use crate::storage::queue::QueueDepth;

/// The label value that stands for "none": a request without a known tenant or component.
pub const NONE: &str = "-";
/// The endpoint of a request that matched no route.
pub const UNMATCHED: &str = "unmatched";

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    tenant: String,
    endpoint: String,
    status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ComponentLabels {
    component: &'static str,
    build: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    component: &'static str,
    build: &'static str,
    outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ListenerLabels {
    listener: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RefusedLabels {
    listener: &'static str,
    reason: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    tenant: String,
    status: String,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// From 1 ms to about 16 s: requests and component executions.
fn request_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

/// From 50 µs to about 0.8 s: instantiating a pre-linked component is usually well under a
/// millisecond.
fn instantiation_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.000_05, 2.0, 15))
}

pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    request_duration: Histograms<EndpointLabels>,
    instantiation: Histograms<ComponentLabels>,
    execution: Histograms<ComponentLabels>,
    outcomes: Family<OutcomeLabels, Counter>,
    paced: Family<ComponentLabels, Counter<f64, AtomicU64>>,
    queue_depth: Family<QueueLabels, Gauge>,
    connections_open: Family<ListenerLabels, Gauge>,
    connections_refused: Family<RefusedLabels, Counter>,
    components_loaded: Gauge,
    tenant_generation: Gauge,
    /// Held from refreshing the queue depth to encoding it, so that two scrapes at once never
    /// see each other's half-refreshed gauges.
    scrape: Mutex<()>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// The registry with every metric registered and none observed yet.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("rentald");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests by tenant, endpoint (route template) and status",
            requests.clone(),
        );
        let request_duration: Histograms<EndpointLabels> =
            Family::new_with_constructor(request_buckets);
        registry.register_with_unit(
            "http_request_duration",
            "Time from a request's arrival to its answer, by endpoint",
            Unit::Seconds,
            request_duration.clone(),
        );
        let instantiation: Histograms<ComponentLabels> =
            Family::new_with_constructor(instantiation_buckets);
        registry.register_with_unit(
            "component_instantiation",
            "Time to instantiate a component in a fresh store",
            Unit::Seconds,
            instantiation.clone(),
        );
        let execution: Histograms<ComponentLabels> = Family::new_with_constructor(request_buckets);
        registry.register_with_unit(
            "component_execution",
            "Time a component's handler ran, for handlers that finished within the deadline",
            Unit::Seconds,
            execution.clone(),
        );
        let outcomes = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "component_outcomes",
            "Component runs by how they ended: ok (answered), trap, timeout, or busy (not started: \
             the tenant had all its instances running)",
            outcomes.clone(),
        );
        let paced = Family::<ComponentLabels, Counter<f64, AtomicU64>>::default();
        registry.register_with_unit(
            "component_paced",
            "Time components slept to keep their tenant within its share of a core \
             (--tenant-cpu-percent): long runners, and requests of a tenant whose long runners \
             are paced",
            Unit::Seconds,
            paced.clone(),
        );
        let queue_depth = Family::<QueueLabels, Gauge>::default();
        registry.register(
            "queue_depth",
            "Queued messages that are pending, processing or dead, by tenant and status, \
             read from the database at scrape time",
            queue_depth.clone(),
        );
        let connections_open = Family::<ListenerLabels, Gauge>::default();
        registry.register(
            "connections_open",
            "Connections open now, by listener (api or metrics)",
            connections_open.clone(),
        );
        let connections_refused = Family::<RefusedLabels, Counter>::default();
        registry.register(
            "connections_refused",
            "Connections closed as soon as they were accepted, by listener and reason: full \
             (--max-connections) or address (--max-connections-per-address)",
            connections_refused.clone(),
        );
        let components_loaded = Gauge::default();
        registry.register(
            "components_loaded",
            "Compiled components held in memory now (loaded on first use, dropped when idle)",
            components_loaded.clone(),
        );
        let tenant_generation = Gauge::default();
        registry.register(
            "tenant_generation",
            "The generation of tenant changes (tenants, settings, secrets, users) the cached \
             tenants reflect: hosts sharing a database agree once each has polled",
            tenant_generation.clone(),
        );
        registry.register(
            "build",
            "The running rentald",
            Info::new(vec![("version", env!("CARGO_PKG_VERSION"))]),
        );
        Self {
            registry,
            requests,
            request_duration,
            instantiation,
            execution,
            outcomes,
            paced,
            queue_depth,
            connections_open,
            connections_refused,
            components_loaded,
            tenant_generation,
            scrape: Mutex::new(()),
        }
    }

    /// One answered request.
    pub fn request_served(&self, tenant: &str, endpoint: &str, status: u16, elapsed: Duration) {
        self.requests
            .get_or_create(&RequestLabels {
                tenant: tenant.to_owned(),
                endpoint: endpoint.to_owned(),
                status,
            })
            .inc();
        self.request_duration
            .get_or_create(&EndpointLabels {
                endpoint: endpoint.to_owned(),
            })
            .observe(elapsed.as_secs_f64());
    }

    pub fn component_instantiated(
        &self,
        component: PlatformComponent,
        build: Build,
        elapsed: Duration,
    ) {
        self.instantiation
            .get_or_create(&component_labels(component, build))
            .observe(elapsed.as_secs_f64());
    }

    pub fn component_executed(
        &self,
        component: PlatformComponent,
        build: Build,
        elapsed: Duration,
    ) {
        self.execution
            .get_or_create(&component_labels(component, build))
            .observe(elapsed.as_secs_f64());
    }

    /// Counts how a request inside `component` ended: `ok`, `trap`, `timeout` or `busy`.
    pub fn component_finished(
        &self,
        component: PlatformComponent,
        build: Build,
        outcome: &'static str,
    ) {
        self.outcomes
            .get_or_create(&OutcomeLabels {
                component: component.name(),
                build: build.label(),
                outcome,
            })
            .inc();
    }

    /// A request inside `component` sleeps `wait` to keep its tenant within its share.
    pub fn component_paced(&self, component: PlatformComponent, build: Build, wait: Duration) {
        self.paced
            .get_or_create(&component_labels(component, build))
            .inc_by(wait.as_secs_f64());
    }

    /// A connection to `listener` opened (`1`) or closed (`-1`).
    pub fn connection_opened(&self, listener: &'static str, change: i64) {
        self.connections_open
            .get_or_create(&ListenerLabels { listener })
            .inc_by(change);
    }

    /// A connection to `listener` closed as soon as it was accepted, for `reason`.
    pub fn connection_refused(&self, listener: &'static str, reason: &'static str) {
        self.connections_refused
            .get_or_create(&RefusedLabels { listener, reason })
            .inc();
    }

    /// The exposition, with the queue depth just read (`None` when it could not be read: the
    /// gauge is then left empty rather than stale), the number of components in memory and the
    /// tenant generation.
    pub fn encode(
        &self,
        queue: Option<&[QueueDepth]>,
        components_loaded: usize,
        tenant_generation: i64,
    ) -> Result<String, std::fmt::Error> {
        let _turn = self
            .scrape
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.queue_depth.clear();
        for depth in queue.unwrap_or_default() {
            self.queue_depth
                .get_or_create(&QueueLabels {
                    tenant: depth.tenant.clone(),
                    status: depth.status.clone(),
                })
                .set(depth.messages);
        }
        self.components_loaded
            .set(i64::try_from(components_loaded).unwrap_or(i64::MAX));
        self.tenant_generation.set(tenant_generation);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        Ok(text)
    }
}

fn component_labels(component: PlatformComponent, build: Build) -> ComponentLabels {
    ComponentLabels {
        component: component.name(),
        build: build.label(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_names_every_metric_with_its_labels() {
        let metrics = Metrics::new();
        metrics.request_served("acme", "GET /api/cars", 200, Duration::from_millis(3));
        let listing = PlatformComponent::Listing;
        metrics.component_instantiated(listing, Build::Platform, Duration::from_micros(300));
        metrics.component_executed(listing, Build::Tenant, Duration::from_millis(2));
        metrics.component_finished(listing, Build::Tenant, "timeout");
        metrics.component_paced(listing, Build::Tenant, Duration::from_millis(4));
        metrics.connection_opened("api", 1);
        metrics.connection_refused("api", "address");
        let depth = [QueueDepth {
            tenant: "acme".to_owned(),
            status: "pending".to_owned(),
            messages: 2,
        }];
        let text = metrics.encode(Some(&depth), 3, 7).unwrap();
        for line in [
            r#"rentald_http_requests_total{tenant="acme",endpoint="GET /api/cars",status="200"} 1"#,
            r#"rentald_http_request_duration_seconds_count{endpoint="GET /api/cars"} 1"#,
            r#"rentald_component_instantiation_seconds_count{component="listing",build="platform"} 1"#,
            r#"rentald_component_execution_seconds_count{component="listing",build="tenant"} 1"#,
            r#"rentald_component_outcomes_total{component="listing",build="tenant",outcome="timeout"} 1"#,
            r#"rentald_component_paced_seconds_total{component="listing",build="tenant"} 0.004"#,
            r#"rentald_queue_depth{tenant="acme",status="pending"} 2"#,
            r#"rentald_connections_open{listener="api"} 1"#,
            r#"rentald_connections_refused_total{listener="api",reason="address"} 1"#,
            "rentald_components_loaded 3",
            "rentald_tenant_generation 7",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        assert!(text.contains(&format!(
            "rentald_build_info{{version=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION")
        )));
        let text = metrics.encode(None, 0, 0).unwrap();
        assert!(
            !text.contains("rentald_queue_depth{"),
            "no stale depth:\n{text}"
        );
    }
}
