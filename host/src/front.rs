//! The request path in front of the components: a chain of small steps (tenant, route, caller,
//! language, body, component), each answering `Ok` to go on or a typed [`Rejection`], which
//! [`Rejection::response`] turns into the answer, in one place.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::header::{
    AUTHORIZATION, CONNECTION, CONTENT_LENGTH, HOST, RETRY_AFTER, WWW_AUTHENTICATE,
};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;
use rental_domain::{ApiError, ErrorCode, ErrorResponse, Language};
use rental_platform::{CORRELATION_HEADER, Component as PlatformComponent};
use tracing::Instrument as _;

use crate::app::App;
use crate::auth::{self, AuthError, TokenRequest};
use crate::idempotency;
use crate::metrics;
use crate::probes;
use crate::response::{Body, empty, json, method_not_allowed};
use crate::routes::{self, Access, Matched, Route};
use crate::runtime::{Caller, Outcome, RequestContext};
use crate::storage::cache::CachedTenant;
use crate::storage::idempotency::KeyScope;
use crate::storage::tenants::Tenant;
use crate::tenancy::{self, HostError};

/// Largest request body accepted.
pub const MAX_BODY: usize = 1 << 20;
/// Largest body of a request nobody has authenticated yet: the token endpoint's form and the
/// bank webhooks' notifications, both a few hundred bytes.
const MAX_ANONYMOUS_BODY: usize = 64 << 10;
/// When a client refused for its tenant's running components may try again, in seconds.
const BUSY_RETRY_SECS: u64 = 1;

/// Why the front door answered a request itself, instead of a component.
#[derive(Debug)]
pub(crate) enum Rejection {
    /// Two Host headers, or a host naming no tenant under the base domain: 400.
    BadHost,
    /// No such tenant (or a disabled one), or no such path: 404.
    NotFound,
    /// The path is served with other methods: 405 with `Allow`.
    WrongMethod(Vec<Method>),
    /// The tenant could not be read: 503.
    TenantUnavailable,
    /// Authentication refused or failed, on `tenant`'s host `host`.
    Auth {
        error: AuthError,
        tenant: Arc<Tenant>,
        host: String,
    },
    /// The body is larger than its route allows ([`MAX_BODY`], [`MAX_ANONYMOUS_BODY`]): 413.
    TooLarge,
    /// The body could not be read: 400.
    BadBody,
    /// The body did not arrive within the body timeout: 408, and the connection closed.
    SlowBody,
    /// The tenant has as many components running as it may: 503 with `Retry-After` and the
    /// body of ErrorCode 499 (Timeout), in `language`.
    Busy { language: Language },
    /// An error of the interface's own, its body in `language`: an unsupported `language`, a
    /// component that could not be loaded, failed or ran past its deadline, a write's
    /// `Idempotency-Key` refused; with `Retry-After` when the client may try again later.
    Api {
        status: StatusCode,
        error: ApiError,
        language: Language,
        retry_after: Option<u64>,
    },
}

impl Rejection {
    fn auth(error: AuthError, tenant: &Arc<Tenant>, host: &str) -> Self {
        Self::Auth {
            error,
            tenant: tenant.clone(),
            host: host.to_owned(),
        }
    }

    /// An error of the interface's own, with its code's message.
    pub(crate) fn api(status: StatusCode, code: ErrorCode, language: Language) -> Self {
        Self::Api {
            status,
            error: ApiError::new(code),
            language,
            retry_after: None,
        }
    }

    /// The answer; an error body carries the request's correlation id.
    pub(crate) fn response(self, correlation_id: &str) -> Response<Body> {
        match self {
            Self::BadHost | Self::BadBody => empty(StatusCode::BAD_REQUEST),
            Self::NotFound => empty(StatusCode::NOT_FOUND),
            Self::WrongMethod(allowed) => method_not_allowed(&allowed),
            Self::TenantUnavailable => empty(StatusCode::SERVICE_UNAVAILABLE),
            Self::Auth {
                error,
                tenant,
                host,
            } => auth_failure(&tenant, &host, error),
            Self::TooLarge => empty(StatusCode::PAYLOAD_TOO_LARGE),
            Self::SlowBody => {
                let mut response = empty(StatusCode::REQUEST_TIMEOUT);
                response
                    .headers_mut()
                    .insert(CONNECTION, HeaderValue::from_static("close"));
                response
            }
            Self::Busy { language } => Self::Api {
                status: StatusCode::SERVICE_UNAVAILABLE,
                error: ApiError::new(ErrorCode::Timeout),
                language,
                retry_after: Some(BUSY_RETRY_SECS),
            }
            .response(correlation_id),
            Self::Api {
                status,
                error,
                language,
                retry_after,
            } => {
                let mut response = json(
                    status,
                    &ErrorResponse::new(&error, language, Some(correlation_id.to_owned())),
                );
                if let Some(seconds) = retry_after {
                    response
                        .headers_mut()
                        .insert(RETRY_AFTER, HeaderValue::from(seconds));
                }
                response
            }
        }
    }
}

