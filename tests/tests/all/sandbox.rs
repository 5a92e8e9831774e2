//! A misbehaving component costs one request, never the host or another tenant's request.

use std::time::Duration;

use rentald_tests::{Backend, Options, TestApp, components_dir};
use serde_json::Value;

use crate::booking::{Api, FREE, body, model};

/// A server whose `listing` component is the hostile test component (the other components
/// are the real ones), with a 1 s deadline.
async fn hostile_app() -> (TestApp, tempfile::TempDir) {
    hostile_app_with(1_000, &[]).await
}

/// [`hostile_app`] with a deadline of `request_timeout_ms` and more `serve` options.
async fn hostile_app_with(
    request_timeout_ms: u64,
    serve_args: &[&str],
) -> (TestApp, tempfile::TempDir) {
    hostile_app_on(Backend::Sqlite, request_timeout_ms, serve_args)
        .await
        .expect("sqlite always runs")
}

/// [`hostile_app_with`] on `backend`; `None` where no PostgreSQL is configured.
async fn hostile_app_on(
    backend: Backend,
    request_timeout_ms: u64,
    serve_args: &[&str],
) -> Option<(TestApp, tempfile::TempDir)> {
    let dir = hostile_components();
    let mut options = Options::new(backend);
    options.components_dir = Some(dir.path().to_path_buf());
    options.request_timeout_ms = request_timeout_ms;
    options.serve_args = serve_args.iter().map(ToString::to_string).collect();
    Some((TestApp::spawn(options).await?, dir))
}

/// A components directory whose `listing.wasm` is the hostile test component.
pub(crate) fn hostile_components() -> tempfile::TempDir {
    hostile_components_as("listing")
}

