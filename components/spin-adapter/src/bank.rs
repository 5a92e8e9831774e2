//! `rental:platform/bank` over Spin's outbound HTTP (`wasi:http/outgoing-handler`): the same
//! request as `rentald`'s (`GET {base}/settlements/{id}`, `Accept: application/json`, built by
//! `rental_domain::payments::BankBaseUrl`) and the same reading of the answer
//! (`rental_domain::payments::BankAnswer`).
//!
//! The bank's base URL is the tenant setting `<bank>.base_url` as `rentald` names it, read
//! from the Spin variable of that name (`banktwo_base_url`); it may be `http://` too, for a
//! local mock bank, and its host must be in the component's `allowed_outbound_hosts`. The
//! client certificate of the mutual TLS is not the adapter's to choose: Spin presents the one
//! its runtime configuration's `[[client_tls]]` names for that host (docs/spin.md).

use rental_domain::payments::{self, BankAnswer, BankBaseUrl, BankSchemes, MAX_ANSWER};
use rental_platform::spin_variable;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{
    ErrorCode, Fields, IncomingResponse, Method, OutgoingRequest, RequestOptions, Scheme,
};
use wasip2::io::streams::StreamError;

use crate::Adapter;
use crate::bindings::exports::rental::platform::bank::{self, BankError, Settlement};

/// How long to wait for the bank, in nanoseconds.
const TIMEOUT_NANOS: u64 = 5_000_000_000;

fn unreachable(error: ErrorCode) -> BankError {
    BankError::Unreachable(format!("{error:?}"))
}

rental_domain::wit_bank_conversions!(crate::bindings::exports::rental::platform::bank);

/// Sends `GET url`.
fn get(url: &url::Url) -> Result<IncomingResponse, BankError> {
    let failed = |what: &str| BankError::NotConfigured(format!("the bank URL's {what} is invalid"));
    let headers = Fields::from_list(&[("accept".to_owned(), b"application/json".to_vec())])
        .map_err(|_| failed("header"))?;
    let request = OutgoingRequest::new(headers);
    request
        .set_method(&Method::Get)
        .map_err(|()| failed("method"))?;
    request
        .set_scheme(Some(&if url.scheme() == "https" {
            Scheme::Https
        } else {
            Scheme::Http
        }))
        .map_err(|()| failed("scheme"))?;
    request
        .set_authority(Some(
            &url[url::Position::BeforeHost..url::Position::AfterPort],
        ))
        .map_err(|()| failed("host"))?;
    request
        .set_path_with_query(Some(url.path()))
        .map_err(|()| failed("path"))?;
    let options = RequestOptions::new();
    // A host that does not support a timeout refuses to set it; its own applies then.
    let _ = options.set_connect_timeout(Some(TIMEOUT_NANOS));
    let _ = options.set_first_byte_timeout(Some(TIMEOUT_NANOS));
    let _ = options.set_between_bytes_timeout(Some(TIMEOUT_NANOS));
    let pending = outgoing_handler::handle(request, Some(options)).map_err(unreachable)?;
    pending.subscribe().block();
    match pending.get() {
        Some(Ok(Ok(response))) => Ok(response),
        Some(Ok(Err(error))) => Err(unreachable(error)),
        Some(Err(())) | None => Err(BankError::Unreachable("no answer from the bank".to_owned())),
    }
}

/// Reads the body of `response` into `answer`.
fn read(response: IncomingResponse, answer: &mut BankAnswer) -> Result<(), BankError> {
    let body = response
        .consume()
        .map_err(|()| BankError::Unreachable("the answer has no body".to_owned()))?;
    let stream = body
        .stream()
        .map_err(|()| BankError::Unreachable("the answer has no body".to_owned()))?;
    loop {
        match stream.blocking_read(MAX_ANSWER as u64) {
            Ok(chunk) => answer.push(&chunk).map_err(answer_error)?,
            Err(StreamError::Closed) => return Ok(()),
            Err(StreamError::LastOperationFailed(error)) => {
                return Err(BankError::Unreachable(error.to_debug_string()));
            }
        }
    }
}

impl bank::Guest for Adapter {
    fn confirm_settlement(
        bank: String,
        settlement_id: String,
    ) -> Result<Option<Settlement>, BankError> {
        let setting = payments::base_url_setting(&bank);
        let Some(base) = spin_variable("", &setting).and_then(|name| crate::variable(&name)) else {
            return Err(BankError::NotConfigured(format!(
                "the variable for {setting} is not set"
            )));
        };
        let base = BankBaseUrl::parse(&base, BankSchemes::HttpOrHttps)
            .ok_or_else(|| BankError::NotConfigured(format!("{setting} is not an http(s) URL")))?;
        let response = get(&base.settlement_url(&settlement_id))?;
        let Some(mut answer) = BankAnswer::start(response.status()).map_err(answer_error)? else {
            return Ok(None);
        };
        read(response, &mut answer)?;
        Ok(Some(settlement(answer.settlement().map_err(answer_error)?)))
    }
}
