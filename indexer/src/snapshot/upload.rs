//! Puts files into a snapshot root and returns their checksums; large files go up in parts.

use std::io::Read;
use std::path::Path;

use bytes::Bytes;
use object_store::{ObjectStoreExt, PutPayload, WriteMultipart};

use super::partial_file::PartialFile;
use super::{FileChecksum, FileHasher};
use crate::error::{IndexerError, Result};
use crate::store::Location;

/// Files above this size are uploaded in parts.
const MULTIPART_THRESHOLD: u64 = 64 * 1024 * 1024;
const PART_SIZE: usize = 16 * 1024 * 1024;

/// Writes `bytes` at `relative` below the root; the checksum is computed on a blocking
/// thread while the store writes.
pub(super) async fn put_bytes(root: &Location, relative: &str, bytes: Vec<u8>) -> Result<FileChecksum> {
    put_bytes_summed(root, relative, bytes, None).await
}

/// [`put_bytes`], with block sums of `block_bytes` blocks when asked.
pub(super) async fn put_bytes_summed(
    root: &Location,
    relative: &str,
    bytes: Vec<u8>,
    block_bytes: Option<u64>,
) -> Result<FileChecksum> {
    let bytes = Bytes::from(bytes);
    let hashing = tokio::task::spawn_blocking({
        let bytes = bytes.clone();
        move || {
            let mut hasher = FileHasher::new(block_bytes);
            hasher.update(&bytes);
            hasher.finish()
        }
    });
    let key = root.child(relative);
    root.store
        .put(&key, PutPayload::from(bytes))
        .await
        .map_err(|e| IndexerError::store(root.uri_of(&key), e))?;
    hashing
        .await
        .map_err(|e| IndexerError::snapshot(relative, format!("checksum: {e}")))
}

/// Where a file that is made on local disk before it is put (FAISS serializes its index to a
/// path) is best written: beside its final place on a local root, so that putting it is a
/// rename, else in a scratch folder, from which it is uploaded.
pub(super) enum StagedFile {
    /// `<final name>.partial` in the final folder, a new segment's (a crashed run leaves it
    /// inside a segment no manifest names, which garbage collection removes; a failed one
    /// removes it, and the folder once it is empty).
    Local(PartialFile),
    Scratch {
        path: std::path::PathBuf,
        _folder: tempfile::TempDir,
    },
}

impl StagedFile {
    /// A place to write the file that will be `relative` below `root`.
    pub(super) fn new(root: &Location, relative: &str) -> Result<Self> {
        if let Some(dir) = root.local_path() {
            let target = dir.join(relative);
            let folder = target.parent().unwrap_or(&dir);
            std::fs::create_dir_all(folder).map_err(|e| IndexerError::io(folder, e))?;
            return Ok(Self::Local(PartialFile::in_own_folder(target)));
        }
        let folder = tempfile::tempdir().map_err(|e| IndexerError::io(std::env::temp_dir(), e))?;
        let name = relative.rsplit('/').next().unwrap_or(relative);
        Ok(Self::Scratch {
            path: folder.path().join(name),
            _folder: folder,
        })
    }

    /// Whether the file is written in its final folder (a local root), so that putting it
    /// is a rename.
    pub(super) fn is_local(&self) -> bool {
        matches!(self, Self::Local(_))
    }

    pub(super) fn path(&self) -> &Path {
        match self {
            Self::Local(partial) => partial.path(),
            Self::Scratch { path, .. } => path,
        }
    }

    /// Puts the written file at `relative` below `root`: renamed into place on a local root
    /// (with the checksum summed as it was written, or hashed on a blocking thread first
    /// when `checksum` is None), uploaded otherwise. With `block_bytes`, its checksum has
    /// block sums of that size.
    pub(super) async fn put_summed(
        self,
        root: &Location,
        relative: &str,
        block_bytes: Option<u64>,
        checksum: Option<FileChecksum>,
    ) -> Result<FileChecksum> {
        let partial = match self {
            Self::Scratch { path, _folder } => return put_file(root, relative, &path, block_bytes).await,
            Self::Local(partial) => partial,
        };
        tokio::task::spawn_blocking(move || {
            let path = partial.path().to_path_buf();
            let checksum = match checksum {
                Some(checksum) => checksum,
                None => super::file_checksum(&path, block_bytes).map_err(|e| IndexerError::io(&path, e))?,
            };
            partial.finish().map_err(|e| IndexerError::io(&path, e))?;
            Ok(checksum)
        })
        .await
        .map_err(|e| IndexerError::snapshot(relative, format!("checksum: {e}")))?
    }
}

/// Uploads a local file to `relative` below the root (its checksum with block sums of
/// `block_bytes` blocks when asked).
pub(super) async fn put_file(
    root: &Location,
    relative: &str,
    path: &Path,
    block_bytes: Option<u64>,
) -> Result<FileChecksum> {
    let size = std::fs::metadata(path).map_err(|e| IndexerError::io(path, e))?.len();
    if size <= MULTIPART_THRESHOLD {
        let bytes = std::fs::read(path).map_err(|e| IndexerError::io(path, e))?;
        return put_bytes_summed(root, relative, bytes, block_bytes).await;
    }
    let key = root.child(relative);
    let uri = root.uri_of(&key);
    let upload = root
        .store
        .put_multipart(&key)
        .await
        .map_err(|e| IndexerError::store(&uri, e))?;
    let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
    let mut file = std::fs::File::open(path).map_err(|e| IndexerError::io(path, e))?;
    let mut hasher = FileHasher::new(block_bytes);
    let mut buffer = vec![0u8; PART_SIZE];
    loop {
        let n = file.read(&mut buffer).map_err(|e| IndexerError::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        writer
            .wait_for_capacity(4)
            .await
            .map_err(|e| IndexerError::store(&uri, e))?;
        writer.write(&buffer[..n]);
    }
    writer.finish().await.map_err(|e| IndexerError::store(&uri, e))?;
    Ok(hasher.finish())
}
