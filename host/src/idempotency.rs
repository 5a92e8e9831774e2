//! The front door's step for a write sent with an `Idempotency-Key` (docs/contract.md,
//! "Idempotency keys"): the same key with the same request gets the first answer again,
//! whether that request has been answered, is still being served, here or on another host, or
//! its host stopped after committing it; the same key with another request is refused.
//!
//! The key is claimed and the request served in a task of its own, so that a client that
//! hangs up (to retry after a timeout) neither leaves a claim that nobody serves nor stops the
//! request's writes and their answer from being committed together.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use rental_domain::{ApiError, ErrorCode, Language};
use rental_platform::routes::{Access, Route};
use tracing::Instrument as _;

use crate::app::App;
use crate::front::{Rejection, Served};
use crate::response::Body;
use crate::runtime::{Caller, Outcome, RequestContext, Serving};
use crate::storage::documents::DocTransaction;
use crate::storage::idempotency::{self, Answer, Claim, Claimed, KeyScope};

/// The request header naming a write's key.
pub const KEY_HEADER: &str = "idempotency-key";
/// The response header marking an answer sent again.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";

/// How often a request whose key another request is being served for looks again.
const POLL: Duration = Duration::from_millis(20);
/// A claim's lease beyond twice the request deadline: time for the commit of its answer.
const LEASE_MARGIN: Duration = Duration::from_secs(10);
/// When a client told the key is busy may try again, in seconds.
const BUSY_RETRY_SECS: u64 = 1;

/// How a keyed request ended: answered without running anything (sent again, or refused),
/// or served.
enum Once {
    Answered(Result<Response<Body>, Rejection>),
    Served(Outcome),
}

/// What claiming a key came to: the claim, or the answer without running anything.
enum Claiming {
    Claimed(Claim),
    Answered(Result<Response<Body>, Rejection>),
}

/// Why a key's request was not served.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The header is not a key: 400.
    Malformed,
    /// The key was used with another request: 422.
    Mismatch,
    /// Another request with the key is still being served: 409 with `Retry-After`.
    Running,
    /// The key's request committed but its answer was lost: 409.
    InDoubt,
}

impl Refusal {
    /// The front door's answer, in `language`.
    pub(crate) fn rejection(self, language: Language) -> Rejection {
        let field = "Idempotency-Key";
        let (status, error, retry_after) = match self {
            Self::Malformed => (
                StatusCode::BAD_REQUEST,
                ApiError::invalid_field(
                    field,
                    format!(
                        "must be 1 to {} visible ASCII characters, sent once",
                        idempotency::MAX_KEY_LEN
                    ),
                ),
                None,
            ),
            Self::Mismatch => (
                StatusCode::UNPROCESSABLE_ENTITY,
                ApiError::invalid_field(field, "was used with another request"),
                None,
            ),
            Self::Running => (
                StatusCode::CONFLICT,
                ApiError::new(ErrorCode::Timeout)
                    .with_detail("a request with this Idempotency-Key is still being served"),
                Some(BUSY_RETRY_SECS),
            ),
            Self::InDoubt => (
                StatusCode::CONFLICT,
                ApiError::new(ErrorCode::Unknown).with_detail(
                    "the request with this Idempotency-Key was committed, but its answer was \
                     lost: read the booking to see what it did",
                ),
                None,
            ),
        };
        Rejection::Api {
            status,
            error,
            language,
            retry_after,
        }
    }
}

/// The key a request to `route` names, scoped to its tenant and caller: none on a route that
/// does not write, or when the request sends none.
pub(crate) fn key(
    route: &Route,
    headers: &HeaderMap,
    tenant: &str,
    caller: Option<&Caller>,
) -> Result<Option<KeyScope>, Refusal> {
    let writes = matches!(route.access, Access::Permission(p) if p.ends_with(":write"));
    let (true, Some(caller)) = (writes, caller) else {
        return Ok(None);
    };
    let mut sent = headers.get_all(KEY_HEADER).iter();
    let Some(value) = sent.next() else {
        return Ok(None);
    };
    let bytes = value.as_bytes();
    let valid = sent.next().is_none()
        && (1..=idempotency::MAX_KEY_LEN).contains(&bytes.len())
        && bytes.iter().all(|b| (0x21..=0x7e).contains(b));
    if !valid {
        return Err(Refusal::Malformed);
    }
    Ok(Some(KeyScope {
        tenant: tenant.to_owned(),
        user_id: caller.user_id,
        key: String::from_utf8_lossy(bytes).into_owned(),
    }))
}

