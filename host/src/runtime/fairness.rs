//! Sharing the cores and the instances between tenants.
//!
//! A tenant has a bounded number of seats: components of its running at once. A request
//! waits a moment for a seat ([`SEAT_WAIT`]) and is refused when none frees, so one tenant's
//! burst or runaway requests hold at most that many instances (and their memory) while other
//! tenants' requests start at once.
//!
//! A request runs its guest at full speed for a short burst, which is all a well-behaved
//! request needs (the platform's components answer in a few milliseconds). A request's cost
//! is the ticks it runs, the memory it fills and the time its memory takes to be reset once
//! it ends ([`Meter`]). Past the burst the guest is a long runner, and long runners are paced
//! per tenant: what one of them costs is charged to its tenant's clock at its price on a
//! whole core divided by the tenant's share, and a long runner whose tenant is ahead of real
//! time sleeps until it is not. So all of one tenant's long runners together use at most
//! `share` of one core, however many there are, while other tenants' requests keep the rest
//! (and the cores' run queues stay short: a paced guest sleeps, it does not wait in line).
//! While a tenant is ahead, its requests' bursts are charged and paced too, so that new
//! requests of a tenant whose loops are paced cannot each take a burst of the cores.
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

/// What each MiB a request's memory grows by costs it: filling new pages costs the host far
/// more than the guest's ticks show (the kernel opens them up and faults them in, and the
/// other cores are interrupted to flush their TLBs when the slot is closed again), and a
/// large fill evicts the other tenants' requests from the caches. The memory an instance
/// starts with comes accessible with its pooled slot and is not charged: only the time its
/// reset takes is.
const MEMORY_COST_PER_MIB: Duration = Duration::from_millis(1);

/// A request's cost as its tenant's clock counts it: the `ticks` it ran into, how far its
/// memory grew (`memory_grown` bytes) at [`MEMORY_COST_PER_MIB`], and the time its store took
/// to be reset once it ended. The platform's components, which grow little or not at all and
/// are reset in well under a millisecond, barely notice; a request filling 64 MiB is past a
/// 50 ms burst however few ticks it ran, and its tenant pays for every MiB.
fn cost(ticks: Duration, memory_grown: usize, reset: Duration) -> Duration {
    let mib = u32::try_from(memory_grown >> 20).unwrap_or(u32::MAX);
    ticks
        .saturating_add(MEMORY_COST_PER_MIB.saturating_mul(mib))
        .saturating_add(reset)
}

/// One request's account with its tenant's clock: what it has run, and how much of its cost
/// has been counted (charged, or let go as its burst).
#[derive(Debug, Clone, Copy)]
pub struct Meter {
    clock: usize,
    ticks: Duration,
    counted: Duration,
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

    /// A seat of the clock of `meter`'s tenant, held until dropped; `None` when none freed
    /// within [`SEAT_WAIT`].
    pub async fn seat(&self, meter: &Meter) -> Option<OwnedSemaphorePermit> {
        let seats = self.seats[meter.clock].clone();
        tokio::time::timeout(SEAT_WAIT, seats.acquire_owned())
            .await
            .ok()?
            .ok()
    }

    /// A new request's account with the clock of `tenant`.
    pub fn meter(&self, tenant: &str) -> Meter {
        Meter {
            // The remainder is below CLOCKS, so it fits.
            clock: (self.hasher.hash_one(tenant) % CLOCKS as u64) as usize,
            ticks: Duration::ZERO,
            counted: Duration::ZERO,
        }
    }

    /// How long a request must sleep after running one more `tick`, its memory now
    /// `memory_grown` bytes past the size it started with.
    pub fn pace(&self, meter: &mut Meter, tick: Duration, memory_grown: usize) -> Duration {
        meter.ticks += tick;
        self.count(meter, cost(meter.ticks, memory_grown, Duration::ZERO))
    }

    /// Counts what an ended request cost since its last tick, with the time its store took to
    /// be `reset`. Its tenant's next runners wait for it.
    pub fn settle(&self, mut meter: Meter, memory_grown: usize, reset: Duration) {
        let cost = cost(meter.ticks, memory_grown, reset);
        self.count(&mut meter, cost);
    }

    /// Counts a request's cost, `cost` so far, and says how long it must sleep: within its
    /// burst, nothing unless its tenant's long runners are paced ([`Pacer::charge_burst`]);
    /// past it, its share of its tenant's pace ([`Pacer::charge`]).
    fn count(&self, meter: &mut Meter, cost: Duration) -> Duration {
        let new = cost.saturating_sub(meter.counted);
        meter.counted = meter.counted.max(cost);
        if cost <= self.config.burst {
            self.charge_burst(meter.clock, new)
        } else {
            self.charge(meter.clock, new)
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
        let clock = pacer.meter("hog").clock;
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
            .find(|slug| pacer.meter(slug).clock != clock)
            .unwrap();
        assert_eq!(
            pacer.charge(pacer.meter(&other).clock, tick),
            Duration::ZERO
        );
    }

    #[test]
    fn bursts_are_free_unless_the_tenants_long_runners_are_paced() {
        let pacer = Pacer::new(CpuShare::default(), 1);
        let tick = Duration::from_millis(10);
        let clock = pacer.meter("hog").clock;
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

    #[test]
    fn a_request_pays_for_its_memory_and_its_reset() {
        let pacer = Pacer::new(CpuShare::default(), 1);
        let tick = Duration::from_millis(1);
        let mut filling = pacer.meter("hog");
        // 1 ms and 40 MiB: 41 ms, within the 50 ms burst, and the clock is not ahead.
        assert_eq!(pacer.pace(&mut filling, tick, 40 << 20), Duration::ZERO);
        // 2 ms and 64 MiB: past the burst, the 25 ms not yet counted are charged at four
        // times their length: the clock is 100 ms ahead.
        assert_eq!(pacer.pace(&mut filling, tick, 64 << 20), Duration::ZERO);
        // Its store took 5 ms to reset: 20 ms more.
        pacer.settle(filling, 64 << 20, Duration::from_millis(5));
        // The tenant's next request, small as it is, waits for all of it at its first tick.
        let mut next = pacer.meter("hog");
        let wait = pacer.pace(&mut next, tick, 1 << 20);
        assert!(
            wait > Duration::from_millis(115) && wait <= Duration::from_millis(128),
            "{wait:?}"
        );
    }

    #[tokio::test]
    async fn a_tenant_has_its_seats_and_waits_for_a_free_one() {
        let pacer = Arc::new(Pacer::new(CpuShare::default(), 2));
        let busy = pacer.meter("busy");
        let first = pacer.seat(&busy).await.unwrap();
        let _second = pacer.seat(&busy).await.unwrap();
        let waiting = tokio::spawn({
            let pacer = pacer.clone();
            async move { pacer.seat(&busy).await }
        });
        tokio::time::sleep(SEAT_WAIT / 4).await;
        drop(first);
        let _third = waiting.await.unwrap();
        assert!(_third.is_some(), "a seat freed within the wait is taken");
        assert!(pacer.seat(&busy).await.is_none(), "none frees: refused");
    }
}
