//! The HTTP front door: tenancy, routing, authentication, language, limits, then the component.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::header::{ALLOW, AUTHORIZATION, CONTENT_LENGTH, HOST, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rental_domain::{ApiError, ErrorCode, ErrorResponse, Language};
use rental_platform::{CORRELATION_HEADER, Component as PlatformComponent};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tracing::Instrument as _;

use crate::app::App;
use crate::auth::{self, AuthError, TokenRequest};
use crate::metrics;
use crate::probes;
use crate::response::{Body, empty, json};
use crate::routes::{self, Access, Matched};
use crate::runtime::{Outcome, RequestContext};
use crate::storage::cache::CachedTenant;
use crate::storage::tenants::Tenant;
use crate::tenancy::{self, HostError};
use crate::tls;

/// Largest request body accepted.
pub const MAX_BODY: usize = 1 << 20;

/// Accepts connections for as long as the process runs. With `tls`, each connection first
/// completes a TLS handshake (within [`tls::HANDSHAKE_TIMEOUT`]; a failure costs that
/// connection only) and speaks the HTTP version ALPN chose; without, HTTP/1.1 or HTTP/2 (prior
/// knowledge).
pub async fn serve(app: Arc<App>, listener: TcpListener, tls: Option<TlsAcceptor>) {
    loop {
        let (stream, peer) = accept(&listener).await;
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let Some(tls) = tls else {
                return serve_connection(app, stream, peer, None).await;
            };
            match tokio::time::timeout(tls::HANDSHAKE_TIMEOUT, tls.accept(stream)).await {
                Ok(Ok(stream)) => {
                    let alpn = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
                    serve_connection(app, stream, peer, alpn.as_deref()).await;
                }
                Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
            }
        });
    }
}

/// Longest pause after a failed `accept`.
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// The next connection of `listener`. A failed `accept` never ends serving: out of file
/// descriptors (a flood of connections) or of kernel memory, it waits, from 10 ms doubling up
/// to [`ACCEPT_BACKOFF_MAX`], for connections to close, and tries again; the connections
/// waiting meanwhile stay in the kernel's backlog.
pub(crate) async fn accept(listener: &TcpListener) -> (TcpStream, SocketAddr) {
    let mut backoff = Duration::from_millis(10);
    loop {
        match listener.accept().await {
            Ok(accepted) => return accepted,
            Err(error) => {
                tracing::warn!(%error, retry_in_ms = backoff.as_millis(), "accepting a connection failed");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
            }
        }
    }
}

/// Serves HTTP on one connection: the version ALPN named, else whichever the client speaks.
async fn serve_connection<I>(app: Arc<App>, io: I, peer: SocketAddr, alpn: Option<&[u8]>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req| {
        let app = app.clone();
        async move { Ok::<_, Infallible>(app.handle(req, peer).await) }
    });
    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    let builder = match alpn {
        Some(tls::ALPN_H2) => builder.http2_only(),
        Some(tls::ALPN_HTTP1) => builder.http1_only(),
        _ => builder,
    };
    if let Err(e) = builder.serve_connection(TokioIo::new(io), service).await {
        tracing::debug!(%peer, error = %e, "connection closed with an error");
    }
}

/// The interface's error body, translated, carrying the correlation id.
fn error(
    status: StatusCode,
    error: &ApiError,
    language: Language,
    correlation_id: &str,
) -> Response<Body> {
    json(
        status,
        &ErrorResponse::new(error, language, Some(correlation_id.to_owned())),
    )
}

/// What the request asked for before any component runs.
struct Front<'a> {
    correlation_id: &'a str,
    tenant: Arc<Tenant>,
    language: Language,
}

/// What the front door learnt about a request: its access line's and its metrics' labels.
struct Served {
    correlation_id: String,
    /// Set once the tenant is known to exist.
    tenant: Option<String>,
    /// The route template (`GET /api/booking/{id}`), never the raw path.
    endpoint: String,
    component: Option<PlatformComponent>,
}

impl Served {
    fn tenant(&self) -> &str {
        self.tenant.as_deref().unwrap_or(metrics::NONE)
    }

