//! The API document, `docs/openapi.yaml`, compiled into the binary: served as JSON at
//! `/openapi.json`, and rendered as a self-contained HTML reference page (no scripts, nothing
//! loaded from elsewhere) served at `/docs`. Both are built once, at start, and answer on any
//! Host, before tenant resolution.

use std::fmt::Write as _;

use anyhow::Context as _;
use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Method, Response};
use serde_json::Value;

use crate::response::{Body, method_not_allowed};
use crate::routes;

/// The schema of the error codes, linked from the page's contents.
const ERROR_CODES: &str = "ErrorCode";

/// The document's source, as written.
const SOURCE: &str = include_str!("../../docs/openapi.yaml");

/// The HTTP methods an OpenAPI path item may hold, in the order the page lists them.
const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "patch", "head", "options", "trace",
];

/// The document as JSON and as the reference page, ready to serve.
pub struct ApiDocs {
    json: Bytes,
    html: Bytes,
}

impl ApiDocs {
    /// Parses the compiled-in document and renders its page.
    pub fn load() -> anyhow::Result<Self> {
        let document = parse(SOURCE)?;
        Ok(Self {
            json: Bytes::from(serde_json::to_vec(&document)?),
            html: Bytes::from(render(&document)),
        })
    }

    /// The answer to a request for `/openapi.json` or `/docs`; `None` for any other path.
    pub fn answer(&self, method: &Method, path: &str) -> Option<Response<Body>> {
        let (content_type, body) = match path {
            routes::OPENAPI_PATH => ("application/json", &self.json),
            routes::DOCS_PATH => ("text/html; charset=utf-8", &self.html),
            _ => return None,
        };
        let allowed = routes::host_method(path).unwrap_or(&Method::GET);
        if method != allowed {
            return Some(method_not_allowed(std::slice::from_ref(allowed)));
        }
        let mut response = Response::new(Body::new(body.clone()));
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        Some(response)
    }
}

/// The document as a JSON value.
fn parse(source: &str) -> anyhow::Result<Value> {
    serde_saphyr::from_str(source).context("reading docs/openapi.yaml")
}

/// What a local `$ref` (`#/components/...`) points to, followed until it is no reference.
fn resolve<'a>(document: &'a Value, value: &'a Value) -> Option<&'a Value> {
    let mut value = value;
    for _ in 0..8 {
        match value.get("$ref").and_then(Value::as_str) {
            None => return Some(value),
            Some(reference) => value = document.pointer(reference.strip_prefix('#')?)?,
        }
    }
    None
}

/// The name of the schema a `$ref` names (`#/components/schemas/Booking` is `Booking`).
fn schema_name(reference: &str) -> Option<&str> {
    reference.strip_prefix("#/components/schemas/")
}

/// An operation of the document: its method, its path and itself.
type Operation<'a> = (&'static str, &'a str, &'a Value);

/// Every operation of the document, in path order.
fn operations(document: &Value) -> Vec<Operation<'_>> {
    let mut found = Vec::new();
    if let Some(paths) = document.get("paths").and_then(Value::as_object) {
        for (path, item) in paths {
            for method in METHODS {
                if let Some(operation) = item.get(*method) {
                    found.push((*method, path.as_str(), operation));
                }
            }
        }
    }
    found
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// Text made safe for HTML, in an element or an attribute.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}

/// One line of prose: escaped, with `backquoted` spans as code.
fn inline(text: &str) -> String {
    let mut html = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(html, "<code>{}</code>", escape(part));
        } else {
            html.push_str(&escape(part));
        }
    }
    html
}

/// A description: paragraphs separated by blank lines.
fn prose(text: &str) -> String {
    text.split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| format!("<p>{}</p>\n", inline(&p.replace('\n', " "))))
        .collect()
}

/// The anchor of a schema's section.
fn schema_anchor(name: &str) -> String {
    format!("schema-{}", escape(name))
}

