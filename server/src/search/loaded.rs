//! A snapshot version loaded for search: chunk rows in memory, one FAISS index (holding the
//! vectors) and one tantivy index per segment, tombstoned rows excluded. Remote snapshots are copied to a
//! local cache keyed by version; every file is checked against the manifest on load. A
//! reload keeps the segments the previous version already held and reads only new ones.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use quarry_indexer::chunk::Chunk;
use quarry_indexer::embed::Embeddings;
use quarry_indexer::index::{
    load_vector_index, FaissIndex, Hit, KeywordStats, RowSet, TantivyKeywordIndex, VectorIndex,
};
use quarry_indexer::snapshot::{
    chunks_from_parquet, chunks_from_parquet_without_embeddings, documents_from_parquet, layout, local_copy,
    DocumentRecord, Manifest, SegmentManifest, SnapshotReader,
};
use quarry_indexer::store::StoreOptions;
use quarry_indexer::IndexerError;
use rayon::prelude::*;

use crate::error::ServerError;
use crate::search::facet_columns::FacetColumns;
use crate::search::field_index::FieldIndex;
use crate::search::hidden_rows::HiddenRows;
use crate::search::live_documents::LiveDocuments;
use crate::search::metadata_columns::MetadataColumns;

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
        Self {
            store: StoreOptions::default(),
            cache_dir: std::env::temp_dir().join("quarry-cache"),
            verify: true,
            version: None,
        }
    }
}

/// One segment's rows and indexes, shared by every loaded version that holds the segment
/// (segments are immutable, so a reload keeps them instead of reading or copying them again).
pub struct SegmentData {
    pub chunks: Vec<Chunk>,
    pub documents: Vec<DocumentRecord>,
    /// `documents[doc_of_row[row]]` is the document of chunk `row` (both local to the segment).
    pub doc_of_row: Vec<u32>,
    /// Searched by many threads at once (FAISS's searches only read the index). Holds the
    /// segment's vectors too, which exact scans read back, except for IVF-PQ.
    pub vectors: FaissIndex,
    /// chunks.parquet's vectors, kept only when the index stores lossy codes instead (IVF-PQ):
    /// every other index holds the vectors once, in the index.
    parquet_vectors: Option<Embeddings>,
    pub keyword: TantivyKeywordIndex,
    /// The documents' metadata values of the keys filters have asked for.
    pub metadata_columns: MetadataColumns,
    /// The documents by the field values filters have asked for, and each document's rows.
    pub field_index: FieldIndex,
    /// The values of the fields facets have counted, interned.
    pub facet_columns: FacetColumns,
}

impl SegmentData {
    /// Exact top-`k` among the segment's `rows` (local numbers), best first, scored against
    /// the vectors as indexed.
    pub fn exact_top_k_in(&self, query: &[f32], rows: &[u64], k: usize) -> Result<Vec<Hit>, ServerError> {
        let Some(copy) = &self.parquet_vectors else {
            return Ok(self.vectors.exact_top_k_in(query, rows, k)?);
        };
        if query.len() != copy.dim {
            return Err(ServerError::InvalidRequest(format!(
                "a query of {} values for vectors of dimension {}",
                query.len(),
                copy.dim
            )));
        }
        if let Some(row) = rows.iter().find(|&&row| row as usize >= self.chunks.len()) {
            return Err(ServerError::InvalidRequest(format!(
                "row {row} of a segment of {} rows",
                self.chunks.len()
            )));
        }
        Ok(quarry_kernels::exact_top_k_in(query, &copy.data, copy.dim, rows, k)
            .into_iter()
            .map(|s| Hit {
                row: s.row,
                score: s.score,
            })
            .collect())
    }

    /// Whether the segment keeps chunks.parquet's copy of its vectors (only when its index
    /// stores lossy codes: IVF-PQ).
    pub fn keeps_parquet_vectors(&self) -> bool {
        self.parquet_vectors.is_some()
    }

