//! The epoch ticker: advances the engine's epoch every [`EPOCH_TICK`] while a guest may run,
//! so that a running guest yields to the executor at each tick and its deadline can stop it.
//!
//! A thread that wakes every millisecond costs a host about 2 % of a core even when nothing
//! runs (each wake is a timer interrupt, a context switch in and one out). So the ticker
//! sleeps once no guest has been able to run for [`IDLE_TICKS`] ticks, and the first guest
//! after that wakes it. A guest may run only while a [`Ticking`] is held: the runtime takes
//! one before a guest's instantiation and drops it after its store. Under load one is always
//! held, and the ticker never sleeps.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use wasmtime::EngineWeak;

/// Interval of the epoch ticker: how often a running guest yields to the executor (and so how
/// late a deadline can be noticed).
pub(super) const EPOCH_TICK: Duration = Duration::from_millis(1);

/// Ticks in a row without a guest that may run, after which the ticker sleeps: a host with a
/// request a second wakes it once a second instead of a thousand times.
const IDLE_TICKS: u32 = 100;

/// The ticker's thread, stopped when dropped (or when the engine is).
pub(super) struct Ticker {
    shared: Arc<Shared>,
}

/// Held while a guest may run: the epoch advances meanwhile.
#[must_use = "the epoch advances only while this is held"]
pub(super) struct Ticking(Arc<Shared>);

#[derive(Default)]
struct Shared {
    /// How many [`Ticking`]s are held.
    running: AtomicUsize,
    /// Whether the ticker is asleep, or about to be, until a guest may run.
    asleep: AtomicBool,
    /// Set when the [`Ticker`] is dropped.
    stopped: AtomicBool,
    /// What the ticker sleeps on; taken by whoever wakes it, so that no wake-up is lost
    /// between its last look at `running` and its sleep.
    lock: Mutex<()>,
    wake: Condvar,
}

impl Ticker {
    /// Starts the ticker of `engine`'s epoch.
    pub(super) fn start(engine: EngineWeak) -> std::io::Result<Self> {
        Self::start_with(engine, EPOCH_TICK, IDLE_TICKS)
    }

    fn start_with(engine: EngineWeak, tick: Duration, idle_ticks: u32) -> std::io::Result<Self> {
        let shared = Arc::new(Shared::default());
        let thread = shared.clone();
        std::thread::Builder::new()
            .name("epoch-ticker".into())
            .spawn(move || {
                let mut idle = 0;
                while let Some(engine) = engine.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(tick);
                    if thread.running.load(SeqCst) > 0 {
                        idle = 0;
                        continue;
                    }
                    idle += 1;
                    if idle >= idle_ticks {
                        if !thread.sleep_until_needed() {
                            return;
                        }
                        idle = 0;
                    }
                }
            })?;
        Ok(Self { shared })
    }

    /// Lets guests run from now until the returned value is dropped.
    pub(super) fn ticking(&self) -> Ticking {
        let shared = &self.shared;
        shared.running.fetch_add(1, SeqCst);
        if shared.asleep.load(SeqCst) {
            let _lock = shared.lock();
            shared.wake.notify_one();
        }
        Ticking(shared.clone())
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.shared.stopped.store(true, SeqCst);
        let _lock = self.shared.lock();
        self.shared.wake.notify_one();
    }
}

