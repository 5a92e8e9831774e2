//! Why a file cannot serve as a platform component, said so that its author knows what to
//! change: the build target, the interface versions this host offers, the world a component
//! of that name is given.

use anyhow::bail;
use rental_platform::{Component as PlatformComponent, WIT_VERSION, World};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Every WebAssembly binary begins with these bytes.
const MAGIC: &[u8] = b"\0asm";
/// What follows them in a core module (version 1); a component has its own version and layer.
const CORE_MODULE_VERSION: &[u8] = &[1, 0, 0, 0];
/// The target whose output is a component.
const TARGET_HINT: &str =
    "build it for wasm32-wasip2 (`cargo build --release --target wasm32-wasip2`)";

/// Refuses, before compiling, what is not a component at all.
pub fn require_component(wasm: &[u8]) -> anyhow::Result<()> {
    if !wasm.starts_with(MAGIC) {
        bail!("not a WebAssembly file (it does not begin with `\\0asm`): {TARGET_HINT}");
    }
    if wasm.get(MAGIC.len()..MAGIC.len() + CORE_MODULE_VERSION.len()) == Some(CORE_MODULE_VERSION) {
        bail!(
            "a core WebAssembly module, not a component (wasm32-unknown-unknown and \
             wasm32-wasip1 make modules): {TARGET_HINT}"
        );
    }
    Ok(())
}

/// What among `component`'s imports the host does not offer to `name`, one line per import,
/// each with what the host offers instead; empty when every import is offered by name and
/// version (a refusal is then about an import's shape).
pub fn unoffered_imports(
    engine: &Engine,
    component: &Component,
    name: PlatformComponent,
) -> Vec<String> {
    let world = name.world();
    component
        .component_type()
        .imports(engine)
        .filter_map(|(import, _)| unoffered(import, name, world))
        .collect()
}

/// Why `import` is not offered to `name` (of `world`), or `None` when it is.
fn unoffered(import: &str, name: PlatformComponent, world: World) -> Option<String> {
    let (path, version) = import.split_once('@').unwrap_or((import, ""));
    if let Some(interface) = path.strip_prefix("rental:platform/") {
        if !World::Webhook.interfaces().contains(&interface) {
            return Some(format!(
                "`{import}`: rental:platform has no interface `{interface}` (it has {})",
                World::Webhook.interfaces().join(", ")
            ));
        }
        if !world.interfaces().contains(&interface) {
            return Some(format!(
                "`{import}`: the platform offers `{interface}` to the bank webhook components \
                 (bankone, banktwo) only; `{name}` is given {} ({} world)",
                world.interfaces().join(" and "),
                world.name()
            ));
        }
        if version != WIT_VERSION {
            return Some(format!(
                "`{import}`: this host offers `rental:platform/{interface}@{WIT_VERSION}`; \
                 build against rental:platform@{WIT_VERSION}"
            ));
        }
        return None;
    }
    if path.starts_with("wasi:") {
        return (!version.starts_with("0.2.")).then(|| {
            format!("`{import}`: this host offers WASI 0.2 (0.2.x) interfaces; {TARGET_HINT}")
        });
    }
    Some(format!(
        "`{import}`: not offered; a platform component imports only rental:platform@{WIT_VERSION} \
         and WASI 0.2 interfaces"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLATFORM_WIT: &str = include_str!("../../../wit/platform.wit");

    /// The `import`s of `world` in wit/platform.wit, with those of the worlds it includes.
    fn wit_imports(world: &str) -> Vec<String> {
        let start = PLATFORM_WIT
            .find(&format!("world {world} {{"))
            .unwrap_or_else(|| panic!("world {world}"));
        let body = &PLATFORM_WIT[start..];
        let body = &body[..body.find('}').unwrap()];
        let mut imports = Vec::new();
        for line in body.lines().map(str::trim) {
            if let Some(included) = line.strip_prefix("include ") {
                imports.extend(wit_imports(included.trim_end_matches(';')));
            } else if let Some(import) = line.strip_prefix("import ") {
                imports.push(import.trim_end_matches(';').to_owned());
            }
        }
        imports
    }

    #[test]
    fn the_offer_is_what_the_wit_package_says() {
        assert!(
            PLATFORM_WIT.starts_with(&format!("package rental:platform@{WIT_VERSION};")),
            "WIT_VERSION follows wit/platform.wit"
        );
        for world in [World::Api, World::Webhook] {
            assert_eq!(
                wit_imports(world.name()),
                world.interfaces(),
                "{}",
                world.name()
            );
        }
    }

    #[test]
    fn modules_and_other_files_are_told_to_build_for_wasip2() {
        let module = require_component(b"\0asm\x01\0\0\0")
            .unwrap_err()
            .to_string();
        assert!(
            module.contains("core WebAssembly module") && module.contains("wasm32-wasip2"),
            "{module}"
        );
        let text = require_component(b"<html>").unwrap_err().to_string();
        assert!(text.contains("not a WebAssembly file"), "{text}");
        assert!(require_component(b"\0asm\x0d\0\x01\0").is_ok());
    }

    #[test]
    fn each_unoffered_import_says_what_is_offered() {
        let listing = PlatformComponent::Listing;
        let api = World::Api;
        let offered = format!("rental:platform/store@{WIT_VERSION}");
        assert_eq!(unoffered(&offered, listing, api), None);
        assert_eq!(unoffered("wasi:http/types@0.2.3", listing, api), None);
        let newer = unoffered("rental:platform/store@0.2.0", listing, api).unwrap();
        assert!(newer.contains(&offered), "{newer}");
        let bank = unoffered(&format!("rental:platform/bank@{WIT_VERSION}"), listing, api).unwrap();
        assert!(
            bank.contains("bankone") && bank.contains("context and store"),
            "{bank}"
        );
        assert_eq!(
            unoffered(
                &format!("rental:platform/bank@{WIT_VERSION}"),
                PlatformComponent::BankOne,
                World::Webhook
            ),
            None
        );
        let unknown = unoffered("rental:platform/mail@0.1.0", listing, api).unwrap();
        assert!(unknown.contains("no interface `mail`"), "{unknown}");
        let wasi = unoffered("wasi:http/types@0.3.0", listing, api).unwrap();
        assert!(wasi.contains("WASI 0.2"), "{wasi}");
        let spin = unoffered("fermyon:spin/sqlite@2.0.0", listing, api).unwrap();
        assert!(spin.contains("not offered"), "{spin}");
    }
}