    fn set_tenant(&mut self, slug: &str) {
        tracing::Span::current().record("tenant", slug);
        self.tenant = Some(slug.to_owned());
    }

    fn set_endpoint(&mut self, endpoint: String, component: Option<PlatformComponent>) {
        let span = tracing::Span::current();
        span.record("endpoint", endpoint.as_str());
        if let Some(component) = component {
            span.record("component", component.name());
        }
        self.endpoint = endpoint;
        self.component = component;
    }
}

/// An event naming its request (correlation id, tenant, endpoint, component) by its own
/// fields, so that it does even where the request's span is filtered out.
macro_rules! request_event {
    ($level:expr, $served:expr, $($rest:tt)+) => {
        request_event!(target: module_path!(), $level, $served, $($rest)+)
    };
    (target: $target:expr, $level:expr, $served:expr, $($rest:tt)+) => {
        tracing::event!(
            target: $target,
            $level,
            correlation_id = %$served.correlation_id,
            tenant = $served.tenant(),
            endpoint = %$served.endpoint,
            component = $served.component.map_or(metrics::NONE, PlatformComponent::name),
            $($rest)+
        )
    };
}

impl App {
    async fn handle(&self, request: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
        let started = Instant::now();
        let method = request.method().clone();
        let mut served = Served {
            correlation_id: uuid::Uuid::new_v4().simple().to_string(),
            tenant: None,
            endpoint: metrics::UNMATCHED.to_owned(),
            component: None,
        };
        let span = tracing::info_span!(
            "request",
            correlation_id = %served.correlation_id,
            %method,
            path = %request.uri().path(),
            tenant = tracing::field::Empty,
            endpoint = tracing::field::Empty,
            component = tracing::field::Empty,
        );
        let mut response = self
            .route(request, peer, &mut served)
            .instrument(span.clone())
            .await;
        if let Ok(value) = HeaderValue::from_str(&served.correlation_id) {
            response.headers_mut().insert(CORRELATION_HEADER, value);
        }
        let status = response.status().as_u16();
        let elapsed = started.elapsed();
        self.metrics
            .request_served(served.tenant(), &served.endpoint, status, elapsed);
        span.in_scope(|| {
            request_event!(
                target: "rentald::access",
                tracing::Level::INFO,
                served,
                %method,
                status,
                duration_ms = elapsed.as_secs_f64() * 1e3,
                %peer,
                "served"
            );
        });
        response
    }

