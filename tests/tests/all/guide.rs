//! The component guide, `docs/components.md`, run as it is written: its blocks tagged `sh`, in
//! order, in one `bash -euo pipefail`, in a temporary directory, with the built `rentald` first
//! on PATH. So the guide cannot go stale: scaffold, build, native test, check, run, install,
//! serve, the requests that show acme's build at work (and the platform's for tenant `demo`),
//! the metrics, rollback and activation.
//!
//! The test sets the guide's own variables (`RENTALD_DATA_DIR`, `PORT`, `METRICS_PORT`), keeps
//! the scaffolded crate's build output in `target/guide` (so a second run rebuilds nothing) and
//! gives every `rentald` the tests' shared compiled-component cache. It prints how long each
//! part of the guide took. The server the guide starts is stopped at the end, also when a step
//! fails.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rentald_tests::{cache_dir, components_dir, rentald_bin, target_dir};

/// The guide, from the repository.
fn guide() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/components.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A runnable block of the guide and the heading it is under.
#[derive(Debug)]
struct Block {
    heading: String,
    script: String,
}

/// The guide's blocks fenced as ```` ```sh ````, in order; every other block is for reading.
fn blocks(guide: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut heading = String::new();
    let mut fence: Option<(bool, String)> = None;
    for line in guide.lines() {
        match &mut fence {
            None if line.starts_with("```") => {
                let runnable = line.trim_end() == "```sh";
                fence = Some((runnable, String::new()));
            }
            None => {
                if line.starts_with('#') {
                    heading = line.trim_start_matches('#').trim().to_owned();
                }
            }
            Some((runnable, script)) => {
                if line.trim_end() == "```" {
                    if *runnable {
                        blocks.push(Block {
                            heading: heading.clone(),
                            script: std::mem::take(script),
                        });
                    }
                    fence = None;
                } else {
                    script.push_str(line);
                    script.push('\n');
                }
            }
        }
    }
    assert!(fence.is_none(), "the guide ends inside a fenced block");
    blocks
}

/// The script that runs `blocks` in order, noting when each part (heading) starts in `times`.
fn script(blocks: &[Block], times: &Path) -> String {
    let mut script = format!(
        "__part() {{ printf '%s\\t%s\\n' \"$1\" \"$EPOCHREALTIME\" >> '{}'; }}\n\
         # The server the guide starts, stopped whatever happens.\n\
         trap '__part end; if [ -f rentald.pid ]; then kill \"$(cat rentald.pid)\" 2> /dev/null || true; fi' EXIT\n",
        times.display()
    );
    let mut part = None;
    for block in blocks {
        if part != Some(&block.heading) {
            writeln!(script, "__part '{}'", block.heading.replace('\'', "")).unwrap();
            part = Some(&block.heading);
        }
        script.push_str(&block.script);
    }
    script
}

/// A loopback port nobody listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .unwrap()
        .port()
}

/// Stops the server the guide started, if it is still running, when the test ends.
struct StopServer(PathBuf);

