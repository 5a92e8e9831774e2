//! Admin changes made with the CLI while the server runs (operations.md, "Changes while
//! serving"): the server keeps tenants, settings, signing keys and users in memory, and each
//! change is in effect once it has polled (the harness waits for that poll after every such
//! command).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rentald_tests::{PASSWORD, TestApp, on_both_backends};
use serde_json::Value;

/// The error message of the closed-bookings list asked without its dates, in `language` or,
/// with `None`, in the tenant's default.
async fn closed_list_message(app: &TestApp, token: &str, language: Option<&str>) -> String {
    let path = match language {
        Some(language) => format!("/api/bookings/closed?language={language}"),
        None => "/api/bookings/closed".to_owned(),
    };
    let (status, body) = app
        .call("acme", token, reqwest::Method::GET, &path, None)
        .await;
    assert_eq!(
        (status, &body["ErrorCode"]),
        (400, &Value::from(98)),
        "{body}"
    );
    body["ErrorMessage"].as_str().unwrap().to_owned()
}

/// How long after `since` the host at `host` first answers `path` for `token` with `status`
/// (asked every 10 ms, for at most 30 s).
async fn answered_after(
    app: &TestApp,
    host: SocketAddr,
    token: &str,
    path: &str,
    status: u16,
    since: Instant,
) -> Duration {
    loop {
        let response = app
            .client
            .get(app.url_on(host, "acme", path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        if response.status() == status {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < Duration::from_secs(30),
            "{host} still answers {} to {path}",
            response.status()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

on_both_backends! {
    async fn a_change_made_with_the_cli_reaches_every_host(app: TestApp) {
        // Three hosts on one database; the CLI writes the change and each host drops its
        // memory of the tenant on its own poll.
        app.create_tenant("acme", false).await;
        app.create_user("acme", "reader", &["bookings:read"]).await;
        let token = app.token("acme", "reader", PASSWORD).await;
        let peers = [app.start_peer().await, app.start_peer().await];
        let hosts = [app.addr, peers[0].addr, peers[1].addr];
        for host in hosts {
            answered_after(&app, host, &token, "/api/bookings/list", 200, Instant::now()).await;
        }
        let disabled = Instant::now();
        app.update_user("acme", "reader", false, true).await;
        for host in hosts {
            let after = answered_after(&app, host, &token, "/api/bookings/list", 403, disabled).await;
            eprintln!("{host} refused the disabled user {after:?} after the change");
        }
        let enabled = Instant::now();
        app.update_user("acme", "reader", true, true).await;
        for host in hosts {
            answered_after(&app, host, &token, "/api/bookings/list", 200, enabled).await;
        }
    }

    async fn a_disabled_user_is_refused_after_the_poll(app: TestApp) {
        app.create_tenant("acme", false).await;
        app.create_user("acme", "reader", &["bookings:read"]).await;
        let token = app.token("acme", "reader", PASSWORD).await;
        assert_eq!(app.get("acme", "/api/bookings/list", &token).await.status(), 200);

        // Behind rentald's back (no change recorded): the server answers from memory.
        app.sql("UPDATE api_users SET enabled = 0 WHERE name = 'reader'").await;
        assert_eq!(
            app.get("acme", "/api/bookings/list", &token).await.status(),
            200,
            "the user is not read on every request"
        );

        app.update_user("acme", "reader", false, true).await;
        let refused = app.get("acme", "/api/bookings/list", &token).await;
        assert_eq!(refused.status(), 403, "a user disabled since the token was issued");
        app.update_user("acme", "reader", true, true).await;
        assert_eq!(app.get("acme", "/api/bookings/list", &token).await.status(), 200);
    }

    async fn a_rotated_signing_key_revokes_tokens_after_the_poll(app: TestApp) {
        let token = app.tenant_with_token("acme", false).await;
        assert_eq!(app.get("acme", "/api/cars", &token).await.status(), 200);
        app.cli_ok(
            &["secret", "set", "--tenant", "acme", "jwt.signing_key"],
            Some("c2lnbmluZyBrZXkgb2YgdGhlIHNlY29uZCBnZW5lcmF0aW9u\n"),
        )
        .await;
        assert_eq!(app.get("acme", "/api/cars", &token).await.status(), 401);
        let token = app.token("acme", "api", PASSWORD).await;
        assert_eq!(app.get("acme", "/api/cars", &token).await.status(), 200);
    }

    async fn changed_settings_are_seen_after_the_poll(app: TestApp) {
        let token = app.tenant_with_token("acme", false).await;
        let english = closed_list_message(&app, &token, Some("en")).await;
        let spanish = closed_list_message(&app, &token, Some("es")).await;
        assert_ne!(english, spanish);
        assert_eq!(closed_list_message(&app, &token, None).await, english);
        let anonymous = app.client.get(app.url("acme", "/api/cars")).send().await.unwrap();
        assert_eq!(anonymous.status(), 401);

        app.set_setting("acme", "default_language", "es").await;
        assert_eq!(closed_list_message(&app, &token, None).await, spanish);
        app.set_setting("acme", "auth_failure_status", "403").await;
        let anonymous = app.client.get(app.url("acme", "/api/cars")).send().await.unwrap();
        assert_eq!(anonymous.status(), 403);
    }

    async fn tenants_created_or_disabled_are_seen_after_the_poll(app: TestApp) {
        let token = app.tenant_with_token("acme", false).await;
        assert_eq!(app.get("acme", "/api/cars", &token).await.status(), 200);
        app.cli_ok(&["tenant", "update", "acme", "--enabled", "false"], None).await;
        let disabled = app.get("acme", "/api/cars", &token).await;
        assert_eq!(disabled.status(), 404);
        assert!(disabled.bytes().await.unwrap().is_empty());
        app.cli_ok(&["tenant", "update", "acme", "--enabled", "true"], None).await;
        assert_eq!(app.get("acme", "/api/cars", &token).await.status(), 200);

        // Answered 404 while it did not exist, then served once created.
        assert_eq!(app.get("later", "/api/cars", &token).await.status(), 404);
        let token = app.tenant_with_token("later", false).await;
        assert_eq!(app.get("later", "/api/cars", &token).await.status(), 200);
    }
}
