//! `rental:platform/secrets`: a webhook component's own tenant secrets.
//!
//! Least privilege: a component reads only the secrets named after it (`bankone.*` for
//! `bankone`); any other name (the tenant's token signing key, the other bank's secrets) reads
//! as none, exactly like a secret that is not set. Values are never logged.

use crate::bindings::secrets;
use crate::runtime::HostState;

/// Whether `component` may read the secret `name`.
pub fn readable_by(component: &str, name: &str) -> bool {
    name.strip_prefix(component)
        .is_some_and(|rest| rest.len() > 1 && rest.starts_with('.'))
}

impl secrets::Host for HostState {
    async fn get(&mut self, name: String) -> wasmtime::Result<Option<String>> {
        let component = self.request.component.name();
        if !readable_by(component, &name) {
            tracing::warn!(
                component,
                secret = %name,
                "a component asked for a secret that is not its own"
            );
            return Ok(None);
        }
        Ok(self
            .storage
            .secret(&self.request.tenant.slug, &name)
            .await?)
    }
}

#[cfg(test)]
mod tests {
    use super::readable_by;

    #[test]
    fn a_component_reads_only_its_own_secrets() {
        assert!(readable_by("banktwo", "banktwo.shared_secret"));
        assert!(readable_by("bankone", "bankone.signing_secret"));
        for name in [
            "jwt.signing_key",
            "bankone.signing_secret",
            "banktwo",
            "banktwo.",
            "banktwox.shared_secret",
            "BANKTWO.shared_secret",
            "",
        ] {
            assert!(!readable_by("banktwo", name), "{name}");
        }
    }
}
