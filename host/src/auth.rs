//! OAuth2 client credentials (RFC 6749 section 4.4) and bearer tokens (RFC 6750).
//!
//! Tokens are HS256 JWTs signed with a key of the tenant's own (secret `jwt.signing_key`,
//! created with the tenant), carrying the tenant as a claim. A token must verify with the host's
//! tenant key and name the host's tenant; on each call it must be in force, and its user must
//! still be enabled for API use. The key, the user and the tokens that verified come from the
//! tenant's cached entry, so a rotated key or a disabled user is in effect within one
//! component poll (`storage::cache`), and a token's signature is checked once per entry, not
//! on every call.

mod throttle;
mod verifier;

use std::net::IpAddr;

use argon2::Argon2;
use argon2::password_hash::{PasswordHasher as _, SaltString};
use base64::Engine as _;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::runtime::Caller;
use crate::storage::Storage;
use crate::storage::cache::{CachedTenant, VerifiedToken};
use crate::storage::tenants::ApiUser;

use throttle::Throttle;
pub use verifier::LoginLimits;
use verifier::Verifier;

/// Lifetime of an access token, as the interface gives it.
pub const TOKEN_LIFETIME_SECS: i64 = 86_399;
/// Name of the tenant secret that signs its tokens.
pub const SIGNING_KEY_SECRET: &str = "jwt.signing_key";
const ISSUER: &str = "rentald";
/// Longest client_id accepted, in bytes; a user's name is no longer.
pub const MAX_CLIENT_ID: usize = 256;

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    iss: String,
    /// The API user's id.
    sub: String,
    tenant: String,
    name: String,
    iat: i64,
    exp: i64,
    /// Not issued by us; honoured when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nbf: Option<i64>,
}

/// A new random signing key for a tenant, base64.
pub fn new_signing_key() -> String {
    let key: [u8; 32] = rand::random();
    base64::engine::general_purpose::STANDARD.encode(key)
}

/// The tenant's signing key, decoded; `None` when it has none.
async fn signing_key(
    storage: &Storage,
    tenant: &CachedTenant,
) -> Result<Option<Vec<u8>>, AuthError> {
    storage
        .cached_secret(tenant, SIGNING_KEY_SECRET)
        .await?
        .map(|encoded| {
            base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|_| AuthError::SigningKey(tenant.tenant.slug.clone()))
        })
        .transpose()
}

/// An argon2id PHC string for a password.
pub fn hash_password(password: &str) -> anyhow::Result<String> {
    let salt = SaltString::encode_b64(&rand::random::<[u8; 16]>())
        .map_err(|e| anyhow::anyhow!("salt: {e}"))?;
    Ok(Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map_err(|e| anyhow::anyhow!("hashing: {e}"))?
        .to_string())
}

/// A valid hash of nothing anyone knows: verified against when the user does not exist, so
/// that an unknown client_id costs as much time as a wrong password.
static DECOY_HASH: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    hash_password(&uuid::Uuid::new_v4().to_string()).unwrap_or_default()
});

/// Why the token endpoint or a bearer check said no, or could not decide.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// RFC 6749 section 5.2: a malformed token request.
    #[error("invalid_request")]
    InvalidRequest,
    #[error("unsupported_grant_type")]
    UnsupportedGrantType,
    /// Unknown client, wrong secret, or a user disabled for API use.
    #[error("invalid_client")]
    InvalidClient,
    /// Too many failures from this address, for this client_id or any: retry after this many
    /// seconds.
    #[error("slow_down")]
    Throttled(u64),
    /// No password verification could start in time: 503, retry after this many seconds.
    #[error("temporarily_unavailable")]
    Busy(u64),
    /// No usable bearer token: 401 with a challenge (`token_sent` adds
    /// `error="invalid_token"`).
    #[error("no valid bearer token")]
    Unauthenticated { token_sent: bool },
    /// A valid token whose user lacks the permission or was disabled since: 403.
    #[error("the caller may not use this endpoint")]
    Forbidden,
    /// The host could not decide: 503.
    #[error(transparent)]
    Storage(#[from] crate::storage::Error),
    #[error("tenant {0} has no usable signing key")]
    SigningKey(String),
    #[error("signing the token: {0}")]
    Signing(#[from] jsonwebtoken::errors::Error),
    #[error("verifying the password: {0}")]
    Verifying(#[from] tokio::task::JoinError),
}

impl AuthError {
    /// The RFC 6749 section 5.2 `error` of a token endpoint refusal.
    pub fn oauth_code(&self) -> Option<&'static str> {
        match self {
            Self::InvalidRequest => Some("invalid_request"),
            Self::UnsupportedGrantType => Some("unsupported_grant_type"),
            Self::InvalidClient => Some("invalid_client"),
            Self::Throttled(_) => Some("slow_down"),
            Self::Busy(_) => Some("temporarily_unavailable"),
            _ => None,
        }
    }
}

/// The client's credentials as sent, from the form or from HTTP Basic. Its `Debug` leaves the
/// secret out, so that no log line can carry it.
#[derive(Default, PartialEq, Eq)]
pub struct TokenRequest {
    pub grant_type: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
}

impl std::fmt::Debug for TokenRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenRequest")
            .field("grant_type", &self.grant_type)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "***"))
            .finish()
    }
}

