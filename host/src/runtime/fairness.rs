//! Sharing the cores and the instances between tenants.
//!
//! A tenant has a bounded number of seats: components of its running at once. A request
//! waits a moment for a seat ([`SEAT_WAIT`]) and is refused when none frees, so one tenant's
//! burst or runaway requests hold at most that many instances (and their memory) while other
//! tenants' requests start at once.
//!
//! A request runs its guest at full speed for a short burst, which is all a well-behaved
//! request needs (the platform's components answer in a few milliseconds). Past the burst the
//! guest is a long runner, and long runners are paced per tenant: each tick one of them runs
//! is charged to its tenant's clock at the price of a tick of a whole core divided by the
//! tenant's share, and a long runner whose tenant is ahead of real time sleeps until it is
//! not. So all of one tenant's long runners together use at most `share` of one core, however
//! many there are, while other tenants' requests keep the rest (and the cores' run queues stay
//! short: a paced guest sleeps, it does not wait in line). While a tenant is ahead, its
//! requests' bursts are charged and paced too, so that new requests of a tenant whose loops
//! are paced cannot each take a burst of the cores.
//!
//! Tenants are mapped to a fixed number of clocks by a hash of their slug, so the memory is
//! bounded whatever the number of tenants; two tenants on one clock share one share and one
//! set of seats, which only matters when both run long requests, or many, at once.

use std::hash::BuildHasher;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a request waits for one of its tenant's seats before it is refused.
pub const SEAT_WAIT: Duration = Duration::from_secs(1);

/// Clocks, shared by the tenants whose slugs hash alike.
const CLOCKS: usize = 1024;

/// What each MiB of a request's memory counts for against its burst: the kernel's work for
/// the pages it touched (faulting them in, then resetting them) is not in its ticks, and for
/// a request that fills a large memory it is most of the cost.
const MEMORY_COST_PER_MIB: Duration = Duration::from_millis(1);

/// A request's running time as its burst counts it: the `ticks` it ran into, and its largest
/// memory (`memory_peak` bytes) at [`MEMORY_COST_PER_MIB`]. The platform's components, a few
/// MiB each, barely notice; a request filling 64 MiB is past a 50 ms burst however few ticks
/// it ran.
fn running(ticks: Duration, memory_peak: usize) -> Duration {
    let mib = u32::try_from(memory_peak >> 20).unwrap_or(u32::MAX);
    ticks.saturating_add(MEMORY_COST_PER_MIB.saturating_mul(mib))
}

/// How guests share the cores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuShare {
    /// Running time a request has unpaced (counted in epoch ticks it runs into, so time spent
    /// waiting for a core or for I/O does not count).
    pub burst: Duration,
    /// The part of one core all of a tenant's long runners may use together (0 < share <= 1).
    pub share: f64,
}

impl Default for CpuShare {
    fn default() -> Self {
        Self {
            burst: Duration::from_millis(50),
            share: 0.25,
        }
    }
}

/// The tenants' clocks.
pub struct Pacer {
    config: CpuShare,
    started: Instant,
    hasher: std::collections::hash_map::RandomState,
    /// Per clock: the time, in nanoseconds since `started`, up to which its tenants' long runners
    /// have been paid for.
    paid_until: Box<[AtomicU64]>,
    /// Per clock: the seats of its tenants.
    seats: Box<[Arc<Semaphore>]>,
}

impl Pacer {
    /// Clocks paced by `config`, each with `seats` instances at once.
    pub fn new(config: CpuShare, seats: usize) -> Self {
        Self {
            config,
            started: Instant::now(),
            hasher: Default::default(),
            paid_until: (0..CLOCKS).map(|_| AtomicU64::new(0)).collect(),
            seats: (0..CLOCKS)
                .map(|_| Arc::new(Semaphore::new(seats)))
                .collect(),
        }
    }

    /// A seat of `clock`'s, held until dropped; `None` when none freed within [`SEAT_WAIT`].
    pub async fn seat(&self, clock: usize) -> Option<OwnedSemaphorePermit> {
        let seats = self.seats[clock].clone();
        tokio::time::timeout(SEAT_WAIT, seats.acquire_owned())
            .await
            .ok()?
            .ok()
    }

    /// The clock of `tenant`.
    pub fn clock(&self, tenant: &str) -> usize {
        // The remainder is below CLOCKS, so it fits.
        (self.hasher.hash_one(tenant) % CLOCKS as u64) as usize
    }

