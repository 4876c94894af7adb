//! Indexes over the chunk rows: [`VectorIndex`] (FAISS, inner product on normalized
//! vectors) and [`KeywordIndex`] (tantivy BM25, read by an [`analysis`] analyzer). Row `i` of either index is row `i` of
//! chunks.parquet.

pub mod analysis;
mod faiss_bytes;
mod faiss_hnsw;
mod faiss_index;
pub mod graph;
mod highlight;
mod kernels;
mod keyword;
mod keyword_build;
mod keyword_marks;
mod keyword_pairs;
mod keyword_parts;
mod keyword_query;
mod keyword_rows;
mod recall;
mod row_set;
mod rows;
mod spec;
mod stem_cache;
mod stored_vectors;
mod term_list;

pub use faiss_index::{
    build_graph_hnsw, build_vector_index, build_vector_index_into, load_vector_index, BuiltVectorIndex, FaissIndex,
    KERNEL_KMEANS_ITERATIONS, KERNEL_KMEANS_SEED,
};
pub use highlight::{char_ranges, QueryTerms};
pub use kernels::{init_vector_kernels, vector_kernels};
pub use keyword::{KeywordIndex, KeywordStats, TantivyKeywordIndex, KEYWORD_ANALYZER};
#[cfg(test)]
pub(crate) use keyword_build::segment_files as keyword_segment_files;
pub use keyword_build::{
    build_english_keyword_index, build_keyword_index, build_keyword_index_detected, keyword_index_files,
};
pub use keyword_parts::{build_keyword_index_with_parts, KeywordPart, PartsKept};
pub use keyword_query::{
    most_frequent, similarity, GroupTerm, KeywordQuery, NearTerm, TypingErrors, MAX_EDITS, MAX_GROUP_TERMS,
};
pub use recall::{ann_recall, ExactTruth, RecallCheck, TIE_TOLERANCE};
pub use row_set::RowSet;
pub use rows::sample_rows;
pub(crate) use rows::{gather_rows, seeded_rows};
pub use spec::{HnswBuilder, IndexKind, IndexOptions, IndexSpec, IvfTrainer, FLAT_MAX_ROWS};

use crate::error::Result;

/// One hit: the chunk row and its score (inner product = cosine for unit vectors).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub row: u64,
    pub score: f32,
}

/// An approximate (or exact) nearest-neighbour index over chunk embeddings.
pub trait VectorIndex: Send + Sync {
    fn spec(&self) -> &IndexSpec;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Top-`k` rows for each query (row-major `queries`, `dim` columns). Searches only read
    /// the index: several threads may search one index at once.
    fn search(&self, queries: &[f32], k: usize) -> Result<Vec<Vec<Hit>>>;
    /// Top-`k` rows for one query among the `allowed` rows only (the filter applies
    /// inside the search, not to its result).
    fn search_in(&self, query: &[f32], k: usize, allowed: &RowSet) -> Result<Vec<Hit>>;
    /// Serializes the index to a local file.
    fn save(&self, path: &std::path::Path) -> Result<()>;
    /// Serializes the index into `out`: the bytes [`Self::save`] writes to a file, handed on
    /// as they are made (to sum them as they are written, say).
    fn write_to(&self, out: &mut dyn std::io::Write) -> Result<()>;
}

/// Seeded random unit vectors for the index tests.
#[cfg(test)]
pub(crate) fn test_unit_vectors(rows: usize, dim: usize) -> Vec<f32> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut data: Vec<f32> = (0..rows * dim).map(|_| rng.random_range(-1.0..1.0)).collect();
    for row in data.chunks_mut(dim) {
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        row.iter_mut().for_each(|x| *x /= norm);
    }
    data
}

/// Seeded unit vectors around 64 random centres, for the index tests: neighbourhoods, as
/// real embeddings have.
#[cfg(test)]
pub(crate) fn test_clustered_vectors(rows: usize, dim: usize) -> Vec<f32> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let centres: Vec<f32> = (0..64 * dim).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut data = Vec::with_capacity(rows * dim);
    for _ in 0..rows {
        let centre = &centres[rng.random_range(0..64) * dim..][..dim];
        let row: Vec<f32> = centre
            .iter()
            .map(|c| c + 0.5 * rng.random_range(-1.0f32..1.0))
            .collect();
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        data.extend(row.iter().map(|x| x / norm));
    }
    data
}
