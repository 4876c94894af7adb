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
