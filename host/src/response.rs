//! The answers the host writes itself: the body type and its shapes, empty, JSON and 405.
//! A leaf: everything that answers requests uses it, and it uses none of them.

use bytes::Bytes;
use http::header::{ALLOW, CONTENT_TYPE};
use http::{HeaderValue, Method, Response, StatusCode};
use http_body_util::Full;

pub type Body = Full<Bytes>;

/// A response with `status` and no body.
pub fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Body::default());
    *response.status_mut() = status;
    response
}

/// A JSON response with `status`.
pub fn json(status: StatusCode, value: &impl serde::Serialize) -> Response<Body> {
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

/// 405 with `Allow` naming the methods the path is served with.
pub fn method_not_allowed(allowed: &[Method]) -> Response<Body> {
    let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
    if let Ok(value) = HeaderValue::from_str(&rental_platform::routes::allow_value(allowed)) {
        response.headers_mut().insert(ALLOW, value);
    }
    response
}