/// What a key keeps of an answer: one the client may be given again. A server error is not
/// kept: nothing it did lasts, and the client may try again.
fn answer(response: &Response<Bytes>) -> Option<Answer> {
    if response.status().is_server_error() {
        return None;
    }
    Some(Answer {
        status: response.status().as_u16(),
        content_type: response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned(),
        body: response.body().to_vec(),
    })
}

/// An answer sent again.
fn replay(answer: Answer) -> Response<Body> {
    let mut response = Response::new(Body::from(answer.body));
    *response.status_mut() =
        StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&answer.content_type)
        && !answer.content_type.is_empty()
    {
        headers.insert(CONTENT_TYPE, value);
    }
    headers.insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
    response
}

impl App {
    /// Serves a write sent with the key `scope`, once.
    pub(crate) async fn serve_once(
        self: &Arc<Self>,
        served: &Served,
        component: Serving,
        context: RequestContext,
        request: Request<Bytes>,
        scope: KeyScope,
    ) -> Result<Response<Body>, Rejection> {
        let language = context.language;
        // From the claim on, the request goes on without its client: a claim committed and
        // then dropped with a client that hung up would keep every retry waiting its lease.
        let app = self.clone();
        let once = tokio::spawn(
            async move {
                let claim = match app.claim(&scope, &request, language).await {
                    Claiming::Claimed(claim) => claim,
                    Claiming::Answered(answered) => return Once::Answered(answered),
                };
                let (outcome, held) = app
                    .runtime
                    .handle_claimed(
                        &component,
                        app.storage.clone(),
                        context,
                        request,
                        claim.clone(),
                    )
                    .await;
                Once::Served(app.settle(&claim, outcome, held).await)
            }
            .in_current_span(),
        );
        match once.await {
            Ok(Once::Answered(answered)) => answered,
            Ok(Once::Served(outcome)) => self.component_outcome(served, language, outcome),
            Err(join) => self.component_outcome(served, language, Outcome::Trap(join.into())),
        }
    }

    /// The claim of `scope`'s key for `request`, waiting up to the request deadline for
    /// another request with the key to be answered; or the answer without running anything.
    async fn claim(
        &self,
        scope: &KeyScope,
        request: &Request<Bytes>,
        language: Language,
    ) -> Claiming {
        let fingerprint = idempotency::fingerprint(
            request.method().as_str(),
            request
                .uri()
                .path_and_query()
                .map_or("/", |target| target.as_str()),
            request.body(),
        );
        let deadline = self.runtime.deadline();
        let lease = deadline * 2 + LEASE_MARGIN;
        let wait_until = Instant::now() + deadline;
        let refused = |refusal: Refusal| Claiming::Answered(Err(refusal.rejection(language)));
        loop {
            match self.storage.claim_key(scope, &fingerprint, lease).await {
                Ok(Claimed::Serve(claim)) => return Claiming::Claimed(claim),
                Ok(Claimed::Answered(answer)) => return Claiming::Answered(Ok(replay(answer))),
                Ok(Claimed::Mismatch) => return refused(Refusal::Mismatch),
                Ok(Claimed::InDoubt) => return refused(Refusal::InDoubt),
                Ok(Claimed::Running) if Instant::now() < wait_until => {
                    tokio::time::sleep(POLL).await;
                }
                Ok(Claimed::Running) => return refused(Refusal::Running),
                Err(e) => {
                    tracing::error!(error = %e, "claiming an idempotency key");
                    return Claiming::Answered(Err(Rejection::api(
                        StatusCode::SERVICE_UNAVAILABLE,
                        ErrorCode::Unknown,
                        language,
                    )));
                }
            }
        }
    }

