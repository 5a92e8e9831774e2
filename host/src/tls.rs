//! TLS for `serve`: rustls with the certificate chosen by SNI (the tenant's own when it has
//! one, else the default, typically a wildcard for `*.{base-domain}`), HTTP/2 and HTTP/1.1 by
//! ALPN, and certificate files reloaded without a restart, on SIGHUP or when they change.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::signal::unix::{Signal, SignalKind};
use tokio_rustls::TlsAcceptor;

use crate::tenancy;

/// ALPN protocol names, in the server's order of preference.
pub const ALPN_H2: &[u8] = b"h2";
pub const ALPN_HTTP1: &[u8] = b"http/1.1";

/// Where the certificates are.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The default certificate chain (PEM, leaf first).
    pub cert: PathBuf,
    /// Its private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// A directory of tenants' own certificates, `<slug>.crt` with `<slug>.key`.
    pub tenant_certs: Option<PathBuf>,
    /// How often the files are looked at for changes; `None`: on SIGHUP only.
    pub reload_every: Option<Duration>,
}

/// One consistent set of certificates, replaced whole on reload.
#[derive(Debug)]
struct Certificates {
    default: Arc<CertifiedKey>,
    /// By tenant slug.
    tenants: HashMap<String, Arc<CertifiedKey>>,
}

/// Picks the certificate of a handshake by SNI.
#[derive(Debug)]
struct Resolver {
    base_domain: String,
    provider: Arc<CryptoProvider>,
    /// Held only to clone or replace the `Arc`: handshakes take the set current when they
    /// start, and a reload never waits for connections.
    current: RwLock<Arc<Certificates>>,
}

impl ResolvesServerCert for Resolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let certificates = self
            .current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let own = hello
            .server_name()
            .and_then(|name| tenancy::tenant_slug(Some(name), &self.base_domain).ok())
            .and_then(|slug| certificates.tenants.get(&slug));
        Some(own.unwrap_or(&certificates.default).clone())
    }
}

/// Loads the certificates (an error names the file at fault), and starts watching them: a
/// SIGHUP or a changed file reloads them, and a reload that fails keeps the current ones.
/// The acceptor serves new connections with whatever is current; the task is the watcher.
pub fn start(
    files: TlsFiles,
    base_domain: &str,
) -> anyhow::Result<(TlsAcceptor, tokio::task::JoinHandle<()>)> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certificates = load(&files, &provider)?;
    let resolver = Arc::new(Resolver {
        base_domain: base_domain.to_owned(),
        provider: provider.clone(),
        current: RwLock::new(Arc::new(certificates)),
    });
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?
        .with_no_client_auth()
        .with_cert_resolver(resolver.clone());
    config.alpn_protocols = vec![ALPN_H2.to_vec(), ALPN_HTTP1.to_vec()];
    // Installed before the server says it listens, so an early SIGHUP reloads rather than
    // ends the process.
    let hangup = tokio::signal::unix::signal(SignalKind::hangup()).context("handling SIGHUP")?;
    let watcher = tokio::spawn(watch(resolver, files, hangup));
    Ok((TlsAcceptor::from(Arc::new(config)), watcher))
}

/// Reloads on SIGHUP, and when the files' modification times, sizes or names change.
async fn watch(resolver: Arc<Resolver>, files: TlsFiles, mut hangup: Signal) {
    let mut poll = files.reload_every.map(|every| {
        let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        interval
    });
    let mut seen = stamp(&files);
    loop {
        let hung_up = tokio::select! {
            Some(()) = hangup.recv() => true,
            () = tick(&mut poll) => false,
        };
        let now = stamp(&files);
        if !hung_up && now == seen {
            continue;
        }
        seen = now;
        let reason = if hung_up { "SIGHUP" } else { "changed files" };
        match load(&files, &resolver.provider) {
            Ok(certificates) => {
                let tenants = certificates.tenants.len();
                *resolver
                    .current
                    .write()
                    .unwrap_or_else(PoisonError::into_inner) = Arc::new(certificates);
                tracing::info!(reason, tenants, "reloaded the TLS certificates");
            }
            Err(e) => tracing::error!(
                reason,
                error = format!("{e:#}"),
                "reloading the TLS certificates failed; keeping the current ones"
            ),
        }
    }
}

async fn tick(poll: &mut Option<tokio::time::Interval>) {
    match poll {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// Modification time and size of every file that makes up the certificates, and the names in
/// the tenants' directory: enough to notice a change without reading the files.
fn stamp(files: &TlsFiles) -> Vec<(PathBuf, Option<(SystemTime, u64)>)> {
    let mut paths = vec![files.cert.clone(), files.key.clone()];
    if let Some(dir) = &files.tenant_certs {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|entries| entries.filter_map(|e| Some(e.ok()?.path())).collect())
            .unwrap_or_else(|_| Vec::new());
        entries.sort();
        paths.extend(entries);
    }
    paths
        .into_iter()
        .map(|path| {
            let meta = std::fs::metadata(&path)
                .ok()
                .and_then(|m| Some((m.modified().ok()?, m.len())));
            (path, meta)
        })
        .collect()
}

fn load(files: &TlsFiles, provider: &CryptoProvider) -> anyhow::Result<Certificates> {
    let default = certified_key(&files.cert, &files.key, provider)?;
    let mut tenants = HashMap::new();
    if let Some(dir) = &files.tenant_certs {
        let entries =
            std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
        for entry in entries {
            let cert = entry
                .with_context(|| format!("reading {}", dir.display()))?
                .path();
            if cert.extension().is_none_or(|ext| ext != "crt") {
                continue;
            }
            let slug = cert
                .file_stem()
                .and_then(|stem| stem.to_str())
                .filter(|slug| tenancy::is_valid_slug(slug))
                .with_context(|| {
                    format!(
                        "{}: the name is not <tenant slug>.crt ([a-z0-9][a-z0-9-]{{0,62}})",
                        cert.display()
                    )
                })?
                .to_owned();
            let key = cert.with_extension("key");
            tenants.insert(slug, certified_key(&cert, &key, provider)?);
        }
    }
    Ok(Certificates { default, tenants })
}

/// A certificate chain and its key, checked to belong together.
fn certified_key(
    cert: &Path,
    key: &Path,
    provider: &CryptoProvider,
) -> anyhow::Result<Arc<CertifiedKey>> {
    let cert_pem = std::fs::read(cert).with_context(|| format!("reading {}", cert.display()))?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("{}: not a PEM certificate chain", cert.display()))?;
    anyhow::ensure!(
        !chain.is_empty(),
        "{}: no certificate in it",
        cert.display()
    );
    let key_pem = std::fs::read(key).with_context(|| format!("reading {}", key.display()))?;
    let private_key = PrivateKeyDer::from_pem_slice(&key_pem)
        .with_context(|| format!("{}: not a PEM private key", key.display()))?;
    CertifiedKey::from_der(chain, private_key, provider)
        .map(Arc::new)
        .map_err(|e| match e {
            rustls::Error::InconsistentKeys(_) => anyhow::anyhow!(
                "{} is not the key of the certificate in {}",
                key.display(),
                cert.display()
            ),
            other => anyhow::anyhow!("{} with {}: {other}", cert.display(), key.display()),
        })
}
