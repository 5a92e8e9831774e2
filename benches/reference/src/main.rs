//! `rentald-reference`: the benchmarks' native reference. It answers `GET /api/bookings/list`
//! (without `updatedSince`) for the tenant named by the Host header's first label, from a
//! `rentald` database, with the code the listing component runs (the domain's query, reads
//! and page, the store's statements through `rentald`'s storage) and nothing else: no
//! sandbox, no token, no tenant check. What `rentald` spends above it is the platform's cost.
//!
//! ```text
//! rentald-reference --database-url sqlite://data/rentald.db --listen 127.0.0.1:0
//! ```
//!
//! Prints `listening on http://ADDR` once it accepts connections. Anything it does not serve
//! gets a 404 with no body; a query the domain refuses, a 400 with no body.

use std::convert::Infallible;
use std::net::SocketAddr;

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rental_domain::collections::{BOOKING_ITEMS, bookings};
use rental_domain::{BookingListQuery, RenderedItem};
use rentald::storage::Storage;
use rentald::storage::documents::{Mode, Range, Scan};

/// What the listing component's JSON answers carry.
const JSON_CONTENT_TYPE: &str = "application/json; charset=utf-8";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (database_url, listen) = arguments()?;
    let storage = Storage::open(&database_url).await?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("listening on {listen}"))?;
    println!("listening on http://{}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let storage = storage.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let storage = storage.clone();
                async move { Ok::<_, Infallible>(answer(&storage, &request).await) }
            });
            // A client that goes away is no concern of a benchmark's.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// `--database-url URL --listen ADDR`.
fn arguments() -> anyhow::Result<(String, SocketAddr)> {
    let mut database_url = None;
    let mut listen = None;
    let mut args = std::env::args().skip(1);
    while let Some(name) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{name} needs a value"))?;
        match name.as_str() {
            "--database-url" => database_url = Some(value),
            "--listen" => listen = Some(value.parse().context("--listen")?),
            other => anyhow::bail!("unknown option {other}"),
        }
    }
    Ok((
        database_url.context("--database-url is required")?,
        listen.context("--listen is required")?,
    ))
}

fn empty(status: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::default());
    *response.status_mut() = status;
    response
}

async fn answer(storage: &Storage, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    let tenant = request
        .headers()
        .get(hyper::header::HOST)
        .and_then(|host| host.to_str().ok())
        .and_then(|host| host.split('.').next());
    let (Some(tenant), true) = (
        tenant,
        request.method() == Method::GET && request.uri().path() == "/api/bookings/list",
    ) else {
        return empty(StatusCode::NOT_FOUND);
    };
    let pairs = url::form_urlencoded::parse(request.uri().query().unwrap_or_default().as_bytes());
    let Ok(query) = BookingListQuery::parse(pairs) else {
        return empty(StatusCode::BAD_REQUEST);
    };
    if query.updated_since.is_some() {
        return empty(StatusCode::NOT_FOUND);
    }
    // The reads run in a task of their own, as rentald's guests do: a client that hangs up
    // must not drop them halfway through a transaction.
    let (storage, tenant) = (storage.clone(), tenant.to_owned());
    let listed = tokio::spawn(async move { list(&storage, &tenant, &query).await }).await;
    match listed
        .map_err(anyhow::Error::from)
        .and_then(|listed| listed)
    {
        Ok(body) => {
            let mut response = Response::new(Full::new(Bytes::from(body)));
            response.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static(JSON_CONTENT_TYPE),
            );
            response
        }
        Err(error) => {
            eprintln!("rentald-reference: {error:#}");
            empty(StatusCode::INTERNAL_SERVER_ERROR)
        }
    }
}

/// The page as the listing component makes it: one count, one scan of the bookings in list
/// form as the store keeps them, one page written around them.
async fn list(
    storage: &Storage,
    tenant: &str,
    query: &BookingListQuery,
) -> anyhow::Result<Vec<u8>> {
    let reads = query.index_reads();
    let range = |collection: &str, keys| Range {
        collection: collection.to_owned(),
        index: reads.index.to_owned(),
        keys,
    };
    let mut tx = storage.begin(tenant, Mode::ReadOnly).await?;
    let total = tx
        .count(&range(bookings::COLLECTION, reads.matching.clone()))
        .await?;
    let documents = tx
        .scan(&Scan {
            range: range(BOOKING_ITEMS.collection, reads.page.clone()),
            descending: reads.descending,
            skip: 0,
            limit: u32::try_from(query.limit)?,
        })
        .await?;
    tx.commit().await?;
    let items = documents
        .into_iter()
        .map(|document| {
            Ok(RenderedItem {
                id: document.id.parse()?,
                json: document.body,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(query
        .rendered_page(i64::try_from(total)?, items)
        .to_json()
        .into_bytes())
}