/// A components directory whose `{name}.wasm` is the hostile test component.
pub(crate) fn hostile_components_as(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(components_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path
            .extension()
            .is_some_and(|extension| extension == "wasm")
        {
            std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    std::fs::copy(
        components_dir().join("hostile.wasm"),
        dir.path().join(format!("{name}.wasm")),
    )
    .expect("hostile.wasm is built by ./dev test");
    dir
}

async fn error_body(response: reqwest::Response) -> (u16, Value, String) {
    let status = response.status().as_u16();
    let header = response.headers()["x-correlation-id"]
        .to_str()
        .unwrap()
        .to_owned();
    (status, response.json().await.unwrap(), header)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn runaway_components_cost_one_request() {
    let (mut app, _dir) = hostile_app().await;
    let evil = app.tenant_with_token("evil", false).await;
    let good = app.tenant_with_token("good", false).await;

    for (behave, status, code) in [
        ("loop", 503, 499),
        ("alloc", 500, 99),
        ("recurse", 500, 99),
        ("panic", 500, 99),
        ("flood", 500, 99),
    ] {
        let path = format!("/api/cars?behave={behave}");
        let (runaway, bystander) = tokio::join!(app.get("evil", &path, &evil), async {
            // Start the other tenant's request while the runaway one is running.
            tokio::time::sleep(Duration::from_millis(100)).await;
            let response = app.get("good", "/api/cars", &good).await;
            (response.status(), std::time::Instant::now())
        });
        let finished = std::time::Instant::now();
        let (got, body, id) = error_body(runaway).await;
        assert_eq!(
            (got, body["ErrorCode"].as_i64()),
            (status, Some(code)),
            "{behave}: {body}"
        );
        assert_eq!(body["Id"], id.as_str(), "{behave}");
        assert!(
            !body["ErrorMessage"]
                .as_str()
                .unwrap_or_default()
                .contains("panicked"),
            "{behave}: no panic text leaks"
        );
        assert_eq!(bystander.0, 200, "{behave}: the other tenant is served");
        if behave == "loop" {
            assert!(
                bystander.1 < finished,
                "the other tenant did not wait for the runaway request"
            );
        }
        if status == 500 {
            assert!(
                app.log().contains(&id),
                "{behave}: the correlation id is in the log"
            );
        }
        // The log says which limit a runaway hit, and its value.
        let said = app
            .log()
            .lines()
            .find(|line| line.contains(&id))
            .map(str::to_owned)
            .unwrap_or_default();
        match behave {
            "loop" => assert!(said.contains("deadline_ms=1000"), "{said}"),
            "alloc" => assert!(said.contains("memory limit of 64 MiB"), "{said}"),
            _ => {}
        }
    }
    assert!(app.is_running(), "the host survived");
    assert_eq!(
        app.get("evil", "/api/cars", &evil).await.status(),
        200,
        "and serves the same tenant again"
    );
}

/// The epoch ticker sleeps while no guest runs (docs/decisions.md, "The epoch ticks only while
/// a guest may run"); a component that loops on a host that was idle still yields at each
/// tick, so its deadline stops it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_on_an_idle_host_is_stopped_at_its_deadline() {
    let (app, _dir) = hostile_app().await;
    let evil = app.tenant_with_token("evil", false).await;
    for round in 0..2 {
        // Ten times longer than the ticker waits before it sleeps.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let looped = tokio::time::timeout(
            Duration::from_secs(30),
            app.get("evil", "/api/cars?behave=loop", &evil),
        )
        .await
        .unwrap_or_else(|_| panic!("round {round}: the loop was never stopped"));
        let (status, body, _) = error_body(looped).await;
        assert_eq!(
            (status, body["ErrorCode"].as_i64()),
            (503, Some(499)),
            "round {round}: {body}"
        );
    }
    assert_eq!(app.get("evil", "/api/cars", &evil).await.status(), 200);
}

/// A tenant may have `--tenant-instances` components running at once: past it, its requests
/// are refused at once (503, Retry-After, ErrorCode 499), and other tenants are served.
/// The bodies a component has the host keep for its answer (`scan-kept`) are bounded: one
/// that keeps on and on fails its own request at 16 MiB, and the host serves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keeping_bodies_without_end_costs_one_request() {
    let (mut app, _dir) = hostile_app_with(60_000, &[]).await;
    let token = app.tenant_with_token("keeper", true).await;
    let (status, body, id) =
        error_body(app.get("keeper", "/api/cars?behave=keep", &token).await).await;
    assert_eq!(
        (status, body["ErrorCode"].as_i64()),
        (500, Some(99)),
        "{body}"
    );
    // The trap's cause follows the wasm backtrace in the request's log event.
    let log = app.log();
    let said = log.find(&id).map_or("", |at| &log[at..]);
    assert!(said.contains("more than 16 MiB of bodies"), "{log}");
    assert!(app.is_running(), "the host survived");
    assert_eq!(
        app.get("keeper", "/api/cars", &token).await.status(),
        200,
        "and serves the tenant again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_tenant_runs_a_bounded_number_of_components_at_once() {
    let (app, _dir) = hostile_app_with(3_000, &["--tenant-instances", "2"]).await;
    let evil = app.tenant_with_token("evil", false).await;
    let good = app.tenant_with_token("good", false).await;

    let looping = || app.get("evil", "/api/cars?behave=loop", &evil);
    let (first, second, refused, other) = tokio::join!(
        looping(),
        looping(),
        async {
            // Once both loops are running.
            tokio::time::sleep(Duration::from_millis(500)).await;
            let refused = app.get("evil", "/api/cars", &evil).await;
            let retry_after = refused.headers().get("retry-after").cloned();
            let (status, body, _) = error_body(refused).await;
            (status, body["ErrorCode"].as_i64(), retry_after)
        },
        async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            app.get("good", "/api/cars", &good).await.status()
        }
    );
    assert_eq!(
        (refused.0, refused.1),
        (503, Some(499)),
        "a third at once is refused"
    );
    assert_eq!(refused.2.unwrap(), "1");
    assert_eq!(other, 200, "another tenant is served");
    assert_eq!(first.status(), 503, "the loops ran to their deadline");
    assert_eq!(second.status(), 503);
    assert_eq!(
        app.get("evil", "/api/cars", &evil).await.status(),
        200,
        "served again once they ended"
    );
}

/// On SQLite an open write transaction stops every other writer of the database: a component
/// that keeps one open while it computes is stopped at the write deadline (1 s by default), far
/// before its request's (here 30 s), and another tenant's booking goes through meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_held_write_does_not_stop_other_tenants_writes() {
    let (app, _dir) = hostile_app_with(30_000, &[]).await;
    let evil = app.tenant_with_token("evil", false).await;
    let api = Api::new(&app).await;

    let (held, booked) = tokio::join!(
        app.get("evil", "/api/cars?behave=hold-write", &evil),
        async {
            // Book while the other tenant's component holds its write open.
            tokio::time::sleep(Duration::from_millis(500)).await;
            let creation = body(model(2), FREE, FREE + 3);
            tokio::time::timeout(Duration::from_secs(15), api.booked(&creation)).await
        }
    );
    assert!(booked.is_ok(), "the booking waited for the held write");
    stopped_at_the_write_deadline(&app, held).await;
}

