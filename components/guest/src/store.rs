//! Typed transactions over the tenant's document store (`rental:platform/store`).
//!
//! A [`Transaction`] reads and writes values that implement [`Stored`]: the collection, the
//! id and the index entries come from the value's type, so a component never spells them.
//! Index ranges are [`Range`]s: an index of `T` and a [`KeyRange`] within it, as the domain's
//! paging and date rules build them.
//!
//! The host binds every call to the request's tenant. Errors the component can handle arrive
//! as [`StoreError`]; a [`StoreError::Conflict`] means "retry from the start", which
//! [`retry_on_conflict`] does. Host faults trap instead and never reach the component.

use std::fmt;
use std::marker::PhantomData;

use chrono::DateTime;

use rental_domain::store::View;
pub use rental_domain::store::{Change, Expect, Mode};
use rental_domain::{Bound, KeyPart, KeyRange, Stored};
use serde::Serialize;

use crate::host::store as wit;

/// How many times [`retry_on_conflict`] runs its closure before giving up.
pub const MAX_ATTEMPTS: u32 = 5;

/// The limit of a [`Scan`] that sets none: the largest page `rentald` returns from one `scan`
/// call (it refuses a larger limit).
pub const DEFAULT_SCAN_LIMIT: u32 = 1_000;

/// The most ids one `get-many` call takes (the WIT's limit).
pub const GET_MANY_LIMIT: usize = 1_000;

/// Entries asked for per call when [`Transaction::all_keys`] walks a range. Well under what a
/// host returns from one `keys` call (100 000 for `rentald`).
const KEYS_PAGE: u32 = 10_000;

/// A store call that failed in a way the component is expected to handle.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A write condition failed or a concurrent transaction won: retry from the start
    /// ([`retry_on_conflict`]).
    #[error("conflict with a concurrent transaction")]
    Conflict,
    /// The host refused the call itself (bad index name, write in a read-only transaction...):
    /// a bug in the component.
    #[error("invalid store request: {0}")]
    Invalid(String),
    /// The database is unreachable or timed out.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// A stored document does not read as the type asked for.
    #[error("document {collection}/{id} is not a valid {collection} document: {source}")]
    Decode {
        /// The collection of the document.
        collection: &'static str,
        /// The document id.
        id: String,
        /// What serde said.
        source: serde_json::Error,
    },
    /// A value could not be serialised for writing.
    #[error("a {what} could not be serialised: {source}")]
    Encode {
        /// What was being written: a collection or a queue topic.
        what: String,
        /// What serde said.
        source: serde_json::Error,
    },
}

impl From<wit::StoreError> for StoreError {
    fn from(error: wit::StoreError) -> Self {
        match error {
            wit::StoreError::Conflict => StoreError::Conflict,
            wit::StoreError::Invalid(message) => StoreError::Invalid(message),
            wit::StoreError::Unavailable(message) => StoreError::Unavailable(message),
        }
    }
}

/// An error that may be a [`StoreError::Conflict`], so that [`retry_on_conflict`] can run a
/// closure returning it again.
pub trait IsConflict {
    /// Whether running the transaction again from the start may succeed.
    fn is_conflict(&self) -> bool;
}

impl IsConflict for StoreError {
    fn is_conflict(&self) -> bool {
        matches!(self, StoreError::Conflict)
    }
}

/// Runs `attempt` (which begins, uses and commits its own transaction) until it does not fail
/// with a conflict, at most [`MAX_ATTEMPTS`] times; the last conflict is returned when every
/// attempt conflicts. Any other outcome is returned at once.
pub fn retry_on_conflict<T, E: IsConflict>(
    mut attempt: impl FnMut() -> Result<T, E>,
) -> Result<T, E> {
    let mut tries = 1;
    loop {
        match attempt() {
            Err(error) if error.is_conflict() && tries < MAX_ATTEMPTS => tries += 1,
            outcome => return outcome,
        }
    }
}

/// A stored value with its id and revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document<T> {
    /// The document id within its collection.
    pub id: String,
    /// The revision the value was read at: 1 after the first write, one more with every write.
    /// Pass it to [`Expect::Revision`] for a compare-and-swap.
    pub revision: u64,
    /// The value.
    pub value: T,
}

