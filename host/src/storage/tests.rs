//! The storage suite, run on SQLite and (when `RENTALD_TEST_DATABASE_URL` names a server) on
//! PostgreSQL: both backends must keep the same promises.

use std::collections::BTreeSet;

use rental_domain::store::{Bound, KeyPart, KeyRange};

use super::Error;
use super::Storage;
use super::documents::{Expect, Index, Mode, Range, Scan};
use super::sqlite::{Connections, Shelf};
use rental_store_sql::{Statement, StoreError, Value};

const POSTGRES_ENV: &str = "RENTALD_TEST_DATABASE_URL";

/// A fresh database of each available backend; PostgreSQL databases are dropped at the end.
struct Databases {
    _dir: tempfile::TempDir,
    stores: Vec<(&'static str, Storage)>,
    postgres: Option<(String, String)>,
}

impl Databases {
    /// A fresh database of each available backend.
    async fn new() -> Self {
        Self::open(true).await
    }

    /// A fresh SQLite database only, for the tests of SQLite's own behaviour: they would
    /// leave a PostgreSQL database behind for nothing.
    async fn sqlite() -> Self {
        Self::open(false).await
    }

    async fn open(with_postgres: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let sqlite = Storage::open(&format!("sqlite://{}", dir.path().join("t.db").display()))
            .await
            .unwrap();
        let mut stores = vec![("sqlite", sqlite)];
        let mut postgres = None;
        match std::env::var(POSTGRES_ENV) {
            _ if !with_postgres => {}
            Ok(admin_url) => {
                let name = format!("rentald_unit_{}", uuid::Uuid::new_v4().simple());
                sqlx::query(&format!("CREATE DATABASE {name}"))
                    .execute(&admin_pool(&admin_url).await)
                    .await
                    .unwrap();
                let mut url = url::Url::parse(&admin_url).unwrap();
                url.set_path(&format!("/{name}"));
                stores.push(("postgres", Storage::open(url.as_str()).await.unwrap()));
                postgres = Some((admin_url, name));
            }
            Err(_) => eprintln!(
                "\n*** SKIPPED: PostgreSQL storage tests ({POSTGRES_ENV} is not set) ***\n"
            ),
        }
        for (_, store) in &stores {
            for tenant in ["a", "b"] {
                store.create_tenant(tenant).await.unwrap();
            }
        }
        Self {
            _dir: dir,
            stores,
            postgres,
        }
    }

    async fn drop_all(self) {
        for (_, store) in &self.stores {
            store.pool().close().await;
        }
        if let Some((admin_url, name)) = self.postgres {
            sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .execute(&admin_pool(&admin_url).await)
                .await
                .unwrap();
        }
    }
}

/// `test` on a store of each backend, whose databases are dropped afterwards.
async fn on_each_backend(test: impl AsyncFn(&str, &Storage)) {
    let dbs = Databases::new().await;
    for (backend, store) in &dbs.stores {
        test(backend, store).await;
    }
    dbs.drop_all().await;
}

async fn admin_pool(url: &str) -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    sqlx::AnyPool::connect(url).await.unwrap()
}

fn index(name: &str, parts: Vec<KeyPart>) -> Index {
    Index {
        name: name.to_owned(),
        parts,
    }
}

fn range(lower: Option<Bound>, upper: Option<Bound>) -> Range {
    Range {
        collection: "things".to_owned(),
        index: "n".to_owned(),
        keys: KeyRange { lower, upper },
    }
}

fn scan(range: Range, descending: bool, skip: u32, limit: u32) -> Scan {
    Scan {
        range,
        descending,
        skip,
        limit,
    }
}

/// A put in a transaction of its own, and its outcome: a failed expectation is told by the
/// put or, for a put sent with the commit (on PostgreSQL), by the commit.
async fn put(
    store: &Storage,
    tenant: &str,
    id: &str,
    n: i64,
    expected: Expect,
) -> Result<u64, StoreError> {
    let mut tx = store.begin(tenant, Mode::ReadWrite).await.unwrap();
    let body = format!("{{\"n\":{n}}}");
    let revision = tx
        .put(
            "things",
            id,
            &body,
            &[index(
                "n",
                vec![KeyPart::Int(n), KeyPart::Text(id.to_owned())],
            )],
            expected,
        )
        .await
        .map_err(store_error)?;
    tx.commit().await.map_err(store_error)?;
    Ok(revision)
}

/// The store's answer in an error that must be one.
fn store_error(error: Error) -> StoreError {
    match error {
        Error::Store(e) => e,
        other => panic!("{other}"),
    }
}

