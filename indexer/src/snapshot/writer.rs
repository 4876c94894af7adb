//! Writes segments and publishes manifests: data first, manifest next, LATEST last.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use object_store::ObjectStoreExt;
use rand::Rng;

use super::block_sums::BLOCK_BYTES;
use super::file_table::FileTable;
use super::latest_guard::{LatestExpected, LatestGuard};
use super::layout;
use super::manifest::{FileChecksum, Manifest, SegmentManifest};
use super::parquet_io::DocumentRecord;
use super::reader::{read_latest, SnapshotReader};
use super::row_files_writing::RowFilesWriting;
use super::summing_file::SummingFile;
use super::upload::{put_bytes, put_bytes_summed, put_file, StagedFile};
use crate::chunk::Chunk;
use crate::embed::Embeddings;
use crate::error::{IndexerError, Result};
use crate::index::{keyword_index_files, IndexSpec, VectorIndex};
use crate::store::{open_location, Location, StoreOptions};

/// A new, sortable version id: UTC time to the millisecond plus a random suffix.
pub fn new_version_id() -> String {
    let now = chrono::Utc::now();
    format!(
        "{}-{:04x}",
        now.format("%Y%m%dT%H%M%S%3fZ"),
        rand::rng().random::<u16>()
    )
}

/// Writes the object at `relative` (a manifest, a rollback record), then LATEST =
/// `version`, provided LATEST is what `expected` says until it is written (else
/// `LatestMoved`, and the object is removed again: nothing names it).
pub(super) async fn put_then_point_latest(
    root: &Location,
    relative: &str,
    bytes: Vec<u8>,
    version: &str,
    expected: LatestExpected<'_>,
) -> Result<()> {
    let guard = LatestGuard::acquire(root).await?;
    guard.check(root, expected)?;
    put_bytes(root, relative, bytes).await?;
    let pointed = guard.point_at(root, version).await;
    if let Err(IndexerError::LatestMoved { .. }) = &pointed {
        remove_unnamed(root, relative).await;
    }
    pointed
}

/// Removes an object that nothing names after LATEST moved (a warning if it cannot).
async fn remove_unnamed(root: &Location, relative: &str) {
    let key = root.child(relative);
    if let Err(e) = root.store.delete(&key).await {
        tracing::warn!("{}: not removed after LATEST moved: {e}", root.uri_of(&key));
    }
}

/// A segment whose files are written (but not yet referenced by any manifest).
#[derive(Debug, Clone)]
pub struct WrittenSegment {
    pub manifest: SegmentManifest,
    pub checksums: BTreeMap<String, FileChecksum>,
}

/// A segment's chunks.parquet (staged) and documents.parquet (in memory), written but not
/// yet put: see [`SnapshotWriter::write_row_files`].
pub struct SegmentRowFiles {
    pub(super) segment_id: String,
    pub(super) chunks_file: StagedFile,
    /// chunks.parquet's checksum, made as it was written (on a local root).
    pub(super) chunks_checksum: Option<FileChecksum>,
    pub(super) documents_bytes: Vec<u8>,
    pub(super) documents: usize,
    pub(super) chunks: usize,
    /// Seconds the row files took to write (from [`RowFilesWriting::finish`]'s start: the
    /// row groups handed over before are not counted).
    pub secs: f64,
}

impl SegmentRowFiles {
    /// Where chunks.parquet was written (before the segment's put moves it).
    #[cfg(test)]
    pub fn chunks_path(&self) -> &Path {
        self.chunks_file.path()
    }

    /// documents.parquet's bytes.
    #[cfg(test)]
    pub fn documents_bytes(&self) -> &[u8] {
        &self.documents_bytes
    }
}

/// A segment's vectors.faiss, staged (and on a local root already summed, so that putting
/// it is a rename): see [`SnapshotWriter::save_vector_index`].
pub struct SavedVectors {
    file: StagedFile,
    checksum: Option<FileChecksum>,
    spec: IndexSpec,
    /// Seconds the file took to write and sum (with the index's build, where the build wrote it).
    pub secs: f64,
}

impl SavedVectors {
    /// Where the file was written, until the segment is put.
    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

/// Writes into one snapshot root.
#[derive(Clone)]
pub struct SnapshotWriter {
    root: Location,
}

impl SnapshotWriter {
    /// Opens a snapshot root (local folders are created).
    pub fn open(uri: &str, options: &StoreOptions) -> Result<Self> {
        Ok(Self {
            root: open_location(uri, options, true)?,
        })
    }

