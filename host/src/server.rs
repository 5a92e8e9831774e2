//! The HTTP front door: tenancy, routing, authentication, language, limits, then the component.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::header::{
    ALLOW, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HOST, RETRY_AFTER, WWW_AUTHENTICATE,
};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rental_domain::{ApiError, ErrorCode, ErrorResponse, Language};
use tokio::net::TcpListener;
use tracing::Instrument as _;

use crate::auth::{self, Denied, Throttle, TokenError, TokenRequest};
use crate::routes::{self, Access, Matched};
use crate::runtime::{Outcome, RequestContext, Runtime};
use crate::storage::Storage;
use crate::storage::admin::Tenant;
use crate::tenancy::{self, HostError};

/// Largest request body accepted.
pub const MAX_BODY: usize = 1 << 20;
pub const CORRELATION_HEADER: &str = "x-correlation-id";

pub type Body = Full<Bytes>;

/// Everything a request needs, shared by all connections.
pub struct App {
    pub storage: Storage,
    pub runtime: Runtime,
    pub base_domain: String,
    pub throttle: Throttle,
}

/// Accepts connections until the listener fails, serving HTTP/1.1 and HTTP/2 (prior knowledge)
/// on each.
pub async fn serve(app: Arc<App>, listener: TcpListener) -> anyhow::Result<()> {
    loop {
        let (stream, peer) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let app = app.clone();
                async move { Ok::<_, Infallible>(app.handle(req, peer).await) }
            });
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            if let Err(e) = builder
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(%peer, error = %e, "connection closed with an error");
            }
        });
    }
}

fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Body::default());
    *response.status_mut() = status;
    response
}

fn json(status: StatusCode, value: &impl serde::Serialize) -> Response<Body> {
    match serde_json::to_vec(value) {
        Ok(bytes) => {
            let mut response = Response::new(Body::from(bytes));
            *response.status_mut() = status;
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        }
        Err(_) => empty(StatusCode::INTERNAL_SERVER_ERROR),
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

impl App {
    async fn handle(&self, request: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
        let started = Instant::now();
        let correlation_id = uuid::Uuid::new_v4().simple().to_string();
        let span = tracing::info_span!(
            "request",
            id = %correlation_id,
            method = %request.method(),
            path = %request.uri().path(),
            tenant = tracing::field::Empty,
            component = tracing::field::Empty,
        );
        let mut response = self
            .route(request, &correlation_id)
            .instrument(span.clone())
            .await;
        if let Ok(value) = HeaderValue::from_str(&correlation_id) {
            response.headers_mut().insert(CORRELATION_HEADER, value);
        }
        span.in_scope(|| {
            tracing::info!(
                %peer,
                status = response.status().as_u16(),
                micros = started.elapsed().as_micros() as u64,
                "served"
            );
        });
        response
    }

    async fn route(&self, request: Request<Incoming>, correlation_id: &str) -> Response<Body> {
        match request.uri().path() {
            "/healthz" => return empty(StatusCode::OK),
            "/readyz" => {
                return empty(if self.storage.ping().await {
                    StatusCode::OK
                } else {
                    StatusCode::SERVICE_UNAVAILABLE
                });
            }
            _ => {}
        }
        let host = request
            .headers()
            .get(HOST)
            .and_then(|h| h.to_str().ok())
            .or_else(|| request.uri().authority().map(|a| a.as_str()));
        let slug = match tenancy::tenant_slug(host, &self.base_domain) {
            Ok(slug) => slug.to_owned(),
            Err(HostError::Missing | HostError::NotUnderBase) => {
                return empty(StatusCode::BAD_REQUEST);
            }
        };
        let tenant = match self.storage.tenant(&slug).await {
            Ok(Some(tenant)) if tenant.enabled => Arc::new(tenant),
            Ok(_) => return empty(StatusCode::NOT_FOUND),
            Err(e) => {
                tracing::error!(error = %e, "reading the tenant");
                return empty(StatusCode::SERVICE_UNAVAILABLE);
            }
        };
        tracing::Span::current().record("tenant", slug.as_str());

        if request.uri().path() == "/auth/token" {
            return if request.method() == Method::POST {
                self.token(request, &slug).await
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
        tracing::Span::current().record("component", route.component);

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
                match auth::authorize(&self.storage, &slug, authorization, permission).await {
                    Ok(Ok(caller)) => Some(caller),
                    Ok(Err(denied)) => {
                        return self.denied(&tenant, host.unwrap_or_default(), denied);
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "checking the bearer token");
                        return empty(StatusCode::SERVICE_UNAVAILABLE);
                    }
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
                        correlation_id,
                    );
                }
            },
        };
        let front = Front {
            correlation_id,
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
        let Some(component) = self.runtime.component_for(&slug, route.component) else {
            tracing::error!(component = route.component, "component not loaded");
            return self.failure(&front, StatusCode::SERVICE_UNAVAILABLE, ErrorCode::Unknown);
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
                // The span carries the id only when it is enabled; a fault names it anyway.
                tracing::error!(id = front.correlation_id, fault = "guest", error = ?trap, "component failed");
                self.failure(
                    &front,
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ErrorCode::Unknown,
                )
            }
            Outcome::Timeout => {
                tracing::warn!(
                    id = front.correlation_id,
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

    /// 401 with the RFC 6750 challenge, or 403, as the contract and the tenant's
    /// `auth_failure_status` setting say.
    fn denied(&self, tenant: &Tenant, host: &str, denied: Denied) -> Response<Body> {
        let always_403 = tenant
            .settings
            .get("auth_failure_status")
            .map(String::as_str)
            == Some("403");
        match denied {
            Denied::Forbidden => empty(StatusCode::FORBIDDEN),
            Denied::Unauthenticated { .. } if always_403 => empty(StatusCode::FORBIDDEN),
            Denied::Unauthenticated { token_sent } => {
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
        }
    }

    async fn token(&self, request: Request<Incoming>, tenant: &str) -> Response<Body> {
        let authorization = request
            .headers()
            .get(AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .map(str::to_owned);
        let form = match Limited::new(request.into_body(), MAX_BODY).collect().await {
            Ok(body) => body.to_bytes(),
            Err(_) => return token_error(TokenError::InvalidRequest),
        };
        let parsed = match TokenRequest::parse(&form, authorization.as_deref()) {
            Ok(parsed) => parsed,
            Err(e) => return token_error(e),
        };
        match auth::issue_token(&self.storage, &self.throttle, tenant, parsed).await {
            Ok(Ok(token)) => {
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
            Ok(Err(e)) => token_error(e),
            Err(e) => {
                tracing::error!(error = %e, "issuing a token");
                empty(StatusCode::SERVICE_UNAVAILABLE)
            }
        }
    }
}

/// RFC 6749 section 5.2 error answers.
fn token_error(error: TokenError) -> Response<Body> {
    let status = match error {
        TokenError::InvalidClient => StatusCode::UNAUTHORIZED,
        TokenError::Throttled(_) => StatusCode::TOO_MANY_REQUESTS,
        TokenError::InvalidRequest | TokenError::UnsupportedGrantType => StatusCode::BAD_REQUEST,
    };
    let mut response = json(status, &serde_json::json!({ "error": error.code() }));
    if let TokenError::Throttled(seconds) = error {
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(seconds));
    }
    if error == TokenError::InvalidClient {
        // RFC 6749 section 5.2: a 401 for client authentication carries a challenge.
        response.headers_mut().insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"rentald\""),
        );
    }
    response
}

/// The first value of a query parameter, percent-decoded.
fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    url::form_urlencoded::parse(query?.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}
