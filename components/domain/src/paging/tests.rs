use super::*;
use crate::error::ErrorCode;
use crate::models::{Booking, BookingDescription, Piece};

fn utc(value: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(value)
        .unwrap()
        .with_timezone(&Utc)
}

#[test]
fn limit_defaults_to_thirty_and_is_cut_to_one_hundred() {
    assert_eq!(effective_limit(None), 30);
    assert_eq!(effective_limit(Some(0)), 30);
    assert_eq!(effective_limit(Some(-5)), 30);
    assert_eq!(effective_limit(Some(1)), 1);
    assert_eq!(effective_limit(Some(30)), 30);
    assert_eq!(effective_limit(Some(100)), 100);
    assert_eq!(effective_limit(Some(101)), 100);
    assert_eq!(effective_limit(Some(i64::MAX)), 100);
}

#[test]
fn negative_offset_is_zero() {
    assert_eq!(effective_offset(None), 0);
    assert_eq!(effective_offset(Some(-1)), 0);
    assert_eq!(effective_offset(Some(i64::MIN)), 0);
    assert_eq!(effective_offset(Some(40)), 40);
    assert_eq!(
        Page::new(Some(-3), Some(500)),
        Page {
            offset: 0,
            limit: 100
        }
    );
}

#[test]
fn ascending_cursor_admits_greater_ids() {
    let cursor = IdCursor::new(Some(10), true);
    assert_eq!(cursor, IdCursor::After(10));
    assert!(!cursor.descending());
    assert!(!cursor.admits(9));
    assert!(!cursor.admits(10));
    assert!(cursor.admits(11));
    assert_eq!(IdCursor::new(None, true), IdCursor::After(0));
    assert_eq!(IdCursor::new(Some(-7), true), IdCursor::After(0));
    assert!(IdCursor::After(0).admits(1));
}

#[test]
fn descending_cursor_starts_from_the_newest_then_admits_lower_ids() {
    let first = IdCursor::new(Some(0), false);
    assert_eq!(first, IdCursor::Newest);
    assert!(first.descending());
    assert!(first.admits(i64::MAX));
    assert_eq!(IdCursor::new(Some(-1), false), IdCursor::Newest);
    assert_eq!(IdCursor::new(None, false), IdCursor::Newest);

    let later = IdCursor::new(Some(10), false);
    assert_eq!(later, IdCursor::Before(10));
    assert!(later.descending());
    assert!(later.admits(9));
    assert!(!later.admits(10));
    assert!(!later.admits(11));
}

#[test]
fn cursor_ranges_over_the_id_index() {
    assert_eq!(
        IdCursor::After(5).range(vec![]),
        KeyRange {
            lower: Some(Bound::Exclusive(vec![KeyPart::Int(5)])),
            upper: None,
        }
    );
    assert_eq!(IdCursor::Newest.range(vec![]), KeyRange::all());
    assert_eq!(
        IdCursor::Before(5).range(vec![]),
        KeyRange {
            lower: None,
            upper: Some(Bound::Exclusive(vec![KeyPart::Int(5)])),
        }
    );
}

#[test]
fn cursor_ranges_over_the_status_index() {
    let status = || vec![KeyPart::Int(2)];
    assert_eq!(
        IdCursor::After(5).range(status()),
        KeyRange {
            lower: Some(Bound::Exclusive(vec![KeyPart::Int(2), KeyPart::Int(5)])),
            upper: Some(Bound::Inclusive(status())),
        }
    );
    assert_eq!(IdCursor::Newest.range(status()), KeyRange::prefix(status()));
    assert_eq!(
        IdCursor::Before(5).range(status()),
        KeyRange {
            lower: Some(Bound::Inclusive(status())),
            upper: Some(Bound::Exclusive(vec![KeyPart::Int(2), KeyPart::Int(5)])),
        }
    );
}

#[test]
fn next_offset_of_the_booking_list_is_the_last_id() {
    let page = PagedResult::by_cursor(IdCursor::After(0), 3, 10, vec![1, 2, 4], |id| *id);
    assert_eq!(page.offset, 0);
    assert_eq!(page.limit, 3);
    assert_eq!(page.total, 10);
    assert_eq!(page.next_offset, 4);
    assert_eq!(page.results, Some(vec![1, 2, 4]));

    let descending = PagedResult::by_cursor(IdCursor::Newest, 2, 10, vec![9, 7], |id| *id);
    assert_eq!(descending.offset, 0);
    assert_eq!(descending.next_offset, 7);

    let next = PagedResult::by_cursor(IdCursor::Before(7), 2, 10, vec![6, 3], |id| *id);
    assert_eq!(next.offset, 7);
    assert_eq!(next.next_offset, 3);
}

