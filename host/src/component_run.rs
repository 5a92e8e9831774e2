//! `rentald component run`: one request through a component file, as a platform component, on
//! a tenant in an in-memory database, with no server and no socket; what it answered, what it
//! wrote and what it used, printed.
//!
//! The request takes the front door's steps where they apply outside a server (the route
//! table, the body limits, the language) and the runtime's own path: the same checks as
//! `component check`, the same limits as `serve`.

use std::collections::BTreeSet;
use std::io::{Read as _, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST};
use http::uri::PathAndQuery;
use http::{Method, Request, Response};
use http_body_util::{BodyExt as _, Full};
use rental_domain::Language;
use rental_platform::routes::Access;

use crate::front::{self, Rejection};
use crate::runtime::{Caller, Outcome, RequestContext, Runtime, Serving, Usage};
use crate::storage::Storage;
use crate::storage::queue::QueueMessage;

/// The tenant a request runs on.
pub const TENANT: &str = "demo";

/// The API user a request runs as, holding every permission.
pub const USER: &str = "component-run";

/// `rentald component run FILE --as NAME METHOD PATH`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The component (.wasm).
    pub file: PathBuf,
    /// The platform component it runs as: listing, booking, selfcheckin, bankone, banktwo or
    /// reconcile.
    #[arg(long = "as", value_name = "NAME")]
    pub component: String,
    /// The request's method, as the API spells it (GET, POST, PUT, ...).
    pub method: String,
    /// The request's path and query, e.g. '/api/bookings/list?limit=1'.
    pub path: String,
    /// The request's body (JSON), from this file; `-` reads standard input.
    #[arg(long, value_name = "FILE")]
    pub body: Option<PathBuf>,
    /// Load the tenant from this catalogue file (JSON Lines, docs/catalog.md) instead of the
    /// demo's catalogue and bookings.
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,
    /// The response language, as the `language` parameter would set it [default: the query's
    /// `language`, else the tenant's default].
    #[arg(long, value_parser = ["en", "es", "pt"])]
    pub language: Option<String>,
    /// Where to put the compiled component [default: the configuration's cache_dir, else
    /// DATA_DIR/cache].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// The request, as far as the front door takes it: its context and HTTP request, or the
/// front door's own answer.
enum Prepared {
    Component(Box<(RequestContext, Request<Bytes>)>),
    Answered(Response<Full<Bytes>>),
}

/// Runs the request of `args` through `serving` (checked as `component` by `runtime`) on
/// the tenant [`TENANT`] of `storage`, as `caller`, and prints what happened. An error when
/// the component trapped or ran out of time, naming the limit it hit.
pub async fn run(
    runtime: &Runtime,
    component: rental_platform::Component,
    serving: &Serving,
    storage: Storage,
    caller: Caller,
    args: &RunArgs,
    base_domain: &str,
) -> anyhow::Result<()> {
    let tenant = storage
        .tenant(TENANT)
        .await?
        .with_context(|| format!("tenant {TENANT} is missing"))?;
    let correlation_id = uuid::Uuid::new_v4().simple().to_string();
    let context = RequestContext {
        tenant: tenant.into(),
        component,
        caller: Some(caller),
        language: Language::En,
        correlation_id: correlation_id.clone(),
    };
    let mut out = std::io::stdout().lock();
    let (context, request) = match prepare(args, context, base_domain)? {
        Prepared::Component(prepared) => *prepared,
        Prepared::Answered(response) => {
            let mut response = buffered(response).await;
            front::stamp_correlation_id(&mut response, &correlation_id);
            print_response(&mut out, &response)?;
            writeln!(out, "answered by the front door: no component ran")?;
            return Ok(());
        }
    };
    let before = Snapshot::read(&storage).await?;
    let (outcome, usage) = runtime
        .handle_measured(serving, storage.clone(), context, request)
        .await;
    let after = Snapshot::read(&storage).await?;
    let failure = match outcome {
        Outcome::Response(mut response) => {
            front::stamp_correlation_id(&mut response, &correlation_id);
            print_response(&mut out, &response)?;
            None
        }
        Outcome::Trap(trap) => {
            Some(trap.context(format!("{} failed as {component}", args.file.display())))
        }
        Outcome::Timeout => Some(anyhow::anyhow!(
            "{} ran past its deadline of {} ms (--request-timeout-ms) as {component} and was \
             stopped",
            args.file.display(),
            usage.deadline.as_millis()
        )),
        Outcome::Busy => Some(anyhow::anyhow!("the component was not started")),
    };
    print_writes(&mut out, &before, &after)?;
    print_usage(&mut out, &usage)?;
    out.flush()?;
    failure.map_or(Ok(()), Err)
}

