//! `rentald catalog import` and `catalog export` (docs/catalog.md), on SQLite and on
//! PostgreSQL: the demo catalogue round trip, the API over an imported catalogue, and bad files
//! that change nothing.

use chrono::{Days, Utc};
use rentald_tests::{TestApp, on_both_backends};
use reqwest::Method;
use serde_json::{Value, json};

/// The tenant's catalogue file, from `catalog export` on standard output.
pub(crate) async fn export(app: &TestApp, tenant: &str) -> String {
    app.cli_ok(&["catalog", "export", "--tenant", tenant], None)
        .await
}

/// `catalog import` of `text`: the process output.
pub(crate) async fn import(app: &TestApp, tenant: &str, text: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("catalog.jsonl");
    std::fs::write(&file, text).unwrap();
    app.cli(
        &[
            "catalog",
            "import",
            "--tenant",
            tenant,
            file.to_str().unwrap(),
        ],
        None,
    )
    .await
}

/// The 1-based number of the first line starting with `prefix`.
fn line_of(text: &str, prefix: &str) -> usize {
    text.lines()
        .position(|line| line.starts_with(prefix))
        .unwrap()
        + 1
}

/// `text` with line `number` (1-based) changed by `change`.
fn with_line(text: &str, number: usize, change: impl Fn(&str) -> String) -> String {
    text.lines()
        .enumerate()
        .map(|(index, line)| {
            if index + 1 == number {
                change(line)
            } else {
                line.to_owned()
            }
        })
        .map(|line| line + "\n")
        .collect()
}

/// `YYYY-MM-DDT10:00:00Z`, `days` from today.
fn at(days: u64) -> String {
    format!("{}T10:00:00Z", Utc::now().date_naive() + Days::new(days))
}