impl TokenRequest {
    /// Reads the form body and, when present, an `Authorization: Basic` header (RFC 6749
    /// section 2.3.1: form-encoded id and secret, then base64).
    pub fn parse(form: &[u8], authorization: Option<&str>) -> Result<Self, AuthError> {
        let mut request = TokenRequest::default();
        for (key, value) in url::form_urlencoded::parse(form) {
            let slot = match &*key {
                "grant_type" => &mut request.grant_type,
                "client_id" => &mut request.client_id,
                "client_secret" => &mut request.client_secret,
                _ => continue,
            };
            if slot.replace(value.into_owned()).is_some() {
                // RFC 6749 section 3.2: parameters must not be repeated.
                return Err(AuthError::InvalidRequest);
            }
        }
        if let Some(basic) = authorization.and_then(|h| strip_scheme(h, "Basic")) {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(basic.trim())
                .map_err(|_| AuthError::InvalidRequest)?;
            let decoded = String::from_utf8(decoded).map_err(|_| AuthError::InvalidRequest)?;
            let (id, secret) = decoded.split_once(':').ok_or(AuthError::InvalidRequest)?;
            let decode = |s: &str| {
                url::form_urlencoded::parse(format!("v={s}").as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default()
            };
            if request.client_id.is_some() || request.client_secret.is_some() {
                // Only one authentication method per request (RFC 6749 section 2.3).
                return Err(AuthError::InvalidRequest);
            }
            request.client_id = Some(decode(id));
            request.client_secret = Some(decode(secret));
        }
        if request
            .client_id
            .as_ref()
            .is_some_and(|id| id.len() > MAX_CLIENT_ID)
        {
            // No such user can exist; refused before it costs a verification or a counter.
            return Err(AuthError::InvalidRequest);
        }
        Ok(request)
    }
}

fn strip_scheme<'a>(header: &'a str, scheme: &str) -> Option<&'a str> {
    let (name, rest) = header.split_once(' ')?;
    name.eq_ignore_ascii_case(scheme).then_some(rest)
}

/// What the token endpoint keeps between requests: the failed-login counters and the
/// password verification slots.
pub struct Logins {
    throttle: Throttle,
    verifier: Verifier,
}

impl Logins {
    pub fn new(limits: LoginLimits) -> Self {
        Self {
            throttle: Throttle::new(),
            verifier: Verifier::new(limits),
        }
    }
}

/// Issues a token for client credentials, or says why not.
pub async fn issue_token(
    storage: &Storage,
    logins: &Logins,
    cached: &CachedTenant,
    peer: IpAddr,
    request: TokenRequest,
) -> Result<String, AuthError> {
    let tenant = cached.tenant.slug.as_str();
    let (Some(grant), Some(id), Some(secret)) =
        (request.grant_type, request.client_id, request.client_secret)
    else {
        return Err(AuthError::InvalidRequest);
    };
    if grant != "client_credentials" {
        return Err(AuthError::UnsupportedGrantType);
    }
    let attempt = logins
        .throttle
        .begin(peer, tenant, &id)
        .map_err(AuthError::Throttled)?;
    if !attempt.delay().is_zero() {
        tokio::time::sleep(attempt.delay()).await;
    }

    let user = storage.user_by_name(tenant, &id).await?;
    let hash = user
        .as_ref()
        .map_or_else(|| DECOY_HASH.clone(), |u| u.password_hash.clone());
    let password_ok = logins.verifier.verify(secret, hash).await?;
    let user = match user {
        Some(user) if password_ok && user.enabled && user.api_enabled => user,
        _ => {
            attempt.failed();
            return Err(AuthError::InvalidClient);
        }
    };
    attempt.succeeded();

    let signing = signing_key(storage, cached)
        .await?
        .ok_or_else(|| AuthError::SigningKey(tenant.to_owned()))?;
    let now = chrono::Utc::now().timestamp();
    let claims = Claims {
        iss: ISSUER.to_owned(),
        sub: user.id.to_string(),
        tenant: tenant.to_owned(),
        name: user.name,
        iat: now,
        exp: now + TOKEN_LIFETIME_SECS,
        nbf: None,
    };
    Ok(jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(&signing),
    )?)
}