/// The request's way through the front door's steps: route, caller, language, body.
fn prepare(
    args: &RunArgs,
    mut context: RequestContext,
    base_domain: &str,
) -> anyhow::Result<Prepared> {
    let method = Method::from_bytes(args.method.as_bytes())
        .with_context(|| format!("{:?} is not an HTTP method", args.method))?;
    anyhow::ensure!(
        args.path.starts_with('/'),
        "the path {:?} does not begin with `/`",
        args.path
    );
    let target: PathAndQuery = args
        .path
        .parse()
        .with_context(|| format!("{:?} is not a path and query", args.path))?;
    let route = match front::route(&method, target.path()) {
        Ok(route) => route,
        Err(rejection) => return answered(rejection, &context),
    };
    anyhow::ensure!(
        route.component == context.component,
        "{method} {} is served by {}, not {}: run it --as {}",
        route.path,
        route.component,
        context.component,
        route.component
    );
    if matches!(route.access, Access::Anonymous) {
        context.caller = None;
    }
    context.language = match &args.language {
        Some(code) => Language::parse(code).context("an unsupported --language")?,
        None => match front::language(target.query(), &context.tenant) {
            Ok(language) => language,
            Err(rejection) => return answered(rejection, &context),
        },
    };
    let body = match &args.body {
        Some(file) => read_body(file)?,
        None => Bytes::new(),
    };
    if body.len() > front::body_limit(route.access) {
        return answered(Rejection::TooLarge, &context);
    }
    let host = format!("{}.{base_domain}", context.tenant.slug);
    let mut request = Request::builder()
        .method(method)
        .uri(target)
        .header(HOST, host);
    if args.body.is_some() {
        request = request
            .header(CONTENT_TYPE, "application/json")
            .header(CONTENT_LENGTH, body.len());
    }
    let request = request.body(body)?;
    Ok(Prepared::Component(Box::new((context, request))))
}

/// The front door's answer to a request it refuses.
fn answered(rejection: Rejection, context: &RequestContext) -> anyhow::Result<Prepared> {
    Ok(Prepared::Answered(
        rejection.response(&context.correlation_id),
    ))
}

/// The body file, or all of standard input for `-`.
fn read_body(file: &Path) -> anyhow::Result<Bytes> {
    if file == Path::new("-") {
        let mut body = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut body)
            .context("reading the body from standard input")?;
        return Ok(body.into());
    }
    let body = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    Ok(body.into())
}

/// A response of the front door's, its body read.
async fn buffered(response: Response<Full<Bytes>>) -> Response<Bytes> {
    let (parts, body) = response.into_parts();
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    Response::from_parts(parts, body)
}

/// The status line, the headers and the body; a JSON body pretty-printed.
fn print_response(out: &mut impl Write, response: &Response<Bytes>) -> anyhow::Result<()> {
    let status = response.status();
    writeln!(
        out,
        "HTTP/1.1 {} {}",
        status.as_str(),
        status.canonical_reason().unwrap_or_default()
    )?;
    for (name, value) in response.headers() {
        writeln!(out, "{name}: {}", String::from_utf8_lossy(value.as_bytes()))?;
    }
    writeln!(out)?;
    let body = response.body();
    if body.is_empty() {
        return Ok(());
    }
    match pretty_json(body) {
        Some(pretty) => out.write_all(&pretty)?,
        None => out.write_all(body)?,
    }
    writeln!(out)?;
    writeln!(out)?;
    Ok(())
}

/// A JSON body indented, its members in the order the component wrote them and its numbers
/// as written; `None` when it is not JSON. The text is re-indented, not re-encoded.
fn pretty_json(body: &[u8]) -> Option<Vec<u8>> {
    serde_json::from_slice::<serde::de::IgnoredAny>(body).ok()?;
    let mut pretty = Vec::with_capacity(body.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let newline = |pretty: &mut Vec<u8>, depth: usize| {
        pretty.push(b'\n');
        pretty.resize(pretty.len() + 2 * depth, b' ');
    };
    let mut bytes = body.iter().copied().peekable();
    while let Some(byte) = bytes.next() {
        if in_string {
            pretty.push(byte);
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b'"' => {
                in_string = true;
                pretty.push(byte);
            }
            b'{' | b'[' => {
                pretty.push(byte);
                while bytes.next_if(u8::is_ascii_whitespace).is_some() {}
                if let Some(close @ (b'}' | b']')) = bytes.peek().copied() {
                    pretty.push(close);
                    bytes.next();
                } else {
                    depth += 1;
                    newline(&mut pretty, depth);
                }
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut pretty, depth);
                pretty.push(byte);
            }
            b',' => {
                pretty.push(byte);
                newline(&mut pretty, depth);
            }
            b':' => pretty.extend_from_slice(b": "),
            _ => pretty.push(byte),
        }
    }
    Some(pretty)
}

/// What the store held of the tenant: its documents' revisions and its queue's messages.
struct Snapshot {
    revisions: std::collections::BTreeMap<(String, String), i64>,
    messages: Vec<QueueMessage>,
}

impl Snapshot {
    async fn read(storage: &Storage) -> anyhow::Result<Self> {
        Ok(Self {
            revisions: storage.document_revisions(TENANT).await?,
            messages: storage.queue_messages(TENANT, None).await?,
        })
    }
}