    pub fn uri(&self) -> &str {
        &self.root.uri
    }

    pub(super) fn root(&self) -> &Location {
        &self.root
    }

    /// The version LATEST names now (None: no LATEST yet).
    pub async fn latest_version(&self) -> Result<Option<String>> {
        match read_latest(&self.root).await {
            Ok(version) => Ok(Some(version)),
            Err(IndexerError::NoSnapshot { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The manifest LATEST names now (None: no LATEST yet).
    pub async fn latest_manifest(&self) -> Result<Option<Manifest>> {
        match self.latest_version().await? {
            Some(version) => Ok(Some(
                SnapshotReader::open_at(self.root.clone(), &version)
                    .await?
                    .manifest()
                    .clone(),
            )),
            None => Ok(None),
        }
    }

    /// Writes one immutable segment: chunks.parquet, documents.parquet, vectors.faiss, keyword/.
    /// The row files are written while FAISS serializes the vector index.
    pub async fn write_segment(
        &self,
        segment_id: &str,
        chunks: &[Chunk],
        embeddings: &Embeddings,
        documents: &[DocumentRecord],
        vectors: &dyn VectorIndex,
        keyword_dir: &Path,
    ) -> Result<WrittenSegment> {
        let (rows, saved) = rayon::join(
            || self.write_row_files(segment_id, chunks, embeddings, documents),
            || self.save_vector_index(segment_id, vectors),
        );
        self.put_segment(rows?, saved?, keyword_dir).await
    }

    /// Writes a segment's row files (blocking: CPU work), chunks.parquet in its final folder
    /// on a local root (so no copy follows) and documents.parquet in memory. Nothing is put
    /// until [`Self::finish_segment`]; dropped before that, they leave nothing behind. A run
    /// writes them while its indexes are built.
    pub fn write_row_files(
        &self,
        segment_id: &str,
        chunks: &[Chunk],
        embeddings: &Embeddings,
        documents: &[DocumentRecord],
    ) -> Result<SegmentRowFiles> {
        self.start_row_files(segment_id, embeddings.dim)?
            .finish(chunks, embeddings, documents)
    }

    /// The row files of `segment_id` (vectors of `dim` dimensions) opened for writing, to
    /// take chunks.parquet's row groups as they come and the rest at the end: see
    /// [`Self::write_row_files`], which is this at once.
    pub fn start_row_files(&self, segment_id: &str, dim: usize) -> Result<RowFilesWriting> {
        let chunks_file = StagedFile::new(&self.root, &layout::segment_file(segment_id, layout::CHUNKS))?;
        RowFilesWriting::create(segment_id, chunks_file, dim)
    }

    /// Puts every file of the segment: its row files, its vector index saved by
    /// [`Self::save_vector_index`] and its keyword index in `keyword_dir`.
    pub async fn finish_segment(
        &self,
        rows: SegmentRowFiles,
        vectors: SavedVectors,
        keyword_dir: &Path,
    ) -> Result<WrittenSegment> {
        self.put_segment(rows, vectors, keyword_dir).await
    }

    /// The vector index serialized (blocking: call it off the async runtime): see
    /// [`Self::write_vector_file`].
    pub fn save_vector_index(&self, segment_id: &str, vectors: &dyn VectorIndex) -> Result<SavedVectors> {
        self.write_vector_file(segment_id, vectors.spec(), |out| vectors.write_to(out))
            .map(|((), saved)| saved)
    }

    /// The file of the vector index of `spec`, written by `write` (blocking: call it off the
    /// async runtime; a build that writes its index's file as it finishes it, say), in its
    /// final folder on a local root and summed as it is written (the file is not read back),
    /// so that the segment's put renames it: a run saves its index while the row files are
    /// still being written. Nothing is put until [`Self::finish_segment`]; dropped before
    /// that, it leaves nothing.
    pub fn write_vector_file<T>(
        &self,
        segment_id: &str,
        spec: &IndexSpec,
        write: impl FnOnce(&mut (dyn Write + Send)) -> Result<T>,
    ) -> Result<(T, SavedVectors)> {
        let started = Instant::now();
        let file = StagedFile::new(&self.root, &layout::segment_file(segment_id, layout::VECTORS))?;
        let path = file.path();
        let (written, checksum) = match file.is_local() {
            true => {
                let mut out = SummingFile::create(path, None).map_err(|e| IndexerError::io(path, e))?;
                let written = write(&mut out)?;
                (written, Some(out.finish().map_err(|e| IndexerError::io(path, e))?))
            }
            // Uploaded later, and hashed as it goes up.
            false => {
                let created = std::fs::File::create(path).map_err(|e| IndexerError::io(path, e))?;
                let mut out = std::io::BufWriter::with_capacity(1 << 20, created);
                let written = write(&mut out)?;
                out.flush().map_err(|e| IndexerError::io(path, e))?;
                (written, None)
            }
        };
        Ok((
            written,
            SavedVectors {
                file,
                checksum,
                spec: spec.clone(),
                secs: started.elapsed().as_secs_f64(),
            },
        ))
    }

    /// Every file of the segment goes up at once, each hashed as it goes.
    async fn put_segment(
        &self,
        rows: SegmentRowFiles,
        vectors: SavedVectors,
        keyword_dir: &Path,
    ) -> Result<WrittenSegment> {
        let started = Instant::now();
        let segment_id = rows.segment_id.as_str();
        let keyword_files = keyword_index_files(keyword_dir)?;
        let chunks_path = layout::segment_file(segment_id, layout::CHUNKS);
        let documents_path = layout::segment_file(segment_id, layout::DOCUMENTS);
        let vectors_path = layout::segment_file(segment_id, layout::VECTORS);
        let keyword_paths: Vec<String> = keyword_files
            .iter()
            .map(|path| {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                layout::segment_file(segment_id, &format!("{}/{name}", layout::KEYWORD_DIR))
            })
            .collect();
        let (chunks_sum, documents_sum, vectors_sum, keyword_sums) = futures::try_join!(
            rows.chunks_file
                .put_summed(&self.root, &chunks_path, Some(BLOCK_BYTES), rows.chunks_checksum),
            put_bytes_summed(&self.root, &documents_path, rows.documents_bytes, Some(BLOCK_BYTES)),
            vectors
                .file
                .put_summed(&self.root, &vectors_path, None, vectors.checksum),
            futures::future::try_join_all(
                keyword_files
                    .iter()
                    .zip(&keyword_paths)
                    .map(|(path, relative)| put_file(&self.root, relative, path, None))
            ),
        )?;
        let mut checksums = BTreeMap::from([
            (chunks_path, chunks_sum),
            (documents_path, documents_sum),
            (vectors_path, vectors_sum),
        ]);
        checksums.extend(keyword_paths.into_iter().zip(keyword_sums));
        tracing::info!(
            "segment {segment_id}: row files written in {:.2} s, vector index file written in {:.2} s, every file put in {:.2} s",
            rows.secs,
            vectors.secs,
            started.elapsed().as_secs_f64()
        );
        let manifest = SegmentManifest {
            id: rows.segment_id,
            index: Some(vectors.spec),
            documents: rows.documents,
            chunks: rows.chunks,
            files: checksums.keys().cloned().collect(),
            languages: Vec::new(),
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
        put_bytes(&self.root, &layout::files(version), table.to_parquet()?)
            .await
            .map(|_| ())
    }

    /// Publishes a version: its manifest first, then LATEST. Until LATEST is written,
    /// readers keep seeing the previous version. `expected` is the version it was built on
    /// (`LatestMoved` when another writer published since: nothing is written), or `Any`.
    pub async fn publish(&self, manifest: &Manifest, expected: LatestExpected<'_>) -> Result<()> {
        let path = layout::manifest(&manifest.version);
        let bytes = serde_json::to_vec_pretty(manifest).map_err(|e| IndexerError::snapshot(&path, e))?;
        put_then_point_latest(&self.root, &path, bytes, &manifest.version, expected).await
    }

    /// [`Self::publish`] of a batch version with its file table, written first (and removed
    /// again when LATEST moved: no manifest names it).
    pub async fn publish_with_file_table(
        &self,
        manifest: &Manifest,
        files: &FileTable,
        expected: LatestExpected<'_>,
    ) -> Result<()> {
        self.put_file_table(&manifest.version, files).await?;
        let published = self.publish(manifest, expected).await;
        if let Err(IndexerError::LatestMoved { .. }) = &published {
            remove_unnamed(&self.root, &layout::files(&manifest.version)).await;
        }
        published
    }
}
