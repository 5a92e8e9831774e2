//! Changes made with the CLI while servers run (operations.md, "Changes while serving" and
//! "Several hosts"): a server keeps tenants, settings, signing keys, users and the tenants'
//! components in memory, and each change is in effect once it has polled (the harness waits
//! for the first server's poll after a tenant, user, secret or setting command, not after a
//! `component` one). The tests named `..._reaches_every_host` run three hosts on one database
//! and print how long after the command returned each host honoured its change.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rentald_tests::{PASSWORD, Peer, TestApp, on_both_backends};
use serde_json::Value;

use crate::components::{LIST, answered_by_variant, component_ok, variant_wasm};

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

/// How long after `since` the host at `host` first answers a GET of the tenant `acme`'s `path`,
/// with `token` (`None`: without one), as `honoured` wants (asked every 10 ms, for at most 30 s).
async fn answered_after(
    app: &TestApp,
    host: SocketAddr,
    token: Option<&str>,
    path: &str,
    since: Instant,
    honoured: &impl AsyncFn(reqwest::Response) -> bool,
) -> Duration {
    loop {
        let mut request = app.client.get(app.url_on(host, "acme", path));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        if honoured(response).await {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < Duration::from_secs(30),
            "{host} still answers {status} to {path}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// An answer with this status.
fn status(expected: u16) -> impl AsyncFn(reqwest::Response) -> bool {
    async move |response: reqwest::Response| response.status() == expected
}

/// Runs a command (or a request) and returns its output and when it returned, having printed
/// how long it took (for a tenant, user, secret or setting command, that includes the
/// harness's wait for the first host's poll).
async fn command<T>(what: &str, run: impl Future<Output = T>) -> (T, Instant) {
    let started = Instant::now();
    let output = run.await;
    let returned = Instant::now();
    eprintln!("{what}: took {:?}", returned - started);
    (output, returned)
}

/// The app and two more hosts on its database (serving while this is kept).
struct ThreeHosts<'a> {
    app: &'a TestApp,
    addrs: [SocketAddr; 3],
    _peers: [Peer; 2],
}

impl<'a> ThreeHosts<'a> {
    async fn start(app: &'a TestApp) -> Self {
        let peers = [app.start_peer().await, app.start_peer().await];
        Self {
            app,
            addrs: [app.addr, peers[0].addr, peers[1].addr],
            _peers: peers,
        }
    }

    /// Asks the three hosts at once until each answers as `honoured` wants: how long after
    /// `since` each did.
    async fn answer(
        &self,
        token: Option<&str>,
        path: &str,
        since: Instant,
        honoured: impl AsyncFn(reqwest::Response) -> bool,
    ) -> [Duration; 3] {
        let after = |host| answered_after(self.app, host, token, path, since, &honoured);
        let [first, second, third] = self.addrs;
        let (first, second, third) = tokio::join!(after(first), after(second), after(third));
        [first, second, third]
    }

    /// [`Self::answer`] after a command that returned at `returned`, printing each host's
    /// delay.
    async fn honour(
        &self,
        what: &str,
        token: Option<&str>,
        path: &str,
        returned: Instant,
        honoured: impl AsyncFn(reqwest::Response) -> bool,
    ) {
        let delays = self.answer(token, path, returned, honoured).await;
        for (host, delay) in self.addrs.into_iter().zip(delays) {
            eprintln!("{host} {what} {delay:?} after it returned");
        }
    }
}

on_both_backends! {
    async fn a_change_made_with_the_cli_reaches_every_host(app: TestApp) {
        // Three hosts on one database; the CLI writes the change and each host drops its
        // memory of the tenant on its own poll. This one: a user disabled, then enabled.
        app.create_tenant("acme", false).await;
        app.create_user("acme", "reader", &["bookings:read"]).await;
        let token = app.token("acme", "reader", PASSWORD).await;
        let hosts = ThreeHosts::start(&app).await;
        let (token, list) = (Some(token.as_str()), "/api/bookings/list");
        hosts.answer(token, list, Instant::now(), status(200)).await;

        let (_, disabled) =
            command("user update --enabled false", app.update_user("acme", "reader", false, true))
                .await;
        hosts.honour("refused the disabled user", token, list, disabled, status(403)).await;
        let (_, enabled) =
            command("user update --enabled true", app.update_user("acme", "reader", true, true))
                .await;
        hosts.honour("served the enabled user again", token, list, enabled, status(200)).await;
    }

    async fn a_rotated_signing_key_reaches_every_host(app: TestApp) {
        // Every host refuses the tenant's earlier tokens once it has polled, and accepts one
        // issued after (here by the first host, which the harness saw poll).
        let old = app.tenant_with_token("acme", false).await;
        let hosts = ThreeHosts::start(&app).await;
        hosts.answer(Some(&old), "/api/cars", Instant::now(), status(200)).await;

        let (_, rotated) = command(
            "secret set jwt.signing_key",
            app.cli_ok(
                &["secret", "set", "--tenant", "acme", "jwt.signing_key"],
                Some("c2lnbmluZyBrZXkgb2YgdGhlIHNlY29uZCBnZW5lcmF0aW9u\n"),
            ),
        )
        .await;
        hosts.honour("refused the old token", Some(&old), "/api/cars", rotated, status(401)).await;
        let (new, issued) = command("token request", app.token("acme", "api", PASSWORD)).await;
        hosts.honour("accepted the new token", Some(&new), "/api/cars", issued, status(200)).await;
    }

    async fn a_changed_setting_reaches_every_host(app: TestApp) {
        // `auth_failure_status`: a request without a token is answered 403 rather than 401
        // by every host, and 401 again once the setting is set back.
        app.create_tenant("acme", false).await;
        let hosts = ThreeHosts::start(&app).await;
        hosts.answer(None, "/api/cars", Instant::now(), status(401)).await;

        let (_, set) = command(
            "setting set auth_failure_status 403",
            app.set_setting("acme", "auth_failure_status", "403"),
        )
        .await;
        hosts.honour("answered 403", None, "/api/cars", set, status(403)).await;
        let (_, set_back) = command(
            "setting set auth_failure_status 401",
            app.set_setting("acme", "auth_failure_status", "401"),
        )
        .await;
        hosts.honour("answered 401 again", None, "/api/cars", set_back, status(401)).await;
    }

    async fn a_component_installed_or_rolled_back_reaches_every_host(app: TestApp) {
        // The tenant's own `listing` (the variant) installed, then rolled back: every host
        // serves it, then the platform's again. `component ...` waits for no poll.
        let token = app.tenant_with_token("acme", false).await;
        let hosts = ThreeHosts::start(&app).await;
        let token = Some(token.as_str());
        let variant = async |response| answered_by_variant(response, "acme").await;
        let platform = async |response| !answered_by_variant(response, "acme").await;
        hosts.answer(token, LIST, Instant::now(), &platform).await;

        let wasm = variant_wasm();
        let install = ["install", "--tenant", "acme", "listing", wasm.to_str().unwrap()];
        let (_, installed) = command("component install", component_ok(&app, &install)).await;
        hosts.honour("served the installed variant", token, LIST, installed, variant).await;
        let rollback = ["rollback", "--tenant", "acme", "listing"];
        let (_, rolled_back) = command("component rollback", component_ok(&app, &rollback)).await;
        hosts.honour("served the platform's listing again", token, LIST, rolled_back, platform)
            .await;
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