#[test]
fn next_offset_of_an_empty_page_is_the_offset_again() {
    let page = PagedResult::<i64>::by_cursor(IdCursor::After(42), 30, 42, vec![], |id| *id);
    assert_eq!(page.next_offset, 42);
    assert_eq!(page.results, Some(vec![]));
    let page = PagedResult::<i64>::by_cursor(IdCursor::Before(1), 30, 5, vec![], |id| *id);
    assert_eq!(page.next_offset, 1);
    let page = PagedResult::<i64>::by_cursor(IdCursor::Newest, 30, 0, vec![], |id| *id);
    assert_eq!(page.next_offset, 0);
}

#[test]
fn next_offset_of_skip_lists_adds_the_items_returned() {
    let page = PagedResult::by_skip(Page::new(Some(20), Some(10)), 25, vec!['a'; 5]);
    assert_eq!(page.offset, 20);
    assert_eq!(page.limit, 10);
    assert_eq!(page.total, 25);
    assert_eq!(page.next_offset, 25);
    let empty = PagedResult::<char>::by_skip(Page::new(Some(30), None), 25, vec![]);
    assert_eq!(empty.next_offset, 30);
    assert_eq!(empty.limit, 30);
}

#[test]
fn integers() {
    assert_eq!(parse_int("limit", "25"), Ok(25));
    assert_eq!(parse_int("limit", " -3 "), Ok(-3));
    assert_eq!(parse_int("offset", "4294967296"), Ok(4_294_967_296));
    for value in ["", "ten", "1.5", "1e3", "0x10", "99999999999999999999"] {
        let error = parse_int("limit", value).unwrap_err();
        assert_eq!(error.code, ErrorCode::ModelNotValid, "{value:?}");
        assert_eq!(error.field.as_deref(), Some("limit"));
    }
}

#[test]
fn booleans_in_any_case() {
    assert_eq!(parse_bool("sortDirectionAsc", "true"), Ok(true));
    assert_eq!(parse_bool("sortDirectionAsc", "TRUE"), Ok(true));
    assert_eq!(parse_bool("sortDirectionAsc", "False"), Ok(false));
    for value in ["", "1", "0", "yes", "no", "t"] {
        let error = parse_bool("sortByCloseDate", value).unwrap_err();
        assert_eq!(error.code, ErrorCode::ModelNotValid, "{value:?}");
        assert_eq!(error.field.as_deref(), Some("sortByCloseDate"));
    }
}

#[test]
fn date_times_and_statuses() {
    assert_eq!(
        parse_date_time("updatedSince", "2024-03-01T10:00:00").unwrap(),
        utc("2024-03-01T10:00:00Z")
    );
    let error = parse_date_time("updatedSince", "soon").unwrap_err();
    assert_eq!(error.code, ErrorCode::ModelNotValid);
    assert_eq!(error.field.as_deref(), Some("updatedSince"));

    assert_eq!(parse_status("status", "5"), Ok(BookingStatus::Closed));
    let error = parse_status("status", "0").unwrap_err();
    assert_eq!(error.field.as_deref(), Some("status"));
}

#[test]
fn booking_list_query_defaults() {
    let query = BookingListQuery::parse(Vec::<(&str, &str)>::new()).unwrap();
    assert_eq!(
        query,
        BookingListQuery {
            status: None,
            cursor: IdCursor::After(0),
            limit: 30,
            updated_since: None,
        }
    );
}

#[test]
fn booking_list_query_reads_every_parameter() {
    let query = BookingListQuery::parse([
        ("status", "2"),
        ("offset", "50"),
        ("limit", "500"),
        ("sortDirectionAsc", "false"),
        ("updatedSince", "2024-03-01T10:00:00-03:00"),
        ("language", "es-AR"),
    ])
    .unwrap();
    assert_eq!(query.status, Some(BookingStatus::Reserved));
    assert_eq!(query.cursor, IdCursor::Before(50));
    assert_eq!(query.limit, 100);
    assert_eq!(query.updated_since, Some(utc("2024-03-01T13:00:00Z")));
}

#[test]
fn booking_list_query_last_value_wins_and_empty_is_absent() {
    let query = BookingListQuery::parse([
        ("limit", "10"),
        ("limit", "20"),
        ("status", ""),
        ("offset", "-4"),
    ])
    .unwrap();
    assert_eq!(query.limit, 20);
    assert_eq!(query.status, None);
    assert_eq!(query.cursor, IdCursor::After(0));
}

#[test]
fn booking_list_query_errors_name_the_parameter() {
    for (name, value) in [
        ("offset", "x"),
        ("limit", "1.5"),
        ("sortDirectionAsc", "yes"),
        ("updatedSince", "yesterday"),
        ("status", "Lost"),
    ] {
        let error = BookingListQuery::parse([(name, value)]).unwrap_err();
        assert_eq!(error.code, ErrorCode::ModelNotValid, "{name}");
        assert_eq!(error.field.as_deref(), Some(name));
    }
}