on_both_backends! {
    async fn the_demo_catalog_round_trips_into_a_fresh_tenant(app: TestApp) {
        let demo_token = app.tenant_with_token("demo", true).await;
        let exported = export(&app, "demo").await;
        assert!(exported.starts_with("{\"Format\":\"rental-catalog\",\"Version\":1}\n"));
        assert_eq!(exported.lines().filter(|l| l.starts_with("{\"Kind\":\"Car\"")).count(), 30);

        let token = app.tenant_with_token("copy", false).await;
        let output = import(&app, "copy", &exported).await;
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert!(String::from_utf8_lossy(&output.stdout).contains("30 Car"));
        assert_eq!(export(&app, "copy").await, exported, "export, import, export: same bytes");

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.jsonl");
        let stdout = app
            .cli_ok(&["catalog", "export", "--tenant", "copy", "--output", file.to_str().unwrap()], None)
            .await;
        assert!(stdout.is_empty());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), exported);

        // The API lists the imported catalogue as it lists the demo's: same documents, same
        // indexes.
        for path in ["/api/branchoffices", "/api/cars?limit=100"] {
            let copied = app.get_json("copy", path, &token).await;
            assert_eq!(copied, app.get_json("demo", path, &demo_token).await, "{path}");
        }
        let offices = app.get_json("copy", "/api/branchoffices", &token).await;
        assert_eq!(offices.as_array().unwrap().len(), 3, "the inactive office is not listed");

        // A booking is priced and created against it: tariffs by category, models and cars by
        // their indexes, the required additional, the places of the offices.
        let body = json!({
            "Customer": {"Name": "Ana Souza", "EmailAddress": "ana@example.com", "CellPhone": "+54 11 5555-0000"},
            "Category": {"Id": 1},
            "FromDate": at(20),
            "ToDate": at(24),
            "DeliveryPlace": {"Id": 1},
            "ReturnPlace": {"Id": 1},
        });
        let (status, price) = app.call("copy", &token, Method::POST, "/api/booking/price", Some(&body)).await;
        assert_eq!(status, 200, "{price}");
        let mut book = body.clone();
        book["FullResponse"] = json!(true);
        let (status, booking) = app.call("copy", &token, Method::POST, "/api/booking/book", Some(&book)).await;
        assert_eq!(status, 200, "{booking}");
        assert_eq!(booking["Id"], 1, "the tenant's first booking");
        assert_eq!(booking["Currency"], "USD");
        assert_eq!(booking["Price"], price["Price"]);
        let additionals: Vec<&Value> = booking["Additionals"].as_array().unwrap().iter()
            .map(|a| &a["Additional"]["Id"]).collect();
        assert_eq!(additionals, [&json!(1)], "the required basic insurance");
        let car = booking["Car"]["Id"].as_str().unwrap();
        assert!(exported.contains(&format!("\"Id\":\"{car}\"")), "an imported car: {car}");
    }

    async fn a_bad_file_names_its_line_and_writes_nothing(app: TestApp) {
        app.create_tenant("demo", true).await;
        let before = export(&app, "demo").await;
        // Every bad file also renames the first office, two lines before its error at least:
        // were anything written, the export would show it.
        let renamed = with_line(&before, 2, |line| line.replace("\"Name\":\"Buenos Aires\"", "\"Name\":\"Capital\""));
        assert_ne!(renamed, before);
        let car = line_of(&renamed, "{\"Kind\":\"Car\"");
        let place = line_of(&renamed, "{\"Kind\":\"Place\"");
        let tariff = line_of(&renamed, "{\"Kind\":\"Tariff\"");
        let total = renamed.lines().count();
        let cases: Vec<(String, usize, &str)> = vec![
            (with_line(&renamed, car, |_| "{\"Kind\": \"Car\", \"Id\": ".to_owned()), car, "invalid JSON"),
            (with_line(&renamed, car, |l| l.replacen("\"Kind\":\"Car\"", "\"Kind\":\"Garage\"", 1)), car, "Kind: unknown kind \"Garage\""),
            (with_line(&renamed, place, |l| l.replacen("\"IsFranchise\":false,", "", 1)), place, "IsFranchise: missing field"),
            (with_line(&renamed, car, |l| l.replacen("\"Kind\":\"Car\",", "\"Kind\":\"Car\",\"Colour\":\"Rojo\",", 1)), car, "Colour: unknown field"),
            (with_line(&renamed, tariff, |l| l.replacen("\"CategoryId\":1,", "\"CategoryId\":99,", 1)), tariff, "CategoryId: Category 99 is neither in the file nor in the tenant's catalogue"),
            (with_line(&renamed, place, |l| l.replacen("\"IsFranchise\":false", "\"IsFranchise\":\"no\"", 1)), place, "IsFranchise: invalid type"),
            (format!("{renamed}{}\n", renamed.lines().nth(place - 1).unwrap()), total + 1, "Id: Place 1 is already on line"),
            (with_line(&renamed, 1, |l| l.replace("\"Version\":1", "\"Version\":2")), 1, "Version: catalogue format version 2 is not supported"),
        ];
        for (text, line, message) in cases {
            let output = import(&app, "demo", &text).await;
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(!output.status.success(), "line {line}: {message}");
            assert!(stderr.contains(&format!("line {line}: {message}")), "line {line}: {message}: {stderr}");
            assert!(stderr.contains("nothing was imported"), "{stderr}");
            assert_eq!(export(&app, "demo").await, before, "nothing written for {message}");
        }

        // The file alone, with only the renamed office: merged over the catalogue.
        let header = renamed.lines().next().unwrap();
        let office = renamed.lines().nth(1).unwrap();
        let output = import(&app, "demo", &format!("{header}\n{office}\n")).await;
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(export(&app, "demo").await, renamed);

        // An unknown tenant.
        let output = import(&app, "nobody", &renamed).await;
        assert!(!output.status.success());
        assert!(String::from_utf8_lossy(&output.stderr).contains("does not exist"));
    }
}
