//! Reads a published snapshot: LATEST, the manifest, segment data, checksum verification.

use bytes::Bytes;
use object_store::ObjectStoreExt;
use serde::Serialize;

use super::file_table::FileTable;
use super::layout;
use super::manifest::{Manifest, FORMAT_VERSION};
use super::parquet_io::{chunks_from_parquet, documents_from_parquet, DocumentRecord};
use crate::chunk::Chunk;
use crate::embed::Embeddings;
use crate::error::{IndexerError, Result};
use crate::store::{open_location, Location, StoreOptions};

/// One published version of a snapshot.
pub struct SnapshotReader {
    root: Location,
    manifest: Manifest,
}

/// The outcome of checking every file against the manifest.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Verification {
    pub files_checked: usize,
    pub bytes_checked: u64,
    /// (path, problem) for each file that is missing or differs.
    pub problems: Vec<(String, String)>,
}

impl Verification {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

impl SnapshotReader {
    /// Opens the version LATEST points at.
    pub async fn open(uri: &str, options: &StoreOptions) -> Result<Self> {
        let root = open_location(uri, options, false)?;
        let latest = get(&root, layout::LATEST).await.map_err(|e| match e {
            IndexerError::Store { cause: object_store::Error::NotFound { .. }, .. } => IndexerError::NoSnapshot { uri: uri.to_string() },
            other => other,
        })?;
        let version = String::from_utf8_lossy(&latest).trim().to_string();
        Self::open_root(root, &version).await
    }

    /// Opens a given version.
    pub async fn open_version(uri: &str, version: &str, options: &StoreOptions) -> Result<Self> {
        Self::open_root(open_location(uri, options, false)?, version).await
    }

    async fn open_root(root: Location, version: &str) -> Result<Self> {
        let path = layout::manifest(version);
        let bytes = get(&root, &path).await?;
        let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|e| IndexerError::snapshot(&path, format!("invalid manifest: {e}")))?;
        if manifest.format_version != FORMAT_VERSION {
            return Err(IndexerError::snapshot(&path, format!("format version {} is not supported (this build reads {FORMAT_VERSION})", manifest.format_version)));
        }
        Ok(Self { root, manifest })
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub fn uri(&self) -> &str {
        &self.root.uri
    }

    pub(super) fn location(&self) -> &Location {
        &self.root
    }

    /// Reads a file below the root.
    pub async fn get(&self, relative: &str) -> Result<Bytes> {
        get(&self.root, relative).await
    }

    /// Reads a file the manifest lists, refusing it unless its sha256 is the manifest's.
    pub async fn get_verified(&self, relative: &str) -> Result<Bytes> {
        let bytes = self.get(relative).await?;
        match self.manifest.checksums.get(relative) {
            Some(expected) if expected.sha256 == super::sha256_hex(&bytes) => Ok(bytes),
            Some(_) => Err(IndexerError::snapshot(relative, "bytes differ from the manifest's checksum")),
            None => Err(IndexerError::snapshot(relative, "the manifest lists no checksum for it")),
        }
    }

    /// One segment's documents, chunks and embeddings, each file checked against the manifest.
    pub async fn read_segment(&self, segment: &str) -> Result<(Vec<DocumentRecord>, Vec<Chunk>, Embeddings)> {
        let records = self.read_segment_documents(segment).await?;
        let (chunks, embeddings) = chunks_from_parquet(self.get_verified(&layout::segment_file(segment, layout::CHUNKS)).await?)?;
        if let Some(reason) = self.manifest.embeddings_mismatch(chunks.len(), &embeddings) {
            return Err(IndexerError::snapshot(layout::segment_file(segment, layout::CHUNKS), reason));
        }
        Ok((records, chunks, embeddings))
    }

    /// One segment's document records, checked against the manifest.
    pub async fn read_segment_documents(&self, segment: &str) -> Result<Vec<DocumentRecord>> {
        documents_from_parquet(self.get_verified(&layout::segment_file(segment, layout::DOCUMENTS)).await?)
    }

