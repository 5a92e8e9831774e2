//! Which component serves a tenant, and the compiled components in memory.
//!
//! Two maps. The assignments say which sha256 serves (tenant, component) when the tenant has
//! installed its own; they are refreshed from the database (only what changed since the last
//! generation seen). The loaded components are keyed by sha256 and world and filled lazily, on
//! the first request that needs one; an entry nobody used for the idle time is dropped. A
//! request takes its `Arc` once, so swapping an assignment or dropping an entry never disturbs a
//! request in flight.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use rental_platform::World;
use tokio::sync::OnceCell;

use super::LoadedComponent;
use crate::storage::components::Change;

/// One loaded (or loading) component.
struct Slot {
    /// Filled once, by the first request that needs it; concurrent first requests wait for it.
    component: OnceCell<Arc<LoadedComponent>>,
    /// When it was last asked for, in milliseconds since the registry started.
    last_used: AtomicU64,
}

/// Whose build of a platform component serves a request: a bounded metrics label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// The platform's own file.
    Platform,
    /// One the tenant installed (`rentald component install`).
    Tenant,
}

impl Build {
    pub const fn label(self) -> &'static str {
        match self {
            Self::Platform => "platform",
            Self::Tenant => "tenant",
        }
    }
}

/// Counts for monitoring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ComponentStats {
    /// Components compiled or deserialized and held in memory now.
    pub loaded: usize,
    /// Components loaded since the start (a reload after an eviction counts again).
    pub loads: u64,
    /// Components dropped for being idle since the start.
    pub evictions: u64,
}

pub struct Registry {
    started: Instant,
    /// The platform's component files, by name: their sha256.
    defaults: HashMap<&'static str, String>,
    /// (tenant, component) -> sha256, for tenants with a component of their own.
    assignments: RwLock<HashMap<(String, String), String>>,
    /// The database's component generation these assignments reflect (-1: none read yet).
    generation: AtomicI64,
    slots: Mutex<HashMap<(String, World), Arc<Slot>>>,
    loads: AtomicU64,
    evictions: AtomicU64,
}

impl Default for Registry {
    fn default() -> Self {
        Self {
            started: Instant::now(),
            defaults: HashMap::new(),
            assignments: RwLock::default(),
            generation: AtomicI64::new(-1),
            slots: Mutex::default(),
            loads: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
        }
    }
}

impl Registry {
    pub fn set_default(&mut self, name: &'static str, sha256: String) {
        self.defaults.insert(name, sha256);
    }

    /// The platform's sha256 for a component name.
    pub fn default_sha256(&self, name: &str) -> Option<&str> {
        self.defaults.get(name).map(String::as_str)
    }

    /// The sha256 serving `name` for `tenant` and whose build it is: its own, else the
    /// platform's.
    pub fn resolve(&self, tenant: &str, name: &str) -> Option<(String, Build)> {
        let own = self
            .assignments
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(tenant.to_owned(), name.to_owned()))
            .cloned();
        match own {
            Some(sha256) => Some((sha256, Build::Tenant)),
            None => Some((self.default_sha256(name)?.to_owned(), Build::Platform)),
        }
    }

    pub fn generation(&self) -> i64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Applies the changed rows read up to `generation`.
    pub fn apply(&self, changes: Vec<Change>, generation: i64) {
        let mut assignments = self
            .assignments
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        // A changed key without an active row went back to the platform default.
        let mut active: HashMap<(String, String), Option<String>> = HashMap::new();
        for change in changes {
            let entry = active.entry((change.tenant, change.component)).or_default();
            if change.active {
                *entry = Some(change.sha256);
            }
        }
        for (key, sha256) in active {
            match sha256 {
                Some(sha256) => {
                    assignments.insert(key, sha256);
                }
                None => {
                    assignments.remove(&key);
                }
            }
        }
        self.generation.store(generation, Ordering::Release);
    }

    fn now(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The loaded component for `key`, loading it with `load` when no request has yet.
    pub async fn get_or_load<F, Fut>(
        &self,
        key: (String, World),
        load: F,
    ) -> anyhow::Result<Arc<LoadedComponent>>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = anyhow::Result<LoadedComponent>>,
    {
        let slot = self
            .slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key)
            .or_insert_with(|| {
                Arc::new(Slot {
                    component: OnceCell::new(),
                    last_used: AtomicU64::new(0),
                })
            })
            .clone();
        slot.last_used.store(self.now(), Ordering::Relaxed);
        let component = slot
            .component
            .get_or_try_init(|| async {
                let component = load().await?;
                self.loads.fetch_add(1, Ordering::Relaxed);
                Ok::<_, anyhow::Error>(Arc::new(component))
            })
            .await?;
        Ok(component.clone())
    }

    /// Drops the components nobody asked for within `idle`; requests still running on one keep
    /// it until they end. Returns how many were dropped.
    pub fn evict_idle(&self, idle: Duration) -> usize {
        let now = self.now();
        let idle = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        let mut evicted = 0;
        self.slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, slot| {
                let keep = now.saturating_sub(slot.last_used.load(Ordering::Relaxed)) < idle;
                if !keep && slot.component.initialized() {
                    evicted += 1;
                }
                keep
            });
        self.evictions.fetch_add(evicted, Ordering::Relaxed);
        usize::try_from(evicted).unwrap_or(usize::MAX)
    }

    pub fn stats(&self) -> ComponentStats {
        ComponentStats {
            loaded: self
                .slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .values()
                .filter(|slot| slot.component.initialized())
                .count(),
            loads: self.loads.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(tenant: &str, sha256: &str, active: bool) -> Change {
        Change {
            tenant: tenant.to_owned(),
            component: "listing".to_owned(),
            sha256: sha256.to_owned(),
            active,
        }
    }

    #[test]
    fn assignments_follow_installs_and_rollbacks() {
        let mut registry = Registry::default();
        registry.set_default("listing", "platform".to_owned());
        let resolve = |tenant: &str| registry.resolve(tenant, "listing");
        let platform = Some(("platform".to_owned(), Build::Platform));
        assert_eq!(resolve("a"), platform);
        assert_eq!(registry.resolve("a", "nothing"), None);

        // a installs v1, then v2 (v1 deactivated in the same generation).
        registry.apply(vec![change("a", "v1", true)], 1);
        registry.apply(vec![change("a", "v1", false), change("a", "v2", true)], 2);
        assert_eq!(resolve("a"), Some(("v2".to_owned(), Build::Tenant)));
        assert_eq!(resolve("b"), platform);
        assert_eq!(registry.generation(), 2);

        // Two rollbacks read at once: v2 -> v1 -> platform default.
        registry.apply(vec![change("a", "v1", false), change("a", "v2", false)], 4);
        assert_eq!(resolve("a"), platform);
    }

    #[tokio::test]
    async fn a_failed_load_is_not_kept() {
        let registry = Registry::default();
        let key = || ("sha".to_owned(), World::Api);
        let attempts = AtomicU64::new(0);
        for _ in 0..2 {
            let loaded = registry
                .get_or_load(key(), || async {
                    attempts.fetch_add(1, Ordering::Relaxed);
                    Err::<LoadedComponent, _>(anyhow::anyhow!("no such component"))
                })
                .await;
            assert!(loaded.is_err());
        }
        assert_eq!(
            attempts.load(Ordering::Relaxed),
            2,
            "the second request tried again"
        );
        let stats = registry.stats();
        assert_eq!((stats.loaded, stats.loads), (0, 0));
        assert_eq!(
            registry.evict_idle(Duration::ZERO),
            0,
            "nothing loaded, nothing evicted"
        );
    }
}
