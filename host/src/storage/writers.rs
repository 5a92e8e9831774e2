//! A bound on the read-write transactions each tenant has open on PostgreSQL at once
//! (`serve --tenant-writers`).
//!
//! A tenant's creations all take its booking-id sequence row and hold it to their commit, so
//! they pass one at a time however many are open. Past the bound they wait here, in a queue
//! that costs nothing, instead of in PostgreSQL's lock queue, where each waiter is a backend
//! process that was scheduled, took a lock-manager slot and will be woken with the others, on
//! the cores the one holding the row needs. A writer waits for its turn before it begins, so
//! it holds nothing of the database meanwhile and the queue cannot take part in a deadlock.
//! (SQLite lets one writer at a time through already: its writer turn.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How many tenants' queues are kept before the first sweep of those nobody holds.
const FIRST_SWEEP: usize = 64;

/// Each tenant's queue of writers.
#[derive(Debug)]
pub(super) struct Writers {
    bound: usize,
    queues: Mutex<Queues>,
}

/// The queues of the tenants that have writers open or waiting, and those of tenants that had
/// until the next sweep.
#[derive(Debug)]
struct Queues {
    by_tenant: HashMap<String, Weak<Semaphore>>,
    /// The number of queues at which the next sweep runs: twice those left by the last one,
    /// so that sweeps cost a constant time per queue made.
    sweep_at: usize,
}

impl Writers {
    /// Queues that let `bound` writers of a tenant through at once.
    pub(super) fn new(bound: usize) -> Self {
        Self {
            bound,
            queues: Mutex::new(Queues {
                by_tenant: HashMap::new(),
                sweep_at: FIRST_SWEEP,
            }),
        }
    }

    /// Waits for one of `tenant`'s turns to write, held until the permit is dropped.
    pub(super) async fn enter(&self, tenant: &str) -> OwnedSemaphorePermit {
        self.queue(tenant)
            .acquire_owned()
            .await
            .expect("a writers' queue is never closed")
    }

    /// `tenant`'s queue: the one its writers hold or wait in, else a new one. A queue lives as
    /// long as a permit or a waiter holds it.
    fn queue(&self, tenant: &str) -> Arc<Semaphore> {
        let mut queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(queue) = queues.by_tenant.get(tenant).and_then(Weak::upgrade) {
            return queue;
        }
        if queues.by_tenant.len() >= queues.sweep_at {
            queues.by_tenant.retain(|_, queue| queue.strong_count() > 0);
            queues.sweep_at = (queues.by_tenant.len() * 2).max(FIRST_SWEEP);
        }
        let queue = Arc::new(Semaphore::new(self.bound));
        queues
            .by_tenant
            .insert(tenant.to_owned(), Arc::downgrade(&queue));
        queue
    }

    /// How many tenants' queues are kept.
    #[cfg(test)]
    fn kept(&self) -> usize {
        self.queues
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_tenant
            .len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_tenants_writer_past_the_bound_waits_for_one_to_end() {
        let writers = Writers::new(2);
        let first = writers.enter("acme").await;
        let _second = writers.enter("acme").await;
        let third = tokio::time::timeout(Duration::from_millis(50), writers.enter("acme"));
        assert!(third.await.is_err(), "the third waits");
        let _other = tokio::time::timeout(Duration::from_millis(50), writers.enter("globex"))
            .await
            .expect("another tenant's writer does not wait");
        drop(first);
        let _third = tokio::time::timeout(Duration::from_millis(50), writers.enter("acme"))
            .await
            .expect("the third goes once the first has ended");
    }

    #[tokio::test]
    async fn the_queues_of_tenants_without_writers_are_swept() {
        let writers = Writers::new(1);
        let held = writers.enter("held").await;
        for tenant in 0..10_000 {
            drop(writers.enter(&format!("t{tenant}")).await);
        }
        assert!(writers.kept() <= FIRST_SWEEP, "{} kept", writers.kept());
        // The held queue survived the sweeps: a writer of its tenant still waits.
        let again = tokio::time::timeout(Duration::from_millis(50), writers.enter("held"));
        assert!(again.await.is_err());
        drop(held);
    }
}
