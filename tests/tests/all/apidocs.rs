//! The API document at `/openapi.json` and its reference page at `/docs`, from the real
//! server: on any Host, with the right content types, naming every documented path.

use rentald_tests::{Backend, Options, TestApp};
use serde_json::Value;

#[tokio::test]
async fn the_document_and_its_page_are_served_on_any_host() {
    let app = TestApp::spawn(Options::new(Backend::Sqlite))
        .await
        .expect("sqlite");
    // No tenant needed: an address, an unknown tenant's host.
    let bare = format!("http://{}", app.addr);
    let unknown = app.url("nobody", "");

    for base in [&bare, &unknown] {
        let response = app
            .client
            .get(format!("{base}/openapi.json"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "application/json");
        assert!(response.headers().contains_key("x-correlation-id"));
        let document: Value = response.json().await.unwrap();
        assert!(
            document["openapi"].as_str().unwrap().starts_with("3.1."),
            "{}",
            document["openapi"]
        );
        let paths = document["paths"].as_object().unwrap();
        for path in [
            "/api/bookings/list",
            "/auth/token",
            "/openapi.json",
            "/docs",
        ] {
            assert!(paths.contains_key(path), "{path}");
        }

        let page = app.client.get(format!("{base}/docs")).send().await.unwrap();
        assert_eq!(page.status(), 200);
        assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
        let html = page.text().await.unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        for path in paths.keys() {
            assert!(
                html.contains(&format!("<code>{path}</code>")),
                "the page does not show {path}"
            );
        }
        assert!(html.contains("InvlaidDates"), "the error codes are listed");
        assert!(!html.contains("<script"), "no scripts");
    }

    let wrong = app
        .client
        .post(format!("{bare}/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 405);
    assert_eq!(wrong.headers()["allow"], "GET");
}
