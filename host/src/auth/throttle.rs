//! Failed logins, counted so that a guesser is slowed and then refused without anyone being able
//! to lock a client out: per source address, per (address, tenant, client_id), and per (tenant,
//! client_id). Only an address is something a guesser must own; a client_id anyone can send, so
//! its counter slows attempts but never refuses them (docs/decisions.md, "Authentication").
//!
//! An attempt is counted when it starts, before its password is verified, so that attempts made
//! at once see each other; a failure keeps it counted, anything else takes it back.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher as _, Hash, RandomState};
use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::connection::party;

/// How long attempts count, from the first one of a key.
const WINDOW: Duration = Duration::from_secs(15 * 60);
/// Keys each kind holds at most; beyond, the oldest windows are dropped first.
const CAPACITY: usize = 100_000;

/// What attempts within the window cost one kind of key.
struct Rule {
    /// From this many on, an attempt waits before it is verified: 100 ms, doubling to 800 ms.
    slow_after: u32,
    /// From this many on, attempts are refused; `None`: never.
    refuse_after: Option<u32>,
}

impl Rule {
    fn delay(&self, attempts: u32) -> Duration {
        match attempts.checked_sub(self.slow_after) {
            Some(over) => Duration::from_millis(100 << over.min(3)),
            None => Duration::ZERO,
        }
    }

    fn refuses(&self, attempts: u32) -> bool {
        self.refuse_after.is_some_and(|limit| attempts >= limit)
    }
}

/// One address guessing one client_id's password.
const PAIR: Rule = Rule {
    slow_after: 3,
    refuse_after: Some(10),
};
/// One address trying many client_ids (spraying).
const ADDRESS: Rule = Rule {
    slow_after: 20,
    refuse_after: Some(100),
};
/// Many addresses guessing one client_id: slowed, never refused.
const ACCOUNT: Rule = Rule {
    slow_after: 10,
    refuse_after: None,
};

/// Attempts within one key's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Count {
    attempts: u32,
    since: Instant,
}

impl Count {
    fn remaining(&self, now: Instant) -> Duration {
        WINDOW.saturating_sub(now.duration_since(self.since))
    }
}

/// Attempts per key, each key for [`WINDOW`] from its first, at most `capacity` keys.
struct Counters<K> {
    counts: HashMap<K, Count>,
    /// Every window opened, oldest first: since all last as long, also the order they end in,
    /// so that expiry and eviction take from the front and never scan the map.
    windows: VecDeque<(K, Instant)>,
    capacity: usize,
}

impl<K: Copy + Eq + Hash> Counters<K> {
    fn new(capacity: usize) -> Self {
        Self {
            counts: HashMap::new(),
            windows: VecDeque::new(),
            capacity,
        }
    }

    /// The key's attempts, if its window is open at `now`.
    fn get(&self, key: &K, now: Instant) -> Option<Count> {
        self.counts
            .get(key)
            .copied()
            .filter(|count| now.duration_since(count.since) < WINDOW)
    }

    fn add(&mut self, key: K, now: Instant) {
        self.expire(now);
        match self.counts.get_mut(&key) {
            Some(count) => count.attempts = count.attempts.saturating_add(1),
            None => {
                self.counts.insert(
                    key,
                    Count {
                        attempts: 1,
                        since: now,
                    },
                );
                self.windows.push_back((key, now));
            }
        }
    }

    /// Takes back one attempt.
    fn release(&mut self, key: &K) {
        if let Some(count) = self.counts.get_mut(key) {
            count.attempts = count.attempts.saturating_sub(1);
        }
    }

    fn clear(&mut self, key: &K) {
        self.counts.remove(key);
    }

    /// Drops the windows that ended by `now`, and the oldest ones until there is room for one
    /// more. A window of a key cleared and opened again since is skipped, not dropped.
    fn expire(&mut self, now: Instant) {
        while let Some(&(key, since)) = self.windows.front() {
            let ended = now.duration_since(since) >= WINDOW;
            if !ended && self.windows.len() < self.capacity {
                break;
            }
            self.windows.pop_front();
            if self
                .counts
                .get(&key)
                .is_some_and(|count| count.since == since)
            {
                self.counts.remove(&key);
            }
        }
    }
}

