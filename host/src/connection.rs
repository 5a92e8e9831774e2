//! What one connection may hold, so that nobody outside can stop the front door: how many
//! connections are open, in all and from one address ([`Gate`]), and how long one may stay
//! silent, idle or slow ([`Limits`], enforced by [`Activity`] and the HTTP builders).

use std::net::{IpAddr, Ipv6Addr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::counted::{Counted, Held};
use crate::metrics::Metrics;

/// The front door's limits on connections and on how fast a request must arrive.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections open at once; past it a new connection is closed as soon as it is accepted.
    pub max_connections: usize,
    /// Connections open at once from one address (an IPv4 address, an IPv6 /64).
    pub max_connections_per_address: usize,
    /// Time from a connection's start, or from the end of its last request, to a complete
    /// request head; also how long a TLS handshake may take.
    pub header_timeout: Duration,
    /// Time to receive a request's whole body.
    pub body_timeout: Duration,
    /// Time a connection may stay open with no request in flight.
    pub idle_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: 4_096,
            max_connections_per_address: 256,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
        }
    }
}

impl Limits {
    /// The metrics listener's: a private network's few scrapers, on the API's timeouts.
    pub fn for_metrics(self) -> Self {
        Self {
            max_connections: METRICS_CONNECTIONS,
            max_connections_per_address: METRICS_CONNECTIONS,
            ..self
        }
    }
}

/// Connections the metrics listener keeps open at once.
const METRICS_CONNECTIONS: usize = 64;

/// The part of an address one party holds: an IPv4 address, or an IPv6 /64, the least a site
/// is given (any host in it can take any address of it).
pub fn party(address: IpAddr) -> IpAddr {
    match address.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from_bits(v6.to_bits() & !(u128::MAX >> 64))),
        v4 => v4,
    }
}

/// Why a connection was closed as soon as it was accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// [`Limits::max_connections`] are open.
    Full,
    /// [`Limits::max_connections_per_address`] are open from its address.
    Address,
}

impl Refused {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Address => "address",
        }
    }
}

/// Counts a listener's open connections, in all and per address.
pub struct Gate {
    limits: Limits,
    open: AtomicUsize,
    per_address: Arc<Counted<IpAddr>>,
    /// The listener's name in the metrics.
    listener: &'static str,
    metrics: Arc<Metrics>,
}

impl Gate {
    pub fn new(limits: Limits, listener: &'static str, metrics: Arc<Metrics>) -> Arc<Self> {
        Arc::new(Self {
            limits,
            open: AtomicUsize::new(0),
            per_address: Counted::new(limits.max_connections_per_address),
            listener,
            metrics,
        })
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Lets a connection from `peer` in, counted until its [`Admitted`] is dropped, or says
    /// why not.
    pub fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<Admitted, Refused> {
        let refused = |reason: Refused| {
            self.metrics
                .connection_refused(self.listener, reason.as_str());
            Err(reason)
        };
        // Taken first and given back if the total is full: the total may be one over for a
        // moment, never stays over.
        let Some(address) = self.per_address.take(party(peer)) else {
            return refused(Refused::Address);
        };
        if self.open.fetch_add(1, Ordering::Relaxed) >= self.limits.max_connections {
            self.open.fetch_sub(1, Ordering::Relaxed);
            return refused(Refused::Full);
        }
        self.metrics.connection_opened(self.listener, 1);
        Ok(Admitted {
            gate: self.clone(),
            _address: address,
        })
    }
}

/// An open connection, counted by its [`Gate`] until dropped.
pub struct Admitted {
    gate: Arc<Gate>,
    _address: Held<IpAddr>,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.gate.open.fetch_sub(1, Ordering::Relaxed);
        self.gate.metrics.connection_opened(self.gate.listener, -1);
    }
}

