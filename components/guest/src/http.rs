//! The HTTP side of a component: what a handler receives and returns, and the export of a
//! [`Handler`] as the component's `wasi:http/incoming-handler`.
//!
//! The host has already authenticated the caller, resolved the tenant, checked permissions,
//! validated the language and answered wrong methods before the component runs; a handler
//! only routes by path and does its job. Under Spin (docs/spin.md) those checks are absent:
//! the export answers a wrong method on a path of the platform's route table with 405 and
//! `Allow` itself, as `rentald` does, and sets the response's [`CORRELATION_HEADER`].

use std::io::{Read as _, Write as _};
use std::marker::PhantomData;

use serde::Serialize;
use wasip2::exports::http::incoming_handler::Guest;
use wasip2::http::types::{
    Fields, IncomingBody, IncomingRequest, Method, OutgoingBody, OutgoingResponse, ResponseOutparam,
};

use crate::bindings::responder_export::exports::rental::platform::responder::{
    Guest as ResponderGuest, Part as WholePart, Request as WholeRequest, Response as WholeResponse,
};
use crate::error::Error;
use crate::store::KeptBody;

/// Media type of every JSON body the components send.
pub const JSON_CONTENT_TYPE: &str = "application/json; charset=utf-8";

/// A request as a handler sees it: fully read, query decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    /// The method in upper case, e.g. `"GET"`.
    pub method: String,
    /// The path without the query string, e.g. `"/api/bookings/list"`.
    pub path: String,
    /// The query parameters in order, names and values percent-decoded (`+` is a space).
    pub query: Vec<(String, String)>,
    /// The header fields in order; names in lower case as `wasi:http` gives them.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The request body.
    pub body: Vec<u8>,
}

impl Request {
    /// A request without headers or body, from a method and a path with an optional query
    /// string (`/api/cars?offset=0&limit=10`).
    pub fn new(method: impl Into<String>, path_with_query: &str) -> Self {
        let (path, query) = path_with_query
            .split_once('?')
            .unwrap_or((path_with_query, ""));
        Self {
            method: method.into(),
            path: path.to_owned(),
            query: parse_query(query),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// The value of the query parameter `name`, under the platform's one rule
    /// ([`rental_domain::query`]): names are case-sensitive, the last occurrence decides and
    /// an empty value is absent.
    pub fn query(&self, name: &str) -> Option<&str> {
        rental_domain::query::value(
            self.query
                .iter()
                .map(|(key, value)| (key.as_str(), value.as_str())),
            name,
        )
    }

    /// The first value of the header `name` (case-insensitive), when it is valid UTF-8.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .and_then(|(_, value)| std::str::from_utf8(value).ok())
    }

    /// Reads a `wasi:http` request, body included.
    fn read(request: &IncomingRequest) -> Result<Self, Error> {
        let path_with_query = request.path_with_query().unwrap_or_else(|| "/".to_owned());
        let mut read = Self::new(method_name(request.method()), &path_with_query);
        read.headers = request.headers().entries();
        let body = request
            .consume()
            .map_err(|()| Error::internal("the request body was already consumed"))?;
        {
            let mut stream = body
                .stream()
                .map_err(|()| Error::internal("the request body stream was already taken"))?;
            stream
                .read_to_end(&mut read.body)
                .map_err(|error| Error::internal(format!("reading the request body: {error}")))?;
        }
        // The stream (a child of the body) is dropped above; trailers are of no interest.
        drop(IncomingBody::finish(body));
        Ok(read)
    }
}

/// A response as a handler returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status code.
    pub status: u16,
    /// The header fields to send, in order.
    pub headers: Vec<(String, String)>,
    /// The response body.
    pub body: Body,
}

/// A response body: the bytes the handler wrote, and bodies the store kept in the host
/// ([`Transaction::scan_view_kept`](crate::store::Transaction::scan_view_kept)), in order.
/// `rentald` puts a kept body into the answer as it is, without it passing through the
/// component; under Spin the export copies it in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Body {
    parts: Vec<Part>,
}

/// A part of a [`Body`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Bytes the handler wrote.
    Bytes(Vec<u8>),
    /// A body the store kept.
    Kept(KeptBody),
}

