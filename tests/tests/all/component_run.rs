//! `rentald component run`: one request through a component file on a tenant in memory, with
//! no server and no database left behind.

use std::path::Path;
use std::time::{Duration, Instant};

use rentald_tests::{cache_dir, components_dir};
use serde_json::{Value, json};

use crate::booking::{FREE, body, model};
use crate::cli::{rentald_in, text};

/// `rentald component run FILE --as NAME ARGS...` in the data directory `data`, compiling into
/// the tests' shared cache.
fn run(data: &Path, file: &Path, name: &str, args: &[&str]) -> std::process::Output {
    let cache = cache_dir();
    let mut all = vec![
        "component",
        "run",
        file.to_str().unwrap(),
        "--as",
        name,
        "--cache-dir",
        cache.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    rentald_in(data, &all)
}

/// What a run printed: the status line, the response body (JSON) and the lines after it.
struct Printed {
    status_line: String,
    body: Value,
    rest: Vec<String>,
}

fn printed(output: &std::process::Output) -> Printed {
    assert!(output.status.success(), "{}", text(output));
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    let mut parts = stdout.splitn(3, "\n\n");
    let head = parts.next().unwrap();
    let body = parts.next().expect("a body after the headers");
    let rest = parts.next().expect("writes and usage after the body");
    Printed {
        status_line: head.lines().next().unwrap().to_owned(),
        body: serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}")),
        rest: rest.lines().map(str::to_owned).collect(),
    }
}

/// The usage line: time against the 5 s deadline, memory against the 64 MiB limit, both
/// positive and under their limits. Returns the memory's peak, in MiB.
#[track_caller]
fn assert_usage(line: &str) -> f64 {
    let numbers: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(
        line.starts_with("time ") && line.contains(" ms of 5000 ms deadline; memory "),
        "{line}"
    );
    assert!(line.ends_with(" MiB peak of 64 MiB"), "{line}");
    let [time, 5000.0, memory, 64.0] = numbers[..] else {
        panic!("{line}");
    };
    assert!(time > 0.0 && time < 5000.0, "{line}");
    assert!(memory > 0.0 && memory < 64.0, "{line}");
    memory
}

#[test]
fn a_listing_runs_on_the_demo_tenant_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let output = run(
        &data,
        &components_dir().join("listing.wasm"),
        "listing",
        &["GET", "/api/bookings/list?limit=1"],
    );
    let printed = printed(&output);
    assert_eq!(printed.status_line, "HTTP/1.1 200 OK");
    assert_eq!(printed.body["Total"], 124, "the demo's bookings");
    assert_eq!(printed.body["Results"].as_array().unwrap().len(), 1);
    assert_eq!(printed.rest[0], "writes: none");
    assert_usage(&printed.rest[1]);
    assert!(!data.join("rentald.db").exists(), "no database is created");
}

#[test]
fn a_booking_run_shows_the_documents_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let request = dir.path().join("book.json");
    std::fs::write(&request, body(model(2), FREE, FREE + 3).to_string()).unwrap();
    let output = run(
        &dir.path().join("data"),
        &components_dir().join("booking.wasm"),
        "booking",
        &[
            "POST",
            "/api/booking/book",
            "--body",
            request.to_str().unwrap(),
        ],
    );
    let printed = printed(&output);
    assert_eq!(printed.status_line, "HTTP/1.1 200 OK");
    assert_eq!(printed.body["Id"], 125, "the demo's next booking id");
    assert_eq!(printed.body["CustomerId"], 3);
    assert_eq!(printed.rest[0], "writes:");
    let writes = &printed.rest[1..printed.rest.len() - 1];
    assert!(
        writes.contains(&"  created bookings 125: revision - -> 1".to_owned()),
        "{writes:?}"
    );
    let car = printed.body["CarId"].as_str().unwrap();
    let locks = writes
        .iter()
        .filter(|w| w.starts_with(&format!("  created car-locks {car}/")))
        .count();
    assert_eq!(locks, 4, "the car is held for each of its days: {writes:?}");
    assert!(
        writes.iter().all(|w| w.starts_with("  created ")),
        "a booking changes nothing else and queues nothing: {writes:?}"
    );
    assert_usage(printed.rest.last().unwrap());
}

/// The platform's components start with 4 MiB of linear memory (`.cargo/config.toml`), which
/// holds their largest answers: a page of 100 bookings, the catalogue and a creation run
/// without growing it, so a pooled instance never has its slot's protections changed
/// (docs/decisions.md, "Components start with the memory a request needs"). Built with the
/// linker's default, the list's memory grew to 2.9 MiB.
#[test]
fn the_largest_answers_fit_in_the_memory_a_component_starts_with() {
    let dir = tempfile::tempdir().unwrap();
    let request = dir.path().join("book.json");
    std::fs::write(&request, body(model(2), FREE, FREE + 3).to_string()).unwrap();
    for (name, args) in [
        ("listing", vec!["GET", "/api/bookings/list?limit=100"]),
        ("listing", vec!["GET", "/api/cars?limit=100"]),
        (
            "booking",
            vec![
                "POST",
                "/api/booking/book",
                "--body",
                request.to_str().unwrap(),
            ],
        ),
    ] {
        let output = run(
            &dir.path().join("data"),
            &components_dir().join(format!("{name}.wasm")),
            name,
            &args,
        );
        let printed = printed(&output);
        assert_eq!(printed.status_line, "HTTP/1.1 200 OK", "{args:?}");
        let memory = assert_usage(printed.rest.last().unwrap());
        assert_eq!(
            memory, 4.0,
            "{args:?}: not run within the 4 MiB it starts with"
        );
    }
}

