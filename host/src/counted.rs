//! How many of something each key holds at once, under a cap per key: connections per client
//! address, instances per tenant.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};

/// Counts what each key holds; a key holding nothing takes no memory.
pub struct Counted<K: Hash + Eq + Clone> {
    limit: usize,
    held: Mutex<HashMap<K, usize>>,
}

impl<K: Hash + Eq + Clone> Counted<K> {
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            held: Mutex::new(HashMap::new()),
        })
    }

    fn held(&self) -> MutexGuard<'_, HashMap<K, usize>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One more for `key`, held until the returned [`Held`] is dropped; `None` when `key`
    /// already holds the limit.
    pub fn take(self: &Arc<Self>, key: K) -> Option<Held<K>> {
        let mut held = self.held();
        let count = held.entry(key.clone()).or_default();
        if *count >= self.limit {
            return None;
        }
        *count += 1;
        Some(Held {
            counted: self.clone(),
            key,
        })
    }
}

/// One of what a key holds, given back when dropped.
pub struct Held<K: Hash + Eq + Clone> {
    counted: Arc<Counted<K>>,
    key: K,
}

impl<K: Hash + Eq + Clone> Drop for Held<K> {
    fn drop(&mut self) {
        let mut held = self.counted.held();
        if let Some(count) = held.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_holds_up_to_the_limit_and_nothing_stays_behind() {
        let counted = Counted::new(2);
        let a = counted.take("a").unwrap();
        let _b = counted.take("a").unwrap();
        assert!(counted.take("a").is_none());
        assert!(counted.take("b").is_some(), "another key");
        drop(a);
        let again = counted.take("a");
        assert!(again.is_some(), "given back when dropped");
        drop(again);
        drop(_b);
        assert!(
            counted.held().is_empty(),
            "a key holding nothing is forgotten"
        );
    }
}
