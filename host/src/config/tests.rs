use std::ffi::OsString;

use clap::{CommandFactory as _, FromArgMatches as _, Parser};

use super::*;

/// The command line of `rentald serve`.
#[derive(Debug, Parser)]
struct Serve {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(flatten)]
    serve: ServeArgs,
}

/// The configuration of `serve` (else of another command) from `file` and the flags
/// `args`; the environment the tests run in is left out.
fn resolve(file: &str, args: &[&str], serving: bool) -> anyhow::Result<Config> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("rentald.toml");
    std::fs::write(&path, file)?;
    let mut argv: Vec<OsString> = vec!["rentald".into(), "--config".into(), path.into()];
    argv.extend(args.iter().map(OsString::from));
    let matches = Serve::command()
        .mut_args(|arg| arg.env(None))
        .try_get_matches_from(argv)?;
    let flags = Serve::from_arg_matches(&matches)?;
    Config::resolve(&flags.global, serving.then_some(&flags.serve))
}

fn serve(file: &str, args: &[&str]) -> Config {
    resolve(file, args, true).unwrap()
}

fn refused(file: &str, args: &[&str]) -> String {
    format!("{:#}", resolve(file, args, true).unwrap_err())
}

#[test]
fn storage_flag_over_file_over_default() {
    let config = serve("", &["--plain-http"]);
    assert_eq!(config.database_url, "sqlite://data/rentald.db");
    assert_eq!(config.cache_dir, Path::new("data/cache"));
    assert_eq!(config.log_format, LogFormat::Text);

    let file = "data_dir = \"file\"\nlog_format = \"json\"\n";
    let config = serve(file, &["--plain-http"]);
    assert_eq!(config.database_url, "sqlite://file/rentald.db");
    assert_eq!(config.cache_dir, Path::new("file/cache"));
    assert_eq!(config.log_format, LogFormat::Json);

    let config = serve(file, &["--plain-http", "--data-dir", "flag"]);
    assert_eq!(config.database_url, "sqlite://flag/rentald.db");
    let config = serve(file, &["--plain-http", "--log-format", "text"]);
    assert_eq!(config.log_format, LogFormat::Text);
    let config = serve(file, &["--plain-http", "--database-url", "sqlite://x.db"]);
    assert_eq!(config.database_url, "sqlite://x.db");
}

#[test]
fn listen_flag_over_file_over_default() {
    let config = serve("", &["--plain-http"]);
    assert_eq!(config.listen, SocketAddr::from(([127, 0, 0, 1], 8080)));
    assert_eq!(config.metrics_listen, None);
    assert_eq!(config.base_domain, "localhost");

    let file = "listen = \"0.0.0.0:8443\"\nmetrics_listen = \"10.0.0.5:9100\"\n\
                base_domain = \"Rent.Example.COM\"\n";
    let config = serve(file, &["--plain-http"]);
    assert_eq!(config.listen, SocketAddr::from(([0, 0, 0, 0], 8443)));
    assert_eq!(
        config.metrics_listen,
        Some(SocketAddr::from(([10, 0, 0, 5], 9100)))
    );
    assert_eq!(config.base_domain, "rent.example.com");

    let config = serve(
        file,
        &[
            "--plain-http",
            "--listen",
            "127.0.0.1:0",
            "--base-domain",
            "Flag.Test",
        ],
    );
    assert_eq!(config.listen, SocketAddr::from(([127, 0, 0, 1], 0)));
    assert_eq!(
        config.metrics_listen,
        Some(SocketAddr::from(([10, 0, 0, 5], 9100)))
    );
    assert_eq!(config.base_domain, "flag.test");
}