/// The counters of every kind, under one lock so that an attempt is checked and counted
/// against all three at once.
struct Tables {
    addresses: Counters<IpAddr>,
    /// By a keyed hash of (address, tenant, client_id): a fixed size whatever the client_id.
    pairs: Counters<u64>,
    /// By a keyed hash of (tenant, client_id).
    accounts: Counters<u64>,
}

/// Where an attempt counts.
#[derive(Clone, Copy)]
struct Keys {
    address: IpAddr,
    pair: u64,
    account: u64,
}

/// The failed-login counters of one host process.
pub struct Throttle {
    tables: Mutex<Tables>,
    /// Keyed with random keys at start, so that nobody can pick client_ids that collide.
    hasher: RandomState,
}

impl Throttle {
    pub fn new() -> Self {
        Self {
            tables: Mutex::new(Tables {
                addresses: Counters::new(CAPACITY),
                pairs: Counters::new(CAPACITY),
                accounts: Counters::new(CAPACITY),
            }),
            hasher: RandomState::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts an attempt from `address` at `client_id` of `tenant`, or refuses it with the
    /// seconds until the window of a key that has had too many ends.
    pub fn begin(
        &self,
        address: IpAddr,
        tenant: &str,
        client_id: &str,
    ) -> Result<Attempt<'_>, u64> {
        let address = party(address);
        let keys = Keys {
            address,
            pair: self.hasher.hash_one((address, tenant, client_id)),
            account: self.hasher.hash_one((tenant, client_id)),
        };
        let now = Instant::now();
        let mut tables = self.lock();
        let counts = [
            (&ADDRESS, tables.addresses.get(&keys.address, now)),
            (&PAIR, tables.pairs.get(&keys.pair, now)),
            (&ACCOUNT, tables.accounts.get(&keys.account, now)),
        ];
        let refused_for = counts
            .iter()
            .filter_map(|(rule, count)| count.filter(|c| rule.refuses(c.attempts)))
            .map(|count| count.remaining(now))
            .max();
        if let Some(wait) = refused_for {
            return Err(wait.as_secs_f64().ceil().max(1.0) as u64);
        }
        let delay = counts
            .iter()
            .map(|(rule, count)| rule.delay(count.map_or(0, |c| c.attempts)))
            .max()
            .unwrap_or_default();
        tables.addresses.add(keys.address, now);
        tables.pairs.add(keys.pair, now);
        tables.accounts.add(keys.account, now);
        Ok(Attempt {
            throttle: self,
            keys: Some(keys),
            delay,
        })
    }
}

/// An attempt counted against its keys. A failure leaves it counted; a success takes it back
/// (and clears its address's count for its client_id); an attempt dropped undecided (the host
/// was too busy to verify it, or the client left) is taken back.
pub struct Attempt<'a> {
    throttle: &'a Throttle,
    /// `None` once settled.
    keys: Option<Keys>,
    delay: Duration,
}

