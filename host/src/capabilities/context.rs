//! `rental:platform/context`: what the host knows about the request.

use crate::bindings::context::{self, ApiUser};
use crate::runtime::HostState;

impl context::Host for HostState {
    async fn tenant(&mut self) -> wasmtime::Result<String> {
        Ok(self.request.tenant.slug.clone())
    }

    async fn caller(&mut self) -> wasmtime::Result<Option<ApiUser>> {
        Ok(self.request.caller.as_ref().map(|c| ApiUser {
            user_id: c.user_id,
            user_name: c.user_name.clone(),
            permissions: c.permissions.clone(),
        }))
    }

    async fn language(&mut self) -> wasmtime::Result<String> {
        Ok(self.request.language.as_str().to_owned())
    }

    async fn correlation_id(&mut self) -> wasmtime::Result<String> {
        Ok(self.request.correlation_id.clone())
    }

    async fn setting(&mut self, key: String) -> wasmtime::Result<Option<String>> {
        Ok(self.request.tenant.settings.get(&key).cloned())
    }
}
