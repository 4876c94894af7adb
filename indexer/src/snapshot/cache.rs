//! Snapshot versions as local files: a local snapshot is used in place; a remote one is
//! downloaded once into `<cache>/<uri hash>/<version>/`, each file checked against the
//! manifest's sha256 as it arrives, and reused by later loads of the same version. A file
//! that an earlier cached version of the same snapshot already holds (a segment both versions
//! share) is linked from there, checked the same way, instead of downloaded again; so is a
//! file an interrupted download of this version already put in place (the download resumes).

use std::path::{Path, PathBuf};

use futures::{StreamExt, TryStreamExt};
use sha2::{Digest, Sha256};

use super::manifest::FileChecksum;
use super::partial_file::PartialFile;
use super::reader::{SnapshotReader, FILES_AT_ONCE};
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
        return Ok(LocalCopy {
            dir,
            checked_now: false,
        });
    }
    let key = hex::encode(&Sha256::digest(reader.uri().as_bytes())[..8]);
    let dir = cache_dir.join(key).join(&reader.manifest().version);
    if dir.join(COMPLETE).is_file() {
        tracing::info!("{}: using cached copy {}", reader.uri(), dir.display());
        return Ok(LocalCopy {
            dir,
            checked_now: false,
        });
    }
    tracing::info!(
        "{}: downloading version {} into {}",
        reader.uri(),
        reader.manifest().version,
        dir.display()
    );
    let earlier = cached_versions(dir.parent().unwrap_or(cache_dir), &reader.manifest().version);
    // The futures are listed first (a closure inside the stream would make the caller's
    // future not `Send` for every lifetime, which tokio::spawn needs).
    let mut fetches = Vec::with_capacity(reader.manifest().checksums.len());
    for (relative, expected) in &reader.manifest().checksums {
        fetches.push(fetch_file(reader, &earlier, relative, expected, &dir));
    }
    let fetched: Vec<bool> = futures::stream::iter(fetches)
        .buffer_unordered(FILES_AT_ONCE)
        .try_collect()
        .await?;
    let reused = fetched.iter().filter(|&&downloaded| !downloaded).count();
    if reused > 0 {
        tracing::info!(
            "{}: {reused} of {} files already in the cache (from earlier versions or an interrupted download)",
            reader.uri(),
            reader.manifest().checksums.len()
        );
    }
    std::fs::write(dir.join(COMPLETE), reader.manifest().version.as_bytes()).map_err(|e| IndexerError::io(&dir, e))?;
    Ok(LocalCopy { dir, checked_now: true })
}

/// Puts one file of the version at `relative` below `dir`: kept when an interrupted download
/// already put the same bytes there, or linked from an earlier cached version that holds them
/// (false), else downloaded block by block into
/// `<name>.partial`, checked and renamed into place (true). A failed download leaves nothing.
async fn fetch_file(
    reader: &SnapshotReader,
    earlier: &[PathBuf],
    relative: &str,
    expected: &FileChecksum,
    dir: &Path,
) -> Result<bool> {
    let path = dir.join(relative);
    let parent = path.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent).map_err(|e| IndexerError::io(parent, e))?;
    let (candidates, target, sha256) = (
        earlier.iter().map(|version| version.join(relative)).collect::<Vec<_>>(),
        path.clone(),
        expected.sha256.clone(),
    );
    let in_place = move || {
        let already_there = super::sha256_file(&target).is_ok_and(|actual| actual == sha256);
        already_there || candidates.iter().any(|from| link_if_same(from, &target, &sha256))
    };
    let reused = tokio::task::spawn_blocking(in_place)
        .await
        .map_err(|e| IndexerError::snapshot(relative, format!("linking from the cache: {e}")))?;
    if reused {
        return Ok(false);
    }
    // Removed if the download fails or this future is dropped (another file failed).
    let partial = PartialFile::beside(path.clone());
    let actual = reader.download(relative, partial.path()).await?;
    if actual != *expected {
        return Err(IndexerError::Checksum {
            path: format!("{}/{relative}", reader.uri()),
            expected: format!("{} ({} bytes)", expected.sha256, expected.bytes),
            actual: format!("{} ({} bytes)", actual.sha256, actual.bytes),
        });
    }
    partial.finish().map_err(|e| IndexerError::io(&path, e))?;
    Ok(true)
}

/// Complete cached versions of the same snapshot other than `version`, newest first.
fn cached_versions(snapshot_dir: &Path, version: &str) -> Vec<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir(snapshot_dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.join(COMPLETE).is_file() && !p.ends_with(version))
                .collect()
        })
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