impl Attempt<'_> {
    /// How long to wait before verifying, for keys that have had a few failures already.
    pub fn delay(&self) -> Duration {
        self.delay
    }

    pub fn failed(mut self) {
        self.keys = None;
    }

    /// The address's and the client_id's earlier failures stay counted: a guesser holding one
    /// valid credential cannot wipe its address's count with it.
    pub fn succeeded(mut self) {
        if let Some(keys) = self.keys.take() {
            let mut tables = self.throttle.lock();
            tables.pairs.clear(&keys.pair);
            tables.addresses.release(&keys.address);
            tables.accounts.release(&keys.account);
        }
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if let Some(keys) = self.keys.take() {
            let mut tables = self.throttle.lock();
            tables.pairs.release(&keys.pair);
            tables.addresses.release(&keys.address);
            tables.accounts.release(&keys.account);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    const HOME: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));
    const ELSEWHERE: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 7));

    /// `n` failed attempts from `address` at `client_id` of acme.
    fn fail(throttle: &Throttle, address: IpAddr, client_id: &str, n: usize) {
        for _ in 0..n {
            throttle.begin(address, "acme", client_id).unwrap().failed();
        }
    }

    #[test]
    fn attempts_under_way_count_before_they_fail() {
        let throttle = Throttle::new();
        let under_way: Vec<_> = (0..10)
            .map(|_| throttle.begin(HOME, "acme", "api").unwrap())
            .collect();
        let retry = throttle.begin(HOME, "acme", "api").err().unwrap();
        assert!(retry > 0 && retry <= WINDOW.as_secs(), "{retry}");
        // Attempts that end undecided are taken back.
        drop(under_way);
        assert!(throttle.begin(HOME, "acme", "api").is_ok());
    }

    #[test]
    fn a_guessed_client_id_is_refused_to_the_guesser_only() {
        let throttle = Throttle::new();
        fail(&throttle, HOME, "api", 3);
        assert_eq!(
            throttle.begin(HOME, "acme", "api").unwrap().delay(),
            Duration::from_millis(100)
        );
        fail(&throttle, HOME, "api", 7);
        assert!(throttle.begin(HOME, "acme", "api").is_err());
        // Another address, another tenant's id of the same name: not refused.
        let elsewhere = throttle.begin(ELSEWHERE, "acme", "api").unwrap();
        assert_eq!(
            elsewhere.delay(),
            Duration::from_millis(100),
            "slowed by the id's count"
        );
        elsewhere.succeeded();
        assert!(throttle.begin(HOME, "globex", "api").is_ok());
    }

    #[test]
    fn many_addresses_slow_a_client_id_but_never_refuse_it() {
        let throttle = Throttle::new();
        for host in 0..50u8 {
            fail(
                &throttle,
                IpAddr::V4(Ipv4Addr::new(10, 0, 0, host)),
                "api",
                9,
            );
        }
        let attempt = throttle.begin(ELSEWHERE, "acme", "api").unwrap();
        assert_eq!(attempt.delay(), Duration::from_millis(800));
    }

    #[test]
    fn spraying_client_ids_from_one_address_is_refused() {
        let throttle = Throttle::new();
        for id in 0..100 {
            fail(&throttle, HOME, &format!("user{id}"), 1);
        }
        assert!(throttle.begin(HOME, "acme", "fresh").is_err());
        assert!(throttle.begin(ELSEWHERE, "acme", "fresh").is_ok());
    }

    #[test]
    fn a_success_clears_its_pair_but_not_its_address() {
        let throttle = Throttle::new();
        fail(&throttle, HOME, "api", 9);
        for id in 0..90 {
            fail(&throttle, HOME, &format!("user{id}"), 1);
        }
        throttle.begin(HOME, "acme", "api").unwrap().succeeded();
        let again = throttle.begin(HOME, "acme", "api").unwrap();
        assert_eq!(
            again.delay(),
            Duration::from_millis(800),
            "the address's 99"
        );
        again.failed();
        assert!(
            throttle.begin(HOME, "acme", "api").is_err(),
            "100 from the address"
        );
    }

    #[test]
    fn windows_end_when_their_time_is_up() {
        let start = Instant::now();
        let at = |secs| start + Duration::from_secs(secs);
        let mut counters = Counters::new(10);
        counters.add('a', at(0));
        counters.add('a', at(0));
        assert_eq!(counters.get(&'a', at(0)).map(|c| c.attempts), Some(2));
        assert_eq!(counters.get(&'a', start + WINDOW), None);

        // A key cleared and counted again keeps its new window when its old one ends.
        counters.add('b', at(1));
        counters.clear(&'b');
        counters.add('b', at(2));
        let after_first = start + WINDOW + Duration::from_secs(1);
        counters.add('c', after_first);
        assert_eq!(
            counters.get(&'b', after_first).map(|c| c.since),
            Some(at(2))
        );
        assert_eq!(counters.counts.len(), 2, "a's window was dropped");
    }

    #[test]
    fn the_oldest_windows_make_room() {
        let start = Instant::now();
        let at = |secs| start + Duration::from_secs(secs);
        let mut counters = Counters::new(2);
        for (key, secs) in [('a', 0), ('b', 1), ('c', 2)] {
            counters.add(key, at(secs));
        }
        assert_eq!(counters.get(&'a', at(2)), None);
        assert!(counters.get(&'b', at(2)).is_some() && counters.get(&'c', at(2)).is_some());
        assert_eq!((counters.windows.len(), counters.counts.len()), (2, 2));
    }
}
