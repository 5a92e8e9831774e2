//! Compiled components cached on disk, keyed by the sha256 of the .wasm and the engine's
//! compatibility hash, so a component is compiled once per engine configuration rather than at
//! every start.

use std::hash::{Hash as _, Hasher as _};
use std::path::PathBuf;

use anyhow::Context as _;
use sha2::{Digest as _, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::files;

pub struct CompiledCache {
    dir: PathBuf,
    engine_key: String,
}

impl CompiledCache {
    pub fn new(engine: &Engine, dir: PathBuf) -> anyhow::Result<Self> {
        files::create_private_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        Ok(Self {
            dir,
            engine_key: format!("{:016x}", hasher.finish()),
        })
    }

    /// The component for these bytes, with the hex sha256 that names it: from the cache, or
    /// compiled (and cached) when the cache does not hold it.
    pub fn component(&self, engine: &Engine, wasm: &[u8]) -> anyhow::Result<(String, Component)> {
        let hash = sha256_hex(wasm);
        let component = match self.cached(engine, &hash) {
            Some(component) => component,
            None => self.compile(engine, &hash, wasm)?,
        };
        Ok((hash, component))
    }

    /// The compiled component named by `hash`, when this cache holds a usable one. `hash`
    /// comes from the database: anything but a sha256 in hex is never made into a path.
    pub fn cached(&self, engine: &Engine, hash: &str) -> Option<Component> {
        if !is_sha256_hex(hash) {
            tracing::warn!(
                hash,
                "a component's recorded sha256 is not one; not looked up"
            );
            return None;
        }
        let path = self.path(hash);
        if !path.exists() {
            return None;
        }
        match deserialize(engine, &path) {
            Ok(component) => Some(component),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "recompiling a stale cache entry");
                None
            }
        }
    }

    /// Compiles `wasm`, whose sha256 is `hash`, and caches the result.
    pub fn compile(&self, engine: &Engine, hash: &str, wasm: &[u8]) -> anyhow::Result<Component> {
        anyhow::ensure!(
            sha256_hex(wasm) == hash,
            "the bytes of component {hash} do not match their sha256"
        );
        let compiled = engine
            .precompile_component(wasm)
            .map_err(anyhow::Error::from)
            .context("not a valid WebAssembly component")?;
        // Write to a unique temporary name and rename: concurrent hosts sharing the directory
        // never see a half-written file.
        let tmp = self
            .dir
            .join(format!(".{hash}.{}.tmp", uuid::Uuid::new_v4()));
        std::fs::write(&tmp, &compiled)?;
        let path = self.path(hash);
        std::fs::rename(&tmp, &path)?;
        deserialize(engine, &path)
    }

    /// Where the component `hash` is cached; only for a `hash` checked to be a sha256 in hex
    /// (by [`is_sha256_hex`], or by computing it).
    fn path(&self, hash: &str) -> PathBuf {
        self.dir.join(format!("{hash}-{}.cwasm", self.engine_key))
    }
}

/// The hex sha256 that names a component's bytes.
pub fn sha256_hex(wasm: &[u8]) -> String {
    hex::encode(Sha256::digest(wasm))
}

/// Whether `text` is a sha256 as [`sha256_hex`] writes it: 64 lowercase hex digits.
fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[expect(
    unsafe_code,
    reason = "deserializing compiled code is unsafe in general; these files are written only by \
              this cache, from our own engine's output, into a directory the operator controls"
)]
fn deserialize(engine: &Engine, path: &std::path::Path) -> anyhow::Result<Component> {
    // SAFETY: see the reason above; wasmtime also checks the engine compatibility header.
    Ok(unsafe { Component::deserialize_file(engine, path) }?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_sha256_in_hex_names_a_cache_file() {
        assert!(is_sha256_hex(&sha256_hex(b"component")));
        for bad in [
            "",
            "../../../../etc/passwd",
            &"A".repeat(64),
            &format!("{}/", "a".repeat(63)),
            &"a".repeat(65),
        ] {
            assert!(!is_sha256_hex(bad), "{bad}");
        }
    }
}