    /// The vectors of local rows `start..start + count`, row-major (a copy).
    pub fn vectors_of(&self, start: usize, count: usize) -> Result<Vec<f32>, ServerError> {
        match &self.parquet_vectors {
            Some(copy) => {
                let rows = copy.data.get(start * copy.dim..(start + count) * copy.dim);
                rows.map(<[f32]>::to_vec).ok_or_else(|| {
                    ServerError::InvalidRequest(format!(
                        "rows {start}..{} of a segment of {}",
                        start + count,
                        self.chunks.len()
                    ))
                })
            }
            None => Ok(self.vectors.stored_vectors(start, count)?),
        }
    }
}

/// One segment of a loaded version: its rows are `offset..offset + rows` of the snapshot.
pub struct LoadedSegment {
    pub id: String,
    pub offset: usize,
    pub rows: usize,
    pub data: Arc<SegmentData>,
    /// Its rows that this version's tombstones hide.
    pub hidden: Arc<HiddenRows>,
}

/// Everything a search needs, in memory. Rows are numbered across segments, in manifest order.
pub struct LoadedSnapshot {
    pub uri: String,
    pub manifest: Manifest,
    pub segments: Vec<LoadedSegment>,
    /// Rows hidden by tombstones (each segment's `hidden` rows, numbered across segments).
    pub tombstoned: RowSet,
    /// Segments taken from the previous version instead of being read again.
    pub reused_segments: usize,
    rows: usize,
    dim: usize,
    /// The live documents, found on first use.
    live: OnceLock<LiveDocuments>,
}

/// A segment's Parquet file, memory-mapped: the reader touches only the pages of the columns
/// it decodes (never the vectors, which the vector index holds).
fn map_file(path: &std::path::Path) -> Result<Bytes, IndexerError> {
    let io = |cause| IndexerError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    // SAFETY: published segment files are never changed in place (quarry writes new files and
    // renames them in; removing a mapped file leaves the mapping valid).
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
    Ok(Bytes::from_owner(map))
}

impl LoadedSnapshot {
    /// Loads the snapshot at `uri` (LATEST unless `options.version`).
    pub async fn load(uri: &str, options: &LoadOptions) -> Result<Self, ServerError> {
        Self::load_after(uri, options, None).await
    }

    /// Loads like [`LoadedSnapshot::load`], taking every segment that `previous` already holds
    /// (same id, same file checksums) from it: a reload after an upload or a nightly delta
    /// reads only the new segments and shares the rest (rows, vectors and indexes).
    pub async fn load_after(
        uri: &str,
        options: &LoadOptions,
        previous: Option<Arc<LoadedSnapshot>>,
    ) -> Result<Self, ServerError> {
        let reader = match &options.version {
            Some(version) => SnapshotReader::open_version(uri, version, &options.store).await?,
            None => SnapshotReader::open(uri, &options.store).await?,
        };
        let local = local_copy(&reader, &options.cache_dir).await?;
        let manifest = reader.manifest().clone();
        let uri = reader.uri().to_string();
        // Files just downloaded were hashed as they arrived.
        let verify = options.verify && !local.checked_now;
        tokio::task::spawn_blocking(move || Self::load_local(uri, manifest, local.dir, verify, previous.as_deref()))
            .await
            .map_err(|e| ServerError::InvalidRequest(format!("snapshot loader panicked: {e}")))?
    }