/// On PostgreSQL the write deadline leaves out the time store calls wait for the database, not
/// the guest's own: a component computing inside its write is stopped at 1 s all the same,
/// with 500 (ErrorCode 99), far before its request's deadline (30 s, which would be a 503).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_write_is_stopped_at_the_write_deadline_on_postgres() {
    let Some((app, _dir)) = hostile_app_on(Backend::Postgres, 30_000, &[]).await else {
        return;
    };
    let evil = app.tenant_with_token("evil", false).await;
    let held = app.get("evil", "/api/cars?behave=hold-write", &evil).await;
    stopped_at_the_write_deadline(&app, held).await;
}

/// On PostgreSQL a tenant has at most `--tenant-writers` read-write transactions open at once:
/// of three components that each hold a write until the write deadline stops them, two hold
/// theirs at once and the third begins once one of them has ended, instead of waiting inside
/// the database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_writers_past_the_bound_wait_for_a_turn_on_postgres() {
    let Some((app, _dir)) =
        hostile_app_on(Backend::Postgres, 30_000, &["--tenant-writers", "2"]).await
    else {
        return;
    };
    let evil = app.tenant_with_token("evil", false).await;
    let hold = || app.get("evil", "/api/cars?behave=hold-write", &evil);
    let holding = async { tokio::join!(hold(), hold(), hold()) };
    tokio::pin!(holding);
    // Each writer's open transaction, as PostgreSQL shows it: its backend and when it began.
    // A writer's last statement takes the `hostile` sequence's value: the first holds the
    // sequence's row, and a second open at once waits for it inside the database.
    let open_writers = "SELECT pid::text || ' ' || xact_start::text FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid() \
         AND xact_start IS NOT NULL AND query LIKE '%INTO sequences%'";
    let mut seen = std::collections::BTreeSet::new();
    let mut most = 0;
    let held = loop {
        tokio::select! {
            held = &mut holding => break held,
            () = tokio::time::sleep(Duration::from_millis(20)) => {
                let open = app.sql_texts(open_writers).await;
                most = most.max(open.len());
                seen.extend(open);
            }
        }
    };
    assert_eq!(most, 2, "at most two writers open at once: {seen:?}");
    assert_eq!(seen.len(), 3, "each writer had its turn: {seen:?}");
    for response in [held.0, held.1, held.2] {
        stopped_at_the_write_deadline(&app, response).await;
    }
}

/// `held` is the 500 (ErrorCode 99) of a request stopped at the write deadline, and its fault
/// line in the log says so (its error may span several lines).
async fn stopped_at_the_write_deadline(app: &TestApp, held: reqwest::Response) {
    let (status, body, id) = error_body(held).await;
    assert_eq!(
        (status, body["ErrorCode"].as_i64()),
        (500, Some(99)),
        "{body}"
    );
    let log = app.log();
    let fault = &log[log.find(&id).expect("the request is in the log")..];
    let event = &fault[..fault.find("\n\u{1b}").unwrap_or(fault.len())];
    assert!(
        event.contains("write deadline (1000 ms)"),
        "the log names the write deadline: {event}"
    );
}

/// CPU time the process `pid` has used so far (user and system), from `/proc/PID/stat`.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name, which is in parentheses: utime and stime are the 12th
    // and 13th, in clock ticks (100 a second on Linux).
    let fields: Vec<u64> = stat[stat.rfind(')').unwrap() + 2..]
        .split(' ')
        .skip(11)
        .take(2)
        .map(|field| field.parse().unwrap())
        .collect();
    Duration::from_millis((fields[0] + fields[1]) * 10)
}

