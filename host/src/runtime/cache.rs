//! Compiled components cached on disk, keyed by the sha256 of the .wasm and the engine's
//! compatibility hash, so a component is compiled once per engine configuration rather than at
//! every start.

use std::hash::{Hash as _, Hasher as _};
use std::path::PathBuf;

use anyhow::Context as _;
use sha2::{Digest as _, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

pub struct CompiledCache {
    dir: PathBuf,
    engine_key: String,
}

impl CompiledCache {
    pub fn new(engine: &Engine, dir: PathBuf) -> anyhow::Result<Self> {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        Ok(Self {
            dir,
            engine_key: format!("{:016x}", hasher.finish()),
        })
    }

    /// The component for these bytes, with the hex sha256 that names it.
    pub fn component(&self, engine: &Engine, wasm: &[u8]) -> anyhow::Result<(String, Component)> {
        let hash = hex::encode(Sha256::digest(wasm));
        let path = self.dir.join(format!("{hash}-{}.cwasm", self.engine_key));
        if path.exists() {
            match deserialize(engine, &path) {
                Ok(component) => return Ok((hash, component)),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "recompiling a stale cache entry")
                }
            }
        }
        let compiled = engine.precompile_component(wasm)?;
        // Write to a unique temporary name and rename: concurrent hosts sharing the directory
        // never see a half-written file.
        let tmp = self
            .dir
            .join(format!(".{hash}.{}.tmp", uuid::Uuid::new_v4()));
        std::fs::write(&tmp, &compiled)?;
        std::fs::rename(&tmp, &path)?;
        Ok((hash, deserialize(engine, &path)?))
    }
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