    /// Commits the request's held write with its answer, or gives the claim up when there is
    /// no answer to keep; the outcome to send.
    async fn settle(
        &self,
        claim: &Claim,
        outcome: Outcome,
        held: Option<DocTransaction>,
    ) -> Outcome {
        let kept = match &outcome {
            Outcome::Response(response) => answer(response),
            _ => None,
        };
        let Some(kept) = kept else {
            drop(held); // rolls back
            if let Err(e) = self.storage.release_key(claim).await {
                tracing::warn!(error = %e, "giving up an idempotency key's claim");
            }
            return outcome;
        };
        let recorded = match held {
            Some(mut tx) => match tx.record_answer(claim, &kept).await {
                Ok(true) => tx.commit().await.map(|()| true),
                other => other,
            },
            None => self.storage.answer_key(claim, &kept).await,
        };
        match recorded {
            Ok(true) => outcome,
            Ok(false) => Outcome::Trap(anyhow::anyhow!(
                "the idempotency key's claim ran out before its answer was recorded; \
                 nothing was committed"
            )),
            Err(e) => {
                if let Err(e) = self.storage.release_key(claim).await {
                    tracing::warn!(error = %e, "giving up an idempotency key's claim");
                }
                Outcome::Trap(anyhow::Error::new(e).context("committing a write with its answer"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope_of(headers: &[(&'static str, &[u8])]) -> Result<Option<KeyScope>, Refusal> {
        let route = rental_platform::routes::ROUTES
            .iter()
            .find(|r| r.path == "/api/booking/book")
            .unwrap();
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(*name, HeaderValue::from_bytes(value).unwrap());
        }
        let caller = Caller {
            user_id: 7,
            user_name: "api".to_owned(),
            permissions: Vec::new(),
        };
        key(route, &map, "demo", Some(&caller))
    }

    #[test]
    fn a_key_is_one_header_of_visible_ascii_up_to_255_bytes() {
        assert!(scope_of(&[]).unwrap().is_none());
        let scope = scope_of(&[(KEY_HEADER, b"retry-1")]).unwrap().unwrap();
        assert_eq!((scope.tenant.as_str(), scope.user_id), ("demo", 7));
        assert_eq!(scope.key, "retry-1");
        assert!(scope_of(&[(KEY_HEADER, &[b'k'; 255])]).unwrap().is_some());
        for bad in [
            &b""[..],
            &[b'k'; 256],
            b"two words",
            b"tab\there",
            b"\xc3\xa9",
        ] {
            assert!(
                matches!(scope_of(&[(KEY_HEADER, bad)]), Err(Refusal::Malformed)),
                "{bad:?}"
            );
        }
        assert!(matches!(
            scope_of(&[(KEY_HEADER, b"a"), (KEY_HEADER, b"a")]),
            Err(Refusal::Malformed)
        ));
    }

    #[test]
    fn only_writes_take_a_key() {
        let mut map = HeaderMap::new();
        map.insert(KEY_HEADER, HeaderValue::from_static("k"));
        let caller = Caller {
            user_id: 7,
            user_name: "api".to_owned(),
            permissions: Vec::new(),
        };
        for route in rental_platform::routes::ROUTES {
            let keyed = key(route, &map, "demo", Some(&caller)).unwrap().is_some();
            let write = route.method != http::Method::GET && route.path != "/api/booking/price";
            let anonymous = matches!(route.access, Access::Anonymous);
            assert_eq!(
                keyed,
                write && !anonymous,
                "{} {}",
                route.method,
                route.path
            );
        }
    }

    #[test]
    fn server_errors_are_not_kept_and_kept_answers_are_replayed_as_sent() {
        let mut response = Response::new(Bytes::from_static(b"{\"Id\":1}"));
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let kept = answer(&response).unwrap();
        let again = replay(kept.clone());
        assert_eq!(again.status(), StatusCode::OK);
        assert_eq!(again.headers()[CONTENT_TYPE], "application/json");
        assert_eq!(again.headers()[REPLAYED_HEADER], "true");
        *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        assert_eq!(answer(&response), None);
        *response.status_mut() = StatusCode::BAD_REQUEST;
        assert_eq!(answer(&response).map(|a| a.status), Some(400));
    }
}