    /// What is wrong with a segment's files without reading them (one listing): a file the
    /// manifest names that is missing or has another size. None when all are there.
    pub async fn segment_files_problem(&self, segment: &str) -> Result<Option<String>> {
        let sizes = self.root.list_below(&layout::segment_file(segment, "")).await?;
        let Some(files) = self.manifest.segments.iter().find(|s| s.id == segment).map(|s| &s.files) else {
            return Ok(Some(format!("version {} has no segment {segment}", self.manifest.version)));
        };
        for file in files {
            let expected = self.manifest.checksums.get(file).map(|c| c.bytes);
            match (sizes.get(file).map(|meta| meta.size), expected) {
                (None, _) => return Ok(Some(format!("{file} is missing"))),
                (Some(size), Some(bytes)) if size != bytes => return Ok(Some(format!("{file} has {size} bytes, the manifest says {bytes}"))),
                (Some(_), None) => return Ok(Some(format!("{file}: the manifest lists no checksum for it"))),
                _ => {}
            }
        }
        Ok(None)
    }

    /// The file table the batch run that wrote this version left; None when it has none
    /// (published online, or by an older build).
    pub async fn read_file_table(&self) -> Result<Option<FileTable>> {
        match self.get(&layout::files(&self.manifest.version)).await {
            Ok(bytes) => FileTable::from_parquet(bytes).map(Some),
            Err(IndexerError::Store { cause: object_store::Error::NotFound { .. }, .. }) => Ok(None),
            Err(other) => Err(other),
        }
    }

    /// Reads every file the manifest lists and compares size and sha256.
    pub async fn verify(&self) -> Result<Verification> {
        let mut verification = Verification::default();
        for (path, expected) in &self.manifest.checksums {
            verification.files_checked += 1;
            let bytes = match self.get(path).await {
                Ok(bytes) => bytes,
                Err(IndexerError::Store { cause: object_store::Error::NotFound { .. }, .. }) => {
                    verification.problems.push((path.clone(), "missing".into()));
                    continue;
                }
                Err(other) => return Err(other),
            };
            verification.bytes_checked += bytes.len() as u64;
            let actual = super::sha256_hex(&bytes);
            if actual != expected.sha256 || bytes.len() as u64 != expected.bytes {
                verification.problems.push((path.clone(), format!("sha256 {actual} ({} bytes), manifest says {} ({} bytes)", bytes.len(), expected.sha256, expected.bytes)));
            }
        }
        Ok(verification)
    }

    /// The live chunks and their embeddings, segment after segment (rows tombstones hide left out).
    pub async fn read_chunks(&self) -> Result<(Vec<Chunk>, Embeddings)> {
        let dim = self.manifest.model.dim;
        let tombstones = self.manifest.tombstone_set();
        let mut chunks = Vec::new();
        let mut embeddings = Embeddings { dim, data: Vec::new() };
        for segment in &self.manifest.segments {
            let (seg_chunks, seg_vectors) = chunks_from_parquet(self.get(&layout::segment_file(&segment.id, layout::CHUNKS)).await?)?;
            for (row, chunk) in seg_chunks.into_iter().enumerate() {
                if !tombstones.hides(&segment.id, &chunk.doc_id, &chunk.chunk_id) {
                    embeddings.data.extend_from_slice(seg_vectors.row(row));
                    chunks.push(chunk);
                }
            }
        }
        Ok((chunks, embeddings))
    }

    /// The live document records (those tombstones hide as a whole left out).
    pub async fn read_documents(&self) -> Result<Vec<DocumentRecord>> {
        let tombstones = self.manifest.tombstone_set();
        let mut documents = Vec::new();
        for segment in &self.manifest.segments {
            let records = documents_from_parquet(self.get(&layout::segment_file(&segment.id, layout::DOCUMENTS)).await?)?;
            documents.extend(records.into_iter().filter(|r| !tombstones.hides_document(&segment.id, &r.doc_id)));
        }
        Ok(documents)
    }
}

async fn get(root: &Location, relative: &str) -> Result<Bytes> {
    let key = root.child(relative);
    let uri = root.uri_of(&key);
    let result = root.store.get(&key).await.map_err(|e| IndexerError::store(&uri, e))?;
    result.bytes().await.map_err(|e| IndexerError::store(&uri, e))
}
