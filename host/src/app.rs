//! What every connection, the queue consumer and the probes share: the one `App` of a running
//! server. Its request handling is `server.rs`'s.

use std::sync::Arc;

use crate::apidocs::ApiDocs;
use crate::auth::Throttle;
use crate::metrics::Metrics;
use crate::runtime::Runtime;
use crate::storage::Storage;

/// Everything a request needs, shared by all connections.
pub struct App {
    pub storage: Storage,
    pub runtime: Runtime,
    pub base_domain: String,
    pub throttle: Throttle,
    pub metrics: Arc<Metrics>,
    /// `/openapi.json` and `/docs`.
    pub api_docs: ApiDocs,
}
