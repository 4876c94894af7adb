//! A snapshot version loaded for search: chunk rows and embeddings in memory, one FAISS and
//! one tantivy index per segment, tombstoned rows excluded. Remote snapshots are copied to a
//! local cache keyed by version; every file is checked against the manifest on load. A
//! reload keeps the segments the previous version already held and reads only new ones.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use quarry_indexer::chunk::Chunk;
use quarry_indexer::embed::Embeddings;
use quarry_indexer::index::{load_vector_index, FaissIndex, RowSet, TantivyKeywordIndex};
use quarry_indexer::snapshot::{chunks_from_parquet, documents_from_parquet, layout, local_copy, DocumentRecord, Manifest, SegmentManifest, SnapshotReader};
use quarry_indexer::store::StoreOptions;
use quarry_indexer::IndexerError;

use crate::error::ServerError;

/// How to load a snapshot.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    pub store: StoreOptions,
    /// Where remote snapshots are copied (one folder per version).
    pub cache_dir: PathBuf,
    /// Check every file's sha256 against the manifest (on by default).
    pub verify: bool,
    /// A version other than LATEST.
    pub version: Option<String>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self { store: StoreOptions::default(), cache_dir: std::env::temp_dir().join("quarry-cache"), verify: true, version: None }
    }
}

/// One segment's indexes, shared by every loaded version that holds the segment (segments
/// are immutable, so a reload keeps them instead of reading them again).
pub struct SegmentIndexes {
    /// FAISS searches take `&mut`; the lock serializes searches on one segment.
    pub vectors: Mutex<FaissIndex>,
    pub keyword: TantivyKeywordIndex,
}

/// One segment of a loaded version: its rows are `offset..offset + rows` of the snapshot,
/// its documents `doc_offset..doc_offset + doc_count`.
pub struct LoadedSegment {
    pub id: String,
    pub offset: usize,
    pub rows: usize,
    pub doc_offset: usize,
    pub doc_count: usize,
    pub indexes: Arc<SegmentIndexes>,
}

/// Everything a search needs, in memory.
pub struct LoadedSnapshot {
    pub uri: String,
    pub manifest: Manifest,
    pub chunks: Vec<Chunk>,
    pub embeddings: Embeddings,
    pub documents: Vec<DocumentRecord>,
    /// `documents[doc_of_row[row]]` is the document of chunk `row`.
    pub doc_of_row: Vec<u32>,
    pub segments: Vec<LoadedSegment>,
    /// Rows hidden by tombstones.
    pub tombstoned: RowSet,
    /// Segments taken from the previous version instead of being read again.
    pub reused_segments: usize,
}

fn read_file(path: &std::path::Path) -> Result<Vec<u8>, IndexerError> {
    std::fs::read(path).map_err(|cause| IndexerError::Io { path: path.to_path_buf(), cause })
}

/// The rows being gathered for a version, segment after segment.
#[derive(Default)]
struct Rows {
    chunks: Vec<Chunk>,
    data: Vec<f32>,
    documents: Vec<DocumentRecord>,
    doc_of_row: Vec<u32>,
}

impl LoadedSnapshot {
    /// Loads the snapshot at `uri` (LATEST unless `options.version`).
    pub async fn load(uri: &str, options: &LoadOptions) -> Result<Self, ServerError> {
        Self::load_after(uri, options, None).await
    }

    /// Loads like [`LoadedSnapshot::load`], taking every segment that `previous` already holds
    /// (same id, same file checksums) from it: a reload after an upload reads only the new segment.
    pub async fn load_after(uri: &str, options: &LoadOptions, previous: Option<Arc<LoadedSnapshot>>) -> Result<Self, ServerError> {
        let reader = match &options.version {
            Some(version) => SnapshotReader::open_version(uri, version, &options.store).await?,
            None => SnapshotReader::open(uri, &options.store).await?,
        };
        let local = local_copy(&reader, &options.cache_dir).await?;
        let manifest = reader.manifest().clone();
        let uri = reader.uri().to_string();
        let verify = options.verify;
        tokio::task::spawn_blocking(move || Self::load_local(uri, manifest, local, verify, previous.as_deref()))
            .await
            .map_err(|e| ServerError::InvalidRequest(format!("snapshot loader panicked: {e}")))?
    }

