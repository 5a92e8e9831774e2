//! `rental:platform/bank`: asks a bank for a settlement over mutually authenticated TLS.
//!
//! The client is built per call from the tenant's configuration, so a new certificate or CA
//! applies at once and nothing is shared between tenants:
//!
//! | name | kind | what |
//! |---|---|---|
//! | `{bank}.base_url` | setting | `https://...`; the settlement is `GET {base_url}/settlements/{id}` |
//! | `{bank}.client_cert` | secret | PEM: the tenant's client certificate (and chain) |
//! | `{bank}.client_key` | secret | PEM: its private key (PKCS#8, PKCS#1 or SEC1) |
//! | `{bank}.ca_cert` | setting, else secret | PEM: the bank's CA, the only trust root |
//!
//! A component may only ask its own bank (`banktwo` asks `banktwo`). Key material never
//! reaches a log or an error message.

use std::sync::Arc;
use std::time::Duration;

use rental_domain::payments::{self, BankAnswer, BankBaseUrl, BankSchemes};
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use wasmtime_wasi::TrappableError;

use crate::bindings::bank::{self, BankError, Settlement};
use crate::runtime::HostState;
use crate::storage::tenants::Tenant;
use crate::storage::{self, Storage};
use crate::telemetry;

/// What a bank call fails with: a WIT `bank-error` for the guest, or a trap (the database
/// failed while the configuration was read).
pub type BankFailure = TrappableError<BankError>;

impl From<storage::Error> for BankFailure {
    fn from(error: storage::Error) -> Self {
        BankFailure::trap(error)
    }
}

/// A bank as a tenant configured it.
pub struct BankConfig {
    base_url: BankBaseUrl,
    client_cert: String,
    client_key: String,
    ca_cert: String,
}

impl std::fmt::Debug for BankConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BankConfig")
            .field("base_url", &self.base_url.as_str())
            .finish_non_exhaustive()
    }
}

fn not_configured(bank: &str, what: &str) -> BankError {
    BankError::NotConfigured(format!("{bank}.{what} is not set"))
}

impl BankConfig {
    /// Reads the configuration of `bank` for `tenant`: refused when something is missing or
    /// unusable, a trap when the database fails.
    pub async fn load(storage: &Storage, tenant: &Tenant, bank: &str) -> Result<Self, BankFailure> {
        let setting = |what: &str| tenant.settings.get(&format!("{bank}.{what}")).cloned();
        let secret = |what: &str| {
            let name = format!("{bank}.{what}");
            async move { storage.secret(&tenant.slug, &name).await }
        };
        let base_url_setting = payments::base_url_setting(bank);
        let Some(base_url) = tenant.settings.get(&base_url_setting) else {
            return Err(BankError::NotConfigured(format!("{base_url_setting} is not set")).into());
        };
        let Some(base_url) = BankBaseUrl::parse(base_url, BankSchemes::Https) else {
            return Err(BankError::NotConfigured(format!(
                "{base_url_setting} is not an https URL"
            ))
            .into());
        };
        let Some(client_cert) = secret("client_cert").await? else {
            return Err(not_configured(bank, "client_cert").into());
        };
        let Some(client_key) = secret("client_key").await? else {
            return Err(not_configured(bank, "client_key").into());
        };
        let ca_cert = match setting("ca_cert") {
            Some(ca) => ca,
            None => match secret("ca_cert").await? {
                Some(ca) => ca,
                None => return Err(not_configured(bank, "ca_cert").into()),
            },
        };
        Ok(Self {
            base_url,
            client_cert,
            client_key,
            ca_cert,
        })
    }

    /// The rustls client configuration: the bank's CA as the only root, the tenant's
    /// certificate and key for client authentication.
    fn tls(&self) -> Result<rustls::ClientConfig, BankError> {
        let bad = |what: &str| BankError::NotConfigured(format!("the {what} is not valid PEM"));
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(self.ca_cert.as_bytes()) {
            roots
                .add(cert.map_err(|_| bad("bank's CA certificate"))?)
                .map_err(|_| bad("bank's CA certificate"))?;
        }
        if roots.is_empty() {
            return Err(bad("bank's CA certificate"));
        }
        let chain = CertificateDer::pem_slice_iter(self.client_cert.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| bad("client certificate"))?;
        if chain.is_empty() {
            return Err(bad("client certificate"));
        }
        let key = PrivateKeyDer::from_pem_slice(self.client_key.as_bytes())
            .map_err(|_| bad("client key"))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| BankError::NotConfigured(format!("TLS: {e}")))?
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, key)
            .map_err(|_| {
                BankError::NotConfigured("the client certificate and key do not match".to_owned())
            })
    }
}

rental_domain::wit_bank_conversions!(crate::bindings::bank);

/// Asks the bank for `settlement_id`. `Ok(None)`: the bank answered 404.
pub async fn confirm(
    config: &BankConfig,
    settlement_id: &str,
    timeout: Duration,
) -> Result<Option<Settlement>, BankError> {
    let url = config.base_url.settlement_url(settlement_id);
    let client = reqwest::Client::builder()
        .use_preconfigured_tls(config.tls()?)
        .https_only(true)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(timeout)
        .build()
        .map_err(|e| BankError::NotConfigured(telemetry::describe(&e)))?;
    let mut response = client
        .get(url)
        .header(http::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| BankError::Unreachable(telemetry::describe(&e)))?;
    let Some(mut answer) = BankAnswer::start(response.status().as_u16()).map_err(answer_error)?
    else {
        return Ok(None);
    };
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| BankError::Unreachable(telemetry::describe(&e)))?
    {
        answer.push(&chunk).map_err(answer_error)?;
    }
    Ok(Some(settlement(answer.settlement().map_err(answer_error)?)))
}

impl bank::Host for HostState {
    async fn confirm_settlement(
        &mut self,
        bank: String,
        settlement_id: String,
    ) -> Result<Option<Settlement>, BankFailure> {
        if bank != self.request.component.name() {
            return Err(BankError::NotConfigured(format!(
                "component {} may only ask its own bank",
                self.request.component
            ))
            .into());
        }
        let config = BankConfig::load(&self.storage, &self.request.tenant, &bank).await?;
        let started = std::time::Instant::now();
        let answer = confirm(&config, &settlement_id, self.bank_timeout).await;
        match &answer {
            Ok(found) => tracing::info!(
                bank,
                settlement = %settlement_id,
                found = found.is_some(),
                millis = started.elapsed().as_millis() as u64,
                "asked the bank"
            ),
            Err(error) => tracing::warn!(
                bank,
                settlement = %settlement_id,
                error = ?error,
                "the bank did not confirm"
            ),
        }
        Ok(answer?)
    }

    fn convert_bank_error(&mut self, error: BankFailure) -> wasmtime::Result<BankError> {
        error.downcast()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(base: &str) -> BankConfig {
        BankConfig {
            base_url: BankBaseUrl::parse(base, BankSchemes::Https).unwrap(),
            client_cert: String::new(),
            client_key: "-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----".to_owned(),
            ca_cert: String::new(),
        }
    }

    #[test]
    fn unusable_pem_is_not_configured_and_never_echoed() {
        let error = config("https://bank.test").tls().unwrap_err();
        assert!(matches!(error, BankError::NotConfigured(_)), "{error:?}");
        assert!(!format!("{error:?}").contains("secret"));
        assert!(!format!("{:?}", config("https://bank.test")).contains("secret"));
    }
}