/// Every document created, changed or deleted between `before` and `after` (collection, id,
/// revision before -> after), and every message queued.
fn print_writes(out: &mut impl Write, before: &Snapshot, after: &Snapshot) -> anyhow::Result<()> {
    let keys: BTreeSet<_> = before
        .revisions
        .keys()
        .chain(after.revisions.keys())
        .collect();
    let mut lines = Vec::new();
    for key in keys {
        let (old, new) = (before.revisions.get(key), after.revisions.get(key));
        let what = match (old, new) {
            (None, Some(_)) => "created",
            (Some(_), None) => "deleted",
            (Some(old), Some(new)) if old != new => "changed",
            _ => continue,
        };
        let revision = |r: Option<&i64>| r.map_or_else(|| "-".to_owned(), i64::to_string);
        lines.push(format!(
            "{what} {} {}: revision {} -> {}",
            key.0,
            key.1,
            revision(old),
            revision(new)
        ));
    }
    let queued: BTreeSet<i64> = before.messages.iter().map(|m| m.id).collect();
    for message in after.messages.iter().filter(|m| !queued.contains(&m.id)) {
        lines.push(format!("queued {}: {}", message.topic, message.payload));
    }
    if lines.is_empty() {
        writeln!(out, "writes: none")?;
        return Ok(());
    }
    writeln!(out, "writes:")?;
    for line in lines {
        writeln!(out, "  {line}")?;
    }
    Ok(())
}

/// Wall time against the deadline, peak memory against the memory limit.
fn print_usage(out: &mut impl Write, usage: &Usage) -> anyhow::Result<()> {
    const MIB: f64 = (1 << 20) as f64;
    writeln!(
        out,
        "time {:.1} ms of {} ms deadline; memory {:.1} MiB peak of {} MiB",
        usage.elapsed.as_secs_f64() * 1e3,
        usage.deadline.as_millis(),
        usage.memory_peak as f64 / MIB,
        usage.memory_limit >> 20
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: i64, topic: &str, payload: serde_json::Value) -> QueueMessage {
        QueueMessage {
            id,
            tenant: TENANT.to_owned(),
            topic: topic.to_owned(),
            payload,
            dedupe_key: None,
            status: "pending".to_owned(),
            attempts: 0,
            created_at: chrono::DateTime::default(),
            delivered_at: None,
            last_error: None,
        }
    }

    fn written(before: &Snapshot, after: &Snapshot) -> String {
        let mut out = Vec::new();
        print_writes(&mut out, before, after).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn json_bodies_are_indented_as_written() {
        let body = br#"{"Id":3,"Price":588.00,"Name":"a \"b\", {c}","Empty":[],"Nested":{ },"List":[1,{"A":null}]}"#;
        let pretty = String::from_utf8(pretty_json(body).unwrap()).unwrap();
        assert_eq!(
            pretty,
            r#"{
  "Id": 3,
  "Price": 588.00,
  "Name": "a \"b\", {c}",
  "Empty": [],
  "Nested": {},
  "List": [
    1,
    {
      "A": null
    }
  ]
}"#
        );
        assert_eq!(pretty_json(b"not json"), None);
        assert_eq!(pretty_json(b"{\"Id\":"), None);
    }

    #[test]
    fn writes_are_the_documents_and_messages_that_differ() {
        let key = |collection: &str, id: &str| (collection.to_owned(), id.to_owned());
        let before = Snapshot {
            revisions: [
                (key("bookings", "1"), 1),
                (key("cars", "AB123CD"), 4),
                (key("customers", "3"), 2),
            ]
            .into(),
            messages: vec![message(
                1,
                "payment.reconcile",
                serde_json::json!({"Old": 1}),
            )],
        };
        assert_eq!(written(&before, &before), "writes: none\n");
        let after = Snapshot {
            revisions: [
                (key("bookings", "1"), 1),
                (key("bookings", "2"), 1),
                (key("cars", "AB123CD"), 5),
            ]
            .into(),
            messages: vec![
                message(1, "payment.reconcile", serde_json::json!({"Old": 1})),
                message(2, "payment.reconcile", serde_json::json!({"BookingId": 2})),
            ],
        };
        assert_eq!(
            written(&before, &after),
            "writes:\n\
             \x20 created bookings 2: revision - -> 1\n\
             \x20 changed cars AB123CD: revision 4 -> 5\n\
             \x20 deleted customers 3: revision 2 -> -\n\
             \x20 queued payment.reconcile: {\"BookingId\":2}\n"
        );
    }

    #[test]
    fn usage_is_told_against_the_limits() {
        let mut out = Vec::new();
        let usage = Usage {
            elapsed: std::time::Duration::from_micros(3_140),
            deadline: std::time::Duration::from_secs(5),
            memory_peak: 3 << 19,
            memory_limit: 64 << 20,
        };
        print_usage(&mut out, &usage).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "time 3.1 ms of 5000 ms deadline; memory 1.5 MiB peak of 64 MiB\n"
        );
    }
}