/// Checks a bearer token for the host's tenant and an endpoint's permission.
pub async fn authorize(
    storage: &Storage,
    cached: &CachedTenant,
    authorization: Option<&str>,
    permission: &str,
) -> Result<Caller, AuthError> {
    let Some(token) = authorization
        .and_then(|h| strip_scheme(h, "Bearer"))
        .map(str::trim)
    else {
        return Err(AuthError::Unauthenticated {
            token_sent: authorization.is_some(),
        });
    };
    let invalid = AuthError::Unauthenticated { token_sent: true };
    let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
    let verified = match cached.verified_token(&digest) {
        Some(verified) => verified,
        None => {
            let Some(verified) = verify(storage, cached, token).await? else {
                return Err(invalid);
            };
            cached.remember_token(digest, verified);
            verified
        }
    };
    if !verified.in_force(chrono::Utc::now().timestamp()) {
        return Err(invalid);
    }
    let Some(user) = storage.cached_user(cached, verified.user_id).await? else {
        return Err(invalid);
    };
    permitted(&user, permission)
}

/// Checks a token's signature with the tenant's key, and reads what each use of it checks
/// again; `None` when it does not verify, names another tenant or no user.
async fn verify(
    storage: &Storage,
    cached: &CachedTenant,
    token: &str,
) -> Result<Option<VerifiedToken>, AuthError> {
    let Some(signing) = signing_key(storage, cached).await? else {
        return Ok(None);
    };
    let mut validation = Validation::new(Algorithm::HS256);
    validation.set_issuer(&[ISSUER]);
    validation.set_required_spec_claims(&["exp", "iss", "sub"]);
    // The times are checked at each use (`VerifiedToken::in_force`): the library takes `exp`
    // as inclusive.
    validation.validate_exp = false;
    validation.validate_nbf = false;
    let Ok(data) =
        jsonwebtoken::decode::<Claims>(token, &DecodingKey::from_secret(&signing), &validation)
    else {
        return Ok(None);
    };
    let claims = data.claims;
    let Ok(user_id) = claims.sub.parse::<i64>() else {
        return Ok(None);
    };
    if claims.tenant != cached.tenant.slug {
        return Ok(None);
    }
    Ok(Some(VerifiedToken {
        user_id,
        expires: claims.exp,
        not_before: claims.nbf,
    }))
}

fn permitted(user: &ApiUser, permission: &str) -> Result<Caller, AuthError> {
    let allowed =
        user.enabled && user.api_enabled && user.permissions.iter().any(|p| p == permission);
    if !allowed {
        return Err(AuthError::Forbidden);
    }
    Ok(Caller {
        user_id: user.id,
        user_name: user.name.clone(),
        permissions: user.permissions.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_ids_longer_than_the_maximum_are_refused_when_parsed() {
        let longest = "a".repeat(MAX_CLIENT_ID);
        let form = format!("client_id={longest}&client_secret=x");
        assert!(TokenRequest::parse(form.as_bytes(), None).is_ok());
        let form = format!("client_id={longest}a&client_secret=x");
        assert!(matches!(
            TokenRequest::parse(form.as_bytes(), None),
            Err(AuthError::InvalidRequest)
        ));
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("{longest}a:x"));
        assert!(matches!(
            TokenRequest::parse(b"", Some(&format!("Basic {basic}"))),
            Err(AuthError::InvalidRequest)
        ));
    }

    #[test]
    fn the_client_secret_is_not_debug_printed() {
        let request = TokenRequest::parse(b"client_id=api&client_secret=hunter2", None).unwrap();
        let printed = format!("{request:?}");
        assert!(
            printed.contains("api") && !printed.contains("hunter2"),
            "{printed}"
        );
    }

    #[test]
    fn reads_form_and_basic_credentials() {
        let form = TokenRequest::parse(
            b"grant_type=client_credentials&client_id=a%20b&client_secret=x",
            None,
        )
        .unwrap();
        assert_eq!(form.client_id.as_deref(), Some("a b"));
        let basic = base64::engine::general_purpose::STANDARD.encode("api%3Auser:p%40ss");
        let both = TokenRequest::parse(
            b"grant_type=client_credentials",
            Some(&format!("Basic {basic}")),
        )
        .unwrap();
        assert_eq!(both.client_id.as_deref(), Some("api:user"));
        assert_eq!(both.client_secret.as_deref(), Some("p@ss"));
        assert!(matches!(
            TokenRequest::parse(b"client_id=a&client_id=b", None),
            Err(AuthError::InvalidRequest)
        ));
        assert!(matches!(
            TokenRequest::parse(b"client_id=a", Some(&format!("Basic {basic}"))),
            Err(AuthError::InvalidRequest)
        ));
    }
}
