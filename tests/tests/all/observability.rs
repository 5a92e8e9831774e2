//! Probes, metrics and logs: what operators see of a running host.

use std::collections::BTreeMap;

use rentald_tests::{Backend, Options, PASSWORD, TestApp, on_both_backends};
use serde_json::Value;

/// One sample of a Prometheus / OpenMetrics text exposition.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Parses the samples of a text exposition (comment lines skipped), label values unescaped.
/// Panics on a line that is not a sample: the exposition must be well formed.
fn parse_exposition(text: &str) -> Vec<Sample> {
    let mut samples = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let name_end = line.find(['{', ' ']).unwrap_or_else(|| panic!("{line}"));
        let name = line[..name_end].to_owned();
        let mut labels = BTreeMap::new();
        let mut rest = &line[name_end..];
        if let Some(inner) = rest.strip_prefix('{') {
            let mut chars = inner.char_indices();
            let mut key = String::new();
            let end = loop {
                let (i, c) = chars.next().unwrap_or_else(|| panic!("{line}"));
                match c {
                    '}' => break i,
                    ',' => {}
                    '=' => {
                        assert_eq!(chars.next().map(|(_, c)| c), Some('"'), "{line}");
                        let mut value = String::new();
                        loop {
                            match chars.next().unwrap_or_else(|| panic!("{line}")).1 {
                                '"' => break,
                                '\\' => match chars.next().unwrap().1 {
                                    'n' => value.push('\n'),
                                    other => value.push(other),
                                },
                                other => value.push(other),
                            }
                        }
                        labels.insert(std::mem::take(&mut key), value);
                    }
                    other => key.push(other),
                }
            };
            rest = &inner[end + 1..];
        }
        let value = rest
            .split_whitespace()
            .next()
            .unwrap_or_else(|| panic!("{line}"));
        let value = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            number => number.parse().unwrap_or_else(|e| panic!("{line}: {e}")),
        };
        samples.push(Sample {
            name,
            labels,
            value,
        });
    }
    samples
}

/// The value of the one sample named `name` with exactly `labels`.
fn sample(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let wanted: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let found: Vec<_> = samples
        .iter()
        .filter(|s| s.name == name && s.labels == wanted)
        .collect();
    assert!(found.len() <= 1, "{name} {labels:?} twice: {found:?}");
    found.first().map(|s| s.value)
}

async fn scrape(app: &TestApp) -> Vec<Sample> {
    let (status, text) = app.metrics_get("/metrics").await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(text.lines().last(), Some("# EOF"), "a complete exposition");
    parse_exposition(&text)
}

