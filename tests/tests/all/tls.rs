//! TLS: the certificate by SNI (a wildcard for every tenant, a tenant's own), HTTP/1.1 and
//! HTTP/2 by ALPN, certificates reloaded without a restart (on change, on SIGHUP), and plain
//! HTTP only when asked for. Certificates are made at test time; the clients are real.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rentald_tests::bank::{Ca, Identity};
use rentald_tests::{Backend, Options, TestApp, Tls, tls_client_builder};
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::AsyncReadExt as _;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

const BASE: &str = "rent.test";
const H2: &[u8] = b"h2";
const HTTP1: &[u8] = b"http/1.1";

/// A CA, and a directory with the server's certificate files: `default.crt`/`.key` (the
/// wildcard) and `tenants/` for tenants' own.
struct Certs {
    ca: Ca,
    dir: tempfile::TempDir,
    wildcard: Identity,
}

impl Certs {
    fn new() -> Self {
        let ca = Ca::new("Test Platform CA");
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tenants")).unwrap();
        let wildcard = ca.server_for(&[&format!("*.{BASE}")]);
        let certs = Self { ca, dir, wildcard };
        certs.write_default(&certs.wildcard);
        certs
    }

    fn cert_path(&self) -> PathBuf {
        self.dir.path().join("default.crt")
    }

    fn key_path(&self) -> PathBuf {
        self.dir.path().join("default.key")
    }

    fn tenant_dir(&self) -> PathBuf {
        self.dir.path().join("tenants")
    }

    /// A new certificate for the tenant, from the test CA, written to the tenants' directory.
    fn issue_tenant(&self, slug: &str) -> Identity {
        let identity = self.ca.server_for(&[&format!("{slug}.{BASE}")]);
        write(
            &self.tenant_dir().join(format!("{slug}.key")),
            &identity.key_pem,
        );
        write(
            &self.tenant_dir().join(format!("{slug}.crt")),
            &identity.cert_pem,
        );
        identity
    }

    /// Replaces the default certificate and key (the key first, as an operator would).
    fn write_default(&self, identity: &Identity) {
        write(&self.key_path(), &identity.key_pem);
        write(&self.cert_path(), &identity.cert_pem);
    }

    fn options(&self, reload_secs: u64) -> Options {
        Options {
            tls: Some(Tls {
                base_domain: BASE.to_owned(),
                ca_pem: self.ca.pem(),
                cert: self.cert_path(),
                key: self.key_path(),
                tenant_certs: Some(self.tenant_dir()),
                reload_secs,
            }),
            ..Options::new(Backend::Sqlite)
        }
    }
}

/// Writes a file whole: a new file renamed into place, so the server never reads half of it.
fn write(path: &Path, text: &str) {
    let fresh = path.with_extension("new");
    std::fs::write(&fresh, text).unwrap();
    std::fs::rename(&fresh, path).unwrap();
}

fn leaf(identity: &Identity) -> CertificateDer<'static> {
    CertificateDer::pem_slice_iter(identity.cert_pem.as_bytes())
        .next()
        .unwrap()
        .unwrap()
}

/// A TLS handshake with the server as a client asking for `name` and offering `alpn`, trusting
/// only the test CA: the leaf certificate the server presented and the protocol it chose.
async fn handshake(
    addr: SocketAddr,
    ca_pem: &str,
    name: &str,
    alpn: &[&[u8]],
) -> (CertificateDer<'static>, Option<Vec<u8>>) {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let stream = TcpStream::connect(addr).await.unwrap();
    let server_name = ServerName::try_from(name.to_owned()).unwrap();
    let tls = TlsConnector::from(Arc::new(config))
        .connect(server_name, stream)
        .await
        .unwrap_or_else(|e| panic!("handshake for {name}: {e}"));
    let connection = tls.get_ref().1;
    (
        connection.peer_certificates().unwrap()[0].clone(),
        connection.alpn_protocol().map(<[u8]>::to_vec),
    )
}

/// The leaf certificate served for `name`.
async fn served(app: &TestApp, certs: &Certs, name: &str) -> CertificateDer<'static> {
    handshake(app.addr, &certs.ca.pem(), name, &[H2, HTTP1])
        .await
        .0
}