    /// The segment of `previous` that is `segment` of `manifest`, file for file.
    fn reusable<'a>(previous: Option<&'a LoadedSnapshot>, manifest: &Manifest, segment: &SegmentManifest) -> Option<&'a LoadedSegment> {
        let previous = previous?;
        let same_files = |p: &SegmentManifest| p.files == segment.files && segment.files.iter().all(|f| previous.manifest.checksums.get(f) == manifest.checksums.get(f));
        let index = previous.manifest.segments.iter().position(|p| p.id == segment.id && same_files(p))?;
        previous.segments.get(index).filter(|loaded| loaded.id == segment.id)
    }

    fn load_local(uri: String, manifest: Manifest, root: PathBuf, verify: bool, previous: Option<&LoadedSnapshot>) -> Result<Self, ServerError> {
        let reused: Vec<Option<&LoadedSegment>> = manifest.segments.iter().map(|s| Self::reusable(previous, &manifest, s)).collect();
        if verify {
            let trusted: std::collections::HashSet<&str> =
                manifest.segments.iter().zip(&reused).filter(|(_, r)| r.is_some()).flat_map(|(s, _)| s.files.iter().map(String::as_str)).collect();
            let mut problems = Vec::new();
            for (relative, expected) in manifest.checksums.iter().filter(|(path, _)| !trusted.contains(path.as_str())) {
                match std::fs::read(root.join(relative)) {
                    Ok(bytes) => {
                        let actual = quarry_indexer::snapshot::sha256_hex(&bytes);
                        if actual != expected.sha256 {
                            problems.push(format!("{relative}: sha256 {actual}, manifest says {}", expected.sha256));
                        }
                    }
                    Err(e) => problems.push(format!("{relative}: {e}")),
                }
            }
            if !problems.is_empty() {
                return Err(ServerError::Corrupt { uri, problems: problems.join("; ") });
            }
        }
        let mut rows = Rows::default();
        let mut segments = Vec::new();
        for (segment, reuse) in manifest.segments.iter().zip(&reused) {
            let (offset, doc_offset) = (rows.chunks.len(), rows.documents.len());
            let indexes = match (reuse, previous) {
                (Some(old), Some(previous)) => {
                    let dim = previous.embeddings.dim;
                    rows.chunks.extend_from_slice(&previous.chunks[old.offset..old.offset + old.rows]);
                    rows.data.extend_from_slice(&previous.embeddings.data[old.offset * dim..(old.offset + old.rows) * dim]);
                    rows.documents.extend_from_slice(&previous.documents[old.doc_offset..old.doc_offset + old.doc_count]);
                    let shift = |doc: &u32| (*doc as usize - old.doc_offset + doc_offset) as u32;
                    rows.doc_of_row.extend(previous.doc_of_row[old.offset..old.offset + old.rows].iter().map(shift));
                    old.indexes.clone()
                }
                _ => Arc::new(Self::read_segment(&uri, &root, &manifest, segment, &mut rows)?),
            };
            let (count, doc_count) = (rows.chunks.len() - offset, rows.documents.len() - doc_offset);
            segments.push(LoadedSegment { id: segment.id.clone(), offset, rows: count, doc_offset, doc_count, indexes });
        }
        let dead = manifest.tombstone_set();
        let mut tombstoned = RowSet::empty(rows.chunks.len());
        for segment in &segments {
            for row in segment.offset..segment.offset + segment.rows {
                if dead.hides(&segment.id, &rows.chunks[row].doc_id, &rows.chunks[row].chunk_id) {
                    tombstoned.insert(row);
                }
            }
        }
        let reused_segments = reused.iter().filter(|r| r.is_some()).count();
        let embeddings = Embeddings { dim: manifest.model.dim, data: rows.data };
        Ok(Self { uri, manifest, chunks: rows.chunks, embeddings, documents: rows.documents, doc_of_row: rows.doc_of_row, segments, tombstoned, reused_segments })
    }

    /// Reads one segment's rows into `rows` and opens its indexes.
    fn read_segment(uri: &str, root: &std::path::Path, manifest: &Manifest, segment: &SegmentManifest, rows: &mut Rows) -> Result<SegmentIndexes, ServerError> {
        let offset = rows.chunks.len();
        let chunk_bytes = read_file(&root.join(layout::segment_file(&segment.id, layout::CHUNKS)))?;
        let (mut seg_chunks, seg_vectors) = chunks_from_parquet(chunk_bytes.into())?;
        rows.chunks.append(&mut seg_chunks);
        rows.data.extend_from_slice(&seg_vectors.data);
        let doc_bytes = read_file(&root.join(layout::segment_file(&segment.id, layout::DOCUMENTS)))?;
        // Rows map to documents of their own segment: a replaced document has one record per segment.
        let doc_base = rows.documents.len();
        rows.documents.extend(documents_from_parquet(doc_bytes.into())?);
        let doc_index: std::collections::HashMap<&str, u32> =
            rows.documents[doc_base..].iter().enumerate().map(|(i, d)| (d.doc_id.as_str(), (doc_base + i) as u32)).collect();
        for chunk in &rows.chunks[offset..] {
            let doc = doc_index.get(chunk.doc_id.as_str()).copied().ok_or_else(|| ServerError::Corrupt {
                uri: uri.to_string(),
                problems: format!("chunk {} names document {} that segment {} does not hold", chunk.chunk_id, chunk.doc_id, segment.id),
            })?;
            rows.doc_of_row.push(doc);
        }
        let vectors = load_vector_index(&root.join(layout::segment_file(&segment.id, layout::VECTORS)), &manifest.segment_index(segment))?;
        let keyword = TantivyKeywordIndex::open(&root.join(layout::segment_file(&segment.id, layout::KEYWORD_DIR)))?;
        Ok(SegmentIndexes { vectors: Mutex::new(vectors), keyword })
    }

    /// The document of a chunk row.
    pub fn document_of(&self, row: usize) -> &DocumentRecord {
        &self.documents[self.doc_of_row[row] as usize]
    }

    /// The segment holding a row.
    pub fn segment_of(&self, row: usize) -> &LoadedSegment {
        self.segments.iter().find(|s| row >= s.offset && row < s.offset + s.rows).expect("row inside a segment")
    }

    /// Live (not tombstoned) documents: (document, its live chunk count, the segment holding it).
    pub fn live_documents(&self) -> Vec<(&DocumentRecord, usize, &str)> {
        let mut counts: std::collections::HashMap<(u32, usize), usize> = std::collections::HashMap::new();
        for (row, &doc) in self.doc_of_row.iter().enumerate() {
            if !self.tombstoned.contains(row) {
                let segment = self.segments.iter().position(|s| row >= s.offset && row < s.offset + s.rows).unwrap_or(0);
                *counts.entry((doc, segment)).or_default() += 1;
            }
        }
        let mut live: Vec<_> = counts.into_iter().map(|((doc, seg), n)| (&self.documents[doc as usize], n, self.segments[seg].id.as_str())).collect();
        live.sort_by(|a, b| a.0.uri.cmp(&b.0.uri));
        live
    }

    /// Rows that can appear in results (all but tombstoned).
    pub fn live_rows(&self) -> usize {
        self.chunks.len() - self.tombstoned.count()
    }
}