/// SQLite is built without the options that make every thread running statements take a
/// process-wide mutex (`.cargo/config.toml`): the count of its allocations, and one page
/// cache for all connections.
#[tokio::test]
async fn sqlite_is_built_without_process_wide_mutexes() {
    let store = Storage::open_in_memory().await.unwrap();
    let (shared_cache, uncounted): (i64, i64) = sqlx::query_as(
        "SELECT sqlite_compileoption_used('ENABLE_MEMORY_MANAGEMENT'), \
                sqlite_compileoption_used('DEFAULT_MEMSTATUS=0')",
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!((shared_cache, uncounted), (0, 1));
}

#[tokio::test]
async fn revisions_compare_and_swap() {
    on_each_backend(async |backend, store| {
        assert_eq!(
            put(store, "a", "x", 1, Expect::Absent).await,
            Ok(1),
            "{backend}"
        );
        assert_eq!(
            put(store, "a", "x", 1, Expect::Absent).await,
            Err(StoreError::Conflict),
            "{backend}"
        );
        assert_eq!(
            put(store, "a", "x", 2, Expect::Revision(1)).await,
            Ok(2),
            "{backend}"
        );
        assert_eq!(
            put(store, "a", "x", 3, Expect::Revision(1)).await,
            Err(StoreError::Conflict),
            "{backend}"
        );
        assert_eq!(
            put(store, "a", "x", 3, Expect::Any).await,
            Ok(3),
            "{backend}"
        );
        assert_eq!(
            put(store, "a", "y", 9, Expect::Revision(1)).await,
            Err(StoreError::Conflict),
            "{backend}"
        );

        let mut tx = store.begin("a", Mode::ReadOnly).await.unwrap();
        let doc = tx.get("things", "x").await.unwrap().unwrap();
        assert_eq!(
            (doc.revision, doc.body.as_str()),
            (3, "{\"n\":3}"),
            "{backend}"
        );
        assert_eq!(tx.get("things", "y").await.unwrap(), None, "{backend}");
        let write = tx.put("things", "z", "{}", &[], Expect::Any).await;
        assert!(
            matches!(write, Err(Error::Store(StoreError::Invalid(_)))),
            "{backend}: read-only refuses writes"
        );
    })
    .await;
}

#[tokio::test]
async fn indexes_are_replaced_and_ranges_are_prefixes() {
    on_each_backend(async |backend, store| {
        for (id, n) in [("p", 1), ("q", 2), ("r", 2), ("s", 3), ("t", 4)] {
            put(store, "a", id, n, Expect::Any).await.unwrap();
        }
        // Moving "t" from 4 to 5 leaves no entry under 4.
        put(store, "a", "t", 5, Expect::Any).await.unwrap();
        let mut tx = store.begin("a", Mode::ReadOnly).await.unwrap();
        let ids = |docs: Vec<super::documents::Document>| {
            docs.into_iter().map(|d| d.id).collect::<Vec<_>>()
        };
        let all = tx
            .scan(&scan(range(None, None), false, 0, 100))
            .await
            .unwrap();
        assert_eq!(ids(all), ["p", "q", "r", "s", "t"], "{backend}");
        let twos = range(
            Some(Bound::Inclusive(vec![KeyPart::Int(2)])),
            Some(Bound::Inclusive(vec![KeyPart::Int(2)])),
        );
        assert_eq!(tx.count(&twos).await.unwrap(), 2, "{backend}");
        let after_two = range(Some(Bound::Exclusive(vec![KeyPart::Int(2)])), None);
        let docs = tx.scan(&scan(after_two, true, 0, 100)).await.unwrap();
        assert_eq!(
            ids(docs),
            ["t", "s"],
            "{backend}: descending, strictly after 2"
        );
        let below_four = range(None, Some(Bound::Exclusive(vec![KeyPart::Int(4)])));
        let docs = tx.scan(&scan(below_four, false, 1, 2)).await.unwrap();
        assert_eq!(ids(docs), ["q", "r"], "{backend}: skip and limit");
        let four = range(
            Some(Bound::Inclusive(vec![KeyPart::Int(4)])),
            Some(Bound::Inclusive(vec![KeyPart::Int(4)])),
        );
        assert_eq!(
            tx.count(&four).await.unwrap(),
            0,
            "{backend}: the old entry is gone"
        );
        let keys = tx
            .keys(&scan(range(None, None), false, 0, 2))
            .await
            .unwrap();
        assert_eq!(
            keys[1].key,
            vec![KeyPart::Int(2), KeyPart::Text("q".into())],
            "{backend}"
        );
        let many = tx
            .get_many("things", &["s".into(), "nope".into(), "p".into()])
            .await
            .unwrap();
        assert_eq!(ids(many), ["s", "p"], "{backend}: in the order asked");
    })
    .await;
}

/// A document may have more index entries than one statement binds parameters (a booking has
/// two a day of its period): all of them are written, and a rewrite leaves its own only.
#[tokio::test]
async fn a_document_with_tens_of_thousands_of_entries_is_written_and_rewritten() {
    on_each_backend(async |backend, store| {
        for (from, count) in [(0_i64, 40_000_u64), (30_000, 40_000), (5, 3), (100, 40_000)] {
            let end = from + i64::try_from(count).unwrap();
            let entries: Vec<Index> = (from..end)
                .map(|n| index("n", vec![KeyPart::Int(n)]))
                .collect();
            let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
            tx.put("things", "big", "{}", &entries, Expect::Any)
                .await
                .unwrap();
            tx.commit().await.unwrap();
            let mut tx = store.begin("a", Mode::ReadOnly).await.unwrap();
            let all = range(None, None);
            assert_eq!(tx.count(&all).await.unwrap(), count, "{backend}: {from}");
            let ends = [false, true].map(|descending| scan(all.clone(), descending, 0, 1));
            let [first, last] = [&ends[0], &ends[1]];
            assert_eq!(tx.keys(first).await.unwrap()[0].key, [KeyPart::Int(from)]);
            assert_eq!(tx.keys(last).await.unwrap()[0].key, [KeyPart::Int(end - 1)]);
            drop(tx);
        }
    })
    .await;
}

#[tokio::test]
async fn tenants_never_see_each_other() {
    on_each_backend(async |backend, store| {
        put(store, "a", "x", 1, Expect::Absent).await.unwrap();
        assert_eq!(
            put(store, "b", "x", 7, Expect::Absent).await,
            Ok(1),
            "{backend}: same id, other tenant"
        );
        let mut tx = store.begin("b", Mode::ReadOnly).await.unwrap();
        assert_eq!(tx.count(&range(None, None)).await.unwrap(), 1, "{backend}");
        let doc = tx.get("things", "x").await.unwrap().unwrap();
        assert_eq!(doc.body, "{\"n\":7}", "{backend}");
        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        assert_eq!(tx.next_id("seq").await.unwrap(), 1, "{backend}");
        tx.commit().await.unwrap();
        let mut tx = store.begin("b", Mode::ReadWrite).await.unwrap();
        assert_eq!(
            tx.next_id("seq").await.unwrap(),
            1,
            "{backend}: sequences are per tenant"
        );
    })
    .await;
}

#[tokio::test]
async fn uncommitted_work_is_rolled_back_with_its_messages() {
    on_each_backend(async |backend, store| {
        {
            let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
            tx.put("things", "ghost", "{}", &[], Expect::Any)
                .await
                .unwrap();
            assert!(
                tx.publish("topic", "{\"lost\":true}", Some("k1"))
                    .await
                    .unwrap()
            );
            // Dropped without commit.
        }
        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        assert_eq!(tx.get("things", "ghost").await.unwrap(), None, "{backend}");
        assert!(
            tx.publish("topic", "{\"kept\":1}", Some("k1"))
                .await
                .unwrap(),
            "{backend}"
        );
        assert!(
            !tx.publish("topic", "{\"kept\":2}", Some("k1"))
                .await
                .unwrap(),
            "{backend}: deduplicated"
        );
        assert!(
            tx.publish("topic", "{\"kept\":3}", None).await.unwrap(),
            "{backend}"
        );
        tx.commit().await.unwrap();
        let messages = store.queue_messages("a", Some("topic")).await.unwrap();
        let payloads: Vec<_> = messages.iter().map(|m| m.payload.to_string()).collect();
        assert_eq!(payloads, ["{\"kept\":1}", "{\"kept\":3}"], "{backend}");
        assert!(
            store.queue_messages("b", None).await.unwrap().is_empty(),
            "{backend}"
        );
    })
    .await;
}

/// Many writers increment one counter with compare-and-swap: no update is lost, and every
/// writer either commits or is told to retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_compare_and_swap_loses_nothing() {
    on_each_backend(async |backend, store| {
        put(store, "a", "counter", 0, Expect::Absent).await.unwrap();
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move {
                    let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
                    let doc = tx.get("things", "counter").await.unwrap().unwrap();
                    let n: i64 = doc
                        .body
                        .trim_start_matches("{\"n\":")
                        .trim_end_matches('}')
                        .parse()
                        .unwrap();
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    let body = format!("{{\"n\":{}}}", n + 1);
                    match tx
                        .put(
                            "things",
                            "counter",
                            &body,
                            &[],
                            Expect::Revision(doc.revision),
                        )
                        .await
                    {
                        Ok(_) => tx.commit().await.is_ok(),
                        Err(Error::Store(StoreError::Conflict)) => false,
                        Err(e) => panic!("{e}"),
                    }
                })
            })
            .collect();
        let mut committed = 0;
        for task in tasks {
            committed += i64::from(task.await.unwrap());
        }
        let mut tx = store.begin("a", Mode::ReadOnly).await.unwrap();
        let doc = tx.get("things", "counter").await.unwrap().unwrap();
        assert!(committed >= 1, "{backend}");
        assert_eq!(
            doc.body,
            format!("{{\"n\":{committed}}}"),
            "{backend}: no lost update"
        );
        assert_eq!(doc.revision, 1 + committed as u64, "{backend}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sequences_hand_out_each_value_once() {
    on_each_backend(async |backend, store| {
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move {
                    let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
                    let id = tx.next_id("bookings").await.unwrap();
                    tx.commit().await.unwrap();
                    id
                })
            })
            .collect();
        let mut ids = BTreeSet::new();
        for task in tasks {
            assert!(ids.insert(task.await.unwrap()), "{backend}");
        }
        assert_eq!(ids, (1..=20).collect(), "{backend}");

        // Imported records move the sequence of their collection past their ids.
        let record = |id: &str| rental_domain::store::Record {
            collection: "imported",
            id: id.to_owned(),
            body: "{}".to_owned(),
            indexes: Vec::new(),
        };
        store
            .put_records("a", &[record("7"), record("41"), record("x")])
            .await
            .unwrap();
        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        assert_eq!(tx.next_id("imported").await.unwrap(), 42, "{backend}");
        tx.commit().await.unwrap();
        store.put_records("a", &[record("10")]).await.unwrap();
        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        assert_eq!(
            tx.next_id("imported").await.unwrap(),
            43,
            "{backend}: never backwards"
        );
    })
    .await;
}

