//! The catalogue lists: `GET /api/branchoffices`, `GET /api/customers` and `GET /api/cars`.
//!
//! Customers and cars are skip-count pages over their `id` index, with the index's size as
//! `Total`; branch offices are every entry of the `active` index, as a plain array.

use rental_domain::collections::{branch_offices, cars, customers};
use rental_domain::{BranchOfficeDoc, Car, CustomerDoc, Page, PagedResult, Stored};
use rental_guest::store::{Mode, Range, Scan, Transaction};
use rental_guest::{Error, Request, Response, json, retry_on_conflict};

use crate::page::{self, store_limit, store_skip};

/// `GET /api/branchoffices`: every active branch office, by Id.
pub fn branch_offices() -> Result<Response, Error> {
    let offices = retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadOnly)?;
        tx.scan_all(&Range::<BranchOfficeDoc>::all(branch_offices::ACTIVE))
    })?;
    let offices: Vec<_> = offices
        .into_iter()
        .map(|document| document.value.office)
        .collect();
    Ok(json(200, &offices))
}

/// `GET /api/customers`: a page of customers, by Id.
pub fn customers(request: &Request) -> Result<Response, Error> {
    let page = Page::parse(page::query(request))?;
    let result = skip_page(customers::BY_ID, page, |document: CustomerDoc| {
        document.customer
    })?;
    Ok(json(200, &result))
}

/// `GET /api/cars`: a page of cars, by Id.
pub fn cars(request: &Request) -> Result<Response, Error> {
    let page = Page::parse(page::query(request))?;
    Ok(json(200, &skip_page(cars::BY_ID, page, |car: Car| car)?))
}

/// One skip-count page of the documents of `T` in the order of `index`, each as `item` makes
/// it, with the number of entries of the index as `Total`.
fn skip_page<T: Stored, U>(
    index: &'static str,
    page: Page,
    item: impl Fn(T) -> U,
) -> Result<PagedResult<U>, Error> {
    retry_on_conflict(|| {
        let tx = Transaction::begin(Mode::ReadOnly)?;
        let all = Range::<T>::all(index);
        let total = page::total(tx.count(&all)?);
        let items = tx.scan(&page_scan(all, page))?;
        let items = items
            .into_iter()
            .map(|document| item(document.value))
            .collect();
        Ok(PagedResult::by_skip(page, total, items))
    })
}

/// The scan of one skip-count page of a range.
fn page_scan<T: Stored>(range: Range<T>, page: Page) -> Scan<T> {
    range
        .scan()
        .skip(store_skip(page))
        .limit(store_limit(page.limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_skip_offset_and_take_limit() {
        let request = Request::new("GET", "/api/cars?offset=-5&limit=1000");
        let page = Page::parse(page::query(&request)).unwrap();
        assert_eq!(
            page_scan(Range::<Car>::all(cars::BY_ID), page),
            Range::<Car>::all(cars::BY_ID).scan().skip(0).limit(100)
        );
        let request = Request::new("GET", "/api/customers?offset=60");
        let page = Page::parse(page::query(&request)).unwrap();
        assert_eq!(
            page_scan(Range::<CustomerDoc>::all(customers::BY_ID), page),
            Range::<CustomerDoc>::all(customers::BY_ID)
                .scan()
                .skip(60)
                .limit(30)
        );
    }

    #[test]
    fn bad_paging_values_name_the_parameter() {
        let request = Request::new("GET", "/api/customers?limit=ten");
        let error = Page::parse(page::query(&request)).unwrap_err();
        assert_eq!(error.field.as_deref(), Some("limit"));
    }
}