#[test]
fn a_component_past_its_memory_limit_fails_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let output = run(
        &dir.path().join("data"),
        &components_dir().join("hostile.wasm"),
        "listing",
        &["GET", "/api/bookings/list?behave=alloc"],
    );
    assert!(!output.status.success(), "{}", text(&output));
    let said = text(&output);
    assert!(
        said.contains("failed as listing: the component reached its memory limit of 64 MiB"),
        "{said}"
    );
    assert!(!said.contains("panicked"), "{said}");
}

#[test]
fn a_component_past_its_deadline_is_stopped_at_the_configured_one() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("rentald.toml");
    std::fs::write(&config, "request_timeout_ms = 1500\n").unwrap();
    let started = Instant::now();
    let output = run(
        &dir.path().join("data"),
        &components_dir().join("hostile.wasm"),
        "listing",
        &[
            "--config",
            config.to_str().unwrap(),
            "GET",
            "/api/bookings/list?behave=loop",
        ],
    );
    let took = started.elapsed();
    assert!(!output.status.success(), "{}", text(&output));
    let said = text(&output);
    assert!(
        said.contains("ran past its deadline of 1500 ms (--request-timeout-ms)"),
        "{said}"
    );
    assert!(
        said.contains("of 1500 ms deadline"),
        "the usage line: {said}"
    );
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(10),
        "{took:?}"
    );
}

/// A file `component check` refuses is refused with the same words.
#[test]
fn a_refused_file_gets_the_refusal_of_component_check() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let module = dir.path().join("module.wasm");
    std::fs::write(&module, b"\0asm\x01\x00\x00\x00").unwrap();
    for (file, name, expected) in [
        (module.clone(), "listing", "core WebAssembly module"),
        (
            components_dir().join("bankone.wasm"),
            "listing",
            "imports what this host does not offer to `listing`",
        ),
        (
            components_dir().join("listing.wasm"),
            "garage",
            "unknown component \"garage\"",
        ),
    ] {
        let ran = run(&data, &file, name, &["GET", "/api/bookings/list"]);
        let checked = rentald_in(
            &data,
            &["component", "check", file.to_str().unwrap(), "--as", name],
        );
        assert!(!ran.status.success() && !checked.status.success());
        assert!(text(&ran).contains(expected), "{}", text(&ran));
        assert_eq!(text(&ran), text(&checked));
        assert!(ran.stdout.is_empty(), "{}", text(&ran));
    }
}

/// The front door's answers: 405 with Allow, 404, a route of another component.
#[test]
fn a_request_no_component_of_that_name_serves_is_answered_as_serve_does() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let listing = components_dir().join("listing.wasm");
    let output = run(
        &data,
        &listing,
        "listing",
        &["DELETE", "/api/bookings/list"],
    );
    assert!(output.status.success(), "{}", text(&output));
    let said = text(&output);
    assert!(
        said.starts_with("HTTP/1.1 405 Method Not Allowed\nallow: GET\n"),
        "{said}"
    );
    let output = run(&data, &listing, "listing", &["GET", "/api/garages"]);
    assert!(
        text(&output).starts_with("HTTP/1.1 404 Not Found\n"),
        "{}",
        text(&output)
    );
    let output = run(&data, &listing, "listing", &["POST", "/api/booking/book"]);
    assert!(!output.status.success());
    assert!(
        text(&output).contains("POST /api/booking/book is served by booking, not listing"),
        "{}",
        text(&output)
    );
}

/// A tiny catalogue: one office with one place, and nothing else.
const CATALOGUE: &str = concat!(
    r#"{"Format":"rental-catalog","Version":1}"#,
    "\n",
    r#"{"Kind":"BranchOffice","Active":true,"Address":"Ruta 40 km 1","City":"Tafí del Valle","Country":"Argentina","IATACode":"TDV","Id":7,"Latitude":-26.85,"Longitude":-65.71,"Name":"Tafí","TimeZone":null}"#,
    "\n",
    r#"{"Kind":"Place","Address":"Av. San Martín 10","AvailableBrandCodes":null,"AvailableOperationOptions":null,"AvailableReturnPlaces":null,"BranchOfficeId":7,"CanAddCustomAddress":false,"Category":"Centro","City":"Tafí del Valle","Country":"Argentina","Id":70,"IsCustomAddress":false,"IsFranchise":false,"Latitude":-26.85,"Longitude":-65.71,"Name":"Plaza","Price":0.00}"#,
    "\n",
);

#[test]
fn a_run_on_a_catalogue_file_sees_exactly_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let catalogue = dir.path().join("tiny.jsonl");
    std::fs::write(&catalogue, CATALOGUE).unwrap();
    let listing = components_dir().join("listing.wasm");
    let with_data = ["--data", catalogue.to_str().unwrap()];
    let mut args = vec!["GET", "/api/branchoffices"];
    args.extend_from_slice(&with_data);
    let answer = printed(&run(&data, &listing, "listing", &args));
    assert_eq!(answer.status_line, "HTTP/1.1 200 OK");
    let offices = answer.body.as_array().expect("a list of offices");
    let names: Vec<_> = offices.iter().map(|o| (&o["Id"], &o["Name"])).collect();
    assert_eq!(names, [(&json!(7), &json!("Tafí"))]);
    let places: Vec<_> = offices[0]["Places"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["Id"])
        .collect();
    assert_eq!(places, [&json!(70)]);

    let mut args = vec!["GET", "/api/bookings/list"];
    args.extend_from_slice(&with_data);
    let bookings = printed(&run(&data, &listing, "listing", &args));
    assert_eq!(bookings.body["Total"], 0, "no demo bookings");
}