async fn publish(store: &Storage, tenant: &str, topic: &str, payload: &str) {
    let mut tx = store.begin(tenant, Mode::ReadWrite).await.unwrap();
    assert!(tx.publish(topic, payload, None).await.unwrap());
    tx.commit().await.unwrap();
}

fn status_of(messages: &[super::queue::QueueMessage], id: i64) -> (String, i64, Option<String>) {
    let message = messages.iter().find(|m| m.id == id).unwrap();
    (
        message.status.clone(),
        message.attempts,
        message.last_error.clone(),
    )
}

/// A message goes pending -> processing -> delivered, back to pending with a backoff, or dead;
/// a claim whose lease ran out can no longer settle its message.
#[tokio::test]
async fn queue_messages_are_claimed_settled_and_dead_lettered() {
    use std::time::Duration;
    let long = Duration::from_secs(60);
    on_each_backend(async |backend, store| {
        publish(store, "a", "t", "{\"n\":1}").await;
        publish(store, "b", "t", "{\"n\":2}").await;
        publish(store, "a", "other", "{\"n\":3}").await;

        let claimed = store.claim_messages("t", 10, long, 3).await.unwrap();
        assert_eq!(claimed.len(), 2, "{backend}: both tenants, one topic");
        assert!(claimed.iter().all(|m| m.attempts == 1 && m.topic == "t"));
        assert!(
            store
                .claim_messages("t", 10, long, 3)
                .await
                .unwrap()
                .is_empty(),
            "{backend}: claimed messages are invisible"
        );
        let (one, two) = (&claimed[0], &claimed[1]);
        assert_eq!(
            (one.tenant.as_str(), one.payload.as_str()),
            ("a", "{\"n\":1}")
        );

        assert!(store.ack_message(one).await.unwrap(), "{backend}");
        assert!(
            !store.ack_message(one).await.unwrap(),
            "{backend}: settled once"
        );
        assert!(
            store
                .retry_message(two, "boom", Duration::ZERO, 3)
                .await
                .unwrap()
        );
        let again = store.claim_messages("t", 10, long, 3).await.unwrap();
        assert_eq!(again.len(), 1, "{backend}: due again after its backoff");
        assert_eq!((again[0].id, again[0].attempts), (two.id, 2));
        assert!(
            !store.ack_message(two).await.unwrap(),
            "{backend}: an older claim cannot settle it"
        );
        assert!(
            store
                .retry_message(&again[0], "still", Duration::from_secs(3600), 3)
                .await
                .unwrap()
        );
        assert!(
            store
                .claim_messages("t", 10, long, 3)
                .await
                .unwrap()
                .is_empty(),
            "{backend}: not due during its backoff"
        );
        let a = store.queue_messages("a", None).await.unwrap();
        assert_eq!(status_of(&a, one.id), ("delivered".to_owned(), 1, None));
        let b = store.queue_messages("b", None).await.unwrap();
        assert_eq!(
            status_of(&b, two.id),
            ("pending".to_owned(), 2, Some("still".to_owned()))
        );

        // A lease that runs out makes the message claimable again; the last attempt's failure
        // and a permanent failure dead-letter it.
        publish(store, "a", "lease", "{}").await;
        let first = store
            .claim_messages("lease", 1, Duration::ZERO, 2)
            .await
            .unwrap();
        let second = store
            .claim_messages("lease", 1, Duration::ZERO, 2)
            .await
            .unwrap();
        assert_eq!(second[0].id, first[0].id, "{backend}: reclaimed");
        assert_eq!(second[0].attempts, 2);
        assert!(!store.ack_message(&first[0]).await.unwrap(), "{backend}");
        assert!(
            !store.renew_lease(&first[0], long).await.unwrap(),
            "{backend}: a lost claim is not renewed"
        );
        assert!(
            store
                .claim_messages("lease", 1, Duration::ZERO, 2)
                .await
                .unwrap()
                .is_empty(),
            "{backend}: attempts exhausted"
        );
        // A renewed lease keeps the message from other consumers.
        publish(store, "a", "renewed", "{}").await;
        let held = store
            .claim_messages("renewed", 1, Duration::ZERO, 5)
            .await
            .unwrap();
        assert!(store.renew_lease(&held[0], long).await.unwrap());
        assert!(
            store
                .claim_messages("renewed", 1, Duration::ZERO, 5)
                .await
                .unwrap()
                .is_empty(),
            "{backend}: not claimable while its renewed lease runs"
        );
        assert!(store.ack_message(&held[0]).await.unwrap(), "{backend}");
        publish(store, "a", "dead", "{}").await;
        let doomed = store.claim_messages("dead", 1, long, 5).await.unwrap();
        assert!(
            store
                .dead_letter_message(&doomed[0], "booking 7 does not exist")
                .await
                .unwrap()
        );
        let a = store.queue_messages("a", None).await.unwrap();
        assert_eq!(status_of(&a, first[0].id).0, "dead", "{backend}");
        assert_eq!(
            status_of(&a, doomed[0].id),
            (
                "dead".to_owned(),
                1,
                Some("booking 7 does not exist".to_owned())
            )
        );
    })
    .await;
}

/// Consumers claiming at the same time never get the same message.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_claims_share_the_queue() {
    on_each_backend(async |backend, store| {
        for n in 0..40 {
            publish(store, "a", "shared", &format!("{{\"n\":{n}}}")).await;
        }
        let consumers: Vec<_> = (0..4)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move {
                    let mut mine = Vec::new();
                    loop {
                        let claimed = store
                            .claim_messages("shared", 3, std::time::Duration::from_secs(60), 5)
                            .await
                            .unwrap();
                        if claimed.is_empty() {
                            return mine;
                        }
                        mine.extend(claimed.into_iter().map(|m| m.id));
                    }
                })
            })
            .collect();
        let mut all = Vec::new();
        for consumer in consumers {
            all.extend(consumer.await.unwrap());
        }
        let distinct: BTreeSet<_> = all.iter().collect();
        assert_eq!(all.len(), 40, "{backend}: every message claimed");
        assert_eq!(distinct.len(), 40, "{backend}: none twice");
    })
    .await;
}

/// The smallest body the store takes as a booking (it renders each booking's list form).
fn booking_body(id: i64) -> String {
    serde_json::json!({
        "Id": id, "Customer": {"Id": 1}, "Category": {"Id": 1},
        "FromDate": "2030-01-10T10:00:00-03:00", "ToDate": "2030-01-12T10:00:00-03:00",
        "DeliveryPlace": {"Id": 1}, "ReturnPlace": {"Id": 1}, "CurrentStatus": 1,
        "CurrentStatusDate": "2030-01-01T10:00:00Z", "CreationDate": "2030-01-01T10:00:00Z"
    })
    .to_string()
}

/// Booking `id`'s entries in the counted indexes: `id` (whole index) and `status` (by its
/// first part).
fn counted_indexes(id: i64, status: i64) -> [Index; 2] {
    [
        index("id", vec![KeyPart::Int(id)]),
        index("status", vec![KeyPart::Int(status), KeyPart::Int(id)]),
    ]
}

/// Booking `id` in `status`: its body and its entries in the counted indexes.
fn booking_in_status(id: i64, status: i64) -> (String, [Index; 2]) {
    let mut body: serde_json::Value = serde_json::from_str(&booking_body(id)).unwrap();
    body["CurrentStatus"] = status.into();
    (body.to_string(), counted_indexes(id, status))
}

/// A booking in the counted indexes.
async fn put_counted(tx: &mut super::documents::DocTransaction, id: i64, status: i64) {
    tx.put(
        "bookings",
        &id.to_string(),
        &booking_body(id),
        &counted_indexes(id, status),
        Expect::Any,
    )
    .await
    .unwrap();
}