impl<T: Stored> Document<T> {
    /// Decodes a document read from the store.
    pub(crate) fn decode(document: wit::Document) -> Result<Self, StoreError> {
        match serde_json::from_str(&document.body) {
            Ok(value) => Ok(Self {
                id: document.id,
                revision: document.revision,
                value,
            }),
            Err(source) => Err(StoreError::Decode {
                collection: T::COLLECTION,
                id: document.id,
                source,
            }),
        }
    }
}

/// A document of a view ([`View`]) as the store rendered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The document id: its source document's.
    pub id: String,
    /// The rendering, as the view's `render` wrote it.
    pub body: String,
}

impl From<wit::Document> for Rendered {
    fn from(document: wit::Document) -> Self {
        Self {
            id: document.id,
            body: document.body,
        }
    }
}

/// A document of a view as the store rendered it, its body kept in the host
/// ([`Transaction::scan_view_kept`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptRendered {
    /// The document id: its source document's.
    pub id: String,
    /// The rendering, kept by the host for the answer.
    pub body: KeptBody,
}

/// A body the host keeps for the rest of the request: a [`Body`](crate::http::Body) that
/// includes it gets it as it is, without its bytes passing through the component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeptBody(u32);

impl KeptBody {
    /// The body's bytes, copied into the component. Only while serving the request that kept
    /// it: a body the host does not know traps (panics natively).
    pub fn read(self) -> String {
        wit::read_kept(self.0)
            .unwrap_or_else(|| panic!("kept body {} is not kept by this request's host", self.0))
    }

    /// The number the host knows the body by.
    pub(crate) fn number(self) -> u32 {
        self.0
    }
}

/// A scan of `T`'s index that reads the documents of `view`, a view of `T`'s collection.
fn view_scan<T: Stored>(view: &View, scan: &Scan<T>) -> Result<wit::Scan, StoreError> {
    let mut query = scan.to_wit();
    query.range.collection = of_source::<T>(view)?.to_owned();
    Ok(query)
}

/// The collection of `view`, which must be a view of `T`'s.
fn of_source<T: Stored>(view: &View) -> Result<&'static str, StoreError> {
    if view.source == T::COLLECTION {
        Ok(view.collection)
    } else {
        Err(StoreError::Invalid(format!(
            "`{}` is a view of `{}`, not of `{}`",
            view.collection,
            view.source,
            T::COLLECTION
        )))
    }
}

/// The changes of `view`'s feed after position `after` (0 for the first), in the order they
/// committed, at most `limit`: a host may return fewer (`rentald` at most 1,000), so an empty
/// answer, not a short one, is the feed's end for now. A change that commits while this reads
/// is in the answer or after all of it: asking again from the last position read misses none.
/// Reads outside any transaction: refused ([`StoreError::Invalid`]) while one is open.
pub fn changes(view: &View, after: u64, limit: u32) -> Result<Vec<Change>, StoreError> {
    wit::changes(view.collection, after, limit)?
        .into_iter()
        .map(|change| {
            let changed_at =
                DateTime::from_timestamp_micros(change.changed_at).ok_or_else(|| {
                    StoreError::Invalid(format!(
                        "change {} of `{}` has no valid time: {}",
                        change.position, view.collection, change.changed_at
                    ))
                })?;
            Ok(Change {
                position: change.position,
                id: change.id,
                revision: change.revision,
                body: change.body,
                changed_at,
            })
        })
        .collect()
}

/// An index entry without its document: the document id and the entry's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The document id.
    pub id: String,
    /// The key under which the index holds the document.
    pub key: Vec<KeyPart>,
}

/// A range of one index of the documents of `T`.
pub struct Range<T> {
    index: &'static str,
    keys: KeyRange,
    of: PhantomData<fn() -> T>,
}

impl<T: Stored> Range<T> {
    /// The keys `keys` of the index `index` of `T`'s collection.
    pub fn new(index: &'static str, keys: KeyRange) -> Self {
        Self {
            index,
            keys,
            of: PhantomData,
        }
    }

    /// The whole index.
    pub fn all(index: &'static str) -> Self {
        Self::new(index, KeyRange::all())
    }

    /// Every key of the index that starts with `prefix`.
    pub fn prefix(index: &'static str, prefix: Vec<KeyPart>) -> Self {
        Self::new(index, KeyRange::prefix(prefix))
    }

