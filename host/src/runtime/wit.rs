//! The WIT package this host offers to components (`rentald component wit DIR`): `rental:platform`
//! and the WASI 0.2 packages its worlds use, exactly as the host was built against them. The
//! Spin adapter's world (`wit/spin.wit`) and its Spin packages are not part of it.

/// The package's files, by their path in the package directory.
pub const FILES: &[(&str, &str)] = &[
    ("platform.wit", include_str!("../../../wit/platform.wit")),
    (
        "deps/cli/cli.wit",
        include_str!("../../../wit/deps/cli/cli.wit"),
    ),
    (
        "deps/clocks/clocks.wit",
        include_str!("../../../wit/deps/clocks/clocks.wit"),
    ),
    (
        "deps/filesystem/filesystem.wit",
        include_str!("../../../wit/deps/filesystem/filesystem.wit"),
    ),
    (
        "deps/http/http.wit",
        include_str!("../../../wit/deps/http/http.wit"),
    ),
    (
        "deps/io/io.wit",
        include_str!("../../../wit/deps/io/io.wit"),
    ),
    (
        "deps/random/random.wit",
        include_str!("../../../wit/deps/random/random.wit"),
    ),
    (
        "deps/sockets/sockets.wit",
        include_str!("../../../wit/deps/sockets/sockets.wit"),
    ),
];

/// Writes the package into `dir` (created if missing; files of the same names are replaced).
pub fn write(dir: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context as _;
    for (path, text) in FILES {
        let file = dir.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    /// Every `.wit` file under `dir`, relative to `root`.
    fn wit_files(root: &Path, dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                wit_files(root, &path, found);
            } else if path.extension().is_some_and(|e| e == "wit") {
                found.push(path.strip_prefix(root).unwrap().to_owned());
            }
        }
    }

    #[test]
    fn the_package_is_every_wit_file_but_spins() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
        let mut found = Vec::new();
        wit_files(&root, &root, &mut found);
        let mut expected: Vec<PathBuf> = found
            .into_iter()
            .filter(|p| p != Path::new("spin.wit") && !p.starts_with("deps/spin"))
            .collect();
        expected.sort();
        let mut listed: Vec<PathBuf> = FILES.iter().map(|(p, _)| PathBuf::from(p)).collect();
        listed.sort();
        assert_eq!(listed, expected);
    }
}