/// A schema's type, in words, with links to the named schemas it uses.
fn type_html(schema: &Value) -> String {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = schema_name(reference).unwrap_or(reference);
        return format!("<a href=\"#{}\">{}</a>", schema_anchor(name), escape(name));
    }
    for (key, joiner) in [("oneOf", " or "), ("anyOf", " or "), ("allOf", " and ")] {
        if let Some(parts) = schema.get(key).and_then(Value::as_array) {
            return parts.iter().map(type_html).collect::<Vec<_>>().join(joiner);
        }
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.is_empty() {
        return "any".to_owned();
    }
    let format = schema
        .get("format")
        .and_then(Value::as_str)
        .map(|f| format!(" ({})", escape(f)))
        .unwrap_or_default();
    let mut html = types
        .iter()
        .map(|kind| match (*kind, schema.get("items")) {
            ("array", Some(items)) => format!("array of {}", type_html(items)),
            ("null", _) => "null".to_owned(),
            (kind, _) => format!("{}{format}", escape(kind)),
        })
        .collect::<Vec<_>>()
        .join(" or ");
    if let Some(value) = schema.get("const") {
        let _ = write!(html, ", always <code>{}</code>", escape(&value.to_string()));
    } else if let Some(values) = schema.get("enum").and_then(Value::as_array)
        && values.len() <= 12
    {
        let values: Vec<String> = values
            .iter()
            .map(|v| format!("<code>{}</code>", escape(&v.to_string())))
            .collect();
        let _ = write!(html, ": {}", values.join(", "));
    }
    html
}

/// Notes on a schema beyond its type: default and limits.
fn limits(schema: &Value) -> String {
    let mut notes = Vec::new();
    for (key, label) in [
        ("default", "default"),
        ("minimum", "minimum"),
        ("maximum", "maximum"),
    ] {
        if let Some(value) = schema.get(key) {
            notes.push(format!(
                "{label} <code>{}</code>",
                escape(&value.to_string())
            ));
        }
    }
    if notes.is_empty() {
        String::new()
    } else {
        format!(" <span class=\"note\">({})</span>", notes.join(", "))
    }
}

/// Table rows for the fields of an object schema; inline objects' own fields follow theirs,
/// named by their path (`Model.Id`).
fn field_rows(html: &mut String, schema: &Value, prefix: &str) {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, field) in properties {
        let path = format!("{prefix}{name}");
        let _ = writeln!(
            html,
            "<tr><td><code>{}</code></td><td>{}{}</td><td>{}</td><td>{}</td></tr>",
            escape(&path),
            type_html(field),
            limits(field),
            if required.contains(&name.as_str()) {
                "yes"
            } else {
                ""
            },
            inline(str_of(field, "description")),
        );
        if field.get("$ref").is_none() {
            field_rows(html, field, &format!("{path}."));
        }
    }
}

/// A schema's fields as a table, with the parts of an `allOf`.
fn fields_table(html: &mut String, schema: &Value) {
    let mut rows = String::new();
    field_rows(&mut rows, schema, "");
    let mut composed = Vec::new();
    for part in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if part.get("$ref").is_some() {
            composed.push(type_html(part));
        } else {
            field_rows(&mut rows, part, "");
        }
    }
    if !composed.is_empty() {
        let _ = writeln!(html, "<p>Every field of {}, and:</p>", composed.join(", "));
    }
    if !rows.is_empty() {
        let _ = writeln!(
            html,
            "<table><thead><tr><th>field</th><th>type</th><th>required</th><th>description</th></tr></thead><tbody>\n{rows}</tbody></table>"
        );
    }
}

/// The values of an enumerated schema, with their names and descriptions when it has them.
fn enum_table(html: &mut String, schema: &Value) {
    let Some(values) = schema.get("enum").and_then(Value::as_array) else {
        return;
    };
    let names = schema.get("x-enum-varnames").and_then(Value::as_array);
    let descriptions = schema.get("x-enum-descriptions").and_then(Value::as_array);
    let _ = writeln!(
        html,
        "<table><thead><tr><th>value</th><th>name</th><th>description</th></tr></thead><tbody>"
    );
    for (i, value) in values.iter().enumerate() {
        let at = |list: Option<&Vec<Value>>| {
            list.and_then(|l| l.get(i))
                .and_then(Value::as_str)
                .map(inline)
                .unwrap_or_default()
        };
        let _ = writeln!(
            html,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            escape(&value.to_string()),
            at(names),
            at(descriptions),
        );
    }
    html.push_str("</tbody></table>\n");
}

/// Who may call an operation, from its `security`.
fn access(operation: &Value) -> String {
    let requirements = operation
        .get("security")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let scopes: Vec<String> = requirements
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|r| r.values())
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(Value::as_str)
        .map(|s| format!("<code>{}</code>", escape(s)))
        .collect();
    if requirements.is_empty() {
        "none (no token)".to_owned()
    } else if scopes.is_empty() {
        "a bearer token".to_owned()
    } else {
        format!("a bearer token with the permission {}", scopes.join(", "))
    }
}

