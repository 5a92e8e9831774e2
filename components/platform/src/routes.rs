//! The route table: every API endpoint, the component that serves it and the permission it
//! needs. The single list from which `rentald` routes, answers 405s and names permissions, and
//! which spin.toml's triggers follow.

use http::Method;

use crate::Component::{self, BankOne, BankTwo, Booking, Listing, SelfCheckIn};
use crate::{BOOKINGS_READ, BOOKINGS_WRITE, CATALOG_READ, SELFCHECKIN_WRITE};

/// Who may call an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A bearer token whose user holds this permission.
    Permission(&'static str),
    /// Anyone: no token is read and the component sees no caller. Only the bank webhooks,
    /// whose components authenticate the bank themselves (signature, shared secret).
    Anonymous,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub method: Method,
    /// Path segments; `{id}` matches one [`path_id`].
    pub path: &'static str,
    /// The component serving it.
    pub component: Component,
    pub access: Access,
}

const fn route(
    method: Method,
    path: &'static str,
    component: Component,
    permission: &'static str,
) -> Route {
    Route {
        method,
        path,
        component,
        access: Access::Permission(permission),
    }
}

const fn webhook(path: &'static str, component: Component) -> Route {
    Route {
        method: Method::POST,
        path,
        component,
        access: Access::Anonymous,
    }
}

pub static ROUTES: &[Route] = &[
    route(Method::GET, "/api/bookings/list", Listing, BOOKINGS_READ),
    route(Method::GET, "/api/bookings/closed", Listing, BOOKINGS_READ),
    route(Method::GET, "/api/bookings/changes", Listing, BOOKINGS_READ),
    route(Method::GET, "/api/branchoffices", Listing, CATALOG_READ),
    route(Method::GET, "/api/customers", Listing, CATALOG_READ),
    route(Method::GET, "/api/cars", Listing, CATALOG_READ),
    route(Method::POST, "/api/booking/book", Booking, BOOKINGS_WRITE),
    route(Method::PUT, "/api/booking/update", Booking, BOOKINGS_WRITE),
    route(Method::POST, "/api/booking/price", Booking, BOOKINGS_READ),
    route(Method::GET, "/api/availability", Booking, BOOKINGS_READ),
    route(Method::POST, "/api/booking/cancel", Booking, BOOKINGS_WRITE),
    route(Method::GET, "/api/booking/{id}", Booking, BOOKINGS_READ),
    route(
        Method::GET,
        "/api/booking/{id}/history",
        Booking,
        BOOKINGS_READ,
    ),
    route(
        Method::POST,
        "/api/operations/deliver",
        Booking,
        BOOKINGS_WRITE,
    ),
    route(
        Method::POST,
        "/api/operations/return",
        Booking,
        BOOKINGS_WRITE,
    ),
    route(
        Method::PUT,
        "/api/selfcheckin",
        SelfCheckIn,
        SELFCHECKIN_WRITE,
    ),
    webhook("/api/bankone/webhooks", BankOne),
    webhook("/api/v1/banktwo/webhooks", BankTwo),
];

