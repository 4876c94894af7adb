//! Turning embedded documents into one segment's rows and indexes: shared by batch runs
//! and online ingestion. Rows are ordered by document URI, then chunk index.

use std::sync::Arc;
use std::time::Instant;

use super::model_reading::language_readings;
use super::stages::EmbeddedDoc;
use crate::chunk::Chunk;
use crate::embed::{Embeddings, ModelTokenizer};
use crate::error::{IndexerError, Result};
use crate::index::{build_keyword_index, build_vector_index, FaissIndex, IndexSpec};
use crate::snapshot::{DocumentRecord, LanguageReading, SegmentRowFiles, SnapshotWriter};

/// A segment's rows: chunk `i` has embedding row `i`.
pub struct SegmentRows {
    pub chunks: Vec<Chunk>,
    pub embeddings: Embeddings,
    pub records: Vec<DocumentRecord>,
}

impl SegmentRows {
    pub fn tokens(&self) -> u64 {
        self.chunks.iter().map(|c| c.token_count as u64).sum()
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
        embeddings: Embeddings { dim, data: Vec::with_capacity(total_chunks * dim) },
        records: Vec::with_capacity(documents.len()),
    };
    for EmbeddedDoc { record, chunks, vectors } in documents {
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
pub async fn build_segment_blocking(spec: IndexSpec, rows: SegmentRows, writer: &SnapshotWriter, segment_id: &str, tokenizer: Option<Arc<ModelTokenizer>>) -> Result<(BuiltIndexes, SegmentRowFiles, SegmentRows)> {
    let (writer, segment_id) = (writer.clone(), segment_id.to_string());
    tokio::task::spawn_blocking(move || {
        let (built, row_files) = rayon::join(|| build_indexes(&spec, &rows), || writer.write_row_files(&segment_id, &rows.chunks, &rows.embeddings, &rows.records));
        let mut built = built?;
        if let Some(tokenizer) = tokenizer {
            let texts: Vec<&str> = rows.chunks.iter().map(|c| c.text.as_str()).collect();
            built.languages = language_readings(&texts, &tokenizer)?;
        }
        Ok((built, row_files?, rows))
    })
    .await
    .map_err(|e| IndexerError::VectorIndex { stage: "build", reason: e.to_string() })?
}

/// Builds the FAISS and BM25 indexes over `rows` in parallel (blocking: call off the async runtime).
pub fn build_indexes(spec: &IndexSpec, rows: &SegmentRows) -> Result<BuiltIndexes> {
    let keyword_dir = tempfile::tempdir().map_err(|e| IndexerError::io(std::env::temp_dir(), e))?;
    let (vectors, keyword) = rayon::join(
        || {
            let started = Instant::now();
            build_vector_index(spec, rows.embeddings.dim, &rows.embeddings.data).map(|index| (index, started.elapsed().as_secs_f64()))
        },
        || {
            let started = Instant::now();
            build_keyword_index(keyword_dir.path(), rows.chunks.iter().map(|c| c.text.as_str())).map(|_| started.elapsed().as_secs_f64())
        },
    );
    let (vectors, vector_secs) = vectors?;
    Ok(BuiltIndexes { vectors, keyword_dir, vector_secs, keyword_secs: keyword?, languages: Vec::new() })
}
