//! `rental:platform/bank` over Spin's outbound HTTP (`wasi:http/outgoing-handler`): the same
//! request as `rentald`'s (`GET {base}/settlements/{id}`, `Accept: application/json`) and the
//! same reading of the answer (`rental_domain::payments::BankSettlement`).
//!
//! The bank's base URL is the variable `<bank>_url` (e.g. `banktwo_url`); its host must be in
//! the component's `allowed_outbound_hosts`. The client certificate of the mutual TLS is not
//! the adapter's to choose: Spin presents the one its runtime configuration's `[[client_tls]]`
//! names for that host (docs/spin.md).

use rental_domain::payments::BankSettlement;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{ErrorCode, Fields, Method, OutgoingRequest, RequestOptions, Scheme};
use wasip2::io::streams::StreamError;

use crate::Adapter;
use crate::bindings::exports::rental::platform::bank::{self, BankError, Settlement};

/// The largest answer read from a bank.
const MAX_ANSWER: usize = 64 << 10;
/// How long to wait for the bank, in nanoseconds.
const TIMEOUT_NANOS: u64 = 5_000_000_000;

/// A URL split into what `wasi:http` asks for.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    https: bool,
    authority: String,
    path: String,
}

/// `{base}/settlements/{id}`, the id as one escaped path segment; `None` when `base` is not an
/// `http(s)://host[/path]` URL without query.
fn settlement_target(base: &str, settlement_id: &str) -> Option<Target> {
    let (https, rest) = if let Some(rest) = base.strip_prefix("https://") {
        (true, rest)
    } else {
        (false, base.strip_prefix("http://")?)
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.is_empty() || path.contains(['?', '#']) {
        return None;
    }
    let mut full = format!("/{}", path.trim_end_matches('/'));
    if full.len() > 1 {
        full.push('/');
    }
    full.push_str("settlements/");
    for b in settlement_id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            full.push(char::from(b));
        } else {
            full.push_str(&format!("%{b:02X}"));
        }
    }
    Some(Target {
        https,
        authority: authority.to_owned(),
        path: full,
    })
}

fn unreachable(error: ErrorCode) -> BankError {
    BankError::Unreachable(format!("{error:?}"))
}

/// Sends the GET and reads the answer.
fn get(target: &Target) -> Result<(u16, Vec<u8>), BankError> {
    let failed = |what: &str| BankError::NotConfigured(format!("the bank URL's {what} is invalid"));
    let headers = Fields::from_list(&[("accept".to_owned(), b"application/json".to_vec())])
        .map_err(|_| failed("header"))?;
    let request = OutgoingRequest::new(headers);
    request
        .set_method(&Method::Get)
        .map_err(|()| failed("method"))?;
    request
        .set_scheme(Some(&if target.https {
            Scheme::Https
        } else {
            Scheme::Http
        }))
        .map_err(|()| failed("scheme"))?;
    request
        .set_authority(Some(&target.authority))
        .map_err(|()| failed("host"))?;
    request
        .set_path_with_query(Some(&target.path))
        .map_err(|()| failed("path"))?;
    let options = RequestOptions::new();
    // A host that does not support a timeout refuses to set it; its own applies then.
    let _ = options.set_connect_timeout(Some(TIMEOUT_NANOS));
    let _ = options.set_first_byte_timeout(Some(TIMEOUT_NANOS));
    let _ = options.set_between_bytes_timeout(Some(TIMEOUT_NANOS));
    let pending = outgoing_handler::handle(request, Some(options)).map_err(unreachable)?;
    pending.subscribe().block();
    let response = match pending.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(error))) => return Err(unreachable(error)),
        Some(Err(())) | None => {
            return Err(BankError::Unreachable("no answer from the bank".to_owned()));
        }
    };
    let status = response.status();
    let body = response
        .consume()
        .map_err(|()| BankError::Unreachable("the answer has no body".to_owned()))?;
    let stream = body
        .stream()
        .map_err(|()| BankError::Unreachable("the answer has no body".to_owned()))?;
    let mut answer = Vec::new();
    loop {
        match stream.blocking_read(MAX_ANSWER as u64) {
            Ok(chunk) => {
                answer.extend_from_slice(&chunk);
                if answer.len() > MAX_ANSWER {
                    return Err(BankError::BadAnswer("the answer is too large".to_owned()));
                }
            }
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(error)) => {
                return Err(BankError::Unreachable(error.to_debug_string()));
            }
        }
    }
    Ok((status, answer))
}

impl bank::Guest for Adapter {
    fn confirm_settlement(
        bank: String,
        settlement_id: String,
    ) -> Result<Option<Settlement>, BankError> {
        let Some(base) = crate::variable_name("", &format!("{bank}_url"))
            .and_then(|name| crate::variable(&name))
        else {
            return Err(BankError::NotConfigured(format!(
                "the variable {bank}_url is not set"
            )));
        };
        let target = settlement_target(&base, &settlement_id)
            .ok_or_else(|| BankError::NotConfigured(format!("{bank}_url is not an http(s) URL")))?;
        let (status, body) = get(&target)?;
        if status == 404 {
            return Ok(None);
        }
        if !(200..300).contains(&status) {
            return Err(BankError::Refused(format!("the bank answered {status}")));
        }
        let answer = BankSettlement::parse(&body).map_err(BankError::BadAnswer)?;
        Ok(Some(Settlement {
            settlement_id: answer.settlement_id,
            reference: answer.reference,
            amount: answer.amount,
            currency: answer.currency,
            status: answer.status,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settlement_is_one_escaped_segment_under_the_base() {
        assert_eq!(
            settlement_target("https://bank.test:8443/api/", "S 1/2"),
            Some(Target {
                https: true,
                authority: "bank.test:8443".to_owned(),
                path: "/api/settlements/S%201%2F2".to_owned(),
            })
        );
        assert_eq!(
            settlement_target("http://127.0.0.1:9000", "s1").map(|t| t.path),
            Some("/settlements/s1".to_owned())
        );
        assert_eq!(settlement_target("ftp://x", "s1"), None);
        assert_eq!(settlement_target("https://x/?q=1", "s1"), None);
    }
}