#[test]
fn booking_list_filters() {
    let since = BookingListQuery::parse([("updatedSince", "2024-03-01T10:00:00Z")]).unwrap();
    let at = |value: &str| Some(DateTime::parse_from_rfc3339(value).unwrap());
    assert!(since.admits(1, BookingStatus::Quoted, at("2024-03-01T10:00:01Z")));
    assert!(!since.admits(1, BookingStatus::Quoted, at("2024-03-01T10:00:00Z")));
    assert!(!since.admits(1, BookingStatus::Quoted, None));

    let closed = BookingListQuery::parse([("status", "5"), ("offset", "3")]).unwrap();
    assert!(closed.admits(4, BookingStatus::Closed, None));
    assert!(!closed.admits(4, BookingStatus::Canceled, None));
    assert!(!closed.admits(3, BookingStatus::Closed, None));
}

#[test]
fn closed_list_query() {
    let tz = Tz::America__Argentina__Buenos_Aires;
    let query = ClosedListQuery::parse(
        [
            ("fromDate", "2024-03-01"),
            ("toDate", "2024-03-02T12:00:00"),
            ("offset", "-10"),
            ("limit", "0"),
            ("sortByCloseDate", "TRUE"),
        ],
        tz,
    )
    .unwrap();
    assert_eq!(query.page, Page::new(None, None));
    assert!(query.ascending);
    assert!(query.by_close_date);
    assert_eq!(
        query.range,
        CloseDateRange::parse(Some("2024-03-01"), Some("2024-03-02"), tz).unwrap()
    );
}

#[test]
fn closed_list_query_errors() {
    let tz = Tz::UTC;
    let error = ClosedListQuery::parse([("toDate", "2024-03-01")], tz).unwrap_err();
    assert_eq!(error.code, ErrorCode::ModelNotValid);
    assert_eq!(error.field.as_deref(), Some("fromDate"));

    let error =
        ClosedListQuery::parse([("fromDate", "2024-03-01"), ("toDate", "")], tz).unwrap_err();
    assert_eq!(error.field.as_deref(), Some("toDate"));

    let error = ClosedListQuery::parse([("fromDate", "2024-01-01"), ("toDate", "2024-06-01")], tz)
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::InvlaidDates);

    let error = ClosedListQuery::parse(
        [
            ("fromDate", "2024-01-01"),
            ("toDate", "2024-01-02"),
            ("sortByCloseDate", "maybe"),
        ],
        tz,
    )
    .unwrap_err();
    assert_eq!(error.field.as_deref(), Some("sortByCloseDate"));
}

#[test]
fn skip_page_from_a_query() {
    assert_eq!(
        Page::parse([("offset", "60"), ("limit", "20")]).unwrap(),
        Page {
            offset: 60,
            limit: 20
        }
    );
    assert!(Page::parse([("offset", "sixty")]).is_err());
}

#[test]
fn a_page_of_rendered_items_is_the_page_of_their_bookings() {
    let bookings: Vec<Booking> = [(7, "AB123CD", "120.50"), (4, "ZZ999ZZ", "0.10")]
        .into_iter()
        .map(|(id, car, price)| {
            crate::fixtures::booking(
                BookingStatus::Reserved,
                serde_json::json!({
                    "Id": id,
                    "Car": {"Id": car},
                    "Price": price.parse::<rust_decimal::Decimal>().unwrap(),
                    "Customer": {"Id": 3, "Name": "Ana \"Gómez\""}
                }),
            )
        })
        .collect();
    let rendered = |bookings: &[Booking]| {
        bookings
            .iter()
            .map(|booking| RenderedItem {
                id: booking.id,
                json: serde_json::to_string(&BookingDescription::from(booking)).unwrap(),
            })
            .collect::<Vec<_>>()
    };
    for (cursor, items) in [
        ("", &bookings[..]),
        ("offset=8&sortDirectionAsc=false&limit=2", &bookings[..]),
        ("offset=9", &bookings[..0]),
    ] {
        let query = BookingListQuery::parse(url_pairs(cursor)).unwrap();
        let descriptions = items.iter().map(BookingDescription::from).collect();
        let decoded = PagedResult::by_cursor(query.cursor, query.limit, 12, descriptions, |d| d.id);
        let decoded = serde_json::to_string(&decoded).unwrap();
        assert_eq!(query.rendered_page(12, rendered(items)).to_json(), decoded);
        // Written piece by piece with the items held elsewhere (as a component holds the
        // bodies its host keeps), the same text, each item at its place.
        let held: Vec<_> = rendered(items)
            .into_iter()
            .enumerate()
            .map(|(n, item)| RenderedItem {
                id: item.id,
                json: n,
            })
            .collect();
        let texts = rendered(items);
        let mut written = String::new();
        query
            .rendered_page(12, held)
            .write_json(|piece| match piece {
                Piece::Text(text) => written.push_str(text),
                Piece::Item(&n) => written.push_str(&texts[n].json),
            });
        assert_eq!(written, decoded);
        for item in rendered(items) {
            assert_eq!(item.booking_status().unwrap(), BookingStatus::Reserved);
        }
    }
}

/// A query string's pairs, as a list's parser takes them.
fn url_pairs(query: &str) -> Vec<(&str, &str)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
        .collect()
}
