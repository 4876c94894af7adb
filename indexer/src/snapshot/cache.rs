//! Snapshot versions as local files: a local snapshot is used in place; a remote one is
//! downloaded once into `<cache>/<uri hash>/<version>/`, each file checked against the
//! manifest's sha256 as it arrives, and reused by later loads of the same version. A file
//! that an earlier cached version of the same snapshot already holds (a segment both versions
//! share) is linked from there, checked the same way, instead of downloaded again.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::reader::SnapshotReader;
use crate::error::{IndexerError, Result};

/// Marker written after every file of a version has been downloaded and checked.
const COMPLETE: &str = ".complete";

/// A local folder holding a snapshot version.
#[derive(Debug, Clone)]
pub struct LocalCopy {
    pub dir: PathBuf,
    /// Every file in it was checked against the manifest's sha256 by the call that returned
    /// it (downloaded or linked just now), so a loader need not hash them again.
    pub checked_now: bool,
}

/// The local folder holding `reader`'s version (downloading it if needed).
pub async fn local_copy(reader: &SnapshotReader, cache_dir: &Path) -> Result<LocalCopy> {
    if let Some(dir) = reader.location().local_path() {
        return Ok(LocalCopy { dir, checked_now: false });
    }
    let key = hex::encode(&Sha256::digest(reader.uri().as_bytes())[..8]);
    let dir = cache_dir.join(key).join(&reader.manifest().version);
    if dir.join(COMPLETE).is_file() {
        tracing::info!("{}: using cached copy {}", reader.uri(), dir.display());
        return Ok(LocalCopy { dir, checked_now: false });
    }
    tracing::info!("{}: downloading version {} into {}", reader.uri(), reader.manifest().version, dir.display());
    let earlier = cached_versions(dir.parent().unwrap_or(cache_dir), &reader.manifest().version);
    let mut linked = 0;
    for (relative, expected) in &reader.manifest().checksums {
        let path = dir.join(relative);
        let parent = path.parent().unwrap_or(&dir);
        std::fs::create_dir_all(parent).map_err(|e| IndexerError::io(parent, e))?;
        if earlier.iter().any(|version| link_if_same(&version.join(relative), &path, &expected.sha256)) {
            linked += 1;
            continue;
        }
        let bytes = reader.get(relative).await?;
        let actual = super::sha256_hex(&bytes);
        if actual != expected.sha256 {
            return Err(IndexerError::Checksum { path: format!("{}/{relative}", reader.uri()), expected: expected.sha256.clone(), actual });
        }
        std::fs::write(&path, &bytes).map_err(|e| IndexerError::io(&path, e))?;
    }
    if linked > 0 {
        tracing::info!("{}: {linked} of {} files taken from earlier cached versions", reader.uri(), reader.manifest().checksums.len());
    }
    std::fs::write(dir.join(COMPLETE), reader.manifest().version.as_bytes()).map_err(|e| IndexerError::io(&dir, e))?;
    Ok(LocalCopy { dir, checked_now: true })
}

/// Complete cached versions of the same snapshot other than `version`, newest first.
fn cached_versions(snapshot_dir: &Path, version: &str) -> Vec<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir(snapshot_dir)
        .map(|entries| entries.flatten().map(|e| e.path()).filter(|p| p.join(COMPLETE).is_file() && !p.ends_with(version)).collect())
        .unwrap_or_default();
    versions.sort();
    versions.reverse();
    versions
}

/// Links (or copies) `from` to `to` when `from` exists and its sha256 is `sha256`.
fn link_if_same(from: &Path, to: &Path, sha256: &str) -> bool {
    let same = super::sha256_file(from).is_ok_and(|actual| actual == sha256);
    same && (std::fs::hard_link(from, to).is_ok() || std::fs::copy(from, to).is_ok())
}