#[test]
fn runtime_flag_over_file_over_default() {
    let config = serve("", &["--plain-http"]);
    assert_eq!(config.limits.deadline, Limits::default().deadline);
    assert_eq!(
        config.limits.write_deadline,
        Limits::default().write_deadline
    );
    assert_eq!(config.limits.memory_bytes, Limits::default().memory_bytes);

    let file = "request_timeout_ms = 250\nmemory_limit_mib = 8\ncomponents_dir = \"c\"\n\
                cache_dir = \"k\"\n";
    let config = serve(file, &["--plain-http"]);
    assert_eq!(config.limits.deadline, Duration::from_millis(250));
    assert_eq!(
        config.limits.write_deadline,
        Duration::from_millis(250),
        "never past the request's deadline"
    );
    assert_eq!(config.limits.memory_bytes, 8 << 20);
    assert_eq!(config.components_dir, Path::new("c"));
    assert_eq!(config.cache_dir, Path::new("k"));

    let config = serve(
        file,
        &[
            "--plain-http",
            "--memory-limit-mib",
            "16",
            "--write-timeout-ms",
            "100",
            "--cache-dir",
            "flag",
        ],
    );
    assert_eq!(config.limits.deadline, Duration::from_millis(250));
    assert_eq!(config.limits.memory_bytes, 16 << 20);
    assert_eq!(config.limits.write_deadline, Duration::from_millis(100));
    assert_eq!(config.limits.cpu, Limits::default().cpu);
    assert_eq!(config.limits.max_instances, Limits::default().max_instances);
    assert_eq!(config.cache_dir, Path::new("flag"));

    let config = serve(
        "cpu_burst_ms = 20\ntenant_cpu_percent = 50\ntenant_instances = 3\n",
        &["--plain-http", "--tenant-cpu-percent", "10"],
    );
    assert_eq!(config.limits.cpu.burst, Duration::from_millis(20));
    assert_eq!(config.limits.cpu.share, 0.1);
    assert_eq!(config.limits.tenant_instances, 3);
    let config = serve("", &["--plain-http", "--tenant-instances", "5"]);
    assert_eq!(config.limits.tenant_instances, 5);
    let config = serve("tenant_writers = 2\n", &["--plain-http"]);
    assert_eq!(config.limits.tenant_writers, 2);
}

#[test]
fn poll_flag_over_file_over_default() {
    let config = serve("", &["--plain-http"]);
    assert_eq!(config.queue_poll, Duration::from_millis(500));
    assert_eq!(config.component_poll, Duration::from_secs(1));
    assert_eq!(config.component_idle, Duration::from_secs(300));

    let file = "queue_poll_ms = 0\ncomponent_poll_ms = 20\ncomponent_idle_secs = 7\n";
    let config = serve(file, &["--plain-http"]);
    assert_eq!(config.queue_poll, Duration::from_millis(1), "at least 1 ms");
    assert_eq!(config.component_poll, Duration::from_millis(20));
    assert_eq!(config.component_idle, Duration::from_secs(7));

    let config = serve(file, &["--plain-http", "--component-poll-ms", "30"]);
    assert_eq!(config.component_poll, Duration::from_millis(30));
    assert_eq!(config.component_idle, Duration::from_secs(7));
}

#[test]
fn login_flag_over_file_over_default() {
    let config = serve("", &["--plain-http"]);
    assert_eq!(config.login, LoginLimits::default());

    let file = "login_concurrency = 3\nlogin_queue_ms = 250\n";
    let config = serve(file, &["--plain-http"]);
    assert_eq!(config.login.concurrency.get(), 3);
    assert_eq!(config.login.queue_wait, Duration::from_millis(250));

    let config = serve(file, &["--plain-http", "--login-concurrency", "1"]);
    assert_eq!(config.login.concurrency.get(), 1);
    assert_eq!(config.login.queue_wait, Duration::from_millis(250));

    let error = refused("login_concurrency = 0\n", &["--plain-http"]);
    assert!(error.contains("login_concurrency"), "{error}");
    assert!(resolve("", &["--plain-http", "--login-concurrency", "0"], true).is_err());
}

#[test]
fn connection_flag_over_file_over_default() {
    let config = serve("", &["--plain-http"]);
    assert_eq!(
        config.connections.max_connections,
        connection::Limits::default().max_connections
    );

    let file = "max_connections = 100\nmax_connections_per_address = 10\nheader_timeout_ms = 300\n\
                body_timeout_ms = 400\nidle_timeout_ms = 500\n";
    let config = serve(file, &["--plain-http"]);
    assert_eq!(config.connections.max_connections, 100);
    assert_eq!(config.connections.max_connections_per_address, 10);
    assert_eq!(
        config.connections.header_timeout,
        Duration::from_millis(300)
    );
    assert_eq!(config.connections.body_timeout, Duration::from_millis(400));
    assert_eq!(config.connections.idle_timeout, Duration::from_millis(500));

    let config = serve(
        file,
        &[
            "--plain-http",
            "--max-connections-per-address",
            "2",
            "--idle-timeout-ms",
            "9",
        ],
    );
    assert_eq!(config.connections.max_connections, 100);
    assert_eq!(config.connections.max_connections_per_address, 2);
    assert_eq!(config.connections.idle_timeout, Duration::from_millis(9));

    assert!(resolve("", &["--plain-http", "--max-connections", "0"], true).is_err());
    assert!(resolve("", &["--plain-http", "--header-timeout-ms", "0"], true).is_err());
}