on_both_backends! {
    async fn probes_answer_on_both_listeners(app: TestApp) {
        for path in ["/healthz", "/readyz"] {
            assert_eq!(app.probe(path).await, 200, "{path}");
            assert_eq!(app.metrics_get(path).await.0, 200, "{path} on the metrics listener");
        }
        let (_, body) = app.metrics_get("/readyz").await;
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["ready"], true);
        assert_eq!(body["database"], "ok");
        assert_eq!(body["missing_components"], serde_json::json!([]));
        assert_eq!(app.metrics_get("/api/cars").await.0, 404);
    }

    async fn metrics_count_requests_components_and_the_queue(app: TestApp) {
        let token = app.tenant_with_token("acme", false).await;
        for _ in 0..2 {
            assert_eq!(app.get("acme", "/api/cars", &token).await.status(), 200);
        }
        let (status, _) = app
            .call("acme", &token, reqwest::Method::GET, "/api/booking/424242", None)
            .await;
        assert_eq!(app.get("acme", "/api/nothing", &token).await.status(), 404);
        // Not served to tenants: the metrics name every tenant.
        let response = app.get("acme", "/metrics", &token).await;
        assert_eq!(response.status(), 404);
        app.sql(
            "INSERT INTO queue (tenant, topic, payload, status, available_at, created_at) VALUES \
             ('acme', 'test.unconsumed', '{}', 'dead', 0, 0), \
             ('acme', 'test.unconsumed', '{}', 'dead', 0, 0), \
             ('acme', 'test.unconsumed', '{}', 'delivered', 0, 0)",
        )
        .await;

        let samples = scrape(&app).await;
        let requests = |endpoint: &str, status: &str| {
            sample(
                &samples,
                "rentald_http_requests_total",
                &[("tenant", "acme"), ("endpoint", endpoint), ("status", status)],
            )
        };
        assert_eq!(requests("GET /api/cars", "200"), Some(2.0));
        assert_eq!(requests("POST /auth/token", "200"), Some(1.0));
        assert_eq!(
            requests("GET /api/booking/{id}", &status.to_string()),
            Some(1.0),
            "the route template, not the path"
        );
        assert_eq!(requests("unmatched", "404"), Some(2.0));
        assert!(
            samples.iter().all(|s| !s
                .labels
                .get("endpoint")
                .is_some_and(|e| e.contains("424242"))),
            "no raw path is a label"
        );
        assert!(
            sample(
                &samples,
                "rentald_http_request_duration_seconds_count",
                &[("endpoint", "GET /api/cars")]
            ) == Some(2.0)
        );
        for histogram in ["instantiation", "execution"] {
            let count = format!("rentald_component_{histogram}_seconds_count");
            let sum = format!("rentald_component_{histogram}_seconds_sum");
            assert_eq!(
                sample(&samples, &count, &[("component", "listing"), ("build", "platform")]),
                Some(2.0),
                "{count}"
            );
            assert!(
                sample(&samples, &sum, &[("component", "listing"), ("build", "platform")]).unwrap()
                    > 0.0,
                "{sum}"
            );
            assert_eq!(
                sample(&samples, &count, &[("component", "booking"), ("build", "platform")]),
                Some(1.0),
                "{count}"
            );
        }
        assert_eq!(
            sample(
                &samples,
                "rentald_component_outcomes_total",
                &[("component", "listing"), ("build", "platform"), ("outcome", "ok")]
            ),
            Some(2.0)
        );
        // listing and booking ran; both stay loaded until idle for the default 300 s.
        assert_eq!(
            sample(&samples, "rentald_components_loaded", &[]),
            Some(2.0)
        );
        // Three changes polled: the tenant, its signing key, its user.
        assert_eq!(
            sample(&samples, "rentald_tenant_generation", &[]),
            Some(3.0)
        );
        assert_eq!(
            sample(
                &samples,
                "rentald_queue_depth",
                &[("tenant", "acme"), ("status", "dead")]
            ),
            Some(2.0)
        );
        assert!(
            !samples
                .iter()
                .any(|s| s.name == "rentald_queue_depth" && s.labels["status"] == "delivered"),
            "delivered messages are not queued"
        );
        assert!(
            samples
                .iter()
                .any(|s| s.name == "rentald_build_info" && s.labels.contains_key("version"))
        );

        // The depth is read at every scrape.
        app.sql("UPDATE queue SET status = 'pending' WHERE status = 'dead'").await;
        let samples = scrape(&app).await;
        let depth = |status: &str| {
            sample(
                &samples,
                "rentald_queue_depth",
                &[("tenant", "acme"), ("status", status)],
            )
        };
        assert_eq!((depth("pending"), depth("dead")), (Some(2.0), None));
    }
}

#[tokio::test]
async fn readiness_fails_when_the_database_is_gone() {
    // SQLite cannot be taken away from a running host (an open file stays readable), so this
    // runs on PostgreSQL, whose database can be dropped under the host.
    let Some(app) = TestApp::spawn(Options::new(Backend::Postgres)).await else {
        return;
    };
    assert_eq!(app.metrics_get("/readyz").await.0, 200);
    assert!(app.drop_postgres_database().await);
    let (status, body) = app.metrics_get("/readyz").await;
    assert_eq!(status, 503, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["ready"], false);
    assert_eq!(body["database"], "unreachable");
    assert_eq!(app.probe("/readyz").await, 503, "on the API listener too");
    assert_eq!(
        app.metrics_get("/healthz").await.0,
        200,
        "alive all the same"
    );
    let (status, _) = app.metrics_get("/metrics").await;
    assert_eq!(
        status, 200,
        "the metrics are served without the queue depth"
    );
}

