//! `rentald catalog import` and `rentald catalog export` (docs/catalog.md): the file and the
//! store around `rental_domain::catalog`, which reads, validates and writes the format.

use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;
use rental_domain::catalog::{self, Catalog, Kind};
use rental_domain::store::KeyRange;

use crate::storage::Storage;
use crate::storage::documents::{Mode, Range, Scan};

/// Documents read per scan.
const PAGE: u32 = 500;

/// Validates `file` against the tenant's catalogue and writes the merged catalogue in one
/// transaction, and says what the catalogue holds; on any error nothing is written.
pub async fn import(storage: &Storage, tenant: &str, file: &Path) -> anyhow::Result<()> {
    let catalogue = load(storage, tenant, file).await?;
    let counts: Vec<String> = Kind::ALL
        .iter()
        .map(|kind| format!("{} {kind}", catalogue.count(*kind)))
        .collect();
    println!(
        "imported {} into tenant {tenant}; its catalogue has {}",
        file.display(),
        counts.join(", ")
    );
    Ok(())
}

/// What [`import`] does, printing nothing: the merged catalogue, written.
pub async fn load(storage: &Storage, tenant: &str, file: &Path) -> anyhow::Result<Catalog> {
    storage.require_tenant(tenant).await?;
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let text = catalog::decode(&bytes)?;
    let catalogue = catalog::import(text, stored(storage, tenant).await?)?;
    let records = catalogue.records()?;
    storage.put_records(tenant, &records).await?;
    Ok(catalogue)
}

/// Writes the tenant's catalogue to `output`, or to standard output.
pub async fn export(storage: &Storage, tenant: &str, output: Option<&Path>) -> anyhow::Result<()> {
    storage.require_tenant(tenant).await?;
    let text = stored(storage, tenant).await?.export()?;
    match output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(())
}

/// The tenant's catalogue as stored, read in one read-only transaction.
async fn stored(storage: &Storage, tenant: &str) -> anyhow::Result<Catalog> {
    let mut tx = storage.begin(tenant, Mode::ReadOnly).await?;
    let mut documents = Vec::new();
    for (collection, index) in catalog::COLLECTIONS {
        let mut skip = 0;
        loop {
            let scan = Scan {
                range: Range {
                    collection: collection.to_owned(),
                    index: index.to_owned(),
                    keys: KeyRange::all(),
                },
                descending: false,
                skip,
                limit: PAGE,
            };
            let page = tx.scan(&scan).await?;
            let read = u32::try_from(page.len())?;
            documents.extend(page.into_iter().map(|document| (collection, document.body)));
            if read < PAGE {
                break;
            }
            skip += read;
        }
    }
    tx.commit().await?;
    Ok(Catalog::from_documents(
        documents
            .iter()
            .map(|(collection, body)| (*collection, body.as_str())),
    )?)
}