impl Drop for Ticking {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, SeqCst);
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, ()> {
        self.lock.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sleeps until a guest may run; false when the ticker was stopped instead.
    ///
    /// `asleep` is set before `running` is read, and [`Ticker::ticking`] adds to `running`
    /// before it reads `asleep`: so either the ticker sees the guest and does not sleep, or
    /// the guest sees the ticker asleep and wakes it, under the lock the ticker sleeps with.
    fn sleep_until_needed(&self) -> bool {
        let mut lock = self.lock();
        self.asleep.store(true, SeqCst);
        while self.running.load(SeqCst) == 0 && !self.stopped.load(SeqCst) {
            lock = self.wake.wait(lock).unwrap_or_else(PoisonError::into_inner);
        }
        self.asleep.store(false, SeqCst);
        !self.stopped.load(SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use wasmtime::{Config, Engine, Store, UpdateDeadline};

    use super::*;

    /// An engine with epochs, and a store whose deadline callback counts the ticks it sees.
    fn counted() -> (Engine, Store<u64>) {
        let mut config = Config::new();
        config.epoch_interruption(true);
        let engine = Engine::new(&config).unwrap();
        let mut store = Store::new(&engine, 0u64);
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut store| {
            *store.data_mut() += 1;
            Ok(UpdateDeadline::Continue(1))
        });
        (engine, store)
    }

    /// A module exporting `spin(n)`, which counts to `n` in a loop (the binary form of
    /// `(func (param i32) (local i32) (loop (br_if 0 (i32.lt_u (local.tee 1 (i32.add
    /// (local.get 1) (i32.const 1))) (local.get 0))))))`).
    const SPIN: &[u8] = &[
        0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // header
        0x01, 0x05, 0x01, 0x60, 0x01, 0x7f, 0x00, // type: (i32) -> ()
        0x03, 0x02, 0x01, 0x00, // function 0 of type 0
        0x07, 0x08, 0x01, 0x04, b's', b'p', b'i', b'n', 0x00, 0x00, // export "spin"
        0x0a, 0x15, 0x01, 0x13, 0x01, 0x01, 0x7f, // code: one body, one i32 local
        0x03, 0x40, 0x20, 0x01, 0x41, 0x01, 0x6a, 0x22, 0x01, // loop, local 1 + 1, tee
        0x20, 0x00, 0x49, 0x0d, 0x00, 0x0b, 0x0b, // < local 0: again; end, end
    ];

    /// Runs a guest loop in `store` until `ticks` ticks have been seen or `within` has passed;
    /// the ticks seen.
    fn run_until(engine: &Engine, store: &mut Store<u64>, ticks: u64, within: Duration) -> u64 {
        let module = wasmtime::Module::new(engine, SPIN).unwrap();
        let instance = wasmtime::Instance::new(&mut *store, &module, &[]).unwrap();
        let spin = instance
            .get_typed_func::<i32, ()>(&mut *store, "spin")
            .unwrap();
        let started = Instant::now();
        *store.data_mut() = 0;
        while *store.data() < ticks && started.elapsed() < within {
            spin.call(&mut *store, 1_000_000).unwrap();
        }
        *store.data()
    }

    #[test]
    fn a_guest_after_the_ticker_slept_still_sees_ticks() {
        let (engine, mut store) = counted();
        let ticker = Ticker::start_with(engine.weak(), Duration::from_millis(1), 5).unwrap();
        // Long enough for the ticker to go to sleep, with nothing running.
        std::thread::sleep(Duration::from_millis(200));
        assert!(ticker.shared.asleep.load(SeqCst), "the idle ticker sleeps");
        let ticking = ticker.ticking();
        assert!(
            run_until(&engine, &mut store, 20, Duration::from_secs(30)) >= 20,
            "a guest that may run sees the epoch advance"
        );
        drop(ticking);
        std::thread::sleep(Duration::from_millis(200));
        assert!(ticker.shared.asleep.load(SeqCst), "and it sleeps again");
    }

    #[test]
    fn the_ticker_does_not_sleep_while_a_guest_may_run() {
        let (engine, _store) = counted();
        let ticker = Ticker::start_with(engine.weak(), Duration::from_millis(1), 5).unwrap();
        let _ticking = ticker.ticking();
        std::thread::sleep(Duration::from_millis(200));
        assert!(!ticker.shared.asleep.load(SeqCst));
    }

    #[test]
    fn a_dropped_ticker_ends_its_thread() {
        let (engine, _store) = counted();
        let ticker = Ticker::start_with(engine.weak(), Duration::from_millis(1), 1).unwrap();
        let shared = Arc::downgrade(&ticker.shared);
        std::thread::sleep(Duration::from_millis(50));
        drop(ticker);
        let started = Instant::now();
        while shared.strong_count() > 0 && started.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(
            shared.strong_count(),
            0,
            "the sleeping thread woke and ended"
        );
    }
}
