//! Files only the operator's account may read: the database holds every tenant's signing key
//! and secrets, and the compiled-component cache holds native code the host will run.

use std::fs::{DirBuilder, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::Path;

/// Creates `dir` and its missing parents, owner-only (0700); one that exists is left as it is.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// Creates `file` empty and owner-only (0600) unless it exists, so that whatever writes it
/// next (SQLite, with its journal files taking the same mode) never makes it readable by
/// others.
pub fn create_private_file(file: &Path) -> io::Result<()> {
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}
