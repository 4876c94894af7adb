//! A snapshot version loaded for search: chunk rows and embeddings in memory, one FAISS and
//! one tantivy index per segment, tombstoned rows excluded. Remote snapshots are copied to a
//! local cache keyed by version; every file is checked against the manifest on load.

use std::path::PathBuf;
use std::sync::Mutex;

use quarry_indexer::chunk::Chunk;
use quarry_indexer::embed::Embeddings;
use quarry_indexer::index::{load_vector_index, FaissIndex, RowSet, TantivyKeywordIndex};
use quarry_indexer::snapshot::{chunks_from_parquet, documents_from_parquet, layout, local_copy, DocumentRecord, Manifest, SnapshotReader};
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

/// One segment's indexes; its rows are `offset..offset + rows` of the snapshot.
pub struct LoadedSegment {
    pub id: String,
    pub offset: usize,
    pub rows: usize,
    /// FAISS searches take `&mut`; the lock serializes searches on one segment.
    pub vectors: Mutex<FaissIndex>,
    pub keyword: TantivyKeywordIndex,
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
}

fn read_file(path: &std::path::Path) -> Result<Vec<u8>, IndexerError> {
    std::fs::read(path).map_err(|cause| IndexerError::Io { path: path.to_path_buf(), cause })
}

impl LoadedSnapshot {
    /// Loads the snapshot at `uri` (LATEST unless `options.version`).
    pub async fn load(uri: &str, options: &LoadOptions) -> Result<Self, ServerError> {
        let reader = match &options.version {
            Some(version) => SnapshotReader::open_version(uri, version, &options.store).await?,
            None => SnapshotReader::open(uri, &options.store).await?,
        };
        let local = local_copy(&reader, &options.cache_dir).await?;
        let manifest = reader.manifest().clone();
        let uri = reader.uri().to_string();
        let verify = options.verify;
        tokio::task::spawn_blocking(move || Self::load_local(uri, manifest, local, verify))
            .await
            .map_err(|e| ServerError::InvalidRequest(format!("snapshot loader panicked: {e}")))?
    }

    fn load_local(uri: String, manifest: Manifest, root: PathBuf, verify: bool) -> Result<Self, ServerError> {
        if verify {
            let mut problems = Vec::new();
            for (relative, expected) in &manifest.checksums {
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
        let mut chunks = Vec::new();
        let mut embeddings = Embeddings { dim: manifest.model.dim, data: Vec::new() };
        let mut documents = Vec::new();
        let mut segments = Vec::new();
        let mut doc_of_row: Vec<u32> = Vec::new();
        for segment in &manifest.segments {
            let offset = chunks.len();
            let chunk_bytes = read_file(&root.join(layout::segment_file(&segment.id, layout::CHUNKS)))?;
            let (mut seg_chunks, seg_vectors) = chunks_from_parquet(chunk_bytes.into())?;
            let rows = seg_chunks.len();
            chunks.append(&mut seg_chunks);
            embeddings.data.extend_from_slice(&seg_vectors.data);
            let doc_bytes = read_file(&root.join(layout::segment_file(&segment.id, layout::DOCUMENTS)))?;
            // Rows map to documents of their own segment: a replaced document has one record per segment.
            let doc_base = documents.len();
            documents.extend(documents_from_parquet(doc_bytes.into())?);
            let doc_index: std::collections::HashMap<&str, u32> =
                documents[doc_base..].iter().enumerate().map(|(i, d)| (d.doc_id.as_str(), (doc_base + i) as u32)).collect();
            for chunk in &chunks[offset..] {
                let doc = doc_index.get(chunk.doc_id.as_str()).copied().ok_or_else(|| ServerError::Corrupt {
                    uri: uri.clone(),
                    problems: format!("chunk {} names document {} that segment {} does not hold", chunk.chunk_id, chunk.doc_id, segment.id),
                })?;
                doc_of_row.push(doc);
            }
            let vectors = load_vector_index(&root.join(layout::segment_file(&segment.id, layout::VECTORS)), &manifest.segment_index(segment))?;
            let keyword = TantivyKeywordIndex::open(&root.join(layout::segment_file(&segment.id, layout::KEYWORD_DIR)))?;
            segments.push(LoadedSegment { id: segment.id.clone(), offset, rows, vectors: Mutex::new(vectors), keyword });
        }
        let dead = manifest.tombstone_set();
        let mut tombstoned = RowSet::empty(chunks.len());
        for segment in &segments {
            for row in segment.offset..segment.offset + segment.rows {
                if dead.hides(&segment.id, &chunks[row].doc_id, &chunks[row].chunk_id) {
                    tombstoned.insert(row);
                }
            }
        }
        Ok(Self { uri, manifest, chunks, embeddings, documents, doc_of_row, segments, tombstoned })
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
