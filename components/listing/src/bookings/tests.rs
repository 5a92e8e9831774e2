use chrono::{NaiveDate, TimeZone};
use rental_domain::collections::bookings::{BY_ID, BY_STATUS};
use rental_domain::{Bound, KeyRange, Page};

use super::*;

fn list_query(query: &str) -> BookingListQuery {
    let request = Request::new("GET", &format!("/api/bookings/list?{query}"));
    BookingListQuery::parse(page::query(&request)).unwrap()
}

fn updated(micros: i64, status: i64, id: i64) -> Entry {
    Entry {
        id: id.to_string(),
        key: vec![
            KeyPart::Time(micros),
            KeyPart::Int(status),
            KeyPart::Int(id),
        ],
    }
}

#[test]
fn ascending_list_scans_the_id_index_after_the_cursor() {
    let (matching, page) = index_plan(&list_query("offset=40&limit=10"));
    assert_eq!(matching, Range::all(BY_ID));
    let expected = Range::new(
        BY_ID,
        KeyRange {
            lower: Some(Bound::Exclusive(vec![KeyPart::Int(40)])),
            upper: None,
        },
    )
    .scan()
    .limit(10);
    assert_eq!(page, expected);
}

#[test]
fn first_descending_call_starts_from_the_newest() {
    let (_, page) = index_plan(&list_query("sortDirectionAsc=false"));
    assert_eq!(page, Range::all(BY_ID).scan().descending(true).limit(30));
}

#[test]
fn later_descending_calls_scan_below_the_cursor() {
    let (_, page) = index_plan(&list_query("sortDirectionAsc=false&offset=17&limit=500"));
    let expected = Range::new(
        BY_ID,
        KeyRange {
            lower: None,
            upper: Some(Bound::Exclusive(vec![KeyPart::Int(17)])),
        },
    )
    .scan()
    .descending(true)
    .limit(100);
    assert_eq!(page, expected);
}

#[test]
fn status_filter_uses_the_status_index_under_its_prefix() {
    let (matching, page) = index_plan(&list_query("status=5&offset=3"));
    assert_eq!(matching, Range::prefix(BY_STATUS, vec![KeyPart::Int(5)]));
    let expected = Range::new(
        BY_STATUS,
        KeyRange {
            lower: Some(Bound::Exclusive(vec![KeyPart::Int(5), KeyPart::Int(3)])),
            upper: Some(Bound::Inclusive(vec![KeyPart::Int(5)])),
        },
    )
    .scan()
    .limit(30);
    assert_eq!(page, expected);
}

#[test]
fn updated_entries_are_filtered_counted_and_paged_by_id() {
    let query = list_query("updatedSince=1970-01-01T00:00:00Z&status=2&offset=3&limit=2");
    // Keys come in update order; Ids are out of order.
    let entries = [
        updated(10, 2, 7),
        updated(11, 5, 4),
        updated(12, 2, 2),
        updated(13, 2, 9),
        updated(14, 2, 5),
        updated(15, 2, 3),
    ];
    let (total, ids) = select_updated(&query, &entries, &[]).unwrap();
    assert_eq!(total, 5, "every status-2 entry, whatever the cursor");
    assert_eq!(ids, ["5", "7"]);
}

#[test]
fn updated_entries_descending_from_the_newest_and_below_a_cursor() {
    let entries = [updated(10, 1, 7), updated(11, 6, 4), updated(12, 2, 9)];
    let newest = list_query("updatedSince=1970-01-01T00:00:00Z&sortDirectionAsc=false&limit=2");
    assert_eq!(
        select_updated(&newest, &entries, &[]).unwrap(),
        (3, vec!["9".to_owned(), "7".to_owned()])
    );
    let below = list_query("updatedSince=1970-01-01T00:00:00Z&sortDirectionAsc=false&offset=7");
    assert_eq!(
        select_updated(&below, &entries, &[]).unwrap(),
        (3, vec!["4".to_owned()])
    );
}