/// What the kept counts say, and what counting the entries says, for the whole `id` index and
/// each status: the second through ranges that are not prefixes, so they are counted.
async fn counted_and_recounted(
    store: &Storage,
    tenant: &str,
) -> (Vec<(i64, u64)>, Vec<(i64, u64)>) {
    let mut tx = store.begin(tenant, Mode::ReadOnly).await.unwrap();
    let in_index = |index: &str, lower, upper| Range {
        collection: "bookings".to_owned(),
        index: index.to_owned(),
        keys: KeyRange { lower, upper },
    };
    let mut kept = vec![(-1, tx.count(&in_index("id", None, None)).await.unwrap())];
    let mut counted = vec![(
        -1,
        tx.count(&in_index(
            "id",
            Some(Bound::Inclusive(vec![KeyPart::Int(i64::MIN)])),
            None,
        ))
        .await
        .unwrap(),
    )];
    for status in 0..4 {
        let head = vec![KeyPart::Int(status)];
        let prefix = in_index(
            "status",
            Some(Bound::Inclusive(head.clone())),
            Some(Bound::Inclusive(head)),
        );
        kept.push((status, tx.count(&prefix).await.unwrap()));
        let range = in_index(
            "status",
            Some(Bound::Inclusive(vec![KeyPart::Int(status)])),
            Some(Bound::Exclusive(vec![KeyPart::Int(status + 1)])),
        );
        counted.push((status, tx.count(&range).await.unwrap()));
    }
    (kept, counted)
}

/// Writers at once, on as many connections: each adds a booking, then, in a second
/// transaction, moves it to another status or deletes it. On PostgreSQL each connection keeps its own share of a count, and a
/// booking's entry may be counted on one and taken off on another: the sums stay exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kept_counts_stay_exact_under_concurrent_writers() {
    on_each_backend(async |backend, store| {
        let writers: Vec<_> = (1..=24)
            .map(|id| {
                let store = store.clone();
                tokio::spawn(async move {
                    let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
                    put_counted(&mut tx, id, id % 4).await;
                    tx.commit().await.unwrap();
                    let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
                    if id % 3 == 0 {
                        tx.delete("bookings", &id.to_string(), Expect::Any)
                            .await
                            .unwrap();
                    } else {
                        put_counted(&mut tx, id, (id + 1) % 4).await;
                    }
                    tx.commit().await.unwrap();
                })
            })
            .collect();
        for writer in writers {
            writer.await.unwrap();
        }
        let (kept, counted) = counted_and_recounted(store, "a").await;
        assert_eq!(kept, counted, "{backend}");
        assert_eq!(kept[0], (-1, 16), "{backend}");
    })
    .await;
}

#[tokio::test]
async fn kept_counts_follow_every_write_and_rollback() {
    on_each_backend(async |backend, store| {
        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        for id in 1..=6 {
            put_counted(&mut tx, id, id % 3).await;
        }
        tx.commit().await.unwrap();
        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        put_counted(&mut tx, 1, 2).await; // a status change
        put_counted(&mut tx, 2, 2).await; // the same status again
        tx.delete("bookings", "3", Expect::Revision(1))
            .await
            .unwrap();
        let stale = tx.delete("bookings", "4", Expect::Revision(7)).await;
        assert!(matches!(stale, Err(Error::Store(StoreError::Conflict))));
        tx.commit().await.unwrap();
        let mut rolled_back = store.begin("a", Mode::ReadWrite).await.unwrap();
        put_counted(&mut rolled_back, 7, 1).await;
        put_counted(&mut rolled_back, 5, 0).await;
        drop(rolled_back);

        let (kept, counted) = counted_and_recounted(store, "a").await;
        assert_eq!(kept, counted, "{backend}");
        assert_eq!(kept, [(-1, 5), (0, 1), (1, 1), (2, 3), (3, 0)], "{backend}");
        let (other, _) = counted_and_recounted(store, "b").await;
        assert_eq!(other[0], (-1, 0), "{backend}: counts are per tenant");

        // The list form of each booking follows it, and only it.
        let mut tx = store.begin("a", Mode::ReadOnly).await.unwrap();
        let mut items = Vec::new();
        for id in 1..=7 {
            items.push(
                tx.get("booking-items", &id.to_string())
                    .await
                    .unwrap()
                    .is_some(),
            );
        }
        assert_eq!(
            items,
            [true, true, false, true, true, true, false],
            "{backend}"
        );
        drop(tx);

        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        let refused = tx.put("bookings", "8", "{}", &[], Expect::Any).await;
        assert!(
            matches!(refused, Err(Error::Store(StoreError::Invalid(_)))),
            "{backend}: a booking that cannot be listed is refused"
        );
        let text_status = [index("status", vec![KeyPart::Text("open".into())])];
        let refused = tx
            .put("bookings", "9", &booking_body(9), &text_status, Expect::Any)
            .await;
        assert!(
            matches!(refused, Err(Error::Store(StoreError::Invalid(_)))),
            "{backend}: a counted part must have a fixed width"
        );
    })
    .await;
}

/// A put whose expectation fails writes nothing at all: not its list form, its change, its
/// counts or its entries, even in a transaction that goes on and commits. On PostgreSQL all of
/// a put is one statement, each part of it taken only if the document's write was.
#[tokio::test]
async fn a_put_that_fails_its_expectation_writes_nothing() {
    on_each_backend(async |backend, store| {
        let (first, first_indexes) = booking_in_status(1, 1);
        let (second, second_indexes) = booking_in_status(1, 2);
        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        let revision = tx
            .put("bookings", "1", &first, &first_indexes, Expect::Absent)
            .await
            .unwrap();
        assert_eq!(revision, 1, "{backend}");
        tx.commit().await.unwrap();
        async fn item(tx: &mut super::documents::DocTransaction) -> (u64, String) {
            let item = tx.get("booking-items", "1").await.unwrap().unwrap();
            (item.revision, item.body)
        }
        let mut tx = store.begin("a", Mode::ReadOnly).await.unwrap();
        let listed = item(&mut tx).await;
        drop(tx);

        // Each refused by the put itself (SQLite), or by the transaction's next call, which
        // sends it (PostgreSQL). On SQLite the transaction may go on and commit, with nothing
        // of the put in it; on PostgreSQL it can commit nothing after a refused put it had
        // answered (`a_held_put_refused_later_stops_its_transaction`).
        for expected in [Expect::Absent, Expect::Revision(7)] {
            let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
            let put = tx
                .put("bookings", "1", &second, &second_indexes, expected)
                .await;
            let refused = match put {
                Ok(_) => tx.get("things", "none").await.map(|_| ()),
                Err(e) => Err(e),
            };
            assert!(
                matches!(refused, Err(Error::Store(StoreError::Conflict))),
                "{backend}: {expected:?} gave {refused:?}"
            );
            if backend == "sqlite" {
                tx.commit().await.unwrap();
            }
        }

        let mut tx = store.begin("a", Mode::ReadOnly).await.unwrap();
        let stored = tx.get("bookings", "1").await.unwrap().unwrap();
        assert_eq!((stored.revision, stored.body), (1, first), "{backend}");
        assert_eq!(item(&mut tx).await, listed, "{backend}: the list form");
        let by_status = |status: i64| Range {
            collection: "bookings".to_owned(),
            index: "status".to_owned(),
            keys: KeyRange {
                lower: Some(Bound::Inclusive(vec![KeyPart::Int(status)])),
                upper: Some(Bound::Inclusive(vec![KeyPart::Int(status)])),
            },
        };
        let entries = tx.keys(&scan(by_status(2), false, 0, 10)).await.unwrap();
        assert!(entries.is_empty(), "{backend}: the entries");
        drop(tx);
        let (kept, counted) = counted_and_recounted(store, "a").await;
        assert_eq!(kept, counted, "{backend}");
        assert_eq!(kept, [(-1, 1), (0, 0), (1, 1), (2, 0), (3, 0)], "{backend}");

        // A put that succeeds after them is fed with its own revision.
        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        let revision = tx
            .put(
                "bookings",
                "1",
                &second,
                &second_indexes,
                Expect::Revision(1),
            )
            .await
            .unwrap();
        tx.commit().await.unwrap();
        let changes = store.changes("a", "booking-items", 0, 10).await.unwrap();
        let fed: Vec<(String, u64)> = changes.into_iter().map(|c| (c.id, c.revision)).collect();
        assert_eq!(
            fed,
            [("1".to_owned(), 1), ("1".to_owned(), revision)],
            "{backend}: one change a write, none for the refused ones"
        );
        assert_eq!(revision, 2, "{backend}");
    })
    .await;
}