    /// A scan of this range in ascending order from its first entry, at most
    /// [`DEFAULT_SCAN_LIMIT`] entries.
    pub fn scan(self) -> Scan<T> {
        Scan {
            range: self,
            descending: false,
            skip: 0,
            limit: DEFAULT_SCAN_LIMIT,
        }
    }

    fn to_wit(&self) -> wit::Range {
        wit::Range {
            collection: T::COLLECTION.to_owned(),
            index: self.index.to_owned(),
            lower: self.keys.lower.as_ref().map(wit_bound),
            upper: self.keys.upper.as_ref().map(wit_bound),
        }
    }
}

// Manual impls: derives would ask `T` for the same trait although no `T` is stored.
impl<T> Clone for Range<T> {
    fn clone(&self) -> Self {
        Self {
            index: self.index,
            keys: self.keys.clone(),
            of: PhantomData,
        }
    }
}

impl<T> fmt::Debug for Range<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Range")
            .field("index", &self.index)
            .field("keys", &self.keys)
            .finish()
    }
}

impl<T> PartialEq for Range<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index && self.keys == other.keys
    }
}

/// A walk over a [`Range`]: direction, entries to skip and the most to return.
pub struct Scan<T> {
    range: Range<T>,
    descending: bool,
    skip: u32,
    limit: u32,
}

impl<T> Scan<T> {
    /// The same scan in descending order when `descending` is true.
    #[must_use]
    pub fn descending(mut self, descending: bool) -> Self {
        self.descending = descending;
        self
    }

    /// The same scan, skipping the first `skip` entries.
    #[must_use]
    pub fn skip(mut self, skip: u32) -> Self {
        self.skip = skip;
        self
    }

    /// The same scan, returning at most `limit` entries.
    #[must_use]
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = limit;
        self
    }
}

impl<T: Stored> Scan<T> {
    fn to_wit(&self) -> wit::Scan {
        wit::Scan {
            range: self.range.to_wit(),
            descending: self.descending,
            skip: self.skip,
            limit: self.limit,
        }
    }
}

impl<T> Clone for Scan<T> {
    fn clone(&self) -> Self {
        Self {
            range: self.range.clone(),
            descending: self.descending,
            skip: self.skip,
            limit: self.limit,
        }
    }
}

impl<T> fmt::Debug for Scan<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scan")
            .field("range", &self.range)
            .field("descending", &self.descending)
            .field("skip", &self.skip)
            .field("limit", &self.limit)
            .finish()
    }
}

impl<T> PartialEq for Scan<T> {
    fn eq(&self, other: &Self) -> bool {
        self.range == other.range
            && self.descending == other.descending
            && self.skip == other.skip
            && self.limit == other.limit
    }
}

/// A store transaction. Dropping it without [`Transaction::commit`] rolls it back; a request
/// has at most one open at a time.
pub struct Transaction {
    inner: wit::Transaction,
}

impl fmt::Debug for Transaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transaction").finish_non_exhaustive()
    }
}

impl Transaction {
    /// Begins a transaction on the request's tenant.
    pub fn begin(mode: Mode) -> Result<Self, StoreError> {
        let mode = match mode {
            Mode::ReadOnly => wit::Mode::ReadOnly,
            Mode::ReadWrite => wit::Mode::ReadWrite,
        };
        Ok(Self {
            inner: wit::begin(mode)?,
        })
    }

    /// The document of `T` with this id, if there is one.
    pub fn get<T: Stored>(&self, id: &str) -> Result<Option<Document<T>>, StoreError> {
        self.inner
            .get(T::COLLECTION, id)?
            .map(Document::decode)
            .transpose()
    }

    /// The documents of `T` with these ids, in the order asked; missing ones are left out.
    /// More than [`GET_MANY_LIMIT`] ids are asked for in several calls.
    pub fn get_many<T: Stored>(&self, ids: &[String]) -> Result<Vec<Document<T>>, StoreError> {
        let mut documents = Vec::new();
        for chunk in ids.chunks(GET_MANY_LIMIT) {
            for document in self.inner.get_many(T::COLLECTION, chunk)? {
                documents.push(Document::decode(document)?);
            }
        }
        Ok(documents)
    }

