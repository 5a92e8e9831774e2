//! The operator CLI: help for every command, configuration layering, clear errors.

use std::process::Command;

use rentald_tests::rentald_bin;

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

fn text(output: &std::process::Output) -> String {
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
    ] {
        let output = rentald(command, &[]);
        assert!(output.status.success(), "{command:?}");
        assert!(text(&output).contains("Usage: rentald"), "{command:?}");
    }
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