/// On PostgreSQL consecutive puts are sent together, in one statement, before the transaction's
/// next other call; each is written whole all the same: its list form, its change, its counts
/// and its entries. Two puts that move the counts of one collection, or two of one document,
/// are not sent together.
#[tokio::test]
async fn puts_sent_together_write_all_of_each() {
    on_each_backend(async |backend, store| {
        let thing = |n: i64| index("n", vec![KeyPart::Int(n)]);
        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        let (body, indexes) = booking_in_status(1, 1);
        let mut revisions = vec![
            tx.put("bookings", "1", &body, &indexes, Expect::Absent)
                .await
                .unwrap(),
        ];
        for (id, n) in [("x", 1), ("y", 2)] {
            let body = format!("{{\"n\":{n}}}");
            revisions.push(
                tx.put("things", id, &body, &[thing(n)], Expect::Absent)
                    .await
                    .unwrap(),
            );
        }
        let (body, indexes) = booking_in_status(2, 1);
        revisions.push(
            tx.put("bookings", "2", &body, &indexes, Expect::Absent)
                .await
                .unwrap(),
        );
        tx.commit().await.unwrap();
        assert_eq!(revisions, [1, 1, 1, 1], "{backend}");

        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        let (body, indexes) = booking_in_status(1, 2);
        let mut revisions = vec![
            tx.put("bookings", "1", &body, &indexes, Expect::Revision(1))
                .await
                .unwrap(),
        ];
        revisions.push(
            tx.put("things", "x", "{\"n\":3}", &[thing(3)], Expect::Revision(1))
                .await
                .unwrap(),
        );
        revisions.push(
            tx.put("things", "x", "{\"n\":4}", &[thing(4)], Expect::Revision(2))
                .await
                .unwrap(),
        );
        tx.commit().await.unwrap();
        assert_eq!(revisions, [2, 2, 3], "{backend}");

        let mut tx = store.begin("a", Mode::ReadOnly).await.unwrap();
        for (collection, id, revision) in [
            ("bookings", "1", 2),
            ("bookings", "2", 1),
            ("booking-items", "1", 2),
            ("booking-items", "2", 1),
            ("things", "x", 3),
            ("things", "y", 1),
        ] {
            let stored = tx.get(collection, id).await.unwrap();
            assert_eq!(
                stored.map(|doc| doc.revision),
                Some(revision),
                "{backend}: {collection}/{id}"
            );
        }
        let entries = tx
            .keys(&scan(range(None, None), false, 0, 10))
            .await
            .unwrap();
        let entries: Vec<(Vec<KeyPart>, String)> =
            entries.into_iter().map(|e| (e.key, e.id)).collect();
        assert_eq!(
            entries,
            [
                (vec![KeyPart::Int(2)], "y".to_owned()),
                (vec![KeyPart::Int(4)], "x".to_owned()),
            ],
            "{backend}: the things' entries"
        );
        drop(tx);
        let (kept, counted) = counted_and_recounted(store, "a").await;
        assert_eq!(kept, counted, "{backend}");
        assert_eq!(kept, [(-1, 2), (0, 0), (1, 1), (2, 1), (3, 0)], "{backend}");
        let changes = store.changes("a", "booking-items", 0, 10).await.unwrap();
        let mut fed: Vec<(String, u64)> = changes.into_iter().map(|c| (c.id, c.revision)).collect();
        fed.sort();
        assert_eq!(
            fed,
            [
                ("1".to_owned(), 1),
                ("1".to_owned(), 2),
                ("2".to_owned(), 1)
            ],
            "{backend}: one change a write"
        );
    })
    .await;
}

/// A put the host answered before sending it (on PostgreSQL) and that is refused once sent
/// stops its transaction: the call that sent it is told of the conflict, and so is every call
/// after it, the commit included, so that a guest never commits a transaction without a write
/// it was told had been made.
#[tokio::test]
async fn a_held_put_refused_later_stops_its_transaction() {
    on_each_backend(async |backend, store| {
        put(store, "a", "x", 1, Expect::Absent).await.unwrap();
        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        let held = tx.put("things", "x", "{}", &[], Expect::Absent).await;
        if backend == "sqlite" {
            assert!(
                matches!(held, Err(Error::Store(StoreError::Conflict))),
                "{held:?}"
            );
            return;
        }
        assert_eq!(held.unwrap(), 1, "answered before it is sent");
        let sent = tx.get("things", "x").await;
        assert!(
            matches!(sent, Err(Error::Store(StoreError::Conflict))),
            "{sent:?}"
        );
        tx.put("things", "z", "{}", &[], Expect::Absent)
            .await
            .unwrap();
        let committed = tx.commit().await;
        assert!(
            matches!(committed, Err(Error::Store(StoreError::Conflict))),
            "{committed:?}"
        );
        let mut tx = store.begin("a", Mode::ReadOnly).await.unwrap();
        assert_eq!(tx.get("things", "z").await.unwrap(), None);
        drop(tx);

        // The last puts held go with the commit, before either is answered: the refusal
        // rolls the whole transaction back, the puts before it in the same statement and the
        // writes sent earlier included.
        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        tx.put("things", "y", "{}", &[], Expect::Absent)
            .await
            .unwrap();
        assert_eq!(
            tx.get("things", "y").await.unwrap().unwrap().revision,
            1,
            "a held put is read by the statement it goes with"
        );
        tx.put("things", "w", "{}", &[], Expect::Absent)
            .await
            .unwrap();
        assert_eq!(
            tx.put("things", "x", "{}", &[], Expect::Absent)
                .await
                .unwrap(),
            1,
            "answered before it is sent"
        );
        let committed = tx.commit().await;
        assert!(
            matches!(committed, Err(Error::Store(StoreError::Conflict))),
            "{committed:?}"
        );
        let mut tx = store.begin("a", Mode::ReadOnly).await.unwrap();
        for id in ["y", "w"] {
            assert_eq!(tx.get("things", id).await.unwrap(), None, "{id}");
        }
        assert_eq!(tx.get("things", "x").await.unwrap().unwrap().revision, 1);
    })
    .await;
}

/// Read-only transactions read the file through a memory map; writers, whose map SQLite would
/// drop at every begin after another commit, do not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_sqlite_readers_map_the_file() {
    let dbs = Databases::sqlite().await;
    let connections = dbs.stores[0].1.sqlite().unwrap();
    for (shelf, mapped) in [
        (Shelf::Readers, 268_435_456),
        (Shelf::Writers, 0),
        (Shelf::Writer, 0),
    ] {
        assert_eq!(pragma(connections, shelf, "mmap_size"), mapped, "{shelf:?}");
    }
}

/// A statement's journal past 64 KiB would go to a file created and unlinked in the
/// temporary directory, as it did on one creation in four to eight: every connection keeps it
/// in memory, sqlx's as the document store's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_statement_journals_stay_in_memory() {
    const MEMORY: i64 = 2;
    let dbs = Databases::sqlite().await;
    assert_setting(&dbs.stores[0].1, "temp_store", MEMORY, MEMORY).await;
}

/// Checks the setting `name` of SQLite's connections: `on_pool` on sqlx's pool, `on_shelves`
/// on each shelf of the document store.
async fn assert_setting(store: &Storage, name: &str, on_pool: i64, on_shelves: i64) {
    let pool: i64 = sqlx::query_scalar(&format!("PRAGMA {name}"))
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(pool, on_pool, "{name} on sqlx's connections");
    let connections = store.sqlite().unwrap();
    for shelf in [Shelf::Readers, Shelf::Writers, Shelf::Writer] {
        assert_eq!(
            pragma(connections, shelf, name),
            on_shelves,
            "{name} on the document store's {shelf:?} connections"
        );
    }
}