/// A tenant's components that compute for long are paced together: four of them looping for
/// two seconds use about a tenth of one core (`--tenant-cpu-percent 10`), not every core.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_tenants_long_runners_share_a_part_of_one_core() {
    let (app, _dir) = hostile_app_with(2_000, &["--tenant-cpu-percent", "10"]).await;
    let hog = app.tenant_with_token("hog", false).await;
    let good = app.tenant_with_token("good", false).await;
    assert_eq!(app.get("hog", "/api/cars", &hog).await.status(), 200);

    let before = cpu_time(app.pid());
    let path = "/api/cars?behave=loop";
    let (first, second, third, fourth, bystander) = tokio::join!(
        app.get("hog", path, &hog),
        app.get("hog", path, &hog),
        app.get("hog", path, &hog),
        app.get("hog", path, &hog),
        async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            app.get("good", "/api/cars", &good).await.status()
        }
    );
    let used = cpu_time(app.pid()) - before;
    for looped in [first, second, third, fourth] {
        assert_eq!(looped.status(), 503, "each loop ends at its deadline");
    }
    assert_eq!(bystander, 200, "the other tenant is served");
    // Unpaced, the four loops would take both cores for two seconds (4 s of CPU); paced, a
    // tenth of a core plus each one's 50 ms burst, and the host's own work.
    assert!(
        used < Duration::from_millis(1_200),
        "the loops used {used:?} of CPU"
    );
}

/// A tenant whose long runners are paced gets no fresh bursts: a wave of new loops joins the
/// pace from its first tick. With half a second of burst each, eight new loops would take
/// both cores for two seconds (4 s of CPU) before their pacing began.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn new_requests_of_a_paced_tenant_get_no_burst() {
    let (app, _dir) = hostile_app_with(
        3_000,
        &["--tenant-cpu-percent", "10", "--cpu-burst-ms", "500"],
    )
    .await;
    let hog = app.tenant_with_token("hog", false).await;
    assert_eq!(app.get("hog", "/api/cars", &hog).await.status(), 200);
    let path = "/api/cars?behave=loop";
    let first = app.get("hog", path, &hog);
    let wave = async {
        // The first loop has run its burst and is paced.
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        let before = cpu_time(app.pid());
        let mut loops = tokio::task::JoinSet::new();
        for _ in 0..8 {
            let request = app.client.get(app.url("hog", path)).bearer_auth(&hog);
            loops.spawn(async move { request.send().await.unwrap().status() });
        }
        while let Some(status) = loops.join_next().await {
            assert_eq!(status.unwrap(), 503, "each loop ends at its deadline");
        }
        cpu_time(app.pid()) - before
    };
    let (first, used) = tokio::join!(first, wave);
    assert_eq!(first.status(), 503);
    // Paced from their first tick, the wave and the first loop share a tenth of a core: about
    // 0.3 s over the wave's 3 s, with the host's own work.
    assert!(
        used < Duration::from_millis(1_500),
        "the wave used {used:?} of CPU"
    );
}

/// A guest inside a write is not paced: asleep, it would hold the writer turn for every
/// tenant and run into its write deadline. A write computing for about a quarter of a second
/// of one core, for a tenant allowed a twentieth of a core past a 50 ms burst, would need
/// five seconds if paced, past its 3 s write deadline (500); unpaced, it commits (200).
#[tokio::test]
async fn a_write_is_not_paced_into_its_deadline() {
    let (app, _dir) = hostile_app_with(
        10_000,
        &[
            "--tenant-cpu-percent",
            "5",
            "--cpu-burst-ms",
            "50",
            "--write-timeout-ms",
            "3000",
        ],
    )
    .await;
    let hog = app.tenant_with_token("hog", false).await;
    let worked = app.get("hog", "/api/cars?behave=write-work", &hog).await;
    assert_eq!(worked.status(), 200, "{}", worked.text().await.unwrap());
}

/// The memory a request fills counts against its burst (a millisecond a MiB), since the
/// kernel's work for it is not in its ticks: a request filling 256 MiB, in about a third of
/// that many ticks, is a long runner and paced; a small request is not.
#[tokio::test]
async fn a_request_filling_its_memory_is_paced() {
    let (app, _dir) = hostile_app_with(
        5_000,
        &[
            "--memory-limit-mib",
            "256",
            "--cpu-burst-ms",
            "280",
            "--tenant-cpu-percent",
            "10",
        ],
    )
    .await;
    let hog = app.tenant_with_token("hog", false).await;
    assert_eq!(app.get("hog", "/api/cars", &hog).await.status(), 200);
    assert_eq!(
        paced_seconds(&app.metrics_get("/metrics").await.1),
        0.0,
        "a small request is not paced"
    );
    let filled = app.get("hog", "/api/cars?behave=alloc", &hog).await;
    assert_eq!(filled.status(), 500, "the fill ends at the memory limit");
    let metrics = app.metrics_get("/metrics").await.1;
    assert!(
        paced_seconds(&metrics) > 0.0,
        "the fill was not paced:\n{metrics}"
    );
}

