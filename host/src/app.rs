//! What every connection, the queue consumer and the probes share: the one `App` of a running
//! server. Its request handling is `front.rs`'s.

use std::sync::Arc;
use std::time::Duration;

use crate::apidocs::ApiDocs;
use crate::auth::Logins;
use crate::connection;
use crate::metrics::Metrics;
use crate::runtime::Runtime;
use crate::storage::Storage;

/// Everything a request needs, shared by all connections.
pub struct App {
    pub storage: Storage,
    pub runtime: Runtime,
    pub base_domain: String,
    pub logins: Logins,
    pub metrics: Arc<Metrics>,
    /// `/openapi.json` and `/docs`.
    pub api_docs: ApiDocs,
    /// The front door's limits: how long a request's body may take to arrive.
    pub connections: connection::Limits,
}

impl App {
    /// Follows the database's change signals every `poll`, forever: the tenants' components
    /// (dropping those idle for `idle`) and the tenants' admin data, in one poll, so that both
    /// kinds of change take effect within the same interval. While the database cannot be
    /// read, what is in memory stays as it was.
    pub async fn follow_changes(&self, poll: Duration, idle: Duration) {
        loop {
            tokio::time::sleep(poll).await;
            self.runtime.maintain_components(&self.storage, idle).await;
            if let Err(e) = self.storage.refresh_tenants().await {
                tracing::warn!(error = %e, "refreshing the cached tenants");
            }
        }
    }
}