/// What the front door learnt about a request: its access line's and its metrics' labels.
pub(crate) struct Served {
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
    /// Answers one request, and logs and counts it.
    pub(crate) async fn handle(
        self: &Arc<Self>,
        request: Request<Incoming>,
        peer: SocketAddr,
    ) -> Response<Body> {
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
        stamp_correlation_id(&mut response, &served.correlation_id);
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
        self: &Arc<Self>,
        request: Request<Incoming>,
        peer: SocketAddr,
        served: &mut Served,
    ) -> Response<Body> {
        match self.front(request, peer, served).await {
            Ok(response) => response,
            Err(rejection) => rejection.response(&served.correlation_id),
        }
    }

    /// The request's way through the front door: the host's own paths, then the tenant's.
    async fn front(
        self: &Arc<Self>,
        request: Request<Incoming>,
        peer: SocketAddr,
        served: &mut Served,
    ) -> Result<Response<Body>, Rejection> {
        let path = request.uri().path();
        if let Some(response) = probes::probe(self, request.method(), path).await {
            served.set_endpoint(path.to_owned(), None);
            return Ok(response);
        }
        if let Some(response) = self.api_docs.answer(request.method(), path) {
            served.set_endpoint(path.to_owned(), None);
            return Ok(response);
        }
        let host = host(&request)?.to_owned();
        let cached = self.tenant(&host, served).await?;
        if request.uri().path() == routes::TOKEN_PATH {
            if request.method() != Method::POST {
                return Err(Rejection::WrongMethod(vec![Method::POST]));
            }
            served.set_endpoint(format!("{} {}", Method::POST, routes::TOKEN_PATH), None);
            return self.token(request, &cached, peer).await;
        }
        let route = route(request.method(), request.uri().path())?;
        served.set_endpoint(
            format!("{} {}", route.method, route.path),
            Some(route.component),
        );
        let caller = self.caller(&request, &cached, route.access, &host).await?;
        let language = language(request.uri().query(), &cached.tenant)?;
        let key = idempotency::key(
            route,
            request.headers(),
            &cached.tenant.slug,
            caller.as_ref(),
        )
        .map_err(|refusal| refusal.rejection(language))?;
        let (parts, body) = request.into_parts();
        let body = self
            .read_body(&parts.headers, body, body_limit(route.access))
            .await?;
        let context = RequestContext {
            tenant: cached.tenant.clone(),
            component: route.component,
            caller,
            language,
            correlation_id: served.correlation_id.clone(),
        };
        self.component(served, context, parts, body, key).await
    }

    /// The tenant the host names, when it exists and is enabled.
    async fn tenant(
        &self,
        host: &str,
        served: &mut Served,
    ) -> Result<Arc<CachedTenant>, Rejection> {
        let slug = match tenancy::tenant_slug(Some(host), &self.base_domain) {
            Ok(slug) => slug,
            Err(HostError::Missing | HostError::NotUnderBase) => return Err(Rejection::BadHost),
        };
        match self.storage.cached_tenant(&slug).await {
            Ok(Some(cached)) if cached.tenant.enabled => {
                served.set_tenant(&slug);
                Ok(cached)
            }
            Ok(_) => Err(Rejection::NotFound),
            Err(e) => {
                tracing::error!(error = %e, "reading the tenant");
                Err(Rejection::TenantUnavailable)
            }
        }
    }

    /// The API user calling a route that needs a permission.
    async fn caller(
        &self,
        request: &Request<Incoming>,
        cached: &CachedTenant,
        access: Access,
        host: &str,
    ) -> Result<Option<Caller>, Rejection> {
        let Access::Permission(permission) = access else {
            return Ok(None);
        };
        let authorization = request
            .headers()
            .get(AUTHORIZATION)
            .and_then(|h| h.to_str().ok());
        auth::authorize(&self.storage, cached, authorization, permission)
            .await
            .map(Some)
            .map_err(|error| Rejection::auth(error, &cached.tenant, host))
    }

    /// Runs the component serving the request; once for its idempotency key, when it has one.
    async fn component(
        self: &Arc<Self>,
        served: &Served,
        context: RequestContext,
        parts: Parts,
        body: Bytes,
        key: Option<KeyScope>,
    ) -> Result<Response<Body>, Rejection> {
        let language = context.language;
        let component = match self
            .runtime
            .component_for(&self.storage, &context.tenant.slug, context.component)
            .await
        {
            Ok(component) => component,
            Err(e) => {
                request_event!(tracing::Level::ERROR, served, error = %format!("{e:#}"), "component not available");
                return Err(Rejection::api(
                    StatusCode::SERVICE_UNAVAILABLE,
                    ErrorCode::Unknown,
                    language,
                ));
            }
        };
        let guest_request = Request::from_parts(parts, body);
        if let Some(key) = key {
            return self
                .serve_once(served, component, context, guest_request, key)
                .await;
        }
        let outcome = self
            .runtime
            .handle(&component, self.storage.clone(), context, guest_request)
            .await;
        self.component_outcome(served, language, outcome)
    }

