//! Password verifications, bounded. Each needs argon2's memory (about 19 MiB) on a blocking
//! thread while it runs, so at most [`LoginLimits::concurrency`] run at once, each in memory
//! kept for the next; a login that cannot start its verification within
//! [`LoginLimits::queue_wait`] is turned away (503 with `Retry-After`), and so is one that finds
//! too many waiting already, rather than joining a queue that only grows.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use argon2::password_hash::{self, Output, PasswordHash};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::AuthError;

/// How many password verifications run at once, and how long a login waits for one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginLimits {
    pub concurrency: NonZeroUsize,
    pub queue_wait: Duration,
}

impl Default for LoginLimits {
    /// One verification per CPU: more would only share the CPUs, holding more memory.
    fn default() -> Self {
        Self {
            concurrency: std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN),
            queue_wait: Duration::from_secs(2),
        }
    }
}

/// Logins that may wait per verification slot: about as many as one slot verifies within the
/// default queue wait; more could only time out.
const WAITING_PER_SLOT: usize = 64;

pub struct Verifier {
    slots: Arc<Semaphore>,
    /// Argon2's memory of the verifications that ran, for the next ones: at most one per slot.
    /// Memory each verification allocated itself would stay with the allocator of whichever
    /// blocking thread ran it, growing with the threads rather than the slots.
    memory: Arc<Mutex<Vec<Vec<Block>>>>,
    queue_wait: Duration,
    waiting: AtomicUsize,
    max_waiting: usize,
}

impl Verifier {
    pub fn new(limits: LoginLimits) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(limits.concurrency.get())),
            memory: Arc::default(),
            queue_wait: limits.queue_wait,
            waiting: AtomicUsize::new(0),
            max_waiting: limits.concurrency.get().saturating_mul(WAITING_PER_SLOT),
        }
    }

    /// Whether `password` matches the PHC string `hash`, or [`AuthError::Busy`].
    pub async fn verify(&self, password: String, hash: String) -> Result<bool, AuthError> {
        let slot = self.slot().await?;
        let pool = self.memory.clone();
        // The slot goes with the work: a client that leaves does not free it while its
        // verification still runs. It is freed last, after the memory is back in the pool.
        Ok(tokio::task::spawn_blocking(move || {
            let _slot = slot;
            let mut memory = lock(&pool).pop().unwrap_or_default();
            let matches = verify_password(&password, &hash, &mut memory);
            lock(&pool).push(memory);
            matches
        })
        .await?)
    }

    async fn slot(&self) -> Result<OwnedSemaphorePermit, AuthError> {
        let busy = || AuthError::Busy(self.queue_wait.as_secs_f64().ceil().max(1.0) as u64);
        let entered = self
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max_waiting).then_some(n + 1)
            })
            .is_ok();
        if !entered {
            return Err(busy());
        }
        let _waiting = Waiting(&self.waiting);
        match tokio::time::timeout(self.queue_wait, self.slots.clone().acquire_owned()).await {
            Ok(Ok(slot)) => Ok(slot),
            // The semaphore is never closed; a timeout is the busy case.
            Ok(Err(_)) | Err(_) => Err(busy()),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether `password` matches the argon2 PHC string `phc`, computed in `memory` (grown to what
/// the hash's parameters need).
fn verify_password(password: &str, phc: &str, memory: &mut Vec<Block>) -> bool {
    matches_hash(password, phc, memory).unwrap_or(false)
}

/// What `PasswordVerifier::verify_password` does, but in memory of the caller's.
fn matches_hash(password: &str, phc: &str, memory: &mut Vec<Block>) -> password_hash::Result<bool> {
    let hash = PasswordHash::new(phc)?;
    let (Some(salt), Some(expected)) = (hash.salt, hash.hash) else {
        return Ok(false);
    };
    let algorithm = Algorithm::try_from(hash.algorithm)?;
    let version = hash
        .version
        .map(Version::try_from)
        .transpose()?
        .unwrap_or_default();
    let params = Params::try_from(&hash)?;
    let mut salt_bytes = [0; 64];
    let salt = salt.decode_b64(&mut salt_bytes)?;
    memory.resize(params.block_count(), Block::new());
    let argon2 = Argon2::new(algorithm, version, params);
    let computed = Output::init_with(expected.len(), |out| {
        Ok(argon2.hash_password_into_with_memory(password.as_bytes(), salt, out, &mut *memory)?)
    })?;
    // `Output` compares in constant time.
    Ok(computed == expected)
}

/// One login waiting for a slot, counted until it stops waiting.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::hash_password;

    #[test]
    fn passwords_verify_only_against_their_hash() {
        let hash = hash_password("s3cret").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        let mut memory = Vec::new();
        assert!(verify_password("s3cret", &hash, &mut memory));
        assert!(!memory.is_empty());
        assert!(!verify_password("S3cret", &hash, &mut memory));
        assert!(
            verify_password("s3cret", &hash, &mut memory),
            "in used memory"
        );
        assert!(!verify_password("s3cret", "not a hash", &mut memory));
        let other = hash_password("other").unwrap();
        assert!(!verify_password("s3cret", &other, &mut memory));
    }

    #[tokio::test]
    async fn a_login_that_cannot_start_in_time_is_busy() {
        let verifier = Verifier::new(LoginLimits {
            concurrency: NonZeroUsize::MIN,
            queue_wait: Duration::from_millis(20),
        });
        let hash = hash_password("s3cret").unwrap();
        let held = verifier.slot().await.unwrap();
        assert!(matches!(
            verifier.verify("s3cret".to_owned(), hash.clone()).await,
            Err(AuthError::Busy(1))
        ));
        assert_eq!(verifier.waiting.load(Ordering::Acquire), 0);
        drop(held);
        assert!(verifier.verify("s3cret".to_owned(), hash).await.unwrap());
        assert_eq!(
            lock(&verifier.memory).len(),
            1,
            "its memory kept for the next"
        );
    }

    #[tokio::test]
    async fn a_login_finding_too_many_waiting_is_busy_at_once() {
        let verifier = Verifier::new(LoginLimits {
            concurrency: NonZeroUsize::MIN,
            queue_wait: Duration::from_secs(600),
        });
        verifier.waiting.store(WAITING_PER_SLOT, Ordering::Release);
        assert!(matches!(verifier.slot().await, Err(AuthError::Busy(600))));
    }
}
