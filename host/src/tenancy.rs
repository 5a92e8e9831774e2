//! Which tenant a request is for: `{tenant}.{base-domain}` in the request's authority.
//!
//! Host names are case-insensitive and may end with the root's dot (RFC 3986 section 3.2.2,
//! RFC 1034): `ACME.localhost.` is tenant `acme`.

/// Why no tenant slug could be read from a request.
#[derive(Debug, PartialEq, Eq)]
pub enum HostError {
    /// No Host header (nor an authority in the request line).
    Missing,
    /// A host that is not a valid tenant slug under the base domain.
    NotUnderBase,
}

/// The tenant slug of a host (`demo.localhost:8080` -> `demo` with base `localhost`), in lower
/// case.
pub fn tenant_slug(host: Option<&str>, base_domain: &str) -> Result<String, HostError> {
    let host = host.ok_or(HostError::Missing)?;
    let name = strip_port(host);
    let name = name.strip_suffix('.').unwrap_or(name);
    let base = base_domain.strip_suffix('.').unwrap_or(base_domain);
    let slug = name
        .len()
        .checked_sub(base.len() + 1)
        .filter(|&cut| {
            name.is_char_boundary(cut)
                && name[cut..].starts_with('.')
                && name[cut + 1..].eq_ignore_ascii_case(base)
        })
        .map(|cut| name[..cut].to_ascii_lowercase())
        .ok_or(HostError::NotUnderBase)?;
    if is_valid_slug(&slug) {
        Ok(slug)
    } else {
        Err(HostError::NotUnderBase)
    }
}

fn strip_port(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// Slugs: `[a-z0-9][a-z0-9-]{0,62}`.
pub fn is_valid_slug(slug: &str) -> bool {
    let bytes = slug.as_bytes();
    (1..=63).contains(&bytes.len())
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_slug_under_the_base_domain() {
        let slug = |host: &str, base: &str| tenant_slug(Some(host), base);
        assert_eq!(slug("demo.localhost:8080", "localhost"), Ok("demo".into()));
        assert_eq!(
            slug("acme-1.rent.example", "rent.example"),
            Ok("acme-1".into())
        );
        // Case-insensitive, with the root's trailing dot allowed.
        assert_eq!(slug("ACME.Rent.Example", "rent.example"), Ok("acme".into()));
        assert_eq!(slug("acme.localhost.", "localhost"), Ok("acme".into()));
        assert_eq!(slug("acme.localhost.:8080", "localhost"), Ok("acme".into()));
    }

    #[test]
    fn refuses_other_hosts() {
        for host in [
            "localhost",
            "a.b.localhost",
            "evil.com",
            ".localhost",
            "-x.localhost",
            "x.localhost.evil",
            "acme.localhost..",
        ] {
            assert_eq!(
                tenant_slug(Some(host), "localhost"),
                Err(HostError::NotUnderBase),
                "{host}"
            );
        }
        assert_eq!(tenant_slug(None, "localhost"), Err(HostError::Missing));
    }

    #[test]
    fn slug_rules() {
        assert!(is_valid_slug("a"));
        assert!(is_valid_slug(&"a".repeat(63)));
        assert!(!is_valid_slug(&"a".repeat(64)));
        assert!(!is_valid_slug("Abc"));
        assert!(!is_valid_slug(""));
    }
}