    /// How long a request of `clock` must sleep after running one more `tick`, having run
    /// `ticks` in all with a largest memory of `memory_peak` bytes: in its burst, nothing
    /// unless its tenant's long runners are paced ([`Pacer::charge_burst`]); past it, its share
    /// of its tenant's pace ([`Pacer::charge`]).
    pub fn pace(
        &self,
        clock: usize,
        tick: Duration,
        ticks: Duration,
        memory_peak: usize,
    ) -> Duration {
        if running(ticks, memory_peak) <= self.config.burst {
            self.charge_burst(clock, tick)
        } else {
            self.charge(clock, tick)
        }
    }

    /// Charges `ran` of a request still in its burst to `clock` while the clock's long runners
    /// are paced (the clock is ahead of real time), and says how long it must sleep; else the
    /// burst is free. So a tenant whose long runners already use its share gets no fresh
    /// bursts: a wave of new loops joins the pace from its first tick instead of taking the
    /// cores for a burst each.
    fn charge_burst(&self, clock: usize, ran: Duration) -> Duration {
        let now = nanos(self.started.elapsed());
        if self.paid_until[clock].load(Ordering::Relaxed) <= now {
            return Duration::ZERO;
        }
        self.charge(clock, ran)
    }

    /// Charges `ran` of a long runner to `clock`, and says how long that runner must sleep
    /// before it runs again.
    fn charge(&self, clock: usize, ran: Duration) -> Duration {
        let now = nanos(self.started.elapsed());
        let price = nanos(ran.div_f64(self.config.share));
        let paid_until = &self.paid_until[clock];
        let mut previous = paid_until.load(Ordering::Relaxed);
        loop {
            let start = previous.max(now);
            match paid_until.compare_exchange_weak(
                previous,
                start.saturating_add(price),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Duration::from_nanos(start - now),
                Err(current) => previous = current,
            }
        }
    }
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_tenants_long_runners_share_one_share() {
        let pacer = Pacer::new(
            CpuShare {
                burst: Duration::from_millis(50),
                share: 0.25,
            },
            1,
        );
        let tick = Duration::from_millis(10);
        let clock = pacer.clock("hog");
        // The first tick is paid from now: no wait; each further one waits for the ones
        // before it, at four times their length.
        assert_eq!(pacer.charge(clock, tick), Duration::ZERO);
        let second = pacer.charge(clock, tick);
        assert!(second > Duration::from_millis(35) && second <= Duration::from_millis(40));
        let third = pacer.charge(clock, tick);
        assert!(third > Duration::from_millis(75) && third <= Duration::from_millis(80));
        // Another tenant's clock is untouched (unless its slug hashes alike).
        let other = (0..100)
            .map(|i| format!("tenant{i}"))
            .find(|slug| pacer.clock(slug) != clock)
            .unwrap();
        assert_eq!(pacer.charge(pacer.clock(&other), tick), Duration::ZERO);
    }

    #[test]
    fn bursts_are_free_unless_the_tenants_long_runners_are_paced() {
        let pacer = Pacer::new(CpuShare::default(), 1);
        let tick = Duration::from_millis(10);
        let clock = pacer.clock("hog");
        assert_eq!(pacer.charge_burst(clock, tick), Duration::ZERO);
        assert_eq!(
            pacer.charge_burst(clock, tick),
            Duration::ZERO,
            "nothing was charged"
        );
        // A long runner's tick puts the clock 40 ms ahead: a burst now waits behind it.
        assert_eq!(pacer.charge(clock, tick), Duration::ZERO);
        let burst = pacer.charge_burst(clock, tick);
        assert!(burst > Duration::from_millis(35) && burst <= Duration::from_millis(40));
    }

    #[tokio::test]
    async fn a_tenant_has_its_seats_and_waits_for_a_free_one() {
        let pacer = Arc::new(Pacer::new(CpuShare::default(), 2));
        let clock = pacer.clock("busy");
        let first = pacer.seat(clock).await.unwrap();
        let _second = pacer.seat(clock).await.unwrap();
        let waiting = tokio::spawn({
            let pacer = pacer.clone();
            async move { pacer.seat(clock).await }
        });
        tokio::time::sleep(SEAT_WAIT / 4).await;
        drop(first);
        let _third = waiting.await.unwrap();
        assert!(_third.is_some(), "a seat freed within the wait is taken");
        assert!(pacer.seat(clock).await.is_none(), "none frees: refused");
    }
}
