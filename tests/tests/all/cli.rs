//! The operator CLI: help for every command, configuration layering, clear errors.

use std::path::Path;
use std::process::Command;

use rentald_tests::{components_dir, rentald_bin};

fn rentald(args: &[&str], envs: &[(&str, &str)]) -> std::process::Output {
    let mut command = Command::new(rentald_bin());
    command
        .args(args)
        .env_remove("RENTALD_DATABASE_URL")
        .env_remove("RENTALD_DATA_DIR");
    for (key, value) in envs {
        command.env(key, value);
    }
    command.output().expect("running rentald")
}

/// `rentald --data-dir DATA ARGS...`.
pub(crate) fn rentald_in(data: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["--data-dir", data.to_str().unwrap()];
    all.extend_from_slice(args);
    rentald(&all, &[])
}

/// Standard output, then standard error.
pub(crate) fn text(output: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn every_command_has_help() {
    for command in [
        &["--help"][..],
        &["serve", "--help"],
        &["tenant", "create", "--help"],
        &["tenant", "update", "--help"],
        &["user", "create", "--help"],
        &["user", "update", "--help"],
        &["secret", "set", "--help"],
        &["setting", "set", "--help"],
        &["queue", "list", "--help"],
        &["catalog", "import", "--help"],
        &["catalog", "export", "--help"],
        &["component", "install", "--help"],
        &["component", "list", "--help"],
        &["component", "rollback", "--help"],
        &["component", "activate", "--help"],
        &["component", "check", "--help"],
        &["component", "run", "--help"],
        &["component", "wit", "--help"],
        &["component", "new", "--help"],
    ] {
        let output = rentald(command, &[]);
        assert!(output.status.success(), "{command:?}");
        assert!(text(&output).contains("Usage: rentald"), "{command:?}");
    }
}

#[test]
fn component_new_refuses_what_it_cannot_make() {
    let dir = tempfile::tempdir().unwrap();
    let new = |args: &[&str]| {
        let mut all = vec!["component", "new"];
        all.extend_from_slice(args);
        let output = rentald_in(&dir.path().join("data"), &all);
        assert!(!output.status.success(), "{args:?}");
        text(&output)
    };
    let target = dir.path().join("crate");
    let target = target.to_str().unwrap();

    let unknown = new(&["mail", target]);
    assert!(
        unknown.contains(
            "unknown component \"mail\"; the platform's components are: listing, booking, \
             selfcheckin, bankone, banktwo, reconcile"
        ),
        "{unknown}"
    );

    let not_a_checkout = new(&["listing", target, "--sdk", dir.path().to_str().unwrap()]);
    assert!(
        not_a_checkout.contains("not a source checkout of the platform")
            && not_a_checkout.contains("--sdk"),
        "{not_a_checkout}"
    );

    std::fs::create_dir(target).unwrap();
    std::fs::write(dir.path().join("crate/notes.txt"), "mine").unwrap();
    let not_empty = new(&["booking", target]);
    assert!(
        not_empty.contains("is not an empty directory"),
        "{not_empty}"
    );
    assert_eq!(
        std::fs::read_dir(target).unwrap().count(),
        1,
        "nothing is written into a directory that is not empty"
    );
    assert!(!dir.path().join("data").exists(), "no database");
}

#[test]
fn component_new_writes_a_crate_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("Acme Bank One");
    let output = rentald_in(
        &dir.path().join("data"),
        &["component", "new", "bankone", target.to_str().unwrap()],
    );
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        text(&output).contains("wrote acme-bank-one"),
        "{}",
        text(&output)
    );
    let manifest = std::fs::read_to_string(target.join("Cargo.toml")).unwrap();
    let parsed: toml::Table = manifest.parse().unwrap();
    assert_eq!(parsed["package"]["name"].as_str(), Some("acme-bank-one"));
    assert_eq!(
        parsed["lib"]["crate-type"].as_array().unwrap(),
        &vec![toml::Value::from("cdylib")]
    );
    assert!(parsed["workspace"].as_table().unwrap().is_empty());
    let dependencies = parsed["dependencies"].as_table().unwrap();
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap();
    for (name, dir) in [
        ("rental-guest", "components/guest"),
        ("rental-domain", "components/domain"),
        ("bankone", "components/bankone"),
    ] {
        let path = dependencies[name]["path"].as_str().unwrap();
        assert_eq!(Path::new(path), checkout.join(dir), "{name}");
    }
    assert_eq!(
        dependencies["bankone"]["default-features"].as_bool(),
        Some(false)
    );
    assert_eq!(
        dependencies["rental-guest"]["features"].as_array().unwrap(),
        &vec![toml::Value::from("webhook")]
    );
    assert!(
        manifest.contains("rental-guest = { version = \"0.1\""),
        "{manifest}"
    );
    assert!(parsed["dev-dependencies"].get("serde_json").is_some());
    assert_eq!(
        std::fs::read_to_string(target.join(".gitignore")).unwrap(),
        "target/\n"
    );
    let readme = std::fs::read_to_string(target.join("README.md")).unwrap();
    for command in [
        "cargo build --release --target wasm32-wasip2",
        "cargo test",
        "rentald component check target/wasm32-wasip2/release/acme_bank_one.wasm --as bankone",
    ] {
        assert!(readme.contains(command), "{readme}");
    }
    let lib = std::fs::read_to_string(target.join("src/lib.rs")).unwrap();
    assert!(
        lib.contains("<bankone::BankOne as Handler>::handle(request)"),
        "{lib}"
    );
    assert!(
        lib.contains("rental_guest::export_handler!(Component);"),
        "{lib}"
    );
}