    /// Writes `value` with all its index entries, if the document is as `expect` says.
    /// Returns the new revision. With [`Expect::Absent`] or [`Expect::Revision`] the host may
    /// send the write with the transaction's next call: a failed expectation is then that
    /// call's [`StoreError::Conflict`], and every later call's, [`Transaction::commit`]'s too.
    pub fn put<T: Stored>(&self, value: &T, expect: Expect) -> Result<u64, StoreError> {
        let record = value.record().map_err(|source| StoreError::Encode {
            what: T::COLLECTION.to_owned(),
            source,
        })?;
        let indexes: Vec<wit::IndexKey> = record
            .indexes
            .into_iter()
            .map(|index| wit::IndexKey {
                name: index.name.to_owned(),
                parts: index.parts.into_iter().map(wit::KeyPart::from).collect(),
            })
            .collect();
        Ok(self.inner.put(
            record.collection,
            &record.id,
            &record.body,
            &indexes,
            wit_expect(expect),
        )?)
    }

    /// Deletes the document of `T` with this id, if it is as `expect` says.
    pub fn delete<T: Stored>(&self, id: &str, expect: Expect) -> Result<(), StoreError> {
        Ok(self.inner.delete(T::COLLECTION, id, wit_expect(expect))?)
    }

    /// The documents of a scan, in index order.
    pub fn scan<T: Stored>(&self, scan: &Scan<T>) -> Result<Vec<Document<T>>, StoreError> {
        self.inner
            .scan(&scan.to_wit())?
            .into_iter()
            .map(Document::decode)
            .collect()
    }

    /// For each entry of a scan of `T`'s index, in index order, the document of `view` (a
    /// view of `T`'s collection): as the store rendered it, undecoded.
    pub fn scan_view<T: Stored>(
        &self,
        view: &View,
        scan: &Scan<T>,
    ) -> Result<Vec<Rendered>, StoreError> {
        Ok(self
            .inner
            .scan(&view_scan(view, scan)?)?
            .into_iter()
            .map(Rendered::from)
            .collect())
    }

    /// As [`Self::scan_view`], with each rendering kept by the host for the answer instead of
    /// copied into the component: for a page written into the response as the store rendered
    /// it. A request may keep up to 16 MiB of bodies.
    pub fn scan_view_kept<T: Stored>(
        &self,
        view: &View,
        scan: &Scan<T>,
    ) -> Result<Vec<KeptRendered>, StoreError> {
        Ok(self
            .inner
            .scan_kept(&view_scan(view, scan)?)?
            .into_iter()
            .map(|document| KeptRendered {
                id: document.id,
                body: KeptBody(document.body),
            })
            .collect())
    }

    /// The documents of `view` (a view of `T`'s collection) with these ids, in the order
    /// asked; missing ones are left out. As [`Self::get_many`], undecoded.
    pub fn get_many_view<T: Stored>(
        &self,
        view: &View,
        ids: &[String],
    ) -> Result<Vec<Rendered>, StoreError> {
        let collection = of_source::<T>(view)?;
        let mut documents = Vec::new();
        for chunk in ids.chunks(GET_MANY_LIMIT) {
            documents.extend(
                self.inner
                    .get_many(collection, chunk)?
                    .into_iter()
                    .map(Rendered::from),
            );
        }
        Ok(documents)
    }

    /// The index entries of a scan, in index order, without loading documents.
    pub fn keys<T: Stored>(&self, scan: &Scan<T>) -> Result<Vec<Entry>, StoreError> {
        Ok(self
            .inner
            .keys(&scan.to_wit())?
            .into_iter()
            .map(|entry| Entry {
                id: entry.id,
                key: entry.key.into_iter().map(KeyPart::from).collect(),
            })
            .collect())
    }

    /// Every document of a range, in ascending index order, asking the host page by page.
    /// For ranges known to be small (a tenant's active branch offices); lists page instead.
    pub fn scan_all<T: Stored>(&self, range: &Range<T>) -> Result<Vec<Document<T>>, StoreError> {
        walk(DEFAULT_SCAN_LIMIT, |skip, limit| {
            self.scan(&range.clone().scan().skip(skip).limit(limit))
        })
    }