fn operation_anchor(operation: &Value) -> String {
    format!("op-{}", escape(str_of(operation, "operationId")))
}

fn render_operation(html: &mut String, document: &Value, method: &str, path: &str, op: &Value) {
    let _ = writeln!(
        html,
        "<section class=\"op\" id=\"{}\"><h3><span class=\"method {m}\">{}</span> <code>{}</code></h3>",
        operation_anchor(op),
        escape(&method.to_uppercase()),
        escape(path),
        m = escape(method),
    );
    let _ = writeln!(
        html,
        "<p class=\"summary\">{}</p>",
        inline(str_of(op, "summary"))
    );
    html.push_str(&prose(str_of(op, "description")));
    let _ = writeln!(
        html,
        "<p><strong>Authorization:</strong> {}.</p>",
        access(op)
    );

    let parameters: Vec<&Value> = op
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| resolve(document, p))
        .collect();
    if !parameters.is_empty() {
        html.push_str("<h4>Parameters</h4>\n<table><thead><tr><th>name</th><th>in</th><th>type</th><th>required</th><th>description</th></tr></thead><tbody>\n");
        for parameter in parameters {
            let schema = parameter.get("schema").unwrap_or(&Value::Null);
            let _ = writeln!(
                html,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td></tr>",
                escape(str_of(parameter, "name")),
                escape(str_of(parameter, "in")),
                type_html(schema),
                limits(schema),
                if parameter.get("required") == Some(&Value::Bool(true)) {
                    "yes"
                } else {
                    ""
                },
                inline(str_of(parameter, "description")),
            );
        }
        html.push_str("</tbody></table>\n");
    }

    if let Some(body) = op.get("requestBody").and_then(|b| resolve(document, b)) {
        html.push_str("<h4>Request body</h4>\n<ul>\n");
        for (media, content) in body
            .get("content")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let _ = writeln!(
                html,
                "<li><code>{}</code>: {}</li>",
                escape(media),
                type_html(content.get("schema").unwrap_or(&Value::Null))
            );
        }
        html.push_str("</ul>\n");
    }

    html.push_str("<h4>Responses</h4>\n<table><thead><tr><th>status</th><th>description</th><th>body</th><th>headers</th></tr></thead><tbody>\n");
    for (status, response) in op
        .get("responses")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let Some(response) = resolve(document, response) else {
            continue;
        };
        let bodies: Vec<String> = response
            .get("content")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(media, content)| {
                format!(
                    "<code>{}</code> {}",
                    escape(media),
                    type_html(content.get("schema").unwrap_or(&Value::Null))
                )
            })
            .collect();
        let headers: Vec<String> = response
            .get("headers")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(name, _)| format!("<code>{}</code>", escape(name)))
            .collect();
        let _ = writeln!(
            html,
            "<tr><td><strong>{}</strong></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(status),
            inline(str_of(response, "description")),
            if bodies.is_empty() {
                "none".to_owned()
            } else {
                bodies.join("<br>")
            },
            headers.join(" "),
        );
    }
    html.push_str("</tbody></table>\n</section>\n");
}