#[test]
fn configuration_comes_from_file_then_environment_then_flags() {
    let dir = tempfile::tempdir().unwrap();
    let from_file = dir.path().join("file.db");
    let from_env = dir.path().join("env.db");
    let config = dir.path().join("rentald.toml");
    std::fs::write(
        &config,
        format!("database_url = \"sqlite://{}\"\n", from_file.display()),
    )
    .unwrap();
    let config = config.to_str().unwrap();

    let output = rentald(&["--config", config, "tenant", "create", "one"], &[]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(from_file.exists(), "the file's database_url is used");

    let env_url = format!("sqlite://{}", from_env.display());
    let output = rentald(
        &["--config", config, "tenant", "create", "two"],
        &[("RENTALD_DATABASE_URL", &env_url)],
    );
    assert!(output.status.success(), "{}", text(&output));
    assert!(from_env.exists(), "the environment beats the file");

    // The flag beats both: "one" exists in the file's database only.
    let file_url = format!("sqlite://{}", from_file.display());
    let output = rentald(
        &[
            "--config",
            config,
            "--database-url",
            &file_url,
            "tenant",
            "create",
            "one",
        ],
        &[("RENTALD_DATABASE_URL", &env_url)],
    );
    assert!(!output.status.success());
    assert!(
        text(&output).contains("already exists"),
        "{}",
        text(&output)
    );
}

#[test]
fn bad_input_gets_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bad.toml");
    std::fs::write(&config, "databse_url = \"sqlite://x.db\"\n").unwrap();
    let output = rentald(
        &[
            "--config",
            config.to_str().unwrap(),
            "tenant",
            "create",
            "x",
        ],
        &[],
    );
    assert!(!output.status.success());
    assert!(text(&output).contains("databse_url"), "{}", text(&output));

    let data = dir.path().to_str().unwrap();
    let output = rentald(&["--data-dir", data, "tenant", "create", "Not_A_Slug"], &[]);
    assert!(!output.status.success());
    assert!(
        text(&output).contains("invalid tenant slug"),
        "{}",
        text(&output)
    );

    let output = rentald(
        &[
            "--data-dir",
            data,
            "user",
            "create",
            "--tenant",
            "nobody",
            "--name",
            "x",
            "--password-stdin",
            "--permission",
            "bookings:fly",
        ],
        &[],
    );
    assert!(!output.status.success());
    assert!(
        text(&output).contains("unknown permission"),
        "{}",
        text(&output)
    );
}

/// The database holds every tenant's signing key and secrets: under the usual umask (022), the
/// data directory and the database file are created for their owner only.
#[test]
fn the_data_directory_and_database_are_owner_only() {
    use std::os::unix::fs::PermissionsExt as _;

    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("new").join("data");
    let output = Command::new("sh")
        .arg("-c")
        .arg("umask 022; exec \"$0\" \"$@\"")
        .arg(rentald_bin())
        .args([
            "--data-dir",
            data.to_str().unwrap(),
            "tenant",
            "create",
            "acme",
        ])
        .env_remove("RENTALD_DATABASE_URL")
        .output()
        .expect("running rentald");
    assert!(output.status.success(), "{}", text(&output));
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700, "the data directory");
    assert_eq!(mode(&data.join("rentald.db")), 0o600, "the database");
}

/// `component check` says what install would, with no database: none is created.
#[test]
fn a_component_is_checked_without_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let check = |file: &std::path::Path| {
        rentald_in(
            &data,
            &[
                "component",
                "check",
                file.to_str().unwrap(),
                "--as",
                "listing",
            ],
        )
    };
    let output = check(&components_dir().join("variant.wasm"));
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        text(&output).contains("can replace listing"),
        "{}",
        text(&output)
    );

    let module = dir.path().join("module.wasm");
    std::fs::write(&module, b"\0asm\x01\x00\x00\x00").unwrap();
    let output = check(&module);
    assert!(!output.status.success());
    assert!(
        text(&output).contains("core WebAssembly module"),
        "{}",
        text(&output)
    );
    assert!(!data.join("rentald.db").exists(), "no database is created");
}

/// `component wit` writes the package this host offers, with no database: a WIT parser reads
/// it, and its worlds are the ones a component author builds against.
#[test]
fn the_offered_wit_package_is_written_and_reads() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let wit = dir.path().join("wit");
    let output = rentald_in(&data, &["component", "wit", wit.to_str().unwrap()]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(!data.join("rentald.db").exists(), "no database is created");
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve.push_dir(&wit).expect("the written package reads");
    assert_eq!(
        resolve.packages[package].name.to_string(),
        format!("rental:platform@{}", rental_platform::WIT_VERSION)
    );
    for world in ["api-component", "webhook-component"] {
        resolve
            .select_world(&[package], Some(world))
            .unwrap_or_else(|e| panic!("{world}: {e}"));
    }
}

/// A server without its components says how to get them.
#[test]
fn serving_without_the_components_says_how_to_build_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let missing = dir.path().join("nowhere");
    let output = rentald_in(
        &data,
        &[
            "serve",
            "--plain-http",
            "--listen",
            "127.0.0.1:0",
            "--components-dir",
            missing.to_str().unwrap(),
        ],
    );
    assert!(!output.status.success());
    let said = text(&output);
    assert!(
        said.contains("listing.wasm") && said.contains("build the components first"),
        "{said}"
    );
}