    /// Every index entry of a range, in ascending index order, asking the host page by page.
    pub fn all_keys<T: Stored>(&self, range: &Range<T>) -> Result<Vec<Entry>, StoreError> {
        walk(KEYS_PAGE, |skip, limit| {
            self.keys(&range.clone().scan().skip(skip).limit(limit))
        })
    }

    /// Every index entry of a range whose keys are all distinct (an index whose keys end with
    /// the document's own Id), in ascending order, asking the host page by page from after the
    /// last key read. Each page costs the host only its own entries, where [`Self::all_keys`]
    /// has it step over every entry already read again.
    pub fn all_distinct_keys<T: Stored>(&self, range: &Range<T>) -> Result<Vec<Entry>, StoreError> {
        walk_keys(range.keys.lower.clone(), |lower| {
            let page = Range::<T>::new(
                range.index,
                KeyRange {
                    lower,
                    upper: range.keys.upper.clone(),
                },
            );
            self.keys(&page.scan().limit(KEYS_PAGE))
        })
    }

    /// The number of index entries in a range.
    pub fn count<T: Stored>(&self, range: &Range<T>) -> Result<u64, StoreError> {
        Ok(self.inner.count(&range.to_wit())?)
    }

    /// The next value of a per-tenant sequence, starting at 1. The sequence is held until this
    /// transaction ends, so values are handed out in commit order.
    pub fn next_id(&self, sequence: &str) -> Result<i64, StoreError> {
        Ok(self.inner.next_id(sequence)?)
    }

    /// Queues `message` as JSON on `topic`, committed atomically with this transaction. With a
    /// `dedupe_key`, a second message with the same topic and key is dropped: returns false.
    pub fn publish<M: Serialize + ?Sized>(
        &self,
        topic: &str,
        message: &M,
        dedupe_key: Option<&str>,
    ) -> Result<bool, StoreError> {
        let payload = serde_json::to_string(message).map_err(|source| StoreError::Encode {
            what: format!("message on {topic}"),
            source,
        })?;
        Ok(self.inner.publish(topic, &payload, dedupe_key)?)
    }

    /// Makes every write of the transaction visible at once.
    pub fn commit(self) -> Result<(), StoreError> {
        Ok(self.inner.commit()?)
    }
}

/// Reads a whole range with `read(skip, limit)` calls of `page` entries until one returns
/// nothing. An empty page, not a short one, ends the walk: the WIT lets a host cap a page
/// below the limit asked for. Within a transaction the snapshot does not move, so skipping
/// what was already read neither loses nor repeats entries.
fn walk<E>(
    page: u32,
    mut read: impl FnMut(u32, u32) -> Result<Vec<E>, StoreError>,
) -> Result<Vec<E>, StoreError> {
    let mut all = Vec::new();
    loop {
        let skip = u32::try_from(all.len())
            .map_err(|_| StoreError::Invalid("a range has too many entries to read".to_owned()))?;
        let next = read(skip, page)?;
        if next.is_empty() {
            return Ok(all);
        }
        all.extend(next);
    }
}

/// Reads entries page by page, each page from `lower` (the range's own lower bound) and then
/// from after the last key read, until a page comes back empty.
fn walk_keys(
    lower: Option<Bound>,
    mut read: impl FnMut(Option<Bound>) -> Result<Vec<Entry>, StoreError>,
) -> Result<Vec<Entry>, StoreError> {
    let mut all: Vec<Entry> = Vec::new();
    loop {
        let from = match all.last() {
            Some(entry) => Some(Bound::Exclusive(entry.key.clone())),
            None => lower.clone(),
        };
        let next = read(from)?;
        if next.is_empty() {
            return Ok(all);
        }
        all.extend(next);
    }
}

impl From<KeyPart> for wit::KeyPart {
    fn from(part: KeyPart) -> Self {
        match part {
            KeyPart::Int(value) => wit::KeyPart::Int(value),
            KeyPart::Text(value) => wit::KeyPart::Text(value),
            KeyPart::Time(value) => wit::KeyPart::Time(value),
        }
    }
}

impl From<wit::KeyPart> for KeyPart {
    fn from(part: wit::KeyPart) -> Self {
        match part {
            wit::KeyPart::Int(value) => KeyPart::Int(value),
            wit::KeyPart::Text(value) => KeyPart::Text(value),
            wit::KeyPart::Time(value) => KeyPart::Time(value),
        }
    }
}

