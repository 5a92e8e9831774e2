//! Conversions between the store's types and the bindings of the WIT `store` interface.
//!
//! `rentald` (wasmtime's bindings) and the Spin adapter (wit-bindgen's) each generate their
//! own Rust types for the same WIT records, so the conversions cannot be plain functions here;
//! [`wit_store_conversions!`] writes them once for a bindings module.

/// Defines, in the calling module, the conversions between the bindings module `$wit` of
/// `rental:platform/store` and this crate's types: `store_error`, `key_part`, `wit_key_part`,
/// `bound`, `range`, `scan`, `expect`, `mode`, `document`, `kept_document`, `entry`, `change`
/// and `index_keys`.
#[macro_export]
macro_rules! wit_store_conversions {
    ($wit:path) => {
        use $wit as wit_bindings;

        /// The guest's view of a store error. A fault has none: `Err` carries its message,
        /// and the driver traps.
        fn store_error(
            error: $crate::StoreError,
        ) -> ::core::result::Result<wit_bindings::StoreError, ::std::string::String> {
            match error {
                $crate::StoreError::Conflict => Ok(wit_bindings::StoreError::Conflict),
                $crate::StoreError::Invalid(m) => Ok(wit_bindings::StoreError::Invalid(m)),
                $crate::StoreError::Unavailable(m) => Ok(wit_bindings::StoreError::Unavailable(m)),
                $crate::StoreError::Fault(m) => Err(m),
            }
        }

        fn key_part(part: wit_bindings::KeyPart) -> $crate::domain::store::KeyPart {
            match part {
                wit_bindings::KeyPart::Int(v) => $crate::domain::store::KeyPart::Int(v),
                wit_bindings::KeyPart::Text(v) => $crate::domain::store::KeyPart::Text(v),
                wit_bindings::KeyPart::Time(v) => $crate::domain::store::KeyPart::Time(v),
            }
        }

        fn wit_key_part(part: $crate::domain::store::KeyPart) -> wit_bindings::KeyPart {
            match part {
                $crate::domain::store::KeyPart::Int(v) => wit_bindings::KeyPart::Int(v),
                $crate::domain::store::KeyPart::Text(v) => wit_bindings::KeyPart::Text(v),
                $crate::domain::store::KeyPart::Time(v) => wit_bindings::KeyPart::Time(v),
            }
        }

        fn bound(bound: wit_bindings::Bound) -> $crate::domain::store::Bound {
            match bound {
                wit_bindings::Bound::Inclusive(parts) => $crate::domain::store::Bound::Inclusive(
                    parts.into_iter().map(key_part).collect(),
                ),
                wit_bindings::Bound::Exclusive(parts) => $crate::domain::store::Bound::Exclusive(
                    parts.into_iter().map(key_part).collect(),
                ),
            }
        }

        fn range(range: wit_bindings::Range) -> $crate::Range {
            $crate::Range {
                collection: range.collection,
                index: range.index,
                keys: $crate::domain::store::KeyRange {
                    lower: range.lower.map(bound),
                    upper: range.upper.map(bound),
                },
            }
        }

        fn scan(query: wit_bindings::Scan) -> $crate::Scan {
            $crate::Scan {
                range: range(query.range),
                descending: query.descending,
                skip: query.skip,
                limit: query.limit,
            }
        }

        fn expect(expected: wit_bindings::Expect) -> $crate::Expect {
            match expected {
                wit_bindings::Expect::Any => $crate::Expect::Any,
                wit_bindings::Expect::Absent => $crate::Expect::Absent,
                wit_bindings::Expect::Revision(r) => $crate::Expect::Revision(r),
            }
        }

        fn mode(mode: wit_bindings::Mode) -> $crate::Mode {
            match mode {
                wit_bindings::Mode::ReadOnly => $crate::Mode::ReadOnly,
                wit_bindings::Mode::ReadWrite => $crate::Mode::ReadWrite,
            }
        }

        fn document(doc: $crate::Document) -> wit_bindings::Document {
            wit_bindings::Document {
                id: doc.id,
                revision: doc.revision,
                body: doc.body,
            }
        }

        fn kept_document(doc: $crate::KeptDocument) -> wit_bindings::KeptDocument {
            wit_bindings::KeptDocument {
                id: doc.id,
                revision: doc.revision,
                body: doc.body,
            }
        }

        fn entry(entry: $crate::Entry) -> wit_bindings::Entry {
            wit_bindings::Entry {
                id: entry.id,
                key: entry.key.into_iter().map(wit_key_part).collect(),
            }
        }

        fn change(change: $crate::Change) -> wit_bindings::Change {
            wit_bindings::Change {
                position: change.position,
                id: change.id,
                revision: change.revision,
                body: change.body,
                changed_at: change.changed_at.timestamp_micros(),
            }
        }

        fn index_keys(indexes: Vec<wit_bindings::IndexKey>) -> Vec<$crate::Index> {
            indexes
                .into_iter()
                .map(|index| $crate::Index {
                    name: index.name,
                    parts: index.parts.into_iter().map(key_part).collect(),
                })
                .collect()
        }
    };
}
