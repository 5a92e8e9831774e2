//! `rentald component new NAME DIR`: a new crate for a tenant's own build of a platform
//! component, outside this workspace, that builds into a component `component install` takes.
//!
//! The crate depends on the guest SDK (`rental-guest`, `rental-domain`) and on the platform's
//! component `NAME` without its own export, by path into a source checkout of the platform:
//! the one `rentald` was built from, or `--sdk DIR`. Its files are the templates beside this
//! module (`scaffold/*.in`), filled by [`fill`], and the platform's `.cargo/config.toml` (the
//! components' initial memory, the test host's SQLite options), as it is. `listing` and
//! `booking` get rules of their own (their extension points, `listing::Rules` and
//! `booking::Rules`), every other component a wrapper around the platform's handler. Each
//! comes with a test on the guest SDK's test host.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use rental_platform::Component;

const CARGO_TOML: &str = include_str!("scaffold/Cargo.toml.in");
const GITIGNORE: &str = include_str!("scaffold/gitignore.in");
/// The platform's own build settings (the components' initial memory, SQLite's options), as
/// they are.
const CARGO_CONFIG: &str = include_str!("../../.cargo/config.toml");
const README: &str = include_str!("scaffold/README.md.in");
const LISTING: &str = include_str!("scaffold/listing.rs.in");
const BOOKING: &str = include_str!("scaffold/booking.rs.in");
const WRAPPER: &str = include_str!("scaffold/wrapper.rs.in");
const SELFCHECKIN_TESTS: &str = include_str!("scaffold/selfcheckin_tests.rs.in");
const BANKONE_TESTS: &str = include_str!("scaffold/bankone_tests.rs.in");
const BANKTWO_TESTS: &str = include_str!("scaffold/banktwo_tests.rs.in");
const RECONCILE_TESTS: &str = include_str!("scaffold/reconcile_tests.rs.in");

/// The crate `new` wrote.
#[derive(Debug)]
pub struct NewCrate {
    /// Its package name.
    pub package: String,
    /// The file `cargo build --release --target wasm32-wasip2` makes, relative to the crate.
    pub wasm: PathBuf,
    /// The checkout of the platform it depends on.
    pub sdk: PathBuf,
}