const STYLE: &str = "
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1d2330;margin:0;display:flex}
nav{width:19rem;flex:none;height:100vh;overflow:auto;position:sticky;top:0;background:#f4f6f9;border-right:1px solid #dde2ea;padding:1rem;box-sizing:border-box;font-size:13px}
nav ul{list-style:none;padding-left:.5rem;margin:.2rem 0 .8rem}
nav a{color:#1d2330;text-decoration:none}nav a:hover{text-decoration:underline}
main{padding:1.5rem 2.5rem;max-width:70rem;min-width:0}
h1{margin-top:0}h2{border-bottom:2px solid #dde2ea;padding-bottom:.3rem;margin-top:2.5rem}
section.op,section.schema{border:1px solid #dde2ea;border-radius:6px;padding:0 1rem .6rem;margin:1.2rem 0}
h3{font-size:1.05rem}h4{margin:.9rem 0 .3rem;font-size:.95rem}
code{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#eef1f5;padding:0 .25rem;border-radius:3px}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{border:1px solid #dde2ea;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f6f9}
.method{display:inline-block;min-width:3.6rem;text-align:center;border-radius:4px;color:#fff;font-size:12px;padding:.1rem .3rem;background:#56627a}
.get{background:#2f7d4f}.post{background:#2d5fa8}.put{background:#a8662d}.delete{background:#a82d3b}
.summary{font-weight:600}.note{color:#56627a}
";

/// The reference page of `document`: its description, then each tag's operations, then every
/// schema (the error codes among them).
fn render(document: &Value) -> String {
    let info = document.get("info").unwrap_or(&Value::Null);
    let title = str_of(info, "title");
    let operations = operations(document);
    // Each tag with its operations (an operation is listed under its first tag).
    let tags: Vec<(&str, &str, Vec<Operation>)> = document
        .get("tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| {
            let name = str_of(t, "name");
            let tagged = operations
                .iter()
                .filter(|(_, _, op)| {
                    op.get("tags")
                        .and_then(Value::as_array)
                        .and_then(|t| t.first())
                        .and_then(Value::as_str)
                        == Some(name)
                })
                .copied()
                .collect();
            (name, str_of(t, "description"), tagged)
        })
        .collect();
    let schemas = document
        .pointer("/components/schemas")
        .and_then(Value::as_object);

    let mut html = String::new();
    let _ = writeln!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>",
        escape(title)
    );

    html.push_str("<nav><strong>Contents</strong><ul><li><a href=\"#overview\">Overview</a></li>");
    if schemas.is_some_and(|s| s.contains_key(ERROR_CODES)) {
        let _ = write!(
            html,
            "<li><a href=\"#{}\">Error codes</a></li>",
            schema_anchor(ERROR_CODES)
        );
    }
    html.push_str("</ul>\n");
    for (tag, _, tagged) in &tags {
        let _ = writeln!(
            html,
            "<strong><a href=\"#tag-{t}\">{t}</a></strong><ul>",
            t = escape(tag)
        );
        for (method, path, op) in tagged {
            let _ = writeln!(
                html,
                "<li><a href=\"#{}\">{} {}</a></li>",
                operation_anchor(op),
                escape(&method.to_uppercase()),
                escape(path)
            );
        }
        html.push_str("</ul>\n");
    }
    html.push_str("<strong><a href=\"#schemas\">Schemas</a></strong><ul>\n");
    for name in schemas.into_iter().flat_map(|s| s.keys()) {
        let _ = writeln!(
            html,
            "<li><a href=\"#{}\">{}</a></li>",
            schema_anchor(name),
            escape(name)
        );
    }
    html.push_str("</ul></nav>\n<main>\n");

    let _ = writeln!(
        html,
        "<h1>{}</h1>\n<p>Version <code>{}</code>, OpenAPI <code>{}</code>. The machine-readable document: <a href=\"{openapi}\"><code>{openapi}</code></a>.</p>",
        escape(title),
        escape(str_of(info, "version")),
        escape(str_of(document, "openapi")),
        openapi = routes::OPENAPI_PATH,
    );
    html.push_str("<section id=\"overview\">\n");
    html.push_str(&prose(str_of(info, "description")));
    for server in document
        .get("servers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let _ = writeln!(
            html,
            "<p><strong>Server:</strong> <code>{}</code>: {}</p>",
            escape(str_of(server, "url")),
            inline(str_of(server, "description"))
        );
    }
    html.push_str("</section>\n");

    for (tag, description, tagged) in &tags {
        let _ = writeln!(html, "<h2 id=\"tag-{t}\">{t}</h2>", t = escape(tag));
        html.push_str(&prose(description));
        for (method, path, op) in tagged {
            render_operation(&mut html, document, method, path, op);
        }
    }

    html.push_str("<h2 id=\"schemas\">Schemas</h2>\n");
    for (name, schema) in schemas.into_iter().flatten() {
        let _ = writeln!(
            html,
            "<section class=\"schema\" id=\"{}\"><h3>{}</h3>",
            schema_anchor(name),
            escape(name)
        );
        let _ = writeln!(html, "<p>Type: {}</p>", type_html(schema));
        html.push_str(&prose(str_of(schema, "description")));
        fields_table(&mut html, schema);
        enum_table(&mut html, schema);
        html.push_str("</section>\n");
    }
    html.push_str("</main></body></html>\n");
    html
}

#[cfg(test)]
mod tests;