/// Whether a connection is working: the requests it has in flight, and when it last had one.
/// A connection with none in flight for longer than its allowance is closed: the header
/// timeout before its first request (a silent connection, or one that trickles the bytes
/// that choose the HTTP version or open an HTTP/2 session), the idle timeout after.
pub struct Activity {
    state: Mutex<ActivityState>,
}

struct ActivityState {
    in_flight: usize,
    /// When the connection started, or its last request ended.
    since: Instant,
    served_one: bool,
}

impl Activity {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(ActivityState {
                in_flight: 0,
                since: Instant::now(),
                served_one: false,
            }),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ActivityState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A request has started; it counts as in flight until the returned guard is dropped.
    pub fn request(self: &Arc<Self>) -> InFlight {
        let mut state = self.state();
        state.in_flight += 1;
        state.served_one = true;
        InFlight {
            activity: self.clone(),
        }
    }

    /// Resolves once the connection has had no request in flight for longer than `limits`
    /// allow.
    pub async fn idle(&self, limits: &Limits) {
        loop {
            let deadline = {
                let state = self.state();
                if state.in_flight > 0 {
                    // Looked at again after one allowance: a request in flight is bounded by
                    // its own deadlines.
                    Instant::now() + limits.idle_timeout
                } else if state.served_one {
                    state.since + limits.idle_timeout
                } else {
                    state.since + limits.header_timeout
                }
            };
            if deadline <= Instant::now() && self.state().in_flight == 0 {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}

/// A request in flight on a connection; its end is the connection's last activity.
pub struct InFlight {
    activity: Arc<Activity>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = self.activity.state();
        state.in_flight -= 1;
        state.since = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize, per_address: usize) -> Limits {
        Limits {
            max_connections: max,
            max_connections_per_address: per_address,
            ..Limits::default()
        }
    }

    #[test]
    fn a_gate_counts_per_address_and_in_all() {
        let gate = Gate::new(limits(3, 2), "api", Arc::new(Metrics::new()));
        let one: IpAddr = "192.0.2.1".parse().unwrap();
        let two: IpAddr = "192.0.2.2".parse().unwrap();
        let a = gate.admit(one).unwrap();
        let _b = gate.admit(one).unwrap();
        assert_eq!(gate.admit(one).err(), Some(Refused::Address));
        let _c = gate.admit(two).unwrap();
        assert_eq!(gate.admit(two).err(), Some(Refused::Full));
        drop(a);
        assert_eq!(gate.open.load(Ordering::Relaxed), 2);
        assert!(
            gate.admit(one).is_ok(),
            "a closed connection frees its place"
        );
    }

    #[test]
    fn an_ipv6_party_is_its_64() {
        let gate = Gate::new(limits(10, 1), "api", Arc::new(Metrics::new()));
        let _a = gate.admit("2001:db8::1".parse().unwrap()).unwrap();
        assert_eq!(
            gate.admit("2001:db8::ffff:1".parse().unwrap()).err(),
            Some(Refused::Address)
        );
        assert!(gate.admit("2001:db8:0:1::1".parse().unwrap()).is_ok());
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        assert_eq!(party(mapped), "192.0.2.1".parse::<IpAddr>().unwrap());
    }

    #[tokio::test]
    async fn a_connection_is_idle_only_with_nothing_in_flight() {
        let limits = Limits {
            header_timeout: Duration::from_millis(20),
            idle_timeout: Duration::from_millis(40),
            ..Limits::default()
        };
        let activity = Activity::new();
        let started = Instant::now();
        activity.idle(&limits).await;
        assert!(
            started.elapsed() >= limits.header_timeout,
            "before a request"
        );

        let request = activity.request();
        let idle = tokio::spawn({
            let activity = activity.clone();
            async move { activity.idle(&limits).await }
        });
        tokio::time::sleep(limits.idle_timeout * 5).await;
        assert!(!idle.is_finished(), "a request in flight keeps it open");
        let ended = Instant::now();
        drop(request);
        idle.await.unwrap();
        assert!(
            ended.elapsed() >= limits.idle_timeout,
            "idle after the request"
        );
    }
}