    /// The answer to a component's outcome, logged when it is not the component's own.
    pub(crate) fn component_outcome(
        &self,
        served: &Served,
        language: Language,
        outcome: Outcome,
    ) -> Result<Response<Body>, Rejection> {
        let failed = |status, code| Rejection::api(status, code, language);
        match outcome {
            Outcome::Response(response) => Ok(response.map(Full::new)),
            Outcome::Trap(trap) => {
                request_event!(
                    tracing::Level::ERROR,
                    served,
                    fault = "guest",
                    error = ?trap,
                    "component failed"
                );
                Err(failed(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ErrorCode::Unknown,
                ))
            }
            Outcome::Busy => {
                request_event!(
                    tracing::Level::WARN,
                    served,
                    fault = "tenant",
                    "the tenant's components are all running"
                );
                Err(Rejection::Busy { language })
            }
            Outcome::Timeout => {
                request_event!(
                    tracing::Level::WARN,
                    served,
                    fault = "guest",
                    deadline_ms = self.runtime.deadline().as_millis(),
                    "component ran past its deadline (--request-timeout-ms)"
                );
                Err(failed(StatusCode::SERVICE_UNAVAILABLE, ErrorCode::Timeout))
            }
        }
    }

    /// The whole body, up to `largest` bytes and within the body timeout.
    async fn read_body(
        &self,
        headers: &HeaderMap,
        body: Incoming,
        largest: usize,
    ) -> Result<Bytes, Rejection> {
        let declared_too_large = headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
            .is_some_and(|n| n > largest as u64);
        if declared_too_large {
            return Err(Rejection::TooLarge);
        }
        let collect = Limited::new(body, largest).collect();
        match tokio::time::timeout(self.connections.body_timeout, collect).await {
            Ok(Ok(body)) => Ok(body.to_bytes()),
            Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(Rejection::TooLarge),
            Ok(Err(_)) => Err(Rejection::BadBody),
            Err(_) => Err(Rejection::SlowBody),
        }
    }

    /// The token endpoint: a client-credentials token for an API user of the tenant.
    async fn token(
        &self,
        request: Request<Incoming>,
        cached: &CachedTenant,
        peer: SocketAddr,
    ) -> Result<Response<Body>, Rejection> {
        let refused = |error| Rejection::auth(error, &cached.tenant, "");
        let (parts, body) = request.into_parts();
        let form = self
            .read_body(&parts.headers, body, MAX_ANONYMOUS_BODY)
            .await?;
        let authorization = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|h| h.to_str().ok());
        let parsed = TokenRequest::parse(&form, authorization).map_err(refused)?;
        let token = auth::issue_token(&self.storage, &self.logins, cached, peer.ip(), parsed)
            .await
            .map_err(refused)?;
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
        Ok(response)
    }
}

/// The host the request names: the request target's authority (absolute form, HTTP/2's
/// `:authority`) wins over Host (RFC 9112 section 3.2.2); two Host headers are a bad request.
fn host(request: &Request<Incoming>) -> Result<&str, Rejection> {
    if request.headers().get_all(HOST).iter().nth(1).is_some() {
        return Err(Rejection::BadHost);
    }
    request
        .uri()
        .authority()
        .map(|authority| authority.as_str())
        .or_else(|| request.headers().get(HOST).and_then(|h| h.to_str().ok()))
        .ok_or(Rejection::BadHost)
}

/// Marks a response with its request's correlation id.
pub(crate) fn stamp_correlation_id<B>(response: &mut Response<B>, correlation_id: &str) {
    if let Ok(value) = HeaderValue::from_str(correlation_id) {
        response.headers_mut().insert(CORRELATION_HEADER, value);
    }
}

/// The largest body a route accepts: a few kilobytes before anyone is authenticated.
pub(crate) fn body_limit(access: Access) -> usize {
    match access {
        Access::Anonymous => MAX_ANONYMOUS_BODY,
        Access::Permission(_) => MAX_BODY,
    }
}

/// The platform route of a request's method and path.
pub(crate) fn route(method: &Method, path: &str) -> Result<&'static Route, Rejection> {
    match routes::find(method, path) {
        Matched::Route(route) => Ok(route),
        Matched::NotFound => Err(Rejection::NotFound),
        Matched::WrongMethod(allowed) => Err(Rejection::WrongMethod(allowed)),
    }
}

/// The response language: the `language` parameter of the request's query, else the tenant's
/// default.
pub(crate) fn language(query: Option<&str>, tenant: &Tenant) -> Result<Language, Rejection> {
    let default = tenant
        .settings
        .get("default_language")
        .and_then(|l| Language::parse(l))
        .unwrap_or(Language::En);
    match query_param(query, "language") {
        None => Ok(default),
        Some(value) => Language::parse(&value).ok_or(Rejection::api(
            StatusCode::BAD_REQUEST,
            ErrorCode::LanguageNotSupported,
            default,
        )),
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