/// The setting `name` of a connection of `shelf`.
fn pragma(connections: &Connections, shelf: Shelf, name: &str) -> i64 {
    connections
        .take(shelf)
        .unwrap()
        .query_row(&format!("PRAGMA {name}"), [], |row| row.get(0))
        .unwrap()
}

/// A commit on SQLite is durable when it is acknowledged. sqlx's connections sync the log at
/// each commit; the document store's connections write it unsynced, and a commit returns only
/// once a sync of the log has covered it, as does a reader's end, for what it may have seen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_commits_are_synced() {
    let dbs = Databases::sqlite().await;
    let (_, store) = &dbs.stores[0];
    const FULL: i64 = 2;
    const NORMAL: i64 = 1;
    assert_setting(store, "synchronous", FULL, NORMAL).await;
    let connections = store.sqlite().unwrap();

    let journal = connections.journal().unwrap();
    for n in 1..=5 {
        let syncs = journal.syncs();
        put(store, "a", &format!("x{n}"), n, Expect::Absent)
            .await
            .unwrap();
        assert!(
            journal.synced_upto() >= journal.horizon(),
            "commit {n} returned before the log was synced past it"
        );
        assert!(journal.syncs() > syncs, "commit {n}: no sync of its own");
    }

    // A reader that saw a commit not yet synced ends only once it is.
    let mut writer = store.begin("a", Mode::ReadWrite).await.unwrap();
    writer
        .put("things", "seen", "{}", &[], Expect::Absent)
        .await
        .unwrap();
    let committing = tokio::spawn(writer.commit());
    let mut reader = store.begin("a", Mode::ReadOnly).await.unwrap();
    let seen = reader.get("things", "seen").await.unwrap();
    reader.roll_back().await.unwrap();
    if seen.is_some() {
        assert!(
            journal.synced_upto() >= journal.horizon(),
            "a reader ended before what it saw was synced"
        );
    }
    committing.await.unwrap().unwrap();
    dbs.drop_all().await;
}

