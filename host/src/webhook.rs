//! The sender of outbound webhooks (docs/contract.md, "Event webhooks"): turns the bookings'
//! changes into deliveries ([`Storage::fan_out_webhooks`]) and sends them, signed, to the
//! tenants' endpoints, retrying with a doubling wait for up to three days.
//!
//! The host sends, not a component: a component has no network. Every host of a database runs
//! a sender; the database hands each delivery to one of them at a time and keeps a booking's
//! deliveries to an endpoint in order. A delivery is sent at least once (a host that dies
//! after sending and before recording it leaves it to be sent again when its lease ends), and
//! carries the same `Rentald-Delivery` every time, so that a receiver can tell.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac as _};
use tokio::task::JoinSet;
use tracing::Instrument as _;

use crate::storage::Storage;
use crate::storage::webhooks::{Attempt, ClaimedDelivery, Settled};
use crate::telemetry::{describe, truncate};

/// Changes turned into deliveries at once per endpoint.
const FAN_OUT_BATCH: u32 = 500;
/// Deliveries claimed, and sent side by side, at once.
const SEND_BATCH: i64 = 32;
/// The longest `last_error` kept.
const MAX_ERROR: usize = 1_000;

/// The header a receiver checks the signature in.
pub const SIGNATURE_HEADER: &str = "Rentald-Signature";

/// How the sender sends and retries.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// How often an idle sender looks for new changes and due deliveries.
    pub poll: Duration,
    /// How long a receiver may take to answer.
    pub timeout: Duration,
    /// The wait after the first failed attempt; it doubles with every further one.
    pub first_retry: Duration,
    /// The longest wait between attempts.
    pub max_retry: Duration,
    /// How long after its event a delivery is tried; then it is dead.
    pub max_age: Duration,
    /// Whether endpoints may be on loopback, private, link-local and other non-public
    /// addresses.
    pub allow_private: bool,
}

impl Policy {
    pub const MAX_AGE: Duration = Duration::from_secs(3 * 24 * 3600);
    pub const MAX_RETRY: Duration = Duration::from_secs(3600);

    /// How long a claimed delivery stays invisible to other hosts: longer than an attempt
    /// can take.
    fn lease(&self) -> Duration {
        self.timeout * 2 + Duration::from_secs(5)
    }

    /// What a delivery whose attempt number `attempts` (made at `now`) failed becomes.
    pub fn after_failure(&self, attempts: i64, created_at: i64, now: i64) -> Settled {
        let deadline = created_at.saturating_add(micros(self.max_age));
        if now >= deadline {
            return Settled::Dead;
        }
        let doublings = u32::try_from(attempts.saturating_sub(1).clamp(0, 30)).unwrap_or(30);
        let wait = self
            .first_retry
            .saturating_mul(2u32.saturating_pow(doublings))
            .min(self.max_retry);
        Settled::RetryAt(now.saturating_add(micros(wait)).min(deadline))
    }
}

fn micros(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}

/// Runs the sender until the process ends.
pub async fn run(storage: Storage, policy: Policy) {
    let client = match client(&policy) {
        Ok(client) => client,
        Err(e) => {
            tracing::error!(error = %e, "the webhook sender cannot start");
            return;
        }
    };
    loop {
        let more_changes = match storage.fan_out_webhooks(FAN_OUT_BATCH).await {
            Ok(read) => read == FAN_OUT_BATCH as usize,
            Err(e) => {
                tracing::error!(error = %e, "making webhook deliveries");
                false
            }
        };
        let claimed = match storage
            .claim_webhook_deliveries(SEND_BATCH, policy.lease())
            .await
        {
            Ok(claimed) => claimed,
            Err(e) => {
                tracing::error!(error = %e, "claiming webhook deliveries");
                Vec::new()
            }
        };
        let sent_any = !claimed.is_empty();
        let mut sending = JoinSet::new();
        for delivery in claimed {
            let client = client.clone();
            sending.spawn(async move { deliver(&client, &policy, delivery).await });
        }
        // Recorded together, in one transaction: one commit for the batch rather than one
        // per delivery.
        let sent: Vec<_> = sending.join_all().await;
        match storage.settle_webhook_deliveries(&sent).await {
            Ok(lost) if lost > 0 => tracing::warn!(
                deliveries = lost,
                "deliveries' leases ran out before they were recorded"
            ),
            Ok(_) => {}
            Err(e) => tracing::error!(error = %e, "recording webhook deliveries"),
        }
        if !sent_any && !more_changes {
            tokio::time::sleep(policy.poll).await;
        }
    }
}

