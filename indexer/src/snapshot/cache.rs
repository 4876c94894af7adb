//! Snapshot versions as local files: a local snapshot is used in place; a remote one is
//! downloaded once into `<cache>/<uri hash>/<version>/`, each file checked against the
//! manifest's sha256 as it arrives, and reused by later loads of the same version.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::reader::SnapshotReader;
use crate::error::{IndexerError, Result};

/// Marker written after every file of a version has been downloaded and checked.
const COMPLETE: &str = ".complete";

/// The local folder holding `reader`'s version (downloading it if needed).
pub async fn local_copy(reader: &SnapshotReader, cache_dir: &Path) -> Result<PathBuf> {
    if let Some(path) = reader.location().local_path() {
        return Ok(path);
    }
    let key = hex::encode(&Sha256::digest(reader.uri().as_bytes())[..8]);
    let dir = cache_dir.join(key).join(&reader.manifest().version);
    if dir.join(COMPLETE).is_file() {
        tracing::info!("{}: using cached copy {}", reader.uri(), dir.display());
        return Ok(dir);
    }
    tracing::info!("{}: downloading version {} into {}", reader.uri(), reader.manifest().version, dir.display());
    for (relative, expected) in &reader.manifest().checksums {
        let bytes = reader.get(relative).await?;
        let actual = super::sha256_hex(&bytes);
        if actual != expected.sha256 {
            return Err(IndexerError::Checksum { path: format!("{}/{relative}", reader.uri()), expected: expected.sha256.clone(), actual });
        }
        let path = dir.join(relative);
        let parent = path.parent().unwrap_or(&dir);
        std::fs::create_dir_all(parent).map_err(|e| IndexerError::io(parent, e))?;
        std::fs::write(&path, &bytes).map_err(|e| IndexerError::io(&path, e))?;
    }
    std::fs::write(dir.join(COMPLETE), reader.manifest().version.as_bytes()).map_err(|e| IndexerError::io(&dir, e))?;
    Ok(dir)
}