/// Writes a crate for a tenant's build of platform component `name` into `dir` (created; an
/// existing `dir` must be empty), depending on the platform's source checkout `sdk`, else the
/// one this binary was built from.
pub fn new(name: &str, dir: &Path, sdk: Option<&Path>) -> anyhow::Result<NewCrate> {
    let component: Component = name.parse()?;
    if dir.exists() {
        let empty = dir.is_dir()
            && std::fs::read_dir(dir)
                .with_context(|| format!("reading {}", dir.display()))?
                .next()
                .is_none();
        anyhow::ensure!(
            empty,
            "{} exists and is not an empty directory: give `component new` a new or empty \
             directory, nothing is overwritten",
            dir.display()
        );
    }
    let sdk = checkout(component, sdk)?;
    let package = package_name(dir, component)?;
    let library = package.replace('-', "_");

    let path_of = |crate_dir: &str| {
        toml::Value::String(sdk.join(crate_dir).display().to_string()).to_string()
    };
    let webhook = matches!(component, Component::BankOne | Component::BankTwo);
    let (guest, guest_published) = if webhook {
        (
            format!(
                "{{ path = {}, features = [\"webhook\"] }}",
                path_of("components/guest")
            ),
            r#"{ version = "0.1", features = ["webhook"] }"#.to_owned(),
        )
    } else {
        (
            format!("{{ path = {} }}", path_of("components/guest")),
            r#""0.1""#.to_owned(),
        )
    };
    let domain = format!("{{ path = {} }}", path_of("components/domain"));
    let platform = format!(
        "{{ path = {}, default-features = false }}",
        path_of(&format!("components/{}", component.name()))
    );
    let values = [
        ("package", package.as_str()),
        ("library", library.as_str()),
        ("component", component.name()),
        ("handler", handler(component)),
        ("what", serves(component)),
        ("tests", tests(component)),
        ("guest", guest.as_str()),
        ("guest_published", guest_published.as_str()),
        ("domain", domain.as_str()),
        ("platform", platform.as_str()),
    ];
    let lib = match component {
        Component::Listing => LISTING,
        Component::Booking => BOOKING,
        _ => WRAPPER,
    };

    for sub in ["src", ".cargo"] {
        let sub = dir.join(sub);
        std::fs::create_dir_all(&sub).with_context(|| format!("creating {}", sub.display()))?;
    }
    for (file, template) in [
        ("Cargo.toml", CARGO_TOML),
        (".gitignore", GITIGNORE),
        ("README.md", README),
        ("src/lib.rs", lib),
        (".cargo/config.toml", CARGO_CONFIG),
    ] {
        let path = dir.join(file);
        std::fs::write(&path, fill(template, &values)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    // The dependency versions the platform is built and tested with, to start from.
    let lock = sdk.join("Cargo.lock");
    if lock.is_file() {
        std::fs::copy(&lock, dir.join("Cargo.lock"))
            .with_context(|| format!("copying {}", lock.display()))?;
    }
    Ok(NewCrate {
        wasm: Path::new("target/wasm32-wasip2/release").join(format!("{library}.wasm")),
        package,
        sdk,
    })
}

/// The root of the platform's source checkout: `sdk`, else the one this binary was built
/// from; it must hold the guest SDK and the component's crate.
fn checkout(component: Component, sdk: Option<&Path>) -> anyhow::Result<PathBuf> {
    let (root, given) = match sdk {
        Some(sdk) => (sdk.to_path_buf(), true),
        None => (Path::new(env!("CARGO_MANIFEST_DIR")).join(".."), false),
    };
    let needed = [
        "components/guest/Cargo.toml".to_owned(),
        "components/domain/Cargo.toml".to_owned(),
        format!("components/{}/Cargo.toml", component.name()),
    ];
    if let Some(missing) = needed.iter().find(|file| !root.join(file).is_file()) {
        if given {
            anyhow::bail!(
                "--sdk {}: not a source checkout of the platform (it has no {missing}); give \
                 --sdk the root directory of one",
                root.display()
            );
        }
        anyhow::bail!(
            "rentald was built from {}, which is no longer a source checkout of the platform \
             (it has no {missing}): give the root directory of one with --sdk DIR",
            root.display()
        );
    }
    root.canonicalize()
        .with_context(|| format!("resolving {}", root.display()))
}

/// A valid package name from the last component of `dir`: lower case, letters, digits and
/// `-`; prefixed with `tenant-` when it would start with a digit, be empty or take the name of
/// a crate it depends on.
fn package_name(dir: &Path, component: Component) -> anyhow::Result<String> {
    let absolute = match dir.canonicalize() {
        Ok(dir) => dir,
        Err(_) => {
            std::path::absolute(dir).with_context(|| format!("resolving {}", dir.display()))?
        }
    };
    let last = absolute
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut name = String::new();
    for c in last.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() || c == '_' {
            name.push(c);
        } else if !name.ends_with('-') {
            name.push('-');
        }
    }
    let name = name.trim_matches(|c| c == '-' || c == '_');
    let taken = Component::ALL.iter().any(|c| c.name() == name)
        || [
            "rental-guest",
            "rental-domain",
            "rental-platform",
            "rental-store-sql",
            "serde_json",
            "test",
            "std",
            "core",
            "alloc",
        ]
        .contains(&name);
    if name.is_empty() {
        return Ok(format!("tenant-{component}"));
    }
    if taken || name.starts_with(|c: char| c.is_ascii_digit()) {
        return Ok(format!("tenant-{name}"));
    }
    Ok(name.to_owned())
}

/// The platform's handler type of `component`.
fn handler(component: Component) -> &'static str {
    match component {
        Component::Listing => "listing::Listing",
        Component::Booking => "booking::Booking",
        Component::SelfCheckIn => "selfcheckin::SelfCheckin",
        Component::BankOne => "bankone::BankOne",
        Component::BankTwo => "banktwo::BankTwo",
        Component::Reconcile => "reconcile::Reconcile",
    }
}

