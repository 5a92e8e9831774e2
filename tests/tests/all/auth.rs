//! POST /auth/token and the bearer checks (contract: "Authentication and authorization").

use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rentald_tests::{Backend, Options, PASSWORD, TestApp};
use serde_json::{Value, json};

async fn app() -> TestApp {
    TestApp::spawn(Options::new(Backend::Sqlite))
        .await
        .expect("sqlite")
}

/// A server whose tenant `acme` has the user `user`, who may read bookings.
async fn acme_with_reader(user: &str) -> TestApp {
    let app = app().await;
    app.create_tenant("acme", false).await;
    app.create_user("acme", user, &["bookings:read"]).await;
    app
}

/// `GET /api/cars` of acme with no token at all.
async fn cars_without_token(app: &TestApp) -> reqwest::Response {
    app.client
        .get(app.url("acme", "/api/cars"))
        .send()
        .await
        .unwrap()
}

fn credentials<'a>(user: &'a str, password: &'a str) -> [(&'static str, &'a str); 3] {
    [
        ("grant_type", "client_credentials"),
        ("client_id", user),
        ("client_secret", password),
    ]
}

fn claims_of(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("a JWT");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .expect("base64url");
    serde_json::from_slice(&bytes).expect("JSON claims")
}

#[tokio::test]
async fn issues_a_bearer_token_for_client_credentials() {
    let app = acme_with_reader("api").await;
    let response = app
        .token_response("acme", &credentials("api", PASSWORD))
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["token_type"], "bearer");
    assert_eq!(body["expires_in"], 86399);
    let claims = claims_of(body["access_token"].as_str().unwrap());
    assert_eq!(claims["tenant"], "acme");
    assert_eq!(
        claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(),
        86399
    );

    // HTTP Basic client authentication (RFC 6749 section 2.3.1) works as well.
    let response = app
        .client
        .post(app.url("acme", "/auth/token"))
        .basic_auth("api", Some(PASSWORD))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn token_errors_follow_rfc_6749() {
    let app = acme_with_reader("api").await;
    app.create_user("acme", "gone", &["bookings:read"]).await;
    app.create_user("acme", "web-only", &["bookings:read"])
        .await;
    app.update_user("acme", "gone", false, true).await;
    app.update_user("acme", "web-only", true, false).await;

    let missing = app
        .token_response(
            "acme",
            &[("grant_type", "client_credentials"), ("client_id", "api")],
        )
        .await;
    assert_eq!(missing.status(), 400);
    assert_eq!(
        missing.json::<Value>().await.unwrap(),
        json!({"error": "invalid_request"})
    );

    let grant = app
        .token_response(
            "acme",
            &[
                ("grant_type", "password"),
                ("client_id", "api"),
                ("client_secret", PASSWORD),
            ],
        )
        .await;
    assert_eq!(grant.status(), 400);
    assert_eq!(
        grant.json::<Value>().await.unwrap(),
        json!({"error": "unsupported_grant_type"})
    );

    // Unknown user, wrong password, disabled user, user not enabled for the API: one answer.
    for (user, password) in [
        ("nobody", PASSWORD),
        ("api", "wrong"),
        ("gone", PASSWORD),
        ("web-only", PASSWORD),
    ] {
        let response = app
            .token_response("acme", &credentials(user, password))
            .await;
        assert_eq!(response.status(), 401, "{user}");
        assert_eq!(
            response.json::<Value>().await.unwrap(),
            json!({"error": "invalid_client"}),
            "{user}"
        );
    }
}

#[tokio::test]
async fn repeated_failures_are_throttled() {
    let app = acme_with_reader("api").await;
    let mut statuses = Vec::new();
    for _ in 0..11 {
        statuses.push(
            app.token_response("acme", &credentials("api", "guess"))
                .await
                .status()
                .as_u16(),
        );
    }
    assert_eq!(&statuses[..10], &[401; 10]);
    let refused = app
        .token_response("acme", &credentials("api", PASSWORD))
        .await;
    assert_eq!(
        refused.status(),
        429,
        "even the right password is refused to this address while throttled"
    );
    let retry: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry > 0);
    // Another client_id is not affected.
    app.create_user("acme", "other", &["bookings:read"]).await;
    assert_eq!(
        app.token_response("acme", &credentials("other", PASSWORD))
            .await
            .status(),
        200
    );
}

/// A token signed with a key the test set itself, to forge expired and cross-tenant tokens.
async fn known_key(app: &TestApp, tenant: &str) -> Vec<u8> {
    let key = [7u8; 32];
    let encoded = base64::engine::general_purpose::STANDARD.encode(key);
    app.cli_ok(
        &["secret", "set", "--tenant", tenant, "jwt.signing_key"],
        Some(&format!("{encoded}\n")),
    )
    .await;
    key.to_vec()
}

fn forge(key: &[u8], claims: Value) -> String {
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(key),
    )
    .unwrap()
}