    /// The segment of `previous` that is `segment` of `manifest`, file for file.
    fn reusable<'a>(
        previous: Option<&'a LoadedSnapshot>,
        manifest: &Manifest,
        segment: &SegmentManifest,
    ) -> Option<&'a LoadedSegment> {
        let previous = previous?;
        let same_files = |p: &SegmentManifest| {
            p.files == segment.files
                && segment
                    .files
                    .iter()
                    .all(|f| previous.manifest.checksums.get(f) == manifest.checksums.get(f))
        };
        let index = previous
            .manifest
            .segments
            .iter()
            .position(|p| p.id == segment.id && same_files(p))?;
        previous.segments.get(index).filter(|loaded| loaded.id == segment.id)
    }

    fn load_local(
        uri: String,
        manifest: Manifest,
        root: PathBuf,
        verify: bool,
        previous: Option<&LoadedSnapshot>,
    ) -> Result<Self, ServerError> {
        let reused: Vec<Option<&LoadedSegment>> = manifest
            .segments
            .iter()
            .map(|s| Self::reusable(previous, &manifest, s))
            .collect();
        if verify {
            let trusted: std::collections::HashSet<&str> = manifest
                .segments
                .iter()
                .zip(&reused)
                .filter(|(_, r)| r.is_some())
                .flat_map(|(s, _)| s.files.iter().map(String::as_str))
                .collect();
            // Files hashed in parallel, each streamed in blocks (never a whole file in memory);
            // problems listed in manifest order.
            let to_check: Vec<_> = manifest
                .checksums
                .iter()
                .filter(|(path, _)| !trusted.contains(path.as_str()))
                .collect();
            let problems: Vec<String> = to_check
                .into_par_iter()
                .filter_map(
                    |(relative, expected)| match quarry_indexer::snapshot::sha256_file(&root.join(relative)) {
                        Ok(actual) => (actual != expected.sha256)
                            .then(|| format!("{relative}: sha256 {actual}, manifest says {}", expected.sha256)),
                        Err(e) => Some(format!("{relative}: {e}")),
                    },
                )
                .collect();
            if !problems.is_empty() {
                return Err(ServerError::Corrupt {
                    uri,
                    problems: problems.join("; "),
                });
            }
        }
        let dead = manifest.tombstone_set();
        // A kept segment hides the same rows as before when the tombstones did not change.
        let same_tombstones = previous.is_some_and(|p| p.manifest.tombstones == manifest.tombstones);
        let mut offset = 0;
        let mut segments = Vec::new();
        for (segment, reuse) in manifest.segments.iter().zip(&reused) {
            let data = match reuse {
                Some(old) => old.data.clone(),
                None => Arc::new(Self::read_segment(&uri, &root, &manifest, segment)?),
            };
            let hidden = match reuse {
                Some(old) if same_tombstones => old.hidden.clone(),
                _ => HiddenRows::of_segment(
                    &segment.id,
                    &data.chunks,
                    data.keyword.analyzer(),
                    &dead,
                    reuse.map(|old| &old.hidden),
                ),
            };
            let rows = data.chunks.len();
            segments.push(LoadedSegment {
                id: segment.id.clone(),
                offset,
                rows,
                data,
                hidden,
            });
            offset += rows;
        }
        let mut tombstoned = RowSet::empty(offset);
        for segment in &segments {
            segment
                .hidden
                .rows
                .iter()
                .for_each(|&local| tombstoned.insert(segment.offset + local as usize));
        }
        let reused_segments = reused.iter().filter(|r| r.is_some()).count();
        let dim = manifest.model.dim;
        Ok(Self {
            uri,
            manifest,
            segments,
            tombstoned,
            reused_segments,
            rows: offset,
            dim,
            live: OnceLock::new(),
        })
    }

    /// Reads one segment's rows and opens its indexes.
    fn read_segment(
        uri: &str,
        root: &std::path::Path,
        manifest: &Manifest,
        segment: &SegmentManifest,
    ) -> Result<SegmentData, ServerError> {
        let corrupt = |problem: String| ServerError::Corrupt {
            uri: uri.to_string(),
            problems: format!("segment {}: {problem}", segment.id),
        };
        let vectors = load_vector_index(
            &root.join(layout::segment_file(&segment.id, layout::VECTORS)),
            &manifest.segment_index(segment),
        )?;
        let chunk_bytes = map_file(&root.join(layout::segment_file(&segment.id, layout::CHUNKS)))?;
        // The index holds the vectors (and exact scans read them there), except IVF-PQ's codes.
        let (chunks, parquet_vectors) = if vectors.stores_vectors() {
            (chunks_from_parquet_without_embeddings(chunk_bytes)?, None)
        } else {
            let (chunks, embeddings) = chunks_from_parquet(chunk_bytes)?;
            if let Some(reason) = manifest.embeddings_mismatch(chunks.len(), &embeddings) {
                return Err(corrupt(reason));
            }
            (chunks, Some(embeddings))
        };
        if vectors.len() != chunks.len() || vectors.dim() != manifest.model.dim {
            return Err(corrupt(format!(
                "its vector index holds {} vectors of dimension {} for {} chunks of a model of dimension {}",
                vectors.len(),
                vectors.dim(),
                chunks.len(),
                manifest.model.dim
            )));
        }
        let doc_bytes = map_file(&root.join(layout::segment_file(&segment.id, layout::DOCUMENTS)))?;
        // Rows map to documents of their own segment: a replaced document has one record per segment.
        let documents = documents_from_parquet(doc_bytes)?;
        let doc_index: std::collections::HashMap<&str, u32> = documents
            .iter()
            .enumerate()
            .map(|(i, d)| (d.doc_id.as_str(), i as u32))
            .collect();
        let mut doc_of_row = Vec::with_capacity(chunks.len());
        for chunk in &chunks {
            let doc = doc_index
                .get(chunk.doc_id.as_str())
                .copied()
                .ok_or_else(|| ServerError::Corrupt {
                    uri: uri.to_string(),
                    problems: format!(
                        "chunk {} names document {} that segment {} does not hold",
                        chunk.chunk_id, chunk.doc_id, segment.id
                    ),
                })?;
            doc_of_row.push(doc);
        }
        drop(doc_index);
        let keyword = TantivyKeywordIndex::open(&root.join(layout::segment_file(&segment.id, layout::KEYWORD_DIR)))?;
        Ok(SegmentData {
            chunks,
            documents,
            doc_of_row,
            vectors,
            parquet_vectors,
            keyword,
            metadata_columns: MetadataColumns::default(),
            field_index: FieldIndex::default(),
            facet_columns: FacetColumns::default(),
        })
    }

    /// What the tombstoned rows of every segment add to the keyword indexes' statistics.
    pub fn hidden_keyword_stats(&self) -> KeywordStats {
        let mut all = KeywordStats::default();
        self.segments
            .iter()
            .for_each(|segment| all.add(&segment.hidden.keyword_stats));
        all
    }

    /// Rows across all segments (tombstoned ones included).
    pub fn row_count(&self) -> usize {
        self.rows
    }

    /// The embedding dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The segment holding a row.
    pub fn segment_of(&self, row: usize) -> &LoadedSegment {
        let index = self.segments.partition_point(|s| s.offset + s.rows <= row);
        self.segments
            .get(index)
            .filter(|s| row >= s.offset)
            .expect("row inside a segment")
    }

    /// Chunk `row`.
    pub fn chunk(&self, row: usize) -> &Chunk {
        let segment = self.segment_of(row);
        &segment.data.chunks[row - segment.offset]
    }

    /// The embedding of chunk `row` (a copy, read from the segment's vector index).
    pub fn embedding(&self, row: usize) -> Result<Vec<f32>, ServerError> {
        let segment = self.segment_of(row);
        segment.data.vectors_of(row - segment.offset, 1)
    }

    /// The document of chunk `row`.
    pub fn document_of(&self, row: usize) -> &DocumentRecord {
        let segment = self.segment_of(row);
        let data = &segment.data;
        &data.documents[data.doc_of_row[row - segment.offset] as usize]
    }

    /// Every document record, segment after segment (a replaced document once per segment).
    pub fn documents(&self) -> impl Iterator<Item = &DocumentRecord> {
        self.segments.iter().flat_map(|s| s.data.documents.iter())
    }

    /// Every row's chunk, in row order.
    pub fn chunks(&self) -> impl Iterator<Item = &Chunk> {
        self.segments.iter().flat_map(|s| s.data.chunks.iter())
    }

    /// Every row's embedding, one after another (a copy: for benchmarks and checks).
    pub fn all_embeddings(&self) -> Result<Vec<f32>, ServerError> {
        let mut all = Vec::with_capacity(self.rows * self.dim);
        for segment in &self.segments {
            all.extend(segment.data.vectors_of(0, segment.rows)?);
        }
        Ok(all)
    }

    /// The vectors of document `doc_id`'s live chunks, by chunk text: what a new copy of the
    /// document reuses for its unchanged chunks instead of embedding them again.
    pub fn live_vectors_by_text(&self, doc_id: &str) -> Result<HashMap<String, Vec<f32>>, ServerError> {
        self.live_vectors_where(|chunk| chunk.doc_id == doc_id)
    }

    /// The vectors of live chunks whose text is one of `texts`, by text: what an uploaded
    /// file's chunks reuse when the collection already holds their text.
    pub fn live_vectors_of_texts(&self, texts: &HashSet<&str>) -> Result<HashMap<String, Vec<f32>>, ServerError> {
        // Most rows differ in length from every wanted text: compared without hashing the text.
        let lengths: HashSet<usize> = texts.iter().map(|text| text.len()).collect();
        self.live_vectors_where(|chunk| lengths.contains(&chunk.text.len()) && texts.contains(chunk.text.as_str()))
    }

    fn live_vectors_where(&self, wanted: impl Fn(&Chunk) -> bool) -> Result<HashMap<String, Vec<f32>>, ServerError> {
        let mut by_text = HashMap::new();
        for segment in &self.segments {
            for (local, chunk) in segment.data.chunks.iter().enumerate() {
                if wanted(chunk) && !self.tombstoned.contains(segment.offset + local) {
                    by_text.insert(chunk.text.clone(), segment.data.vectors_of(local, 1)?);
                }
            }
        }
        Ok(by_text)
    }

    /// Live (not tombstoned) documents by URI: (document, its live chunk count, the segment holding it).
    pub fn live_documents(&self) -> impl ExactSizeIterator<Item = (&DocumentRecord, usize, &str)> + '_ {
        let live = self.live();
        (0..live.len()).map(move |at| live.get(&self.segments, at))
    }

    /// The live document `doc_id`, with its live chunks and its segment's id.
    pub fn live_document(&self, doc_id: &str) -> Option<(&DocumentRecord, usize, &str)> {
        let live = self.live();
        live.find(&self.segments, doc_id).map(|at| live.get(&self.segments, at))
    }

    /// The live rows of the live document `doc_id`, in chunk order (empty when there is no
    /// such document).
    pub fn live_rows_of(&self, doc_id: &str) -> Vec<usize> {
        let live = self.live();
        let Some(at) = live.find(&self.segments, doc_id) else {
            return Vec::new();
        };
        let (at, document) = live.segment_and_document(at);
        let segment = &self.segments[at];
        let data = &segment.data;
        let mut rows: Vec<usize> = data
            .field_index
            .rows_of(document, &data.doc_of_row, data.documents.len())
            .iter()
            .map(|&local| segment.offset + local as usize)
            .filter(|&row| !self.tombstoned.contains(row))
            .collect();
        rows.sort_by_key(|&row| data.chunks[row - segment.offset].index);
        rows
    }

    fn live(&self) -> &LiveDocuments {
        self.live
            .get_or_init(|| LiveDocuments::of(&self.segments, &self.tombstoned))
    }

    /// Rows that can appear in results (all but tombstoned).
    pub fn live_rows(&self) -> usize {
        self.rows - self.tombstoned.count()
    }
}
