//! Puts files into a snapshot root and returns their checksums; large files go up in parts.

use std::io::Read;
use std::path::Path;

use bytes::Bytes;
use object_store::{ObjectStoreExt, PutPayload, WriteMultipart};
use sha2::{Digest, Sha256};

use super::FileChecksum;
use crate::error::{IndexerError, Result};
use crate::store::Location;

/// Files above this size are uploaded in parts.
const MULTIPART_THRESHOLD: u64 = 64 * 1024 * 1024;
const PART_SIZE: usize = 16 * 1024 * 1024;

/// Writes `bytes` at `relative` below the root; the checksum is computed on a blocking
/// thread while the store writes.
pub(super) async fn put_bytes(root: &Location, relative: &str, bytes: Vec<u8>) -> Result<FileChecksum> {
    let bytes = Bytes::from(bytes);
    let size = bytes.len() as u64;
    let hashing = tokio::task::spawn_blocking({
        let bytes = bytes.clone();
        move || super::sha256_hex(&bytes)
    });
    let key = root.child(relative);
    root.store.put(&key, PutPayload::from(bytes)).await.map_err(|e| IndexerError::store(root.uri_of(&key), e))?;
    let sha256 = hashing.await.map_err(|e| IndexerError::snapshot(relative, format!("checksum: {e}")))?;
    Ok(FileChecksum { sha256, bytes: size })
}

/// Where a file that is made on local disk before it is put (FAISS serializes its index to a
/// path) is best written: beside its final place on a local root, so that putting it is a
/// rename, else in a scratch folder, from which it is uploaded.
pub(super) struct StagedFile {
    path: std::path::PathBuf,
    /// The final path on a local root; None for a remote one.
    target: Option<std::path::PathBuf>,
    _scratch: Option<tempfile::TempDir>,
}

impl StagedFile {
    /// A place to write the file that will be `relative` below `root`. On a local root it is
    /// `<final name>.partial` in the final folder (a crashed run leaves it inside a segment no
    /// manifest names, which garbage collection removes).
    pub(super) fn new(root: &Location, relative: &str) -> Result<Self> {
        if let Some(dir) = root.local_path() {
            let target = dir.join(relative);
            let folder = target.parent().unwrap_or(&dir);
            std::fs::create_dir_all(folder).map_err(|e| IndexerError::io(folder, e))?;
            let mut partial = target.clone().into_os_string();
            partial.push(".partial");
            return Ok(Self { path: partial.into(), target: Some(target), _scratch: None });
        }
        let scratch = tempfile::tempdir().map_err(|e| IndexerError::io(std::env::temp_dir(), e))?;
        let name = relative.rsplit('/').next().unwrap_or(relative);
        Ok(Self { path: scratch.path().join(name), target: None, _scratch: Some(scratch) })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Puts the written file at `relative` below `root`: renamed into place on a local root
    /// (hashed in blocks on a blocking thread first), uploaded otherwise.
    pub(super) async fn put(self, root: &Location, relative: &str) -> Result<FileChecksum> {
        let Some(target) = self.target.clone() else { return put_file(root, relative, &self.path).await };
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            let sha256 = super::sha256_file(&path).map_err(|e| IndexerError::io(&path, e))?;
            let bytes = std::fs::metadata(&path).map_err(|e| IndexerError::io(&path, e))?.len();
            std::fs::rename(&path, &target).map_err(|e| IndexerError::io(&target, e))?;
            Ok(FileChecksum { sha256, bytes })
        })
        .await
        .map_err(|e| IndexerError::snapshot(relative, format!("checksum: {e}")))?
    }
}

impl Drop for StagedFile {
    /// A file never put (the run failed before) does not stay behind as `.partial`.
    fn drop(&mut self) {
        if self.target.is_some() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Uploads a local file to `relative` below the root.
pub(super) async fn put_file(root: &Location, relative: &str, path: &Path) -> Result<FileChecksum> {
    let size = std::fs::metadata(path).map_err(|e| IndexerError::io(path, e))?.len();
    if size <= MULTIPART_THRESHOLD {
        let bytes = std::fs::read(path).map_err(|e| IndexerError::io(path, e))?;
        return put_bytes(root, relative, bytes).await;
    }
    let key = root.child(relative);
    let uri = root.uri_of(&key);
    let upload = root.store.put_multipart(&key).await.map_err(|e| IndexerError::store(&uri, e))?;
    let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
    let mut file = std::fs::File::open(path).map_err(|e| IndexerError::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; PART_SIZE];
    loop {
        let n = file.read(&mut buffer).map_err(|e| IndexerError::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        writer.wait_for_capacity(4).await.map_err(|e| IndexerError::store(&uri, e))?;
        writer.write(&buffer[..n]);
    }
    writer.finish().await.map_err(|e| IndexerError::store(&uri, e))?;
    Ok(FileChecksum { sha256: hex::encode(hasher.finalize()), bytes: size })
}