/// Waits (up to 30 s, polling) until `name` is served `expected`.
async fn until_served(app: &TestApp, certs: &Certs, name: &str, expected: &Identity) {
    let started = Instant::now();
    while served(app, certs, name).await != leaf(expected) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{name} is not served the new certificate within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits (up to 30 s, polling) until the server's log says `text` more than `before` times.
async fn until_logged_again(app: &TestApp, text: &str, before: usize) {
    let started = Instant::now();
    while app.log().matches(text).count() <= before {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the log does not say {text:?} again within 30 s: {}",
            app.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_is_served_over_https_with_http1_and_http2() {
    let certs = Certs::new();
    let app = TestApp::spawn(certs.options(5)).await.unwrap();
    let token = app.tenant_with_token("acme", true).await;
    let url = app.url("acme", "/api/branchoffices");
    assert!(url.starts_with("https://acme.rent.test:"), "{url}");

    for (client, version) in [
        (
            tls_client_builder(&certs.ca.pem())
                .http1_only()
                .build()
                .unwrap(),
            reqwest::Version::HTTP_11,
        ),
        (
            tls_client_builder(&certs.ca.pem()).build().unwrap(),
            reqwest::Version::HTTP_2,
        ),
    ] {
        let response = client.get(&url).bearer_auth(&token).send().await.unwrap();
        assert_eq!(response.version(), version);
        assert_eq!(response.status(), 200);
        let body: serde_json::Value = response.json().await.unwrap();
        assert!(!body.as_array().unwrap().is_empty(), "{body}");
    }

    let name = format!("acme.{BASE}");
    let (_, alpn) = handshake(app.addr, &certs.ca.pem(), &name, &[H2, HTTP1]).await;
    assert_eq!(alpn.as_deref(), Some(H2), "h2 is preferred");
    let (_, alpn) = handshake(app.addr, &certs.ca.pem(), &name, &[HTTP1]).await;
    assert_eq!(alpn.as_deref(), Some(HTTP1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wildcard_serves_every_tenant_and_a_tenant_may_have_its_own() {
    let certs = Certs::new();
    let acme = certs.issue_tenant("acme");
    let app = TestApp::spawn(certs.options(5)).await.unwrap();
    app.create_tenant("acme", false).await;
    app.create_tenant("other", false).await;

    assert_eq!(served(&app, &certs, "acme.rent.test").await, leaf(&acme));
    assert_eq!(
        served(&app, &certs, "other.rent.test").await,
        leaf(&certs.wildcard)
    );
    assert_ne!(leaf(&acme), leaf(&certs.wildcard));
    // A name under no tenant still completes the handshake with the default certificate.
    assert_eq!(
        served(&app, &certs, "unknown.rent.test").await,
        leaf(&certs.wildcard)
    );
    // Both answer over HTTPS, each verified against its own name.
    for tenant in ["acme", "other"] {
        let response = app
            .client
            .post(app.url(tenant, "/auth/token"))
            .form(&[("grant_type", "client_credentials")])
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            400,
            "{tenant}: reached the token endpoint"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changed_certificate_files_are_served_without_a_restart() {
    let certs = Certs::new();
    let mut app = TestApp::spawn(certs.options(1)).await.unwrap();
    assert_eq!(
        served(&app, &certs, "acme.rent.test").await,
        leaf(&certs.wildcard)
    );

    // A new wildcard, and a tenant certificate added while serving.
    let renewed = certs.ca.server_for(&[&format!("*.{BASE}")]);
    certs.write_default(&renewed);
    until_served(&app, &certs, "other.rent.test", &renewed).await;
    let acme = certs.issue_tenant("acme");
    until_served(&app, &certs, "acme.rent.test", &acme).await;

    // A broken replacement is refused, naming the file, and the certificates in use stay.
    let no_certificate = format!("{}: no certificate in it", certs.cert_path().display());
    let before = app.log().matches(&no_certificate).count();
    write(&certs.cert_path(), "not a certificate\n");
    until_logged_again(&app, &no_certificate, before).await;
    assert!(
        app.log().contains("keeping the current ones"),
        "{}",
        app.log()
    );
    assert_eq!(
        served(&app, &certs, "other.rent.test").await,
        leaf(&renewed)
    );
    assert_eq!(served(&app, &certs, "acme.rent.test").await, leaf(&acme));

    // So is a key that does not belong to the certificate.
    let mismatch = format!(
        "{} is not the key of the certificate in {}",
        certs.key_path().display(),
        certs.cert_path().display()
    );
    let before = app.log().matches(&mismatch).count();
    let stranger = certs.ca.server_for(&[&format!("*.{BASE}")]);
    write(&certs.cert_path(), &renewed.cert_pem);
    write(&certs.key_path(), &stranger.key_pem);
    until_logged_again(&app, &mismatch, before).await;
    assert_eq!(
        served(&app, &certs, "other.rent.test").await,
        leaf(&renewed)
    );
    assert!(app.is_running());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads_the_certificates() {
    let certs = Certs::new();
    // No polling: only the signal reloads.
    let mut app = TestApp::spawn(certs.options(0)).await.unwrap();
    let renewed = certs.ca.server_for(&[&format!("*.{BASE}")]);
    certs.write_default(&renewed);
    assert_eq!(
        served(&app, &certs, "acme.rent.test").await,
        leaf(&certs.wildcard),
        "nothing reloads before the signal"
    );

    let status = std::process::Command::new("kill")
        .args(["-HUP", &app.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    until_served(&app, &certs, "acme.rent.test", &renewed).await;
    assert!(app.is_running(), "SIGHUP does not end the server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_and_silence_cost_only_their_own_connection() {
    let certs = Certs::new();
    let mut app = TestApp::spawn(certs.options(5)).await.unwrap();
    app.create_tenant("acme", false).await;

    // A client that never starts the handshake holds nothing up.
    let mut silent = TcpStream::connect(app.addr).await.unwrap();

    let plain = rentald_tests::client()
        .get(format!("http://acme.{BASE}:{}/healthz", app.addr.port()))
        .send()
        .await;
    assert!(plain.is_err(), "plain HTTP on the TLS port: {plain:?}");

    let response = app
        .client
        .get(app.url("acme", "/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(app.is_running());

    // The silent connection is closed when the handshake times out (10 s).
    let mut buffer = [0_u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(30), silent.read(&mut buffer))
        .await
        .expect("the server closes a connection that never completes the handshake");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
}

/// `rentald serve` with these arguments, on a fresh data directory: it must fail at start.
fn refused_serve(args: &[&str]) -> String {
    let data = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(rentald_tests::rentald_bin())
        .arg("--data-dir")
        .arg(data.path())
        .args(["serve", "--listen", "127.0.0.1:0", "--components-dir"])
        .arg(rentald_tests::components_dir())
        .arg("--cache-dir")
        .arg(rentald_tests::cache_dir())
        .args(args)
        .env_remove("RENTALD_DATABASE_URL")
        .env_remove("RENTALD_CONFIG")
        .env_remove("RENTALD_PLAIN_HTTP")
        .env_remove("RENTALD_TLS_CERT")
        .env_remove("RENTALD_TLS_KEY")
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "serve {args:?} started: {text}");
    text
}

#[test]
fn serve_refuses_to_start_without_a_certificate_or_plain_http() {
    let text = refused_serve(&[]);
    assert!(
        text.contains("serve needs a certificate (--tls-cert and --tls-key), or --plain-http"),
        "{text}"
    );

    let certs = Certs::new();
    let cert = certs.cert_path();
    let key = certs.key_path();
    let text = refused_serve(&["--tls-cert", cert.to_str().unwrap()]);
    assert!(
        text.contains("--tls-cert and --tls-key go together"),
        "{text}"
    );
    // The same from the configuration file.
    let config = certs.dir.path().join("rentald.toml");
    std::fs::write(
        &config,
        format!("tls_cert = {:?}\n", cert.to_str().unwrap()),
    )
    .unwrap();
    let text = refused_serve(&["--config", config.to_str().unwrap()]);
    assert!(
        text.contains("--tls-cert and --tls-key go together"),
        "{text}"
    );

    let text = refused_serve(&[
        "--plain-http",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]);
    assert!(text.contains("exclude each other"), "{text}");

    // A key that is not the certificate's, named.
    let stranger = certs.dir.path().join("stranger.key");
    write(&stranger, &certs.ca.server_for(&["x.rent.test"]).key_pem);
    let text = refused_serve(&[
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        stranger.to_str().unwrap(),
    ]);
    assert!(
        text.contains(&format!(
            "{} is not the key of the certificate in {}",
            stranger.display(),
            cert.display()
        )),
        "{text}"
    );

    // A tenant certificate without its key, named.
    let lonely = certs.tenant_dir().join("acme.crt");
    write(&lonely, &certs.wildcard.cert_pem);
    let text = refused_serve(&[
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
        "--tls-tenant-certs",
        certs.tenant_dir().to_str().unwrap(),
    ]);
    assert!(
        text.contains(&certs.tenant_dir().join("acme.key").display().to_string()),
        "{text}"
    );
}
