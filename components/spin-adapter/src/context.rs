//! `rental:platform/context` and `secrets` from Spin variables: the development tenant and
//! caller, the language, settings and secrets.
//!
//! | variable | what | default |
//! |---|---|---|
//! | `tenant` | the one tenant's slug | `dev` |
//! | `user_name` | the caller's name (user id 1) | `developer` |
//! | `permissions` | the caller's permissions, comma separated | all four |
//! | `language` | the response language | `en` |
//! | `setting_<key>` | tenant setting `<key>` (else the database's, e.g. the demo's) | none |
//! | `<name with _ for .>` | secret `<name>`, e.g. `bankone_signing_secret` | none |

use std::sync::OnceLock;

use rental_platform::{PERMISSIONS, spin_variable};

use crate::Adapter;
use crate::bindings::exports::rental::platform::{context, secrets};
use crate::db::Database;
use crate::{variable, variable_or};

/// The tenant's slug.
pub fn tenant() -> String {
    variable_or("tenant", "dev")
}

impl context::Guest for Adapter {
    fn tenant() -> String {
        tenant()
    }

    fn caller() -> Option<context::ApiUser> {
        let permissions = variable_or("permissions", &PERMISSIONS.join(","))
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
        Some(context::ApiUser {
            user_id: 1,
            user_name: variable_or("user_name", "developer"),
            permissions,
        })
    }

    fn language() -> String {
        variable_or("language", "en")
    }

    /// A fresh random id per instance, i.e. per request (Spin instantiates per request).
    fn correlation_id() -> String {
        static ID: OnceLock<String> = OnceLock::new();
        ID.get_or_init(|| {
            let bytes = wasip2::random::random::get_random_bytes(16);
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        })
        .clone()
    }

    fn setting(key: String) -> Option<String> {
        if let Some(value) = spin_variable("setting_", &key).and_then(|name| variable(&name)) {
            return Some(value);
        }
        // An unreadable database reads as "not set"; the store calls report it.
        Database::shared()
            .and_then(|db| db.setting(&key))
            .ok()
            .flatten()
    }
}

impl secrets::Guest for Adapter {
    fn get(name: String) -> Option<String> {
        spin_variable("", &name).and_then(|name| variable(&name))
    }
}