/// On SQLite a writer reads without the writer turn, so another writer commits meanwhile. At
/// its first write it goes on when what it read is unchanged, and is told to begin again when
/// it changed; begun with the turn, it keeps the others waiting and cannot lose.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_writers_read_without_the_turn() {
    use std::time::Duration;
    let dbs = Databases::sqlite().await;
    let (_, store) = &dbs.stores[0];
    put(store, "a", "read", 1, Expect::Absent).await.unwrap();
    let meanwhile = async |id: &str, n: i64, expected: Expect| {
        tokio::time::timeout(Duration::from_secs(10), put(store, "a", id, n, expected))
            .await
            .expect("a writer that has only read kept another writer waiting")
            .unwrap()
    };

    let mut writer = store.begin("a", Mode::ReadWrite).await.unwrap();
    assert!(writer.get("things", "read").await.unwrap().is_some());
    meanwhile("elsewhere", 2, Expect::Absent).await;
    writer
        .put("things", "mine", "{}", &[], Expect::Absent)
        .await
        .expect("what it read is unchanged");
    writer.commit().await.unwrap();

    let mut writer = store.begin("a", Mode::ReadWrite).await.unwrap();
    assert!(writer.get("things", "read").await.unwrap().is_some());
    meanwhile("read", 3, Expect::Revision(1)).await;
    let lost = writer
        .put("things", "lost", "{}", &[], Expect::Absent)
        .await;
    assert!(
        matches!(lost, Err(Error::Store(StoreError::Conflict))),
        "what it read has changed: {lost:?}"
    );
    let after = writer.get("things", "read").await;
    assert!(matches!(after, Err(Error::Store(StoreError::Conflict))));
    drop(writer);

    let mut locked = store.begin_locked("a").await.unwrap();
    assert!(locked.get("things", "lost").await.unwrap().is_none());
    let waiting = {
        let store = store.clone();
        tokio::spawn(async move { put(&store, "a", "after", 4, Expect::Absent).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !waiting.is_finished(),
        "a writer began while one held the turn"
    );
    locked
        .put("things", "read", "{}", &[], Expect::Revision(2))
        .await
        .unwrap();
    locked.commit().await.unwrap();
    assert_eq!(waiting.await.unwrap(), Ok(1));
    dbs.drop_all().await;
}

/// On SQLite, writers that queue for the turn while one writes are committed with it, as one
/// transaction: one commit for the group. A member that rolls back undoes its own writes
/// only, and every member's commit returns once the group is committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_writers_that_queue_commit_as_one() {
    use std::time::Duration;
    let dbs = Databases::sqlite().await;
    let (_, store) = &dbs.stores[0];
    let journal = store.sqlite().unwrap().journal().unwrap();

    let mut locked = store.begin_locked("a").await.unwrap();
    put_thing(&mut locked, "a", "first", 1).await;
    let undone = {
        let store = store.clone();
        tokio::spawn(async move {
            let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
            put_thing(&mut tx, "a", "undone", 2).await;
            drop(tx);
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let queued: Vec<_> = (0..4)
        .map(|n| {
            let store = store.clone();
            tokio::spawn(async move { put(&store, "a", &format!("w{n}"), n, Expect::Absent).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = journal.commits();
    locked.commit().await.unwrap();
    undone.await.unwrap();
    for writer in queued {
        assert_eq!(writer.await.unwrap(), Ok(1));
    }
    let commits = journal.commits() - before;
    assert!(commits < 5, "{commits} commits for 5 writers that queued");

    let mut reader = store.begin("a", Mode::ReadOnly).await.unwrap();
    for id in ["first", "w0", "w1", "w2", "w3"] {
        assert!(reader.get("things", id).await.unwrap().is_some(), "{id}");
    }
    assert!(reader.get("things", "undone").await.unwrap().is_none());
    reader.roll_back().await.unwrap();
    dbs.drop_all().await;
}

/// A write through sqlx's pool in the writer turn is not kept out by a group of writers left
/// open on the writers' connection: the group is committed first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_pool_writes_in_turn_pass_an_open_group() {
    use std::time::Duration;
    let dbs = Databases::sqlite().await;
    let (_, store) = &dbs.stores[0];

    let mut locked = store.begin_locked("a").await.unwrap();
    put_thing(&mut locked, "a", "first", 1).await;
    let member = {
        let store = store.clone();
        tokio::spawn(async move { put(&store, "a", "member", 2, Expect::Absent).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let pooled = {
        let store = store.clone();
        tokio::spawn(async move {
            let _turn = store.writer_turn().await;
            sqlx::query("UPDATE sequences SET value = value WHERE 0")
                .execute(store.pool())
                .await
                .map(drop)
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    locked.commit().await.unwrap();
    assert_eq!(member.await.unwrap(), Ok(1));
    let pooled = tokio::time::timeout(Duration::from_secs(3), pooled)
        .await
        .expect("the pool's write waited on the group's lock");
    pooled.unwrap().unwrap();
    dbs.drop_all().await;
}

/// On SQLite, the queue's consumer writes through sqlx's pool while the document store's
/// writers keep the file's lock busy: it waits in line for the writer turn with them, where
/// on the lock it slept and retried behind them until the busy timeout (5 s) failed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_queue_claims_pass_a_steady_write_load() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};
    let dbs = Databases::sqlite().await;
    let (_, store) = &dbs.stores[0];
    let stop = Arc::new(AtomicBool::new(false));
    // Writers that keep the turn a while, as a component computing between its writes does,
    // so that one always waits for it and the group on the writers' connection stays open.
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (store, stop) = (store.clone(), Arc::clone(&stop));
            tokio::spawn(async move {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let mut tx = store.begin_locked("a").await.unwrap();
                    put_thing(&mut tx, "a", &format!("w{w}-{n}"), n).await;
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    tx.commit().await.unwrap();
                    n += 1;
                }
                n
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Several claims, as the consumer polls: one may find the lock free between two commits.
    let mut claimed = Ok(Vec::new());
    let mut waited = Duration::ZERO;
    for _ in 0..10 {
        let started = Instant::now();
        claimed = store
            .claim_messages("t", 10, Duration::from_secs(60), 3)
            .await;
        waited = started.elapsed();
        if claimed.is_err() {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let mut written = 0;
    for writer in writers {
        written += writer.await.unwrap();
    }
    assert!(
        claimed.is_ok(),
        "the claim failed after {waited:?}, beside {written} writes: {claimed:?}"
    );
    dbs.drop_all().await;
}

/// Every row of `tenant` in the tables the document store writes, as text, in order.
async fn tenant_rows(store: &Storage, tenant: &str) -> Vec<String> {
    use sqlx::Row as _;
    let tables = [
        ("documents", "collection, id, revision, body"),
        ("doc_index", "collection, index_name, key, doc_id"),
        ("index_counts", "collection, index_name, prefix, n"),
        ("sequences", "name, value"),
        ("queue", "topic, payload, dedupe_key, status"),
        ("views_pending", "collection, id"),
    ];
    let mut out = Vec::new();
    for (table, columns) in tables {
        let sql = format!("SELECT {columns} FROM {table} WHERE tenant = $1 ORDER BY {columns}");
        for row in sqlx::query(&sql)
            .bind(tenant)
            .fetch_all(store.pool())
            .await
            .unwrap()
        {
            let cells: Vec<String> = (0..row.len())
                .map(|i| {
                    if let Ok(v) = row.try_get::<Option<i64>, _>(i) {
                        format!("{v:?}")
                    } else if let Ok(v) = row.try_get::<Option<String>, _>(i) {
                        format!("{v:?}")
                    } else {
                        format!("{:?}", row.try_get::<Vec<u8>, _>(i).unwrap())
                    }
                })
                .collect();
            out.push(format!("{table}: {}", cells.join(" | ")));
        }
    }
    out
}

/// A document of `things` that says whose it is.
async fn put_thing(tx: &mut super::documents::DocTransaction, tenant: &str, id: &str, n: i64) {
    let body = format!("{{\"n\":{n},\"tenant\":\"{tenant}\"}}");
    let indexes = [index(
        "n",
        vec![KeyPart::Int(n), KeyPart::Text(id.to_owned())],
    )];
    tx.put("things", id, &body, &indexes, Expect::Any)
        .await
        .unwrap();
}

/// Every operation of the document store, run for one tenant while another holds the same
/// ids, keys, counts, sequences and dedupe keys, reads only the first tenant's rows and
/// leaves every row of the second as it was: each statement filters by tenant, which is what
/// lets the data be distributed by tenant (docs/scaling.md). A statement that lost its filter
/// would read the other tenant's twin rows or change them.
#[tokio::test]
async fn every_store_operation_stays_within_its_tenant() {
    on_each_backend(async |backend, store| {
        for tenant in ["a", "b"] {
            let mut tx = store.begin(tenant, Mode::ReadWrite).await.unwrap();
            for (n, id) in (1..).zip(["x", "y", "z"]) {
                put_thing(&mut tx, tenant, id, n).await;
            }
            for id in 1..=4 {
                put_counted(&mut tx, id, id % 2).await;
            }
            assert_eq!(tx.next_id("seq").await.unwrap(), 1);
            let payload = format!("{{\"tenant\":\"{tenant}\"}}");
            let key = format!("k-{tenant}");
            assert!(tx.publish("topic", &payload, Some(&key)).await.unwrap());
            tx.commit().await.unwrap();
        }
        let before = tenant_rows(store, "b").await;
        assert!(before.len() > 20, "{backend}: {before:?}");

        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        let mine = |body: &str| body.contains("\"tenant\":\"a\"");
        let x = tx.get("things", "x").await.unwrap().unwrap();
        assert!(mine(&x.body), "{backend}: {}", x.body);
        let ids = ["x", "y", "z"].map(str::to_owned);
        let many = tx.get_many("things", &ids).await.unwrap();
        assert_eq!(many.len(), 3, "{backend}");
        assert!(many.iter().all(|d| mine(&d.body)), "{backend}");
        let all = scan(range(None, None), false, 0, 100);
        let scanned = tx.scan(&all).await.unwrap();
        assert_eq!(scanned.len(), 3, "{backend}");
        assert!(scanned.iter().all(|d| mine(&d.body)), "{backend}");
        assert_eq!(tx.keys(&all).await.unwrap().len(), 3, "{backend}");
        assert_eq!(tx.count(&all.range).await.unwrap(), 3, "{backend}");
        let items = Range {
            collection: rental_domain::collections::booking_items::COLLECTION.to_owned(),
            index: "id".to_owned(),
            keys: KeyRange {
                lower: None,
                upper: None,
            },
        };
        assert_eq!(tx.count(&items).await.unwrap(), 4, "{backend}");
        assert_eq!(
            tx.scan(&scan(items, true, 0, 100)).await.unwrap().len(),
            4,
            "{backend}"
        );
        put_thing(&mut tx, "a", "x", 7).await;
        put_thing(&mut tx, "a", "w", 8).await;
        tx.delete("things", "y", Expect::Revision(1)).await.unwrap();
        put_counted(&mut tx, 1, 0).await; // a status change: one count down, one up
        put_counted(&mut tx, 9, 1).await;
        tx.delete("bookings", "2", Expect::Any).await.unwrap();
        assert_eq!(tx.next_id("seq").await.unwrap(), 2, "{backend}");
        assert!(
            tx.publish("topic", "{\"tenant\":\"a\"}", Some("k-b"))
                .await
                .unwrap(),
            "{backend}: another tenant's dedupe key is not this one's"
        );
        tx.commit().await.unwrap();
        let record = rental_domain::store::Record {
            collection: "things",
            id: "20".to_owned(),
            body: "{\"tenant\":\"a\"}".to_owned(),
            indexes: Vec::new(),
        };
        store.put_records("a", &[record]).await.unwrap();
        let revisions = store.document_revisions("a").await.unwrap();
        assert_eq!(
            revisions.get(&("things".to_owned(), "x".to_owned())),
            Some(&2),
            "{backend}"
        );

        let (kept, counted) = counted_and_recounted(store, "a").await;
        assert_eq!(kept, counted, "{backend}");
        assert_eq!(kept[0], (-1, 4), "{backend}");
        assert_eq!(tenant_rows(store, "b").await, before, "{backend}");
    })
    .await;
}

/// The plan `store`'s database makes for `statement`, line by line.
async fn plan_of(
    store: &Storage,
    dialect: rental_store_sql::Dialect,
    statement: &Statement,
) -> String {
    use rental_store_sql::Dialect;
    use sqlx::Row as _;

    let (explain, column) = match dialect {
        Dialect::Postgres => ("EXPLAIN", 0),
        Dialect::Sqlite => ("EXPLAIN QUERY PLAN", 3),
    };
    let sql = format!("{explain} {}", statement.sql(dialect));
    let mut query = sqlx::query(&sql);
    for value in &statement.params {
        query = match value {
            Value::Int(v) => query.bind(*v),
            Value::Text(v) => query.bind(v.as_str()),
            Value::Blob(v) => query.bind(v.as_slice()),
        };
    }
    let lines: Vec<String> = query
        .fetch_all(store.pool())
        .await
        .unwrap()
        .iter()
        .map(|row| row.get::<String, _>(column))
        .collect();
    lines.join("\n")
}

/// A range scan reads its range through the primary key of the index entries, and needs no
/// sort, on tables that were never analysed (a fresh database, or one that grows faster than
/// it is analysed). With another index that began with the same columns, PostgreSQL's planner
/// costed both at about one row and at times took that one: it then read every entry of the
/// collection and sorted what was left, a cost that grew with each document (a booking's
/// availability read its car's entries in 3.5 to 7.4 ms at 13,000 bookings; docs/benchmarks.md,
/// "A range scan through the wrong index").
#[tokio::test]
async fn range_scans_read_through_the_primary_key() {
    use rental_store_sql::{Dialect, Scope, Step};

    on_each_backend(async |backend, store| {
        let mut tx = store.begin("a", Mode::ReadWrite).await.unwrap();
        for n in 0..120 {
            let id = format!("t{n}");
            let indexes: Vec<Index> = ["n", "m", "o", "p", "q"]
                .into_iter()
                .map(|name| index(name, vec![KeyPart::Int(n), KeyPart::Text(id.clone())]))
                .collect();
            tx.put("things", &id, "{}", &indexes, Expect::Any)
                .await
                .unwrap();
        }
        tx.commit().await.unwrap();

        let dialect = if backend == "postgres" {
            Dialect::Postgres
        } else {
            Dialect::Sqlite
        };
        let lower = Some(Bound::Inclusive(vec![KeyPart::Int(10)]));
        let upper = Some(Bound::Exclusive(vec![KeyPart::Int(20)]));
        let mut keys = Scope::new("a", Mode::ReadOnly)
            .keys(&scan(range(lower, upper), false, 0, 100))
            .for_dialect(dialect);
        let Step::Run(statement) = keys.step(None) else {
            panic!("a scan runs a statement");
        };
        let plan = plan_of(store, dialect, &statement).await;
        let (primary_key, sorted) = match dialect {
            Dialect::Postgres => ("doc_index_pkey", "Sort"),
            Dialect::Sqlite => ("sqlite_autoindex_doc_index_1", "TEMP B-TREE"),
        };
        assert!(
            plan.contains(primary_key) && !plan.contains(sorted),
            "{backend}: a range scan's plan:\n{plan}"
        );
        if dialect == Dialect::Sqlite {
            return;
        }
        // Which index PostgreSQL's planner takes without statistics turns on how tall each
        // has grown, so the plan above may be right by chance: no other index of the entries
        // may begin with the tenant, as a range scan's does.
        let leading: Vec<String> = sqlx::query_scalar(
            "SELECT CAST(indexrelid::regclass AS TEXT) FROM pg_index \
             WHERE indrelid = CAST('doc_index' AS regclass) AND (SELECT attname FROM \
                 pg_attribute WHERE attrelid = indrelid AND attnum = indkey[0]) = 'tenant'",
        )
        .fetch_all(store.pool())
        .await
        .unwrap();
        assert_eq!(leading, ["doc_index_pkey"]);
    })
    .await;
}

/// On PostgreSQL the demo's bookings (about 8 KB of JSON each) and their list items (about 5
/// KB) are compressed with lz4 and, but for the largest bookings, kept in their own rows
/// rather than in the TOAST relation; they read back whole.
#[tokio::test]
async fn postgres_keeps_bookings_in_their_rows_with_lz4() {
    on_each_backend(async |backend, store| {
        if backend != "postgres" {
            return;
        }
        let demo = rental_domain::demo::demo_tenant(chrono::Utc::now()).unwrap();
        store.put_records("a", &demo.records).await.unwrap();

        let booking = demo
            .records
            .iter()
            .find(|record| record.collection == "bookings")
            .unwrap();
        let mut tx = store.begin("a", Mode::ReadOnly).await.unwrap();
        let read = tx.get("bookings", &booking.id).await.unwrap().unwrap();
        tx.commit().await.unwrap();
        assert_eq!(read.body, booking.body);
        let compressions: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT CAST(pg_column_compression(body) AS TEXT) FROM documents \
             WHERE tenant = 'a' AND collection IN ('bookings', 'booking-items')",
        )
        .fetch_all(store.pool())
        .await
        .unwrap();
        assert_eq!(compressions, ["lz4"]);
        // Each value moved out of its row is one `chunk_id` of the TOAST relation. With
        // PostgreSQL's defaults every booking and every item is (248 of the demo's 248).
        let toast: String = sqlx::query_scalar(
            "SELECT CAST(CAST(reltoastrelid AS regclass) AS TEXT) FROM pg_class \
             WHERE oid = CAST('documents' AS regclass)",
        )
        .fetch_one(store.pool())
        .await
        .unwrap();
        let out_of_line: i64 =
            sqlx::query_scalar(&format!("SELECT count(DISTINCT chunk_id) FROM {toast}"))
                .fetch_one(store.pool())
                .await
                .unwrap();
        let large: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM documents \
             WHERE tenant = 'a' AND collection IN ('bookings', 'booking-items')",
        )
        .fetch_one(store.pool())
        .await
        .unwrap();
        assert!(
            out_of_line * 10 < large,
            "{out_of_line} of {large} bookings and items stored out of their rows"
        );
    })
    .await;
}

/// The document store opens at most its share of PostgreSQL's connections: a transaction past
/// it waits for one to end.
#[tokio::test]
async fn postgres_document_connections_are_bounded() {
    use super::postgres::{CONNECTIONS, Connections, IDLE_TIMEOUT};

    let Ok(url) = std::env::var(POSTGRES_ENV) else {
        eprintln!("\n*** SKIPPED: PostgreSQL storage tests ({POSTGRES_ENV} is not set) ***\n");
        return;
    };
    let connections = Connections::new(&url, IDLE_TIMEOUT).unwrap();
    let select = Statement::new("SELECT 1".to_owned(), Vec::new(), &[]);
    let mut open = Vec::new();
    for _ in 0..CONNECTIONS {
        let mut tx = connections.begin(Mode::ReadOnly).await.unwrap();
        tx.execute(None, &select).await.unwrap();
        open.push(tx);
    }
    let past = tokio::time::timeout(
        std::time::Duration::from_millis(300),
        connections.begin(Mode::ReadOnly),
    )
    .await;
    assert!(past.is_err(), "a transaction past the bound began");
    drop(open.pop());
    let mut next = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        connections.begin(Mode::ReadOnly),
    )
    .await
    .expect("a transaction began once one ended")
    .unwrap();
    next.execute(None, &select).await.unwrap();
}

/// A connection of the document store idle for longer than its idle timeout is closed on the
/// server; a transaction after that opens a new one.
#[tokio::test]
async fn postgres_idle_document_connections_are_closed() {
    use std::time::Duration;

    use super::postgres::Connections;

    let Ok(url) = std::env::var(POSTGRES_ENV) else {
        eprintln!("\n*** SKIPPED: PostgreSQL storage tests ({POSTGRES_ENV} is not set) ***\n");
        return;
    };
    // The server tells this test's connections from every other client by their name.
    let name = format!("rentald-test-{}", uuid::Uuid::new_v4().simple());
    let separator = if url.contains('?') { '&' } else { '?' };
    let named = format!("{url}{separator}application_name={name}");
    let observer = sqlx::PgPool::connect(&url).await.unwrap();
    let open = || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
        )
        .bind(&name)
        .fetch_one(&observer)
        .await
        .unwrap()
    };
    let connections = Connections::new(&named, Duration::from_millis(300)).unwrap();
    let select = Statement::new("SELECT 1".to_owned(), Vec::new(), &[]);
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut tx = connections.begin(Mode::ReadOnly).await.unwrap();
        tx.execute(None, &select).await.unwrap();
        held.push(tx);
    }
    assert_eq!(open().await, 3, "three transactions, three connections");
    for tx in held {
        tx.commit(None).await.unwrap();
    }
    let mut left = open().await;
    for _ in 0..100 {
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        left = open().await;
    }
    assert_eq!(left, 0, "idle connections were still open after 10 s");
    let mut tx = connections.begin(Mode::ReadOnly).await.unwrap();
    tx.execute(None, &select).await.unwrap();
    tx.commit(None).await.unwrap();
}