impl Drop for StopServer {
    fn drop(&mut self) {
        let Ok(entries) = std::fs::read_dir(&self.0) else {
            return;
        };
        let dirs = entries.flatten().map(|entry| entry.path());
        for pid_file in std::iter::once(self.0.clone())
            .chain(dirs)
            .map(|dir| dir.join("rentald.pid"))
        {
            if let Ok(pid) = std::fs::read_to_string(&pid_file) {
                let _ = Command::new("kill")
                    .arg(pid.trim())
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }
}

/// `file`'s last `lines` lines.
fn tail(file: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[test]
fn the_guides_blocks_are_only_sh_blocks_that_run() {
    let blocks = blocks(&guide());
    let all = blocks
        .iter()
        .map(|block| block.script.as_str())
        .collect::<String>();
    for command in [
        "rentald component new listing acme-listing",
        "cargo build --release --target wasm32-wasip2",
        "cargo test",
        "rentald component check",
        "rentald component run",
        "rentald tenant create acme --demo",
        "rentald user create --tenant acme",
        "rentald component install --tenant acme listing",
        "rentald serve",
        "/metrics",
        "rentald component rollback --tenant acme listing",
        "rentald component activate --tenant acme listing --version 1",
    ] {
        assert!(all.contains(command), "the guide runs {command:?}");
    }
    // Commands for readers (rustup, spin) are not in runnable blocks.
    assert!(!all.contains("rustup") && !all.contains("spin "), "{all}");
}

#[test]
fn the_component_guide_runs_from_an_empty_folder_to_a_tenants_component() {
    let blocks = blocks(&guide());
    let dir = tempfile::tempdir().unwrap();
    let _stop = StopServer(dir.path().to_path_buf());
    let times = dir.path().join("times.tsv");
    let log = dir.path().join("guide.log");
    // Every rentald of the guide compiles into the tests' shared cache.
    let config = dir.path().join("rentald.toml");
    std::fs::write(
        &config,
        format!("cache_dir = {:?}\n", cache_dir().display().to_string()),
    )
    .unwrap();
    let bin_dir = rentald_bin().parent().unwrap().to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let output = std::fs::File::create(&log).unwrap();
    let started = std::time::Instant::now();
    let script_file = dir.path().join("guide.sh");
    std::fs::write(&script_file, script(&blocks, &times)).unwrap();
    let status = Command::new("bash")
        .args(["-euo", "pipefail"])
        .arg(&script_file)
        .current_dir(dir.path())
        .env("PATH", path)
        .env("RENTALD_DATA_DIR", dir.path().join("data"))
        .env("PORT", free_port().to_string())
        .env("METRICS_PORT", free_port().to_string())
        .env("CARGO_TARGET_DIR", target_dir().join("guide"))
        .env("RENTALD_CONFIG", &config)
        .env("RENTALD_COMPONENTS_DIR", components_dir())
        .env_remove("RENTALD_DATABASE_URL")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(output.try_clone().unwrap())
        .stderr(output)
        .status()
        .unwrap();
    let total = started.elapsed();

    let mut parts: BTreeMap<usize, (String, Duration)> = BTreeMap::new();
    let marks: Vec<(String, f64)> = std::fs::read_to_string(&times)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let (part, at) = line.split_once('\t')?;
            Some((part.to_owned(), at.parse().ok()?))
        })
        .collect();
    for (index, pair) in marks.windows(2).enumerate() {
        let seconds = (pair[1].1 - pair[0].1).max(0.0);
        parts.insert(index, (pair[0].0.clone(), Duration::from_secs_f64(seconds)));
    }
    println!("docs/components.md, step by step:");
    for (part, took) in parts.values() {
        println!("  {:>8.1} s  {part}", took.as_secs_f64());
    }
    println!("  {:>8.1} s  in all", total.as_secs_f64());

    if !status.success() {
        let output = tail(&log, 80);
        let server = tail(&dir.path().join("acme-listing/rentald.log"), 40);
        // Kept for a look: the script, its output, the crate, the data.
        let kept = dir.keep();
        panic!(
            "the guide failed ({status}) in {}; its output:\n{output}\n\nthe server's log:\n{server}",
            kept.display()
        );
    }
    let output = std::fs::read_to_string(&log).unwrap();
    assert!(
        output.contains("canceled bookings listed: acme 0, demo "),
        "{output}"
    );
}

/// What the guide does for `listing`, for each of the other components: the crate `component
/// new` writes passes its own test, builds, and is a component `check` accepts in that role.
#[test]
fn every_components_new_crate_tests_builds_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let target = target_dir().join("guide");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let run = |command: &mut Command, what: &str| {
        let output = command
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("RENTALD_DATABASE_URL")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{what}:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    };
    for name in ["booking", "selfcheckin", "bankone", "banktwo", "reconcile"] {
        let package = format!("acme-{name}");
        let krate = dir.path().join(&package);
        run(
            Command::new(rentald_bin()).args(["component", "new", name, krate.to_str().unwrap()]),
            "component new",
        );
        run(
            Command::new(&cargo).arg("test").current_dir(&krate),
            &format!("cargo test of {package}"),
        );
        run(
            Command::new(&cargo)
                .args(["build", "--release", "--target", "wasm32-wasip2"])
                .current_dir(&krate),
            &format!("the build of {package}"),
        );
        let wasm = target.join(format!("wasm32-wasip2/release/acme_{name}.wasm"));
        run(
            Command::new(rentald_bin())
                .args(["--data-dir", dir.path().join("data").to_str().unwrap()])
                .args(["component", "check", wasm.to_str().unwrap(), "--as", name])
                .args(["--cache-dir", cache_dir().to_str().unwrap()]),
            &format!("component check of {package}"),
        );
    }
}
