//! Writes segments and publishes manifests: data first, manifest next, LATEST last.

use std::collections::BTreeMap;
use std::path::Path;

use rand::Rng;

use super::file_table::FileTable;
use super::layout;
use super::manifest::{FileChecksum, Manifest, SegmentManifest};
use super::parquet_io::{chunks_to_parquet, documents_to_parquet, DocumentRecord};
use super::upload::{put_bytes, put_file, StagedFile};
use crate::chunk::Chunk;
use crate::embed::Embeddings;
use crate::error::{IndexerError, Result};
use crate::index::{keyword_index_files, VectorIndex};
use crate::store::{open_location, Location, StoreOptions};

/// A new, sortable version id: UTC time to the millisecond plus a random suffix.
pub fn new_version_id() -> String {
    let now = chrono::Utc::now();
    format!("{}-{:04x}", now.format("%Y%m%dT%H%M%S%3fZ"), rand::rng().random::<u16>())
}

/// A segment whose files are written (but not yet referenced by any manifest).
#[derive(Debug, Clone)]
pub struct WrittenSegment {
    pub manifest: SegmentManifest,
    pub checksums: BTreeMap<String, FileChecksum>,
}

/// Writes into one snapshot root.
pub struct SnapshotWriter {
    root: Location,
}

impl SnapshotWriter {
    /// Opens a snapshot root (local folders are created).
    pub fn open(uri: &str, options: &StoreOptions) -> Result<Self> {
        Ok(Self { root: open_location(uri, options, true)? })
    }

    pub fn uri(&self) -> &str {
        &self.root.uri
    }

    /// Writes one immutable segment: chunks.parquet, documents.parquet, vectors.faiss, keyword/.
    pub async fn write_segment(
        &self,
        segment_id: &str,
        chunks: &[Chunk],
        embeddings: &Embeddings,
        documents: &[DocumentRecord],
        vectors: &dyn VectorIndex,
        keyword_dir: &Path,
    ) -> Result<WrittenSegment> {
        // The CPU work side by side: the Parquet files (row groups encoded in parallel) and the
        // vector index serialized (in its final folder on a local root, so no copy follows).
        let vectors_path = layout::segment_file(segment_id, layout::VECTORS);
        let staged_vectors = StagedFile::new(&self.root, &vectors_path)?;
        let (parquet, saved) = rayon::join(|| Ok::<_, IndexerError>((chunks_to_parquet(chunks, embeddings)?, documents_to_parquet(documents)?)), || vectors.save(staged_vectors.path()));
        let (chunk_bytes, document_bytes) = parquet?;
        saved?;
        let keyword_files = keyword_index_files(keyword_dir)?;

        // Then every file goes up at once.
        let chunks_path = layout::segment_file(segment_id, layout::CHUNKS);
        let documents_path = layout::segment_file(segment_id, layout::DOCUMENTS);
        let keyword_paths: Vec<String> = keyword_files
            .iter()
            .map(|path| {
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                layout::segment_file(segment_id, &format!("{}/{name}", layout::KEYWORD_DIR))
            })
            .collect();
        let (chunks_sum, documents_sum, vectors_sum, keyword_sums) = futures::try_join!(
            put_bytes(&self.root, &chunks_path, chunk_bytes),
            put_bytes(&self.root, &documents_path, document_bytes),
            staged_vectors.put(&self.root, &vectors_path),
            futures::future::try_join_all(keyword_files.iter().zip(&keyword_paths).map(|(path, relative)| put_file(&self.root, relative, path))),
        )?;
        let mut checksums = BTreeMap::from([(chunks_path, chunks_sum), (documents_path, documents_sum), (vectors_path, vectors_sum)]);
        checksums.extend(keyword_paths.into_iter().zip(keyword_sums));
        let manifest = SegmentManifest {
            id: segment_id.to_string(),
            index: Some(vectors.spec().clone()),
            documents: documents.len(),
            chunks: chunks.len(),
            files: checksums.keys().cloned().collect(),
        };
        Ok(WrittenSegment { manifest, checksums })
    }

    /// Writes a JSON object (a run report) at `relative`.
    pub async fn put_json(&self, relative: &str, value: &serde_json::Value) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(value).map_err(|e| IndexerError::snapshot(relative, e))?;
        put_bytes(&self.root, relative, bytes).await.map(|_| ())
    }

    /// Writes the file table of `version` (before its manifest: a table is never missing
    /// from a version a run published, and a stray one without a manifest is harmless).
    pub async fn put_file_table(&self, version: &str, table: &FileTable) -> Result<()> {
        put_bytes(&self.root, &layout::files(version), table.to_parquet()?).await.map(|_| ())
    }

    /// Publishes a version: its manifest first, then LATEST. Until LATEST is written,
    /// readers keep seeing the previous version.
    pub async fn publish(&self, manifest: &Manifest) -> Result<()> {
        let path = layout::manifest(&manifest.version);
        let bytes = serde_json::to_vec_pretty(manifest).map_err(|e| IndexerError::snapshot(&path, e))?;
        put_bytes(&self.root, &path, bytes).await?;
        put_bytes(&self.root, layout::LATEST, format!("{}\n", manifest.version).into_bytes()).await?;
        Ok(())
    }
}
