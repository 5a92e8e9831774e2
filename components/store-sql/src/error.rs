//! How store operations fail, and the rule of one open transaction per request.

/// How a store operation fails. The first three are the WIT `store-error`, for the guest to
/// handle; a fault is not the guest's to handle, and drivers turn it into a trap.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum StoreError {
    #[error("conflict with a concurrent write")]
    Conflict,
    #[error("invalid request: {0}")]
    Invalid(String),
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// A result the store cannot make sense of (a malformed stored key, a column of another
    /// kind).
    #[error("{0}")]
    Fault(String),
}

impl StoreError {
    /// The answer to any call on a transaction after its commit.
    pub fn committed() -> Self {
        Self::Invalid("the transaction has already been committed".to_owned())
    }
}

/// The rule that a request holds at most one open transaction, in `rentald` and under Spin
/// alike: a second `begin` before the first transaction ends is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OneTransaction {
    open: bool,
}

impl OneTransaction {
    /// A free slot.
    pub const fn new() -> Self {
        Self { open: false }
    }

    /// Takes the request's transaction slot, or refuses when it is taken.
    pub fn begin(&mut self) -> Result<(), StoreError> {
        if self.open {
            return Err(StoreError::Invalid(
                "a transaction is already open in this request".to_owned(),
            ));
        }
        self.open = true;
        Ok(())
    }

    /// Frees the slot: the transaction committed, was dropped or failed to begin.
    pub fn end(&mut self) {
        self.open = false;
    }
}

impl Default for OneTransaction {
    fn default() -> Self {
        Self::new()
    }
}