/// What `component` serves, for the crate's README.
fn serves(component: Component) -> &'static str {
    match component {
        Component::Listing => {
            "list endpoints (`/api/bookings/list`, `/api/bookings/closed`, `/api/branchoffices`, \
             `/api/customers`, `/api/cars`)"
        }
        Component::Booking => "booking endpoints (`/api/booking/...`, `/api/operations/...`)",
        Component::SelfCheckIn => "self-check-in (`PUT /api/selfcheckin`)",
        Component::BankOne => "bank one's payment webhook (`POST /api/bankone/webhooks`)",
        Component::BankTwo => "bank two's settlement webhook (`POST /api/v1/banktwo/webhooks`)",
        Component::Reconcile => {
            "crediting of queued bank payments (`POST /queue/payment.reconcile`, run by the \
             queue consumer)"
        }
    }
}

/// The test module of a wrapper around `component`.
fn tests(component: Component) -> &'static str {
    match component {
        // The listing's and the booking's crates are templates of their own, their tests in
        // them.
        Component::Listing | Component::Booking => "",
        Component::SelfCheckIn => SELFCHECKIN_TESTS,
        Component::BankOne => BANKONE_TESTS,
        Component::BankTwo => BANKTWO_TESTS,
        Component::Reconcile => RECONCILE_TESTS,
    }
}

/// `template` with every `{{key}}` replaced by its value in `values`, in one pass (a value is
/// never read as a template); a key without a value is an error.
fn fill(template: &str, values: &[(&str, &str)]) -> anyhow::Result<String> {
    let mut filled = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        filled.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}").context("a template has an unclosed {{")?;
        let key = &after[..end];
        let (_, value) = values
            .iter()
            .find(|(name, _)| *name == key)
            .with_context(|| format!("a template names {{{{{key}}}}}, which has no value"))?;
        filled.push_str(value);
        rest = &after[end + 2..];
    }
    filled.push_str(rest);
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_replaces_keys_once() {
        let values = [("a", "{{b}}"), ("b", "x")];
        assert_eq!(fill("[{{a}}] {b} {{b}}", &values).unwrap(), "[{{b}}] {b} x");
        assert!(fill("{{c}}", &values).is_err());
        assert!(fill("{{a", &values).is_err());
    }

    #[test]
    fn every_template_fills() {
        for component in Component::ALL {
            let values = [
                ("package", "p"),
                ("library", "p"),
                ("component", component.name()),
                ("handler", handler(component)),
                ("what", serves(component)),
                ("tests", tests(component)),
                ("guest", "g"),
                ("guest_published", "g"),
                ("domain", "d"),
                ("platform", "q"),
            ];
            for template in [CARGO_TOML, GITIGNORE, README, LISTING, BOOKING, WRAPPER] {
                fill(template, &values).unwrap();
            }
        }
    }

    #[test]
    fn package_names_are_valid_crate_names() {
        let name = |dir: &str| package_name(Path::new(dir), Component::Listing).unwrap();
        assert_eq!(name("/x/acme-listing"), "acme-listing");
        assert_eq!(name("/x/Acme Listing!"), "acme-listing");
        assert_eq!(name("/x/acme_listing"), "acme_listing");
        assert_eq!(name("/x/2024 build"), "tenant-2024-build");
        assert_eq!(name("/x/listing"), "tenant-listing");
        assert_eq!(name("/x/--"), "tenant-listing");
        assert_eq!(name("/x/ação"), "a-o");
    }
}