fn wit_bound(bound: &Bound) -> wit::Bound {
    let parts = |parts: &[KeyPart]| parts.iter().cloned().map(wit::KeyPart::from).collect();
    match bound {
        Bound::Inclusive(key) => wit::Bound::Inclusive(parts(key)),
        Bound::Exclusive(key) => wit::Bound::Exclusive(parts(key)),
    }
}

fn wit_expect(expect: Expect) -> wit::Expect {
    match expect {
        Expect::Any => wit::Expect::Any,
        Expect::Absent => wit::Expect::Absent,
        Expect::Revision(revision) => wit::Expect::Revision(revision),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_reads_until_an_empty_page() {
        let data: Vec<u32> = (0..25).collect();
        let mut calls = Vec::new();
        let all = walk(10, |skip, limit| {
            calls.push((skip, limit));
            // A host that caps pages at 7 entries.
            let start = usize::try_from(skip).unwrap().min(data.len());
            let end = (start + 7).min(data.len());
            Ok(data[start..end].to_vec())
        })
        .unwrap();
        assert_eq!(all, data);
        assert_eq!(calls, [(0, 10), (7, 10), (14, 10), (21, 10), (25, 10)]);
    }

    #[test]
    fn walk_keys_asks_from_after_the_last_key_read() {
        let entry = |n: i64| Entry {
            id: n.to_string(),
            key: vec![KeyPart::Int(n)],
        };
        let mut asked = Vec::new();
        let all = walk_keys(Some(Bound::Inclusive(vec![KeyPart::Int(3)])), |lower| {
            asked.push(lower.clone());
            // A host that returns at most 7 entries of the keys 0 to 24.
            let first = match lower {
                Some(Bound::Inclusive(key)) => key,
                Some(Bound::Exclusive(key)) => vec![KeyPart::Int(match key[..] {
                    [KeyPart::Int(n)] => n + 1,
                    _ => unreachable!("one integer part"),
                })],
                None => vec![KeyPart::Int(0)],
            };
            let [KeyPart::Int(first)] = first[..] else {
                unreachable!("one integer part")
            };
            Ok((first..25).take(7).map(entry).collect())
        })
        .unwrap();
        assert_eq!(all, (3..25).map(entry).collect::<Vec<_>>());
        let after = |n: i64| Some(Bound::Exclusive(vec![KeyPart::Int(n)]));
        assert_eq!(
            asked,
            [
                Some(Bound::Inclusive(vec![KeyPart::Int(3)])),
                after(9),
                after(16),
                after(23),
                after(24),
            ]
        );
    }

    #[test]
    fn walk_stops_at_the_first_error() {
        let outcome: Result<Vec<u8>, _> = walk(10, |_, _| Err(StoreError::Conflict));
        assert!(matches!(outcome, Err(StoreError::Conflict)));
    }

    #[test]
    fn key_parts_round_trip_through_the_wit_type() {
        for part in [
            KeyPart::Int(-3),
            KeyPart::Text("B-12".to_owned()),
            KeyPart::Time(1_700_000_000_000_000),
        ] {
            assert_eq!(KeyPart::from(wit::KeyPart::from(part.clone())), part);
        }
    }

    #[test]
    fn scans_name_the_collection_of_their_type() {
        let scan = Range::<rental_domain::Car>::prefix("model", vec![KeyPart::Int(4)])
            .scan()
            .descending(true)
            .skip(2)
            .limit(5)
            .to_wit();
        assert_eq!(scan.range.collection, "cars");
        assert_eq!(scan.range.index, "model");
        assert!(matches!(
            scan.range.lower.as_ref(),
            Some(wit::Bound::Inclusive(parts)) if matches!(parts.as_slice(), [wit::KeyPart::Int(4)])
        ));
        assert!(matches!(scan.range.upper, Some(wit::Bound::Inclusive(_))));
        assert!(scan.descending);
        assert_eq!((scan.skip, scan.limit), (2, 5));

        let default = Range::<rental_domain::Car>::all("id").scan().to_wit();
        assert!(default.range.lower.is_none() && default.range.upper.is_none());
        assert!(!default.descending);
        assert_eq!((default.skip, default.limit), (0, DEFAULT_SCAN_LIMIT));
    }
}