#[test]
fn tls_flag_over_file_over_default() {
    let file = "tls_cert = \"file.crt\"\ntls_key = \"file.key\"\n";
    let Transport::Tls(files) = serve(file, &[]).transport else {
        panic!("TLS from the file");
    };
    assert_eq!(files.cert, Path::new("file.crt"));
    assert_eq!(files.tenant_certs, None);
    assert_eq!(files.reload_every, Some(Duration::from_secs(5)));

    let args = ["--tls-key", "flag.key", "--tls-reload-secs", "0"];
    let Transport::Tls(files) = serve(file, &args).transport else {
        panic!("TLS from the file and the flags");
    };
    assert_eq!(files.cert, Path::new("file.crt"));
    assert_eq!(files.key, Path::new("flag.key"));
    assert_eq!(files.reload_every, None, "0: on SIGHUP only");

    // A switch turned on in any layer stays on.
    let plain = "plain_http = true\n";
    assert!(matches!(serve(plain, &[]).transport, Transport::Plain));
    assert!(matches!(
        serve("plain_http = false\n", &["--plain-http"]).transport,
        Transport::Plain
    ));
}

#[test]
fn tls_and_plain_http_are_checked_across_layers() {
    assert_eq!(
        refused("", &[]),
        "serve needs a certificate (--tls-cert and --tls-key), or --plain-http to serve \
         plain HTTP (local development, behind a proxy that terminates TLS)"
    );
    assert_eq!(
        refused("tls_cert = \"file.crt\"\n", &[]),
        "--tls-cert and --tls-key go together: give both or neither"
    );
    assert_eq!(
        refused(
            "tls_key = \"file.key\"\n",
            &["--tls-cert", "flag.crt", "--plain-http"]
        ),
        "--plain-http and --tls-cert/--tls-key exclude each other"
    );
}

#[test]
fn other_commands_take_serve_options_from_the_file_only() {
    let file = "cache_dir = \"k\"\nrequest_timeout_ms = 250\ntls_cert = \"only.crt\"\n";
    let config = resolve(file, &[], false).unwrap();
    assert_eq!(config.cache_dir, Path::new("k"));
    assert_eq!(config.limits.deadline, Duration::from_millis(250));
    assert!(matches!(config.transport, Transport::Plain));
}

#[test]
fn the_file_takes_the_option_names_and_nothing_else() {
    let error = refused("databse_url = \"sqlite://x.db\"\n", &["--plain-http"]);
    assert!(error.contains("databse_url"), "{error}");
    let error = refused("config = \"other.toml\"\n", &["--plain-http"]);
    assert!(error.contains("config"), "{error}");
}

#[test]
fn the_help_shows_the_defaults() {
    let command = Serve::command();
    for (option, default) in [
        ("data_dir", "data"),
        ("log_format", "text"),
        ("listen", "127.0.0.1:8080"),
        ("base_domain", "localhost"),
        ("request_timeout_ms", "5000"),
        ("write_timeout_ms", "1000"),
        ("cpu_burst_ms", "50"),
        ("tenant_cpu_percent", "25"),
        ("memory_limit_mib", "64"),
        ("tenant_instances", "16"),
        ("tenant_writers", "6"),
        ("queue_poll_ms", "500"),
        ("component_poll_ms", "1000"),
        ("component_idle_secs", "300"),
        ("tls_reload_secs", "5"),
        ("login_queue_ms", "2000"),
        ("max_connections", "4096"),
        ("max_connections_per_address", "256"),
        ("header_timeout_ms", "10000"),
        ("body_timeout_ms", "30000"),
        ("idle_timeout_ms", "60000"),
    ] {
        let help = command
            .get_arguments()
            .find(|arg| arg.get_id() == option)
            .and_then(|arg| arg.get_help())
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(
            help.ends_with(&format!(" [default: {default}]")),
            "{option}: {help}"
        );
    }
}