    async fn route(
        &self,
        request: Request<Incoming>,
        peer: SocketAddr,
        served: &mut Served,
    ) -> Response<Body> {
        let path = request.uri().path();
        if let Some(response) = probes::probe(self, path).await {
            served.set_endpoint(path.to_owned(), None);
            return response;
        }
        if let Some(response) = self.api_docs.answer(request.method(), path) {
            served.set_endpoint(path.to_owned(), None);
            return response;
        }
        // The request target's authority (absolute form, HTTP/2's `:authority`) wins over
        // Host (RFC 9112 section 3.2.2); two Host headers are a bad request.
        if request.headers().get_all(HOST).iter().nth(1).is_some() {
            return empty(StatusCode::BAD_REQUEST);
        }
        let host = request
            .uri()
            .authority()
            .map(|authority| authority.as_str())
            .or_else(|| request.headers().get(HOST).and_then(|h| h.to_str().ok()));
        let slug = match tenancy::tenant_slug(host, &self.base_domain) {
            Ok(slug) => slug,
            Err(HostError::Missing | HostError::NotUnderBase) => {
                return empty(StatusCode::BAD_REQUEST);
            }
        };
        let cached = match self.storage.cached_tenant(&slug).await {
            Ok(Some(cached)) if cached.tenant.enabled => cached,
            Ok(_) => return empty(StatusCode::NOT_FOUND),
            Err(e) => {
                tracing::error!(error = %e, "reading the tenant");
                return empty(StatusCode::SERVICE_UNAVAILABLE);
            }
        };
        served.set_tenant(&slug);
        let tenant = cached.tenant.clone();

        if request.uri().path() == routes::TOKEN_PATH {
            return if request.method() == Method::POST {
                served.set_endpoint(format!("{} {}", Method::POST, routes::TOKEN_PATH), None);
                self.token(request, &cached, peer).await
            } else {
                let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
                response
                    .headers_mut()
                    .insert(ALLOW, HeaderValue::from_static("POST"));
                response
            };
        }

        let route = match routes::find(request.method(), request.uri().path()) {
            Matched::Route(route) => route,
            Matched::NotFound => return empty(StatusCode::NOT_FOUND),
            Matched::WrongMethod(allowed) => {
                let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
                let allow = allowed
                    .iter()
                    .map(Method::as_str)
                    .collect::<Vec<_>>()
                    .join(", ");
                if let Ok(value) = HeaderValue::from_str(&allow) {
                    response.headers_mut().insert(ALLOW, value);
                }
                return response;
            }
        };
        served.set_endpoint(
            format!("{} {}", route.method, route.path),
            Some(route.component),
        );

        let default_language = tenant
            .settings
            .get("default_language")
            .and_then(|l| Language::parse(l))
            .unwrap_or(Language::En);

        let caller = match route.access {
            Access::Permission(permission) => {
                let authorization = request
                    .headers()
                    .get(AUTHORIZATION)
                    .and_then(|h| h.to_str().ok());
                match auth::authorize(&self.storage, &cached, authorization, permission).await {
                    Ok(caller) => Some(caller),
                    Err(error) => return auth_failure(&tenant, host.unwrap_or_default(), error),
                }
            }
            Access::Anonymous => None,
        };

        let language = match query_param(request.uri().query(), "language") {
            None => default_language,
            Some(value) => match Language::parse(&value) {
                Some(language) => language,
                None => {
                    return error(
                        StatusCode::BAD_REQUEST,
                        &ApiError::new(ErrorCode::LanguageNotSupported),
                        default_language,
                        &served.correlation_id,
                    );
                }
            },
        };
        let front = Front {
            correlation_id: &served.correlation_id,
            tenant,
            language,
        };

        let (parts, body) = request.into_parts();
        let too_large = parts
            .headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
            .is_some_and(|n| n > MAX_BODY as u64);
        if too_large {
            return empty(StatusCode::PAYLOAD_TOO_LARGE);
        }
        let body = match Limited::new(body, MAX_BODY).collect().await {
            Ok(body) => body.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                return empty(StatusCode::PAYLOAD_TOO_LARGE);
            }
            Err(_) => return empty(StatusCode::BAD_REQUEST),
        };
        let component = match self
            .runtime
            .component_for(&self.storage, &slug, route.component)
            .await
        {
            Ok(component) => component,
            Err(e) => {
                request_event!(tracing::Level::ERROR, served, error = %format!("{e:#}"), "component not available");
                return self.failure(&front, StatusCode::SERVICE_UNAVAILABLE, ErrorCode::Unknown);
            }
        };
        let guest_request = Request::from_parts(parts, Full::new(body));
        let context = RequestContext {
            tenant: front.tenant.clone(),
            component: route.component,
            caller,
            language: front.language,
            correlation_id: front.correlation_id.to_owned(),
        };
        match self
            .runtime
            .handle(&component, self.storage.clone(), context, guest_request)
            .await
        {
            Outcome::Response(response) => response.map(Full::new),
            Outcome::Trap(trap) => {
                request_event!(
                    tracing::Level::ERROR,
                    served,
                    fault = "guest",
                    error = ?trap,
                    "component failed"
                );
                self.failure(
                    &front,
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ErrorCode::Unknown,
                )
            }
            Outcome::Timeout => {
                request_event!(
                    tracing::Level::WARN,
                    served,
                    fault = "guest",
                    "component ran past its deadline"
                );
                self.failure(&front, StatusCode::SERVICE_UNAVAILABLE, ErrorCode::Timeout)
            }
        }
    }

    fn failure(&self, front: &Front<'_>, status: StatusCode, code: ErrorCode) -> Response<Body> {
        error(
            status,
            &ApiError::new(code),
            front.language,
            front.correlation_id,
        )
    }

    async fn token(
        &self,
        request: Request<Incoming>,
        cached: &CachedTenant,
        peer: SocketAddr,
    ) -> Response<Body> {
        let tenant = &cached.tenant;
        let authorization = request
            .headers()
            .get(AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .map(str::to_owned);
        let form = match Limited::new(request.into_body(), MAX_BODY).collect().await {
            Ok(body) => body.to_bytes(),
            Err(_) => return auth_failure(tenant, "", AuthError::InvalidRequest),
        };
        let issued = match TokenRequest::parse(&form, authorization.as_deref()) {
            Ok(parsed) => {
                auth::issue_token(&self.storage, &self.logins, cached, peer.ip(), parsed).await
            }
            Err(e) => Err(e),
        };
        match issued {
            Ok(token) => {
                let mut response = json(
                    StatusCode::OK,
                    &serde_json::json!({
                        "access_token": token,
                        "token_type": "bearer",
                        "expires_in": auth::TOKEN_LIFETIME_SECS,
                    }),
                );
                // RFC 6749 section 5.1.
                response
                    .headers_mut()
                    .insert("cache-control", HeaderValue::from_static("no-store"));
                response
            }
            Err(e) => auth_failure(tenant, "", e),
        }
    }
}