/// The sender's HTTP client: no redirects followed, answers within the timeout, and names
/// resolved to public addresses only unless the operator allows others.
fn client(policy: &Policy) -> reqwest::Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(policy.timeout)
        .connect_timeout(policy.timeout)
        .user_agent(concat!("rentald-webhooks/", env!("CARGO_PKG_VERSION")));
    if !policy.allow_private {
        builder = builder.dns_resolver(Arc::new(PublicOnly));
    }
    builder.build()
}

/// Sends one delivery: what became of the attempt, and of the delivery.
async fn deliver(
    client: &reqwest::Client,
    policy: &Policy,
    delivery: ClaimedDelivery,
) -> (ClaimedDelivery, Attempt, Settled) {
    let span = tracing::info_span!(
        "webhook",
        delivery = delivery.id,
        tenant = %delivery.tenant,
        event = %delivery.event_type,
        attempt = delivery.attempts,
    );
    async {
        let (attempt, settled) = match &delivery.endpoint {
            None => (
                Attempt {
                    status: None,
                    latency: Duration::ZERO,
                    error: Some("the webhook was removed".to_owned()),
                },
                Settled::Dead,
            ),
            Some((url, secret)) => {
                let attempt = send(client, policy, url, secret, &delivery).await;
                let settled = if attempt.error.is_none() {
                    Settled::Delivered
                } else {
                    policy.after_failure(
                        delivery.attempts,
                        delivery.created_at,
                        crate::storage::now_micros(),
                    )
                };
                (attempt, settled)
            }
        };
        match &attempt.error {
            None => tracing::info!(
                latency_ms = attempt.latency.as_millis(),
                "webhook delivered"
            ),
            Some(error) => tracing::warn!(%error, outcome = ?settled, "webhook delivery failed"),
        }
        (delivery, attempt, settled)
    }
    .instrument(span)
    .await
}

/// One attempt: a signed POST of the payload; success is a 2xx answer.
async fn send(
    client: &reqwest::Client,
    policy: &Policy,
    url: &str,
    secret: &str,
    delivery: &ClaimedDelivery,
) -> Attempt {
    let started = Instant::now();
    let failed = |status, error: String| Attempt {
        status,
        latency: started.elapsed(),
        error: Some(truncate(error, MAX_ERROR)),
    };
    if !policy.allow_private
        && let Some(ip) = literal_address(url)
        && !is_public(ip)
    {
        return failed(None, refusal(&ip.to_string()));
    }
    let signature = signature(
        secret.as_bytes(),
        chrono::Utc::now().timestamp(),
        delivery.payload.as_bytes(),
    );
    let sent = client
        .post(url)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header("Rentald-Event", &delivery.event_type)
        .header("Rentald-Delivery", delivery.id.to_string())
        .header(SIGNATURE_HEADER, signature)
        .body(delivery.payload.clone())
        .send()
        .await;
    match sent {
        Ok(response) if response.status().is_success() => Attempt {
            status: Some(response.status().as_u16()),
            latency: started.elapsed(),
            error: None,
        },
        Ok(response) => {
            let status = response.status();
            failed(
                Some(status.as_u16()),
                format!("the receiver answered {status}"),
            )
        }
        Err(e) if e.is_timeout() => failed(
            None,
            format!("no answer within {} ms", policy.timeout.as_millis()),
        ),
        Err(e) => failed(None, describe(&e)),
    }
}

