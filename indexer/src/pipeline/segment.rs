//! Turning embedded documents into one segment's rows and indexes: shared by batch runs
//! and online ingestion. Rows are ordered by document URI, then chunk index.

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use super::model_reading::language_readings;
use super::types::EmbeddedDoc;
use super::vector_pool::on_vector_pool;
use crate::chunk::Chunk;
use crate::embed::{Embeddings, ModelTokenizer};
use crate::error::{IndexerError, Result};
use crate::index::analysis::{detect, Detected};
use crate::index::{build_keyword_index_detected, build_vector_index, FaissIndex, IndexSpec};
use crate::snapshot::{DocumentRecord, LanguageReading, SegmentRowFiles, SnapshotWriter};

/// A segment's rows: chunk `i` has embedding row `i`.
pub struct SegmentRows {
    pub chunks: Vec<Chunk>,
    pub embeddings: Embeddings,
    pub records: Vec<DocumentRecord>,
    /// Per row, its text's language where the parse stage told it: empty, or one per chunk
    /// (None: told when the indexes are built).
    pub languages: Vec<Option<Detected>>,
}

impl SegmentRows {
    /// No rows, of vectors of `dim` dimensions.
    pub fn empty(dim: usize) -> Self {
        Self {
            chunks: Vec::new(),
            embeddings: Embeddings { dim, data: Vec::new() },
            records: Vec::new(),
            languages: Vec::new(),
        }
    }

    pub fn tokens(&self) -> u64 {
        self.chunks.iter().map(|c| c.token_count as u64).sum()
    }

    /// Every row's language: those the parse stage told, the others detected now (in parallel).
    pub fn detected_languages(&self) -> Vec<Detected> {
        self.chunks
            .par_iter()
            .enumerate()
            .map(|(row, chunk)| {
                self.languages
                    .get(row)
                    .copied()
                    .flatten()
                    .unwrap_or_else(|| detect(&chunk.text))
            })
            .collect()
    }

    /// Appends `other`'s rows after these.
    pub fn extend(&mut self, other: SegmentRows) {
        self.languages.resize(self.chunks.len(), None);
        self.languages.extend(other.languages);
        self.chunks.extend(other.chunks);
        self.languages.resize(self.chunks.len(), None);
        self.embeddings.data.extend(other.embeddings.data);
        self.records.extend(other.records);
    }
}

/// Orders documents by URI and lays out their chunks and vectors row by row, into arrays
/// sized once (growing them by doubling would copy the vectors, 1.5 GB at 1M rows, several
/// times, and leave the outgrown copies to the allocator).
pub fn assemble(mut documents: Vec<EmbeddedDoc>, dim: usize) -> SegmentRows {
    documents.sort_by(|a, b| a.record.uri.cmp(&b.record.uri));
    let total_chunks: usize = documents.iter().map(|d| d.chunks.len()).sum();
    let mut rows = SegmentRows {
        chunks: Vec::with_capacity(total_chunks),
        embeddings: Embeddings {
            dim,
            data: Vec::with_capacity(total_chunks * dim),
        },
        records: Vec::with_capacity(documents.len()),
        languages: Vec::with_capacity(total_chunks),
    };
    for EmbeddedDoc {
        record,
        chunks,
        vectors,
        languages,
    } in documents
    {
        match languages.len() == chunks.len() {
            true => rows.languages.extend(languages.into_iter().map(Some)),
            false => rows.languages.extend(std::iter::repeat_n(None, chunks.len())),
        }
        rows.chunks.extend(chunks);
        rows.embeddings.data.extend_from_slice(&vectors);
        rows.records.push(record);
    }
    rows
}

/// Both indexes of a segment, built side by side; the keyword index lives in `keyword_dir`.
pub struct BuiltIndexes {
    pub vectors: FaissIndex,
    pub keyword_dir: tempfile::TempDir,
    pub vector_secs: f64,
    pub keyword_secs: f64,
    /// The rows' languages and how the model reads them (none measured without a tokenizer).
    pub languages: Vec<LanguageReading>,
}

/// [`build_indexes`] on the blocking pool with the segment's row files written beside them
/// (chunks.parquet needs no index), handing `rows` back with both; with the model's
/// `tokenizer`, how it reads the rows' languages is measured too.
pub async fn build_segment_blocking(
    spec: IndexSpec,
    rows: SegmentRows,
    writer: &SnapshotWriter,
    segment_id: &str,
    tokenizer: Option<Arc<ModelTokenizer>>,
) -> Result<(BuiltIndexes, SegmentRowFiles, SegmentRows)> {
    let (writer, segment_id) = (writer.clone(), segment_id.to_string());
    tokio::task::spawn_blocking(move || {
        let (built, row_files) = rayon::join(
            || build_indexes(&spec, &rows, tokenizer.as_deref()),
            || writer.write_row_files(&segment_id, &rows.chunks, &rows.embeddings, &rows.records),
        );
        Ok((built?, row_files?, rows))
    })
    .await
    .map_err(|e| IndexerError::VectorIndex {
        stage: "build",
        reason: e.to_string(),
    })?
}

/// Builds the FAISS and BM25 indexes over `rows` in parallel (blocking: call off the async
/// runtime); with the model's `tokenizer`, how it reads the rows' languages is measured too.
pub fn build_indexes(spec: &IndexSpec, rows: &SegmentRows, tokenizer: Option<&ModelTokenizer>) -> Result<BuiltIndexes> {
    let keyword_dir = tempfile::tempdir().map_err(|e| IndexerError::io(std::env::temp_dir(), e))?;
    let texts: Vec<&str> = rows.chunks.iter().map(|c| c.text.as_str()).collect();
    // The vector index on a pool of its own, so that its waits on the GPU do not help with
    // (and wait for) the keyword index's and the row files' work (`vector_pool`).
    let (vectors, keyword) = rayon::join(
        || {
            on_vector_pool(|| {
                let started = Instant::now();
                build_vector_index(spec, rows.embeddings.dim, &rows.embeddings.data)
                    .map(|index| (index, started.elapsed().as_secs_f64()))
            })
        },
        || {
            // The rows' languages count in the keyword index's time (those the parse stage told cost nothing here).
            let started = Instant::now();
            let detected = rows.detected_languages();
            build_keyword_index_detected(keyword_dir.path(), &texts, &detected)
                .map(|_| (started.elapsed().as_secs_f64(), detected))
        },
    );
    let (vectors, vector_secs) = vectors?;
    let (keyword_secs, detected) = keyword?;
    let languages = match tokenizer {
        Some(tokenizer) => language_readings(&texts, &detected, tokenizer)?,
        None => Vec::new(),
    };
    Ok(BuiltIndexes {
        vectors,
        keyword_dir,
        vector_secs,
        keyword_secs,
        languages,
    })
}
