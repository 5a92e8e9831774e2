//! A test bank: a real HTTPS server on loopback that requires a client certificate signed by
//! its own CA, answering `GET /settlements/{id}` from a table the test controls and counting
//! the calls that reach it. Certificates are generated when the bank is created.
//!
//! It can be stopped and started again on the same port (a bank that is down, then back), and
//! told to fail or hang.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// A certificate authority made for a test.
pub struct Ca {
    cert: Certificate,
    key: KeyPair,
}

/// A certificate and its private key, both PEM.
#[derive(Debug, Clone)]
pub struct Identity {
    pub cert_pem: String,
    pub key_pem: String,
}

impl Ca {
    pub fn new(name: &str) -> Self {
        let key = KeyPair::generate().expect("CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).expect("CA certificate");
        Self { cert, key }
    }

    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A server certificate for 127.0.0.1 and localhost.
    pub fn server(&self) -> Identity {
        self.issue(
            "test bank",
            vec![
                SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)),
                SanType::DnsName("localhost".try_into().expect("DNS name")),
            ],
            ExtendedKeyUsagePurpose::ServerAuth,
        )
    }

    /// A server certificate for these DNS names (a wildcard such as `*.localhost` among them).
    pub fn server_for(&self, names: &[&str]) -> Identity {
        self.issue(
            names.first().copied().unwrap_or("server"),
            names
                .iter()
                .map(|name| SanType::DnsName((*name).try_into().expect("DNS name")))
                .collect(),
            ExtendedKeyUsagePurpose::ServerAuth,
        )
    }

    /// A client certificate.
    pub fn client(&self, name: &str) -> Identity {
        self.issue(name, Vec::new(), ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn issue(&self, name: &str, names: Vec<SanType>, usage: ExtendedKeyUsagePurpose) -> Identity {
        let key = KeyPair::generate().expect("key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.distinguished_name.push(DnType::CommonName, name);
        params.subject_alt_names = names;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![usage];
        params.use_authority_key_identifier_extension = true;
        let cert = params
            .signed_by(&key, &self.cert, &self.key)
            .expect("certificate");
        Identity {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }
}

/// How the bank answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// From the table: 200 with the settlement, or 404.
    Normal,
    /// Every request gets this status.
    Fail(u16),
    /// No answer for a minute.
    Hang,
}

struct Ledger {
    settlements: Mutex<HashMap<String, Value>>,
    behaviour: Mutex<Behaviour>,
    calls: AtomicUsize,
}

pub struct TestBank {
    pub ca: Ca,
    /// A client identity the bank accepts: what the tenant configures.
    pub client: Identity,
    addr: SocketAddr,
    ledger: Arc<Ledger>,
    tls: Arc<rustls::ServerConfig>,
    server: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn roots(ca_pem: &str) -> RootCertStore {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.expect("CA PEM")).expect("CA certificate");
    }
    roots
}

fn chain(identity: &Identity) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
    let certs = CertificateDer::pem_slice_iter(identity.cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .expect("certificate PEM");
    let key = PrivateKeyDer::from_pem_slice(identity.key_pem.as_bytes()).expect("key PEM");
    (certs, key)
}

impl TestBank {
    /// A bank with fresh certificates, listening on a free loopback port.
    pub async fn start() -> Self {
        let ca = Ca::new("Test Bank CA");
        let client = ca.client("tenant client");
        let (certs, key) = chain(&ca.server());
        let verifier =
            WebPkiClientVerifier::builder_with_provider(Arc::new(roots(&ca.pem())), provider())
                .build()
                .expect("client verifier");
        let tls = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_client_cert_verifier(verifier)
            .with_single_cert(certs, key)
            .expect("server config");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bank port");
        let bank = Self {
            ca,
            client,
            addr: listener.local_addr().expect("bank address"),
            ledger: Arc::new(Ledger {
                settlements: Mutex::new(HashMap::new()),
                behaviour: Mutex::new(Behaviour::Normal),
                calls: AtomicUsize::new(0),
            }),
            tls: Arc::new(tls),
            server: Mutex::new(None),
        };
        bank.serve(listener);
        bank
    }

    /// `https://127.0.0.1:{port}`: the tenant's `banktwo.base_url`.
    pub fn base_url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// Puts a settlement in the table (replacing one with the same id).
    pub fn settlement(
        &self,
        id: &str,
        reference: &str,
        amount: &str,
        currency: &str,
        status: &str,
    ) {
        self.ledger.settlements.lock().expect("ledger").insert(
            id.to_owned(),
            json!({
                "SettlementId": id,
                "Reference": reference,
                "Amount": amount,
                "Currency": currency,
                "Status": status,
            }),
        );
    }

    pub fn behave(&self, behaviour: Behaviour) {
        *self.ledger.behaviour.lock().expect("ledger") = behaviour;
    }

    /// Requests that passed the mutual TLS handshake and reached the bank.
    pub fn calls(&self) -> usize {
        self.ledger.calls.load(Ordering::SeqCst)
    }

    /// Stops listening and drops every open connection: the bank is down.
    pub fn stop(&self) {
        if let Some(server) = self.server.lock().expect("server").take() {
            server.abort();
        }
    }

    /// Listens again on the same port.
    pub async fn restart(&self) {
        self.stop();
        let listener = crate::bind_again(self.addr).await;
        self.serve(listener);
    }

    fn serve(&self, listener: TcpListener) {
        let acceptor = tokio_rustls::TlsAcceptor::from(self.tls.clone());
        let ledger = self.ledger.clone();
        let task = tokio::spawn(async move {
            // Dropping the set (when this task is aborted) aborts every connection.
            let mut connections = JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let acceptor = acceptor.clone();
                let ledger = ledger.clone();
                connections.spawn(async move {
                    // A client without an acceptable certificate fails here.
                    let Ok(tls) = acceptor.accept(stream).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(move |request| {
                        let ledger = ledger.clone();
                        async move { Ok::<_, Infallible>(answer(&ledger, &request).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                });
                while connections.try_join_next().is_some() {}
            }
        });
        *self.server.lock().expect("server") = Some(task);
    }

    /// A GET to the bank with `identity` as the client certificate (or none), trusting the
    /// bank's CA: the status, or why the request failed.
    pub async fn get_as(&self, identity: Option<&Identity>, path: &str) -> Result<u16, String> {
        let builder = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_root_certificates(roots(&self.ca.pem()));
        let config = match identity {
            Some(identity) => {
                let (certs, key) = chain(identity);
                builder
                    .with_client_auth_cert(certs, key)
                    .expect("client identity")
            }
            None => builder.with_no_client_auth(),
        };
        let client = reqwest::Client::builder()
            .use_preconfigured_tls(config)
            .timeout(Duration::from_secs(10))
            .build()
            .expect("client");
        client
            .get(format!("{}{path}", self.base_url()))
            .send()
            .await
            .map(|response| response.status().as_u16())
            .map_err(|e| format!("{e:?}"))
    }
}

impl Drop for TestBank {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn answer(
    ledger: &Ledger,
    request: &http::Request<hyper::body::Incoming>,
) -> http::Response<Full<Bytes>> {
    ledger.calls.fetch_add(1, Ordering::SeqCst);
    let behaviour = *ledger.behaviour.lock().expect("ledger");
    let (status, body) = match behaviour {
        Behaviour::Hang => {
            tokio::time::sleep(Duration::from_secs(60)).await;
            (503, String::new())
        }
        Behaviour::Fail(status) => (status, String::new()),
        Behaviour::Normal => {
            let found = request
                .uri()
                .path()
                .strip_prefix("/settlements/")
                .filter(|_| request.method() == http::Method::GET)
                .and_then(|id| ledger.settlements.lock().expect("ledger").get(id).cloned());
            match found {
                Some(settlement) => (200, settlement.to_string()),
                None => (404, String::new()),
            }
        }
    };
    let mut response = http::Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = http::StatusCode::from_u16(status).unwrap_or_default();
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}