/// The seconds the hostile component (serving as the platform's `listing`) slept for pacing,
/// from the metrics.
fn paced_seconds(metrics: &str) -> f64 {
    metrics
        .lines()
        .find_map(|line| {
            line.strip_prefix(
                r#"rentald_component_paced_seconds_total{component="listing",build="platform"} "#,
            )
        })
        .map_or(0.0, |value| value.parse().unwrap())
}

/// A tenant pays for the memory its requests fill, a millisecond a MiB on top of their ticks,
/// and for the reset of that memory: at a tenth of a core, four fills from the 4 MiB the
/// component starts with to 64 MiB put its clock 4 x 60 x 10 ms ahead of what their ticks
/// alone would, and its requests sleep most of that off. Before memory was charged, a fill only moved its request out of its burst sooner,
/// and the tenant slept for its ticks alone. (The share is small so that the time the fills
/// themselves take, longer on a loaded machine, is small beside what they are charged.)
#[tokio::test]
async fn a_tenant_pays_for_the_memory_its_requests_fill() {
    let (app, _dir) = hostile_app_with(
        5_000,
        &[
            "--memory-limit-mib",
            "64",
            "--cpu-burst-ms",
            "20",
            "--tenant-cpu-percent",
            "10",
        ],
    )
    .await;
    let hog = app.tenant_with_token("hog", false).await;
    const FILLS: u32 = 4;
    for _ in 0..FILLS {
        let filled = app.get("hog", "/api/cars?behave=alloc", &hog).await;
        assert_eq!(filled.status(), 500, "the fill ends at the memory limit");
    }
    let charged_for_memory = f64::from(FILLS * (64 - 4)) * 0.001 / 0.1;
    let paced = paced_seconds(&app.metrics_get("/metrics").await.1);
    assert!(
        paced >= 0.5 * charged_for_memory,
        "{FILLS} fills to 64 MiB slept {paced} s, less than half the {charged_for_memory} s \
         their memory costs at a tenth of a core"
    );
}

#[tokio::test]
async fn a_component_only_sees_its_request_tenant() {
    let (app, _dir) = hostile_app().await;
    let full = app.tenant_with_token("full", true).await;
    let empty = app.tenant_with_token("empty", false).await;
    let seen_full = app.get_json("full", "/api/cars", &full).await;
    let seen_empty = app.get_json("empty", "/api/cars", &empty).await;
    assert_eq!(seen_full["tenant"], "full");
    assert!(seen_full["bookings"].as_u64().unwrap() >= 60);
    assert_eq!(seen_empty["tenant"], "empty");
    assert_eq!(seen_empty["bookings"], 0);
}

/// Instance memory is reused in place between requests (only the pages an instance dirtied are
/// reset), so check that a request never sees what an earlier one, of this tenant or another,
/// left in memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_request_sees_what_another_left_in_memory() {
    let (app, _dir) = hostile_app().await;
    let tokens = [
        ("first", app.tenant_with_token("first", false).await),
        ("second", app.tenant_with_token("second", false).await),
    ];
    for round in 0..40 {
        let (tenant, token) = &tokens[round % 2];
        let seen = app
            .get_json(tenant, "/api/cars?behave=remember", token)
            .await;
        assert_eq!(seen["found"], "", "round {round}: {seen}");
    }
    let mut calls = tokio::task::JoinSet::new();
    for round in 0..32 {
        let (tenant, token) = &tokens[round % 2];
        let request = app
            .client
            .get(app.url(tenant, "/api/cars?behave=remember"))
            .bearer_auth(token);
        calls.spawn(async move { request.send().await.unwrap().json::<Value>().await });
    }
    while let Some(seen) = calls.join_next().await {
        let seen = seen.unwrap().unwrap();
        assert_eq!(seen["found"], "", "concurrently: {seen}");
    }
}
