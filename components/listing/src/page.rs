//! Small conversions shared by the lists: query pairs, page sizes and totals in the store's
//! integer types, and picking one page of ids that the store cannot order for us.

use rental_domain::paging::Page;
use rental_guest::Request;

/// The decoded query pairs of a request, as the domain's query parsers take them.
pub fn query(request: &Request) -> impl Iterator<Item = (&str, &str)> {
    request
        .query
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
}

/// A page size (1 to 100 after the domain's rules) as a store limit.
pub fn store_limit(limit: i64) -> u32 {
    u32::try_from(limit.max(0)).unwrap_or(u32::MAX)
}

/// A skip count as a store skip. A skip beyond `u32::MAX` entries skips everything anyway.
pub fn store_skip(page: Page) -> u32 {
    u32::try_from(page.offset.max(0)).unwrap_or(u32::MAX)
}

/// A store count as the `Total` of a page.
pub fn total(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// One page of documents known by `(Id, document id)`: sorted by Id in the requested
/// direction, `skip` of them skipped, at most `limit` kept. Returns the document ids.
pub fn page_by_id(
    mut items: Vec<(i64, String)>,
    ascending: bool,
    skip: u32,
    limit: u32,
) -> Vec<String> {
    if ascending {
        items.sort_unstable_by_key(|&(id, _)| id);
    } else {
        items.sort_unstable_by_key(|&(id, _)| std::cmp::Reverse(id));
    }
    items
        .into_iter()
        .skip(usize::try_from(skip).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .map(|(_, document)| document)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(ids: &[i64]) -> Vec<(i64, String)> {
        ids.iter().map(|id| (*id, id.to_string())).collect()
    }

    #[test]
    fn pages_by_id_in_both_directions() {
        let all = items(&[5, 1, 9, 3, 7]);
        assert_eq!(page_by_id(all.clone(), true, 0, 2), ["1", "3"]);
        assert_eq!(page_by_id(all.clone(), true, 2, 2), ["5", "7"]);
        assert_eq!(page_by_id(all.clone(), true, 4, 2), ["9"]);
        assert_eq!(page_by_id(all.clone(), false, 0, 3), ["9", "7", "5"]);
        assert_eq!(page_by_id(all.clone(), false, 3, 3), ["3", "1"]);
        assert!(page_by_id(all, false, 5, 3).is_empty());
    }

    #[test]
    fn store_numbers_saturate() {
        assert_eq!(store_limit(30), 30);
        assert_eq!(store_limit(-1), 0);
        assert_eq!(
            store_skip(Page {
                offset: 40,
                limit: 10
            }),
            40
        );
        assert_eq!(
            store_skip(Page {
                offset: i64::MAX,
                limit: 10
            }),
            u32::MAX
        );
        assert_eq!(total(7), 7);
        assert_eq!(total(u64::MAX), i64::MAX);
    }

    #[test]
    fn query_pairs_borrow_the_request() {
        let request = Request::new("GET", "/api/cars?offset=2&limit=5");
        let pairs: Vec<_> = query(&request).collect();
        assert_eq!(pairs, [("offset", "2"), ("limit", "5")]);
    }
}