/// The answer to a refused or failed authentication: the token endpoint's RFC 6749 section 5.2
/// errors; for a bearer check, 401 with the RFC 6750 challenge for `host`, or 403, as the
/// contract and the tenant's `auth_failure_status` setting say; 503 when the host could not
/// decide (with `Retry-After` when it was too busy to verify a password in time).
fn auth_failure(tenant: &Tenant, host: &str, error: AuthError) -> Response<Body> {
    let status = match &error {
        AuthError::InvalidRequest | AuthError::UnsupportedGrantType => StatusCode::BAD_REQUEST,
        AuthError::InvalidClient => StatusCode::UNAUTHORIZED,
        AuthError::Throttled(_) => StatusCode::TOO_MANY_REQUESTS,
        AuthError::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
        AuthError::Forbidden => return empty(StatusCode::FORBIDDEN),
        AuthError::Unauthenticated { token_sent } => {
            return bearer_challenge(tenant, host, *token_sent);
        }
        AuthError::Storage(_)
        | AuthError::SigningKey(_)
        | AuthError::Signing(_)
        | AuthError::Verifying(_) => {
            tracing::error!(error = %error, "authenticating the caller");
            return empty(StatusCode::SERVICE_UNAVAILABLE);
        }
    };
    let code = error.oauth_code().unwrap_or_default();
    let mut response = json(status, &serde_json::json!({ "error": code }));
    if let AuthError::Throttled(seconds) | AuthError::Busy(seconds) = error {
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(seconds));
    }
    if status == StatusCode::UNAUTHORIZED {
        // RFC 6749 section 5.2: a 401 for client authentication carries a challenge.
        response.headers_mut().insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"rentald\""),
        );
    }
    response
}

/// 401 with the RFC 6750 challenge, or 403 where the tenant's `auth_failure_status` says so.
fn bearer_challenge(tenant: &Tenant, host: &str, token_sent: bool) -> Response<Body> {
    let always_403 = tenant
        .settings
        .get("auth_failure_status")
        .map(String::as_str)
        == Some("403");
    if always_403 {
        return empty(StatusCode::FORBIDDEN);
    }
    let mut challenge = format!(
        "Bearer authorization_uri=\"https://{host}/auth/token\", resource_id=\"https://{host}/api\""
    );
    if token_sent {
        challenge.push_str(", error=\"invalid_token\"");
    }
    let mut response = empty(StatusCode::UNAUTHORIZED);
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response
}

/// The value of the query parameter `name`, under the rule every component reads its own
/// parameters by ([`rental_domain::query`]).
fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    rental_domain::query::value(url::form_urlencoded::parse(query?.as_bytes()), name)
        .map(std::borrow::Cow::into_owned)
}