/// `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed with the endpoint's secret:
/// the scheme the platform asks bank one to sign its notifications with (docs/webhooks.md).
pub fn signature(secret: &[u8], t: i64, body: &[u8]) -> String {
    let Ok(mut mac) = Hmac::<sha2::Sha256>::new_from_slice(secret) else {
        unreachable!("HMAC takes a key of any length");
    };
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

fn refusal(host: &str) -> String {
    format!(
        "refused: {host} is not a public address (serve --webhook-allow-private allows private \
         and loopback endpoints)"
    )
}

/// The address a URL names literally, if it names one.
fn literal_address(url: &str) -> Option<IpAddr> {
    match url::Url::parse(url).ok()?.host()? {
        url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
        url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
        url::Host::Domain(_) => None,
    }
}

/// Whether `ip` is on the public internet: not loopback, private, link-local (cloud metadata
/// services live there), carrier-grade NAT, unspecified, multicast, broadcast, documentation,
/// benchmarking or reserved space, nor an IPv6 form of one.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => {
            let [a, b, c, _] = ip.octets();
            !(ip.is_loopback()
                || ip.is_private()
                || ip.is_link_local()
                || ip.is_unspecified()
                || ip.is_broadcast()
                || ip.is_documentation()
                || ip.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && c == 0)
                || (a == 198 && (18..20).contains(&b))
                || a >= 240)
        }
        IpAddr::V6(ip) => {
            if let Some(v4) = ip.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = ip.segments()[0];
            !(ip.is_loopback()
                || ip.is_unspecified()
                || ip.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || first == 0x2001 && ip.segments()[1] == 0x0db8
                || first == 0x0064 && ip.segments()[1] == 0xff9b)
        }
    }
}

/// Resolves names as the system does, keeping only public addresses: an endpoint whose name
/// resolves to none is refused, also when its name was public when it was added (the check is
/// made on the addresses connected to).
struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let public: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|addr| is_public(addr.ip()))
                .collect();
            if public.is_empty() {
                return Err(refusal(&host).into());
            }
            let addrs: reqwest::dns::Addrs = Box::new(public.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        Policy {
            poll: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
            first_retry: Duration::from_secs(10),
            max_retry: Policy::MAX_RETRY,
            max_age: Policy::MAX_AGE,
            allow_private: false,
        }
    }

    #[test]
    fn retries_double_up_to_an_hour_and_stop_after_three_days() {
        let policy = policy();
        let second = 1_000_000;
        let created = 1_000 * second;
        let now = created + 60 * second;
        assert_eq!(
            policy.after_failure(1, created, now),
            Settled::RetryAt(now + 10 * second)
        );
        assert_eq!(
            policy.after_failure(3, created, now),
            Settled::RetryAt(now + 40 * second)
        );
        assert_eq!(
            policy.after_failure(20, created, now),
            Settled::RetryAt(now + 3600 * second)
        );
        let deadline = created + 3 * 24 * 3600 * second;
        assert_eq!(
            policy.after_failure(40, created, deadline - 60 * second),
            Settled::RetryAt(deadline)
        );
        assert_eq!(policy.after_failure(41, created, deadline), Settled::Dead);
    }

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "198.18.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "2001:db8::1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn literal_addresses_are_read_from_urls() {
        assert_eq!(
            literal_address("http://127.0.0.1:8080/hook"),
            Some("127.0.0.1".parse().unwrap())
        );
        assert_eq!(
            literal_address("https://[::1]/hook"),
            Some("::1".parse().unwrap())
        );
        assert_eq!(literal_address("https://hooks.example.com/x"), None);
    }

    #[test]
    fn the_signature_is_hmac_sha256_of_the_time_and_the_body() {
        // HMAC-SHA256(key "secret", "1767261600.{}"), as Python's hmac module computes it.
        assert_eq!(
            signature(b"secret", 1_767_261_600, b"{}"),
            "t=1767261600,v1=e6c7a383f71f6b6c3ba1b928f64a1dcacdd4e4018e779bf8e3f762439b54193b"
        );
    }
}