impl Body {
    /// Appends bytes, to the last part when it is bytes too.
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        match self.parts.last_mut() {
            Some(Part::Bytes(last)) => last.extend_from_slice(bytes),
            _ => self.parts.push(Part::Bytes(bytes.to_vec())),
        }
    }

    /// Appends a body the store kept.
    pub fn push_kept(&mut self, kept: KeptBody) {
        self.parts.push(Part::Kept(kept));
    }

    /// Whether nothing was written and nothing kept.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The whole body as bytes, the kept bodies read from the host. Call it while serving the
    /// request that kept them (in a test, [`TestHost::call`](crate::testing::TestHost::call)
    /// returns bodies read already).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        for part in &self.parts {
            match part {
                Part::Bytes(written) => bytes.extend_from_slice(written),
                Part::Kept(kept) => bytes.extend_from_slice(kept.read().as_bytes()),
            }
        }
        bytes
    }

    /// The whole body as bytes, as [`Self::to_bytes`], without a copy when it is bytes only.
    pub fn into_bytes(mut self) -> Vec<u8> {
        if let [Part::Bytes(_)] = self.parts.as_slice()
            && let Some(Part::Bytes(only)) = self.parts.pop()
        {
            return only;
        }
        self.to_bytes()
    }
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Self {
        let parts = if bytes.is_empty() {
            Vec::new()
        } else {
            vec![Part::Bytes(bytes)]
        };
        Self { parts }
    }
}

impl From<String> for Body {
    fn from(text: String) -> Self {
        text.into_bytes().into()
    }
}

impl From<&str> for Body {
    fn from(text: &str) -> Self {
        text.as_bytes().to_vec().into()
    }
}

impl From<&[u8]> for Body {
    fn from(bytes: &[u8]) -> Self {
        bytes.to_vec().into()
    }
}

impl Response {
    /// A response with this status, no headers and no body.
    pub fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Body::default(),
        }
    }

    /// 404 with no body: the path is not served by this component.
    pub fn not_found() -> Self {
        Self::new(404)
    }

    /// The same response with one more header field.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same response with this body.
    #[must_use]
    pub fn with_body(mut self, body: impl Into<Body>) -> Self {
        self.body = body.into();
        self
    }

    /// The `wasi:http` response head: status and header fields.
    fn head(&self) -> Result<OutgoingResponse, Error> {
        let fields: Vec<(String, Vec<u8>)> = self
            .headers
            .iter()
            .map(|(name, value)| (name.clone(), value.clone().into_bytes()))
            .collect();
        let headers = Fields::from_list(&fields)
            .map_err(|error| Error::internal(format!("invalid response header: {error:?}")))?;
        let head = OutgoingResponse::new(headers);
        head.set_status_code(self.status)
            .map_err(|()| Error::internal(format!("invalid response status {}", self.status)))?;
        Ok(head)
    }

    /// Sends the response through `out`.
    ///
    /// Everything that can fail on the component's side is checked before the response is
    /// committed; an invalid head becomes the 500 error body. A failure while streaming the
    /// body leaves it unfinished, which the host reports as an error, never as a success.
    fn send(self, out: ResponseOutparam) {
        let (head, body) = match self.head() {
            Ok(head) => (head, self.body.into_bytes()),
            Err(error) => {
                let fallback = error.into_response();
                match fallback.head() {
                    Ok(head) => (head, fallback.body.into_bytes()),
                    // Leaving `out` unset makes the host answer with its own error.
                    Err(_) => return,
                }
            }
        };
        // `body` can only fail when called twice.
        let Ok(outgoing) = head.body() else {
            return;
        };
        ResponseOutparam::set(out, Ok(head));
        let written = outgoing.write().is_ok_and(|mut stream| {
            stream
                .write_all(&body)
                .and_then(|()| std::io::Write::flush(&mut stream))
                .is_ok()
        });
        if written {
            // A failure to finish means the client went away: nobody is left to tell.
            let _ = OutgoingBody::finish(outgoing, None);
        }
    }
}

/// Serialises `value` as the JSON body of a response with `status`.
///
/// The models of the API always serialise; if one ever does not, the answer is the 500 error
/// body (ErrorCode 99), not a truncated success.
pub fn json<T: Serialize + ?Sized>(status: u16, value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => json_text(status, body),
        Err(error) => {
            Error::internal(format!("serialising the response body: {error}")).into_response()
        }
    }
}

/// A response with `status` whose body is `body`, already JSON.
pub fn json_text(status: u16, body: impl Into<Body>) -> Response {
    Response::new(status)
        .with_header("content-type", JSON_CONTENT_TYPE)
        .with_body(body)
}