#[tokio::test]
async fn json_logs_name_the_request_and_never_a_secret() {
    let mut options = Options::new(Backend::Sqlite);
    options.json_logs = true;
    // The host and the crates that see credentials at their most verbose (the compiler's
    // crates stay at info: a cold component cache would flood the log).
    options.log_filter =
        "info,rentald=trace,sqlx=trace,hyper=trace,h2=trace,rustls=trace".to_owned();
    let app = TestApp::spawn(options).await.unwrap();
    let token = app.tenant_with_token("acme", false).await;
    const SECRET: &str = "whsec_never_in_a_log_4f2a";
    let set = app
        .cli(
            &[
                "secret",
                "set",
                "--tenant",
                "acme",
                "bankone.signing_secret",
            ],
            Some(SECRET),
        )
        .await;
    assert!(set.status.success());
    // The bank one component reads the secret to check the (wrong) signature.
    let response = app
        .post_raw(
            "acme",
            "/api/bankone/webhooks",
            &[("BankOne-Signature", "t=1,v1=00")],
            "{}",
        )
        .await;
    assert_eq!(response.status(), 401);

    let response = app.get("acme", "/api/cars", &token).await;
    assert_eq!(response.status(), 200);
    let id = response.headers()["x-correlation-id"]
        .to_str()
        .unwrap()
        .to_owned();

    let log = app.log();
    let lines: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let access: Vec<&Value> = lines
        .iter()
        .filter(|l| l["target"] == "rentald::access" && l["correlation_id"] == id.as_str())
        .collect();
    assert_eq!(access.len(), 1, "one access line per request:\n{log}");
    let line = access[0];
    assert_eq!(line["tenant"], "acme");
    assert_eq!(line["endpoint"], "GET /api/cars");
    assert_eq!(line["component"], "listing");
    assert_eq!(line["method"], "GET");
    assert_eq!(line["status"], 200);
    assert!(line["duration_ms"].as_f64().is_some_and(|ms| ms > 0.0));
    assert_eq!(line["span"]["correlation_id"], id.as_str());

    let token_line = lines
        .iter()
        .find(|l| l["target"] == "rentald::access" && l["endpoint"] == "POST /auth/token")
        .expect("the token request's access line");
    assert_eq!(token_line["tenant"], "acme");
    assert_eq!(token_line["status"], 200);

    for secret in [PASSWORD, SECRET, token.as_str()] {
        assert!(!log.contains(secret), "{secret:?} is in the log:\n{log}");
    }
    let cli_output = format!(
        "{}{}",
        String::from_utf8_lossy(&set.stdout),
        String::from_utf8_lossy(&set.stderr)
    );
    assert!(!cli_output.contains(SECRET), "{cli_output}");
}

#[tokio::test]
async fn component_faults_are_counted_and_name_their_request() {
    let dir = crate::sandbox::hostile_components();
    let mut options = Options::new(Backend::Sqlite);
    options.components_dir = Some(dir.path().to_path_buf());
    options.request_timeout_ms = 1_000;
    // At warn, where the request spans and access lines are off.
    options.json_logs = true;
    let app = TestApp::spawn(options).await.unwrap();
    let token = app.tenant_with_token("evil", false).await;
    let mut ids = Vec::new();
    for (behave, status) in [("panic", 500), ("loop", 503)] {
        let response = app
            .get("evil", &format!("/api/cars?behave={behave}"), &token)
            .await;
        assert_eq!(response.status(), status, "{behave}");
        ids.push(
            response.headers()["x-correlation-id"]
                .to_str()
                .unwrap()
                .to_owned(),
        );
    }

    let log = app.log();
    let lines: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    for (id, level) in ids.iter().zip(["ERROR", "WARN"]) {
        let fault = lines
            .iter()
            .find(|l| l["correlation_id"] == id.as_str() && l["fault"] == "guest")
            .unwrap_or_else(|| panic!("no fault line for {id}:\n{log}"));
        assert_eq!(fault["level"], level);
        assert_eq!(fault["tenant"], "evil");
        assert_eq!(fault["endpoint"], "GET /api/cars");
        assert_eq!(fault["component"], "listing");
    }
    assert!(
        lines
            .iter()
            .any(|l| l["target"] == "rentald::guest" && l["component"] == "listing"),
        "the panic message is a log event, not raw text:\n{log}"
    );

    let samples = scrape(&app).await;
    for (outcome, status) in [("trap", "500"), ("timeout", "503")] {
        assert_eq!(
            sample(
                &samples,
                "rentald_component_outcomes_total",
                &[
                    ("component", "listing"),
                    ("build", "platform"),
                    ("outcome", outcome)
                ]
            ),
            Some(1.0),
            "{outcome}"
        );
        assert_eq!(
            sample(
                &samples,
                "rentald_http_requests_total",
                &[
                    ("tenant", "evil"),
                    ("endpoint", "GET /api/cars"),
                    ("status", status)
                ]
            ),
            Some(1.0),
            "{status}"
        );
    }
}