#[test]
fn an_entry_at_the_instant_itself_is_not_after_it() {
    // The store's exclusive bound already leaves such entries out; the domain's filter
    // agrees, so a store that returned one would not change the answer.
    let query = list_query("updatedSince=1970-01-01T00:00:01Z");
    let entries = [updated(1_000_000, 2, 1), updated(1_000_001, 2, 2)];
    assert_eq!(
        select_updated(&query, &entries, &[]).unwrap(),
        (1, vec!["2".to_owned()])
    );
}

#[test]
fn malformed_updated_keys_are_internal_errors() {
    let query = list_query("updatedSince=1970-01-01T00:00:00Z");
    let bad = Entry {
        id: "1".to_owned(),
        key: vec![KeyPart::Int(1)],
    };
    assert!(matches!(
        select_updated(&query, &[bad], &[]),
        Err(Error::Internal(_))
    ));
    let unknown_status = updated(5, 9, 1);
    assert!(matches!(
        select_updated(&query, &[unknown_status], &[]),
        Err(Error::Internal(_))
    ));
}

fn closed_query(query: &str, zone: chrono_tz::Tz) -> ClosedListQuery {
    let request = Request::new("GET", &format!("/api/bookings/closed?{query}"));
    ClosedListQuery::parse(page::query(&request), zone).unwrap()
}

#[test]
fn closed_range_is_whole_days_in_the_tenant_zone() {
    let zone = chrono_tz::America::Argentina::Buenos_Aires;
    let query = closed_query("fromDate=2024-03-01&toDate=2024-03-02T15:00:00", zone);
    let start = Utc.with_ymd_and_hms(2024, 3, 1, 3, 0, 0).unwrap();
    let end = Utc.with_ymd_and_hms(2024, 3, 3, 3, 0, 0).unwrap();
    let expected = Range::new(
        BY_CLOSED,
        KeyRange {
            lower: Some(Bound::Inclusive(vec![KeyPart::Time(
                start.timestamp_micros(),
            )])),
            upper: Some(Bound::Exclusive(vec![KeyPart::Time(
                end.timestamp_micros(),
            )])),
        },
    );
    assert_eq!(closed_within(&query.range), expected);
    assert_eq!(
        query.range.from_date(),
        NaiveDate::from_ymd_opt(2024, 3, 1).unwrap()
    );
}

#[test]
fn closed_by_date_is_one_scan_with_skip_and_limit() {
    let query = closed_query(
        "fromDate=2024-03-01&toDate=2024-03-31&offset=20&limit=10&sortByCloseDate=true&sortDirectionAsc=false",
        chrono_tz::Tz::UTC,
    );
    assert_eq!(
        query.page,
        Page {
            offset: 20,
            limit: 10
        }
    );
    let expected = closed_within(&query.range)
        .scan()
        .descending(true)
        .skip(20)
        .limit(10);
    assert_eq!(closed_page_by_date(&query), expected);
}

#[test]
fn closed_by_id_orders_the_entries_by_id() {
    let query = closed_query(
        "fromDate=2024-03-01&toDate=2024-03-31&offset=1&limit=2",
        chrono_tz::Tz::UTC,
    );
    let entry = |time: i64, id: i64| Entry {
        id: id.to_string(),
        key: vec![KeyPart::Time(time), KeyPart::Int(id)],
    };
    let entries = [entry(1, 30), entry(2, 10), entry(3, 20), entry(4, 40)];
    assert_eq!(closed_page_by_id(&query, &entries).unwrap(), ["20", "30"]);
    let descending = closed_query(
        "fromDate=2024-03-01&toDate=2024-03-31&sortDirectionAsc=false",
        chrono_tz::Tz::UTC,
    );
    assert_eq!(
        closed_page_by_id(&descending, &entries).unwrap(),
        ["40", "30", "20", "10"]
    );
    let bad = Entry {
        id: "1".to_owned(),
        key: vec![KeyPart::Int(1)],
    };
    assert!(closed_page_by_id(&query, &[bad]).is_err());
}