/// A component's request handler: everything a component writes besides its logic.
///
/// Export it with [`export_handler!`](crate::export_handler). A panic inside `handle` traps
/// the component before any response is sent; the host answers 500 with ErrorCode 99.
pub trait Handler {
    /// Answers one request; an error is answered as [`Response::from`] maps it.
    fn handle(request: Request) -> Result<Response, Error>;
}

/// Adapts a [`Handler`] to the `wasi:http/incoming-handler` export; used by
/// [`export_handler!`](crate::export_handler).
#[doc(hidden)]
pub struct Export<H>(PhantomData<H>);

impl<H: Handler> Guest for Export<H> {
    fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
        let response = match Request::read(&request) {
            Ok(request) => respond::<H>(request),
            Err(error) => with_correlation_id(Response::from(error)),
        };
        response.send(response_out);
    }
}

/// The platform's entry point, `rental:platform/responder`: the same answer as the
/// `wasi:http` export, from a request the host has read whole and as a response returned
/// whole, its kept bodies named rather than copied. An invalid response head (a header name
/// or value, a status) is the host's to refuse.
impl<H: Handler> ResponderGuest for Export<H> {
    fn handle(request: WholeRequest) -> WholeResponse {
        let mut read = Request::new(request.method, &request.path_with_query);
        read.headers = request.headers;
        read.body = request.body;
        let response = respond::<H>(read);
        WholeResponse {
            status: response.status,
            headers: response.headers,
            body: response
                .body
                .parts
                .into_iter()
                .map(|part| match part {
                    Part::Bytes(bytes) => WholePart::Bytes(bytes),
                    Part::Kept(kept) => WholePart::Kept(kept.number()),
                })
                .collect(),
        }
    }
}

/// The response the component sends for `request`: `H`'s answer (or its error's body), with
/// the correlation id.
pub(crate) fn respond<H: Handler>(request: Request) -> Response {
    with_correlation_id(answer::<H>(request).unwrap_or_else(Response::from))
}

/// `H`'s answer to `request`, or 405 with `Allow` when the platform serves its path with
/// other methods only.
fn answer<H: Handler>(request: Request) -> Result<Response, Error> {
    match rental_platform::routes::allowed_instead(&request.method, &request.path) {
        Some(allow) => Ok(Response::new(405).with_header("allow", allow)),
        None => H::handle(request),
    }
}

pub use rental_platform::CORRELATION_HEADER;
pub use rental_platform::routes::path_id;

/// `response` with the request's correlation id in [`CORRELATION_HEADER`] unless the handler
/// set one. `rentald` writes the same header itself (replacing this one with the same value);
/// a host that does not, such as Spin, still gets it.
fn with_correlation_id(response: Response) -> Response {
    if response
        .headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case(CORRELATION_HEADER))
    {
        return response;
    }
    response.with_header(CORRELATION_HEADER, crate::context::correlation_id())
}

/// Exports a [`Handler`] as the component's `wasi:http/incoming-handler`, which Spin and
/// `wasmtime serve` call, and as `rental:platform/responder`, which `rentald` calls: the same
/// answer without `wasi:http`'s resources and streams, and without copying the bodies the
/// store kept.
///
/// Use it once, at the root of a component crate, as the [crate documentation](crate) shows.
///
/// The export exists only when building for WebAssembly: a native build (clippy, unit tests)
/// has no component to export, and its linker would reject the export's name. There the
/// macro only names the handler, so the handler is still checked and counted as used.
#[macro_export]
macro_rules! export_handler {
    ($handler:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type RentalGuestHttpExport = $crate::http::Export<$handler>;
            $crate::__private::wasip2::http::proxy::export!(RentalGuestHttpExport);
            $crate::__private::responder_export::export_platform_responder!(
                RentalGuestHttpExport with_types_in $crate::__private::responder_export
            );
        };
        #[cfg(not(target_arch = "wasm32"))]
        const _: fn($crate::Request) -> ::core::result::Result<$crate::Response, $crate::Error> =
            <$handler as $crate::Handler>::handle;
    };
}

/// The method's name in upper case.
fn method_name(method: Method) -> String {
    match method {
        Method::Get => "GET".to_owned(),
        Method::Head => "HEAD".to_owned(),
        Method::Post => "POST".to_owned(),
        Method::Put => "PUT".to_owned(),
        Method::Delete => "DELETE".to_owned(),
        Method::Connect => "CONNECT".to_owned(),
        Method::Options => "OPTIONS".to_owned(),
        Method::Trace => "TRACE".to_owned(),
        Method::Patch => "PATCH".to_owned(),
        Method::Other(other) => other,
    }
}

