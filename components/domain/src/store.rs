//! How domain values are laid out in the platform's document store.
//!
//! The store (WIT `rental:platform/store`) keeps JSON documents by collection and id, with
//! ordered composite secondary indexes. This module is the single place that says which
//! collection a value lives in and which index entries it carries, so the components (through
//! the WIT store) and the host (demo data, catalogue import) write exactly the same layout.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// What a transaction may do; mirrors the WIT `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A consistent snapshot; writes are refused.
    ReadOnly,
    /// Serialised with other writers of the same documents; nothing is written without a
    /// commit.
    ReadWrite,
}

/// What a write expects to find; mirrors the WIT `expect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Whatever is there (creates or replaces).
    Any,
    /// The document must not exist yet.
    Absent,
    /// The document must be at exactly this revision.
    Revision(u64),
}

/// One part of a composite index key; mirrors the WIT `key-part`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPart {
    Int(i64),
    Text(String),
    /// Microseconds since the Unix epoch, UTC.
    Time(i64),
}

impl From<i64> for KeyPart {
    fn from(value: i64) -> Self {
        KeyPart::Int(value)
    }
}

impl From<&str> for KeyPart {
    fn from(value: &str) -> Self {
        KeyPart::Text(value.to_owned())
    }
}

impl<Tz: chrono::TimeZone> From<chrono::DateTime<Tz>> for KeyPart {
    fn from(value: chrono::DateTime<Tz>) -> Self {
        KeyPart::Time(value.timestamp_micros())
    }
}

/// An index entry of a document: the index name and the key under which the document is found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexKey {
    pub name: &'static str,
    pub parts: Vec<KeyPart>,
}

impl IndexKey {
    pub fn new(name: &'static str, parts: impl IntoIterator<Item = KeyPart>) -> Self {
        Self {
            name,
            parts: parts.into_iter().collect(),
        }
    }
}

/// One end of an index range; mirrors the WIT `bound`.
///
/// Bounds are prefixes: `Inclusive([a])` as a lower bound starts at the first key beginning
/// with `a`, as an upper bound it ends after the last such key; `Exclusive([a])` as a lower
/// bound starts after the last key beginning with `a`, as an upper bound it ends before the
/// first one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bound {
    /// Keys starting with the prefix are in the range.
    Inclusive(Vec<KeyPart>),
    /// Keys starting with the prefix are out of the range.
    Exclusive(Vec<KeyPart>),
}

/// The part of one index between two bounds (`None`: open on that side); mirrors the bounds
/// of the WIT `range`, whose collection and index the caller names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyRange {
    /// Where the range starts; `None` from the first key.
    pub lower: Option<Bound>,
    /// Where the range ends; `None` to the last key.
    pub upper: Option<Bound>,
}

impl KeyRange {
    /// The whole index.
    pub fn all() -> Self {
        Self::default()
    }

    /// Every key that starts with `prefix`; the whole index when `prefix` is empty.
    pub fn prefix(prefix: Vec<KeyPart>) -> Self {
        if prefix.is_empty() {
            return Self::all();
        }
        Self {
            lower: Some(Bound::Inclusive(prefix.clone())),
            upper: Some(Bound::Inclusive(prefix)),
        }
    }
}

/// A document ready to be written: what the store's `put` takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub collection: &'static str,
    pub id: String,
    pub body: String,
    pub indexes: Vec<IndexKey>,
}

/// A value that is stored as one document of a collection.
pub trait Stored: Serialize + DeserializeOwned {
    /// The collection the documents live in.
    const COLLECTION: &'static str;

    /// The document id within the collection.
    fn id(&self) -> String;

    /// Every index entry the document carries. Writing a document replaces all its entries, so
    /// an index can also act as a filter: a document that should not be listed gets no entry.
    fn indexes(&self) -> Vec<IndexKey>;

    /// The document as the store's `put` takes it.
    fn record(&self) -> Result<Record, serde_json::Error> {
        Ok(Record {
            collection: Self::COLLECTION,
            id: self.id(),
            body: serde_json::to_string(self)?,
            indexes: self.indexes(),
        })
    }
}

/// An index whose entries the store keeps counted, per prefix of `depth` parts, so that
/// counting such a prefix (e.g. every booking, or the bookings of one status) costs one row
/// read however large the tenant grows. The counts are updated in the transaction that writes
/// the entries, so they are exact.
///
/// The store relies on two rules, which the collections' tests check: a document has at most
/// one entry in a counted index, and the counted parts are integers or times (fixed width, so
/// the store can cut the prefix off a stored key). Declaring another counted index needs a
/// migration that fills its counts from the entries already stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    pub collection: &'static str,
    pub index: &'static str,
    /// How many leading key parts a count is kept for: 0 counts the whole index.
    pub depth: usize,
}

/// One change of a view's change feed ([`View::feed`]): a write or a delete of one of the
/// view's source documents, as the store hands it out (WIT `store.changes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The change's place in the feed: a feed's changes are numbered in the order they
    /// committed, from 1, without gaps.
    pub position: u64,
    /// The document id.
    pub id: String,
    /// The document's revision after the change; a delete's is one past its last write's.
    pub revision: u64,
    /// The document as the view renders it, as the change left it; `None` when it was
    /// deleted.
    pub body: Option<String>,
    /// When the change was written.
    pub changed_at: chrono::DateTime<chrono::Utc>,
}

/// A collection the store renders from another one: every write of a document of `source`
/// also writes `render(body)` under the same id in `collection`, in the same transaction, and
/// a delete deletes both. Nobody else writes it, so it is never behind its source.
///
/// A view has no indexes of its own: a range or scan that names the view's collection walks
/// the source's indexes and returns the view's documents. A list can so read a page in the form
/// it answers with, instead of decoding and encoding every stored document on every request.
///
/// A view may keep a change feed ([`View::feed`]).
///
/// Declaring another view needs a migration that queues the documents already stored for
/// rendering (`views_pending`, migration `0005_booking_items`), and, for a feed, one that
/// begins it (migration `0008_changes`).
#[derive(Debug, Clone, Copy)]
pub struct View {
    /// The collection whose documents are rendered.
    pub source: &'static str,
    /// The collection that holds the renderings.
    pub collection: &'static str,
    /// A source document's body as the view's body; an error refuses the write.
    pub render: fn(&str) -> Result<String, serde_json::Error>,
    /// Whether the store keeps the view's change feed: every write and delete of a source
    /// document also appends a change (its id, its revision, and its rendering, or none for a
    /// delete) in the same transaction, and the feed returns the changes in the order they
    /// committed (WIT `store.changes`).
    pub feed: bool,
}

impl KeyRange {
    /// The prefix this range covers exactly, if it is one: the whole index is the empty
    /// prefix.
    pub fn as_prefix(&self) -> Option<&[KeyPart]> {
        match (&self.lower, &self.upper) {
            (None, None) => Some(&[]),
            (Some(Bound::Inclusive(p)), None) | (None, Some(Bound::Inclusive(p)))
                if p.is_empty() =>
            {
                Some(&[])
            }
            (Some(Bound::Inclusive(lower)), Some(Bound::Inclusive(upper))) if lower == upper => {
                Some(lower)
            }
            _ => None,
        }
    }
}