/// What the table says about a method and path.
#[derive(Debug, PartialEq, Eq)]
pub enum Matched {
    Route(&'static Route),
    /// The path exists with other methods (for a 405 with `Allow`).
    WrongMethod(Vec<Method>),
    NotFound,
}

/// The Id a path segment names: a positive `i64` written in plain decimal digits, so each
/// resource has one path (`12`, never `+12` or `012`); `None` for anything else. The host
/// routes by it and the components read their Ids with it, so both agree under Spin too.
pub fn path_id(segment: &str) -> Option<i64> {
    let plain = !segment.starts_with('0') && segment.bytes().all(|b| b.is_ascii_digit());
    segment.parse::<i64>().ok().filter(|_| plain)
}

fn path_matches(pattern: &str, path: &str) -> bool {
    let mut pattern = pattern.split('/');
    let mut path = path.split('/');
    loop {
        match (pattern.next(), path.next()) {
            (None, None) => return true,
            (Some("{id}"), Some(s)) if path_id(s).is_some() => {}
            (Some(p), Some(s)) if p == s => {}
            _ => return false,
        }
    }
}

pub fn find(method: &Method, path: &str) -> Matched {
    let mut allowed = Vec::new();
    for route in ROUTES.iter().filter(|r| path_matches(r.path, path)) {
        if route.method == *method {
            return Matched::Route(route);
        }
        allowed.push(route.method.clone());
    }
    if allowed.is_empty() {
        Matched::NotFound
    } else {
        Matched::WrongMethod(allowed)
    }
}

/// The value of a 405's `Allow` header: `methods`, comma-separated.
pub fn allow_value(methods: &[Method]) -> String {
    methods
        .iter()
        .map(Method::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a 405 for `method` at `path` allows, when the table serves the path with other
/// methods only; `None` when it serves it with `method`, or not at all. For a component to
/// answer a wrong method itself, as `rentald` does, under a host that routes by path alone.
pub fn allowed_instead(method: &str, path: &str) -> Option<String> {
    let method = Method::from_bytes(method.as_bytes()).ok()?;
    match find(&method, path) {
        Matched::WrongMethod(allowed) => Some(allow_value(&allowed)),
        Matched::Route(_) | Matched::NotFound => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PERMISSIONS;

    #[test]
    fn matches_methods_and_paths() {
        assert!(
            matches!(find(&Method::GET, "/api/bookings/list"), Matched::Route(r) if r.component == Listing)
        );
        assert_eq!(
            find(&Method::POST, "/api/bookings/list"),
            Matched::WrongMethod(vec![Method::GET])
        );
        assert_eq!(
            find(&Method::GET, "/api/bookings/list/x"),
            Matched::NotFound
        );
        assert_eq!(find(&Method::GET, "/api/nothing"), Matched::NotFound);
    }

    #[test]
    fn booking_routes_and_their_permissions() {
        let access = |method: Method, path: &str| match find(&method, path) {
            Matched::Route(route) => (route.component, route.access),
            other => panic!("{method} {path}: {other:?}"),
        };
        let write = (Booking, Access::Permission(BOOKINGS_WRITE));
        let read = (Booking, Access::Permission(BOOKINGS_READ));
        assert_eq!(access(Method::POST, "/api/booking/book"), write);
        assert_eq!(access(Method::PUT, "/api/booking/update"), write);
        assert_eq!(access(Method::POST, "/api/booking/cancel"), write);
        assert_eq!(access(Method::POST, "/api/operations/deliver"), write);
        assert_eq!(access(Method::POST, "/api/operations/return"), write);
        assert_eq!(access(Method::GET, "/api/booking/12"), read);
        assert_eq!(access(Method::GET, "/api/booking/12/history"), read);
        assert_eq!(access(Method::POST, "/api/booking/price"), read);
        assert_eq!(access(Method::GET, "/api/availability"), read);
        assert_eq!(
            find(&Method::DELETE, "/api/booking/12"),
            Matched::WrongMethod(vec![Method::GET])
        );
    }

    #[test]
    fn the_self_check_in_route() {
        match find(&Method::PUT, "/api/selfcheckin") {
            Matched::Route(route) => assert_eq!(
                (route.component, route.access),
                (SelfCheckIn, Access::Permission(SELFCHECKIN_WRITE))
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            find(&Method::POST, "/api/selfcheckin"),
            Matched::WrongMethod(vec![Method::PUT])
        );
    }

    #[test]
    fn placeholders_match_one_id() {
        assert!(path_matches("/api/booking/{id}", "/api/booking/12"));
        assert!(!path_matches("/api/booking/{id}", "/api/booking/"));
        assert!(!path_matches("/api/booking/{id}", "/api/booking/1/2"));
        assert!(!path_matches("/api/booking/{id}", "/api/booking/book"));
    }

    #[test]
    fn ids_are_positive_integers_written_plainly() {
        assert_eq!(path_id("42"), Some(42));
        assert_eq!(path_id("9223372036854775807"), Some(i64::MAX));
        for segment in [
            "0",
            "-1",
            "+1",
            "012",
            "4x",
            "",
            "book",
            "1.5",
            "9223372036854775808",
        ] {
            assert_eq!(path_id(segment), None, "{segment}");
        }
    }

    #[test]
    fn a_wrong_method_names_the_methods_allowed_instead() {
        assert_eq!(
            allowed_instead("POST", "/api/bookings/list").as_deref(),
            Some("GET")
        );
        assert_eq!(
            allowed_instead("GET", "/api/booking/book").as_deref(),
            Some("POST")
        );
        assert_eq!(allowed_instead("GET", "/api/bookings/list"), None);
        assert_eq!(allowed_instead("GET", "/api/nothing"), None);
        assert_eq!(allowed_instead("POST", "/queue/payment.reconcile"), None);
        assert_eq!(allow_value(&[Method::POST, Method::GET]), "POST, GET");
    }

    #[test]
    fn a_word_in_an_id_place_is_not_the_id_route() {
        // `GET /api/booking/book`: the path is served, by POST only.
        assert_eq!(
            find(&Method::GET, "/api/booking/book"),
            Matched::WrongMethod(vec![Method::POST])
        );
        assert_eq!(find(&Method::GET, "/api/booking/abc"), Matched::NotFound);
        assert_eq!(
            find(&Method::GET, "/api/booking/0/history"),
            Matched::NotFound
        );
    }

    #[test]
    fn every_route_names_a_known_permission() {
        for route in ROUTES {
            if let Access::Permission(p) = route.access {
                assert!(PERMISSIONS.contains(&p), "{}", route.path);
            }
        }
    }

    #[test]
    fn only_the_bank_webhooks_are_anonymous() {
        let anonymous: Vec<_> = ROUTES
            .iter()
            .filter(|r| r.access == Access::Anonymous)
            .map(|r| (r.path, r.component))
            .collect();
        assert_eq!(
            anonymous,
            [
                ("/api/bankone/webhooks", BankOne),
                ("/api/v1/banktwo/webhooks", BankTwo)
            ]
        );
    }
}