/// Splits a query string into decoded pairs (`application/x-www-form-urlencoded`). Empty
/// segments are skipped; a segment without `=` is a name with an empty value.
fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|segment| !segment.is_empty())
        .map(|segment| {
            let (name, value) = segment.split_once('=').unwrap_or((segment, ""));
            (decode_component(name), decode_component(value))
        })
        .collect()
}

/// Percent-decodes one name or value, reading `+` as a space. A `%` not followed by two hex
/// digits is kept as it is; bytes that do not form UTF-8 become U+FFFD.
fn decode_component(input: &str) -> String {
    let bytes = input.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'+' => decoded.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1)
                    .copied()
                    .and_then(hex_value)
                    .and_then(|high| {
                        let low = bytes.get(i + 2).copied().and_then(hex_value)?;
                        Some(high << 4 | low)
                    });
                if let Some(value) = hex {
                    decoded.push(value);
                    i += 2;
                } else {
                    decoded.push(b'%');
                }
            }
            other => decoded.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// The value of one hex digit.
fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_splits_path_and_decodes_query() {
        let request = Request::new(
            "GET",
            "/api/bookings/list?status=5&updatedSince=2024-01-01T10%3A00%3A00%2B02%3A00&x=a+b&flag",
        );
        assert_eq!(request.path, "/api/bookings/list");
        assert_eq!(request.query("status"), Some("5"));
        assert_eq!(
            request.query("updatedSince"),
            Some("2024-01-01T10:00:00+02:00")
        );
        assert_eq!(request.query("x"), Some("a b"));
        assert_eq!(request.query("flag"), None, "empty is absent");
        assert_eq!(request.query("Status"), None, "names are case-sensitive");
    }

    #[test]
    fn request_without_query() {
        let request = Request::new("GET", "/api/cars");
        assert_eq!(request.path, "/api/cars");
        assert!(request.query.is_empty());
        assert_eq!(Request::new("GET", "/api/cars?").query, Vec::new());
    }

    #[test]
    fn last_value_of_a_repeated_parameter_wins() {
        let request = Request::new("GET", "/?limit=5&limit=7&&offset=2");
        assert_eq!(request.query("limit"), Some("7"));
        assert_eq!(request.query("offset"), Some("2"));
        assert_eq!(request.query.len(), 3);
    }

    #[test]
    fn decoding_keeps_malformed_escapes_and_reads_utf8() {
        assert_eq!(decode_component("100%"), "100%");
        assert_eq!(decode_component("%zz%4"), "%zz%4");
        assert_eq!(decode_component("S%C3%A3o+Paulo"), "São Paulo");
        assert_eq!(decode_component("%2B1"), "+1");
        assert_eq!(decode_component("%FF"), "\u{FFFD}");
    }

    #[test]
    fn header_lookup_ignores_case() {
        let mut request = Request::new("POST", "/");
        request
            .headers
            .push(("content-type".to_owned(), b"application/json".to_vec()));
        assert_eq!(request.header("Content-Type"), Some("application/json"));
        assert_eq!(request.header("accept"), None);
    }

    #[test]
    fn json_sets_body_and_content_type() {
        let response = json(200, &serde_json::json!({"Total": 0}));
        assert_eq!(response.status, 200);
        assert_eq!(response.body.to_bytes(), br#"{"Total":0}"#);
        assert_eq!(
            response.headers,
            vec![("content-type".to_owned(), JSON_CONTENT_TYPE.to_owned())]
        );
    }

    #[test]
    fn a_body_of_bytes_joins_what_is_pushed() {
        let mut body = Body::from("{\"a\":");
        body.push_bytes(b"");
        body.push_bytes(b"1}");
        assert_eq!(
            body,
            Body::from(br#"{"a":1}"#.as_slice()),
            "one part of bytes"
        );
        assert_eq!(body.to_bytes(), br#"{"a":1}"#);
        assert_eq!(body.into_bytes(), br#"{"a":1}"#);
        assert!(Body::from(Vec::new()).is_empty());
        assert!(Body::from(String::new()).into_bytes().is_empty());
    }

    #[test]
    fn not_found_has_no_body() {
        let response = Response::not_found();
        assert_eq!(response.status, 404);
        assert!(response.body.is_empty());
        assert!(response.headers.is_empty());
    }
}