fn challenge(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

#[tokio::test]
async fn bad_tokens_get_401_with_a_bearer_challenge() {
    let app = app().await;
    let token = app.tenant_with_token("acme", false).await;
    let other_token = app.tenant_with_token("other", false).await;

    let none = cars_without_token(&app).await;
    assert_eq!(none.status(), 401);
    let expected = format!(
        "Bearer authorization_uri=\"https://acme.localhost:{port}/auth/token\", resource_id=\"https://acme.localhost:{port}/api\"",
        port = app.addr.port()
    );
    assert_eq!(challenge(&none), expected);
    assert!(none.bytes().await.unwrap().is_empty());

    let mut tampered = token.clone().into_bytes();
    let last = tampered.len() - 2;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();

    let claims = claims_of(&token);
    let header_none =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let body = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(claims.to_string());
    let alg_none = format!("{header_none}.{body}.");

    for (what, bad) in [
        ("garbage", "not-a-token".to_owned()),
        ("tampered", tampered),
        ("alg none", alg_none),
        ("other tenant", other_token),
    ] {
        let response = app.get("acme", "/api/cars", &bad).await;
        assert_eq!(response.status(), 401, "{what}");
        assert_eq!(
            challenge(&response),
            format!("{expected}, error=\"invalid_token\""),
            "{what}"
        );
        assert!(response.bytes().await.unwrap().is_empty(), "{what}");
    }

    // Correctly signed, but expired, not yet valid, or naming another tenant.
    let key = known_key(&app, "acme").await;
    let now = chrono::Utc::now().timestamp();
    let sub = claims["sub"].clone();
    let expired = forge(
        &key,
        json!({"iss": "rentald", "sub": sub, "tenant": "acme", "name": "api", "iat": now - 100_000, "exp": now - 10}),
    );
    // `exp` is exclusive: a token whose exp is this very second has expired.
    let at_expiry = forge(
        &key,
        json!({"iss": "rentald", "sub": sub, "tenant": "acme", "name": "api", "iat": now - 100, "exp": now}),
    );
    let not_yet = forge(
        &key,
        json!({"iss": "rentald", "sub": sub, "tenant": "acme", "name": "api", "iat": now, "nbf": now + 100, "exp": now + 200}),
    );
    let started = forge(
        &key,
        json!({"iss": "rentald", "sub": sub, "tenant": "acme", "name": "api", "iat": now - 10, "nbf": now - 10, "exp": now + 100}),
    );
    let elsewhere = forge(
        &key,
        json!({"iss": "rentald", "sub": sub, "tenant": "other", "name": "api", "iat": now, "exp": now + 100}),
    );
    let fine = forge(
        &key,
        json!({"iss": "rentald", "sub": sub, "tenant": "acme", "name": "api", "iat": now, "exp": now + 100}),
    );
    assert_eq!(app.get("acme", "/api/cars", &expired).await.status(), 401);
    assert_eq!(app.get("acme", "/api/cars", &at_expiry).await.status(), 401);
    assert_eq!(app.get("acme", "/api/cars", &not_yet).await.status(), 401);
    assert_eq!(app.get("acme", "/api/cars", &started).await.status(), 200);
    assert_eq!(app.get("acme", "/api/cars", &elsewhere).await.status(), 401);
    assert_eq!(
        app.get("acme", "/api/cars", &fine).await.status(),
        200,
        "the forging itself is right"
    );
}

/// A token's signature is checked once and the token remembered (docs/decisions.md, "A token
/// is verified once"), but its times are checked on every call: one that was in force stops
/// being so at its `exp`, and one that was not yet starts at its `nbf`.
#[tokio::test]
async fn a_remembered_token_still_expires_and_starts_on_time() {
    let app = app().await;
    let token = app.tenant_with_token("acme", false).await;
    let sub = claims_of(&token)["sub"].clone();
    let key = known_key(&app, "acme").await;
    let forged = |times: Value| {
        let mut claims = json!({"iss": "rentald", "sub": sub, "tenant": "acme", "name": "api"});
        claims
            .as_object_mut()
            .unwrap()
            .extend(times.as_object().unwrap().clone());
        forge(&key, claims)
    };
    // The component is loaded before the clock starts, so that the first calls below come
    // well within the tokens' first seconds.
    let warm = forged(json!({"iat": 0, "exp": i64::MAX / 2}));
    assert_eq!(app.get("acme", "/api/cars", &warm).await.status(), 200);
    let now = chrono::Utc::now().timestamp();
    let ending = forged(json!({"iat": now, "exp": now + 3}));
    let starting = forged(json!({"iat": now, "nbf": now + 3, "exp": now + 100}));
    assert_eq!(app.get("acme", "/api/cars", &ending).await.status(), 200);
    assert_eq!(app.get("acme", "/api/cars", &starting).await.status(), 401);
    // Past both seconds: `exp` and `nbf` are now + 3, and the clock reads whole seconds.
    while chrono::Utc::now().timestamp() < now + 4 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        app.get("acme", "/api/cars", &ending).await.status(),
        401,
        "expired since it was verified"
    );
    assert_eq!(
        app.get("acme", "/api/cars", &starting).await.status(),
        200,
        "in force since it was refused"
    );
}

#[tokio::test]
async fn missing_permission_or_disabled_user_gets_403_without_body() {
    let app = acme_with_reader("reader").await;
    let token = app.token("acme", "reader", PASSWORD).await;
    assert_eq!(
        app.get("acme", "/api/bookings/list", &token).await.status(),
        200
    );

    let response = app.get("acme", "/api/cars", &token).await;
    assert_eq!(response.status(), 403);
    assert!(response.bytes().await.unwrap().is_empty());

    app.update_user("acme", "reader", false, true).await;
    let response = app.get("acme", "/api/bookings/list", &token).await;
    assert_eq!(
        response.status(),
        403,
        "a user disabled since the token was issued"
    );
    assert!(response.bytes().await.unwrap().is_empty());
}

#[tokio::test]
async fn tenants_may_ask_for_403_on_every_auth_failure() {
    let app = app().await;
    app.create_tenant("acme", false).await;
    app.set_setting("acme", "auth_failure_status", "403").await;
    let none = cars_without_token(&app).await;
    assert_eq!(none.status(), 403);
    assert!(none.headers().get("www-authenticate").is_none());
    assert_eq!(app.get("acme", "/api/cars", "garbage").await.status(), 403);
}
