//! The platform's imports in a native build, answered by the [`TestHost`](super::TestHost)
//! running the current request, with the names and signatures of the WIT bindings.

use super::with_host;

/// `rental:platform/context`.
pub mod context {
    use super::with_host;

    pub use crate::bindings::rental::platform::context::ApiUser;

    pub fn tenant() -> String {
        with_host(|host| host.tenant.clone())
    }

    pub fn caller() -> Option<ApiUser> {
        with_host(|host| {
            host.caller.as_ref().map(|caller| ApiUser {
                user_id: caller.user_id,
                user_name: caller.user_name.clone(),
                permissions: caller.permissions.clone(),
            })
        })
    }

    pub fn language() -> String {
        with_host(|host| host.language.as_str().to_owned())
    }

    pub fn correlation_id() -> String {
        with_host(|host| host.correlation_id.clone())
    }

    pub fn setting(key: &str) -> Option<String> {
        with_host(|host| host.settings.get(key).cloned())
    }
}

/// `rental:platform/store`, on the test host's in-memory SQLite database through the store's
/// own statements (`rental_store_sql`): the rules `rentald` applies, not an imitation.
pub mod store {
    use rental_store_sql::{self as sql, OpenTransaction, Scope};

    pub use crate::bindings::rental::platform::store::{
        Bound, Change, Document, Entry, Expect, IndexKey, KeptDocument, KeyPart, Mode, Range, Scan,
        StoreError,
    };

    use super::super::{Host, current};

    rental_store_sql::wit_store_conversions!(crate::bindings::rental::platform::store);

    /// A fault traps a component; natively it fails the test with its message.
    fn guest_error(error: sql::StoreError) -> StoreError {
        store_error(error).unwrap_or_else(|message| panic!("store fault: {message}"))
    }

    /// An open transaction of the test host, until it commits or is dropped.
    pub struct Transaction {
        open: OpenTransaction<Host>,
    }

    pub fn begin(requested: Mode) -> Result<Transaction, StoreError> {
        let host = current();
        let scope = host.begin(mode(requested)).map_err(guest_error)?;
        Ok(Transaction {
            open: OpenTransaction::new(host, scope),
        })
    }

    /// A body kept in this test host.
    pub fn read_kept(body: u32) -> Option<String> {
        current().kept.borrow().get(body).map(str::to_owned)
    }

    /// SQLite numbers every change as it is written: a read-only transaction reads the feed.
    pub fn changes(collection: &str, after: u64, limit: u32) -> Result<Vec<Change>, StoreError> {
        begin(Mode::ReadOnly)?.with(
            |s| s.changes(collection, after, limit),
            |changes| changes.into_iter().map(change).collect(),
        )
    }

    impl Transaction {
        /// Runs the plan that `build` makes for the open transaction.
        fn with<T, U>(
            &self,
            build: impl FnOnce(&Scope) -> sql::Plan<T>,
            map: impl FnOnce(T) -> U,
        ) -> Result<U, StoreError> {
            self.open.run(build).map(map).map_err(guest_error)
        }

        pub fn get(&self, collection: &str, id: &str) -> Result<Option<Document>, StoreError> {
            self.with(|s| s.get(collection, id), |found| found.map(document))
        }

        pub fn get_many(
            &self,
            collection: &str,
            ids: &[String],
        ) -> Result<Vec<Document>, StoreError> {
            self.with(
                |s| s.get_many(collection, ids),
                |found| found.into_iter().map(document).collect(),
            )
        }

        pub fn put(
            &self,
            collection: &str,
            id: &str,
            body: &str,
            indexes: &[IndexKey],
            expected: Expect,
        ) -> Result<u64, StoreError> {
            let indexes = index_keys(indexes.to_vec());
            self.with(
                |s| s.put(collection, id, body, &indexes, expect(expected)),
                |revision| revision,
            )
        }

        pub fn delete(
            &self,
            collection: &str,
            id: &str,
            expected: Expect,
        ) -> Result<(), StoreError> {
            self.with(|s| s.delete(collection, id, expect(expected)), |()| ())
        }

        pub fn scan(&self, query: &Scan) -> Result<Vec<Document>, StoreError> {
            let query = scan(query.clone());
            self.with(
                |s| s.scan(&query),
                |found| found.into_iter().map(document).collect(),
            )
        }

        pub fn scan_kept(&self, query: &Scan) -> Result<Vec<KeptDocument>, StoreError> {
            let query = scan(query.clone());
            let found = self.with(|s| s.scan(&query), |found| found)?;
            let kept = current()
                .kept
                .borrow_mut()
                .keep(found)
                .map_err(guest_error)?;
            Ok(kept.into_iter().map(kept_document).collect())
        }

        pub fn keys(&self, query: &Scan) -> Result<Vec<Entry>, StoreError> {
            let query = scan(query.clone());
            self.with(
                |s| s.keys(&query),
                |found| found.into_iter().map(entry).collect(),
            )
        }

        pub fn count(&self, query: &Range) -> Result<u64, StoreError> {
            let query = range(query.clone());
            self.with(|s| s.count(&query), |count| count)
        }

        pub fn next_id(&self, sequence: &str) -> Result<i64, StoreError> {
            self.with(|s| s.next_id(sequence), |id| id)
        }

        pub fn publish(
            &self,
            topic: &str,
            payload: &str,
            dedupe_key: Option<&str>,
        ) -> Result<bool, StoreError> {
            let now = chrono::Utc::now().timestamp_micros();
            self.with(
                |s| s.publish(topic, payload, dedupe_key, now),
                |fresh| fresh,
            )
        }

        pub fn commit(&self) -> Result<(), StoreError> {
            let Some(host) = self.open.end() else {
                return Err(guest_error(sql::StoreError::committed()));
            };
            host.commit().map_err(guest_error)
        }
    }

    impl Drop for Transaction {
        fn drop(&mut self) {
            if let Some(host) = self.open.end() {
                host.rollback();
            }
        }
    }
}

/// `rental:platform/secrets`: the secrets given to the test host.
#[cfg(feature = "webhook")]
pub mod secrets {
    use super::with_host;

    pub fn get(name: &str) -> Option<String> {
        with_host(|host| host.secrets.get(name).cloned())
    }
}

/// `rental:platform/bank`: the settlements given to the test host, per bank.
#[cfg(feature = "webhook")]
pub mod bank {
    use super::with_host;

    pub use crate::bindings::webhook::rental::platform::bank::{BankError, Settlement};

    /// A bank the test host was given answers its settlements and `None` for any other id;
    /// any other bank is not configured.
    pub fn confirm_settlement(
        bank: &str,
        settlement_id: &str,
    ) -> Result<Option<Settlement>, BankError> {
        with_host(|host| match host.banks.get(bank) {
            Some(settlements) => Ok(settlements.get(settlement_id).cloned()),
            None => Err(BankError::NotConfigured(format!(
                "the test host has no settlements of bank {bank}"
            ))),
        })
    }
}

/// Random bytes: deterministic in the test host, so a test sees the same ids on every run.
pub fn random_bytes(len: u64) -> Vec<u8> {
    with_host(|host| {
        (0..len)
            .map(|_| {
                // SplitMix64: well spread, no dependency.
                let mut z = host.random.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
                host.random.set(z);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                (z ^ (z >> 31)) as u8
            })
            .collect()
    })
}
