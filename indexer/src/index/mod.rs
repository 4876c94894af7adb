//! Indexes over the chunk rows: [`VectorIndex`] (FAISS, inner product on normalized
//! vectors) and [`KeywordIndex`] (tantivy BM25). Row `i` of either index is row `i` of
//! chunks.parquet.

mod faiss_index;
mod keyword;
mod spec;

pub use faiss_index::{build_vector_index, load_vector_index, FaissIndex};
pub use keyword::{build_keyword_index, KeywordIndex, TantivyKeywordIndex, KEYWORD_ANALYZER};
pub use spec::{IndexKind, IndexOptions, IndexSpec};

use crate::error::Result;

/// One hit: the chunk row and its score (inner product = cosine for unit vectors).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub row: u64,
    pub score: f32,
}

/// An approximate (or exact) nearest-neighbour index over chunk embeddings.
pub trait VectorIndex: Send {
    fn spec(&self) -> &IndexSpec;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Top-`k` rows for each query (row-major `queries`, `dim` columns).
    fn search(&mut self, queries: &[f32], k: usize) -> Result<Vec<Vec<Hit>>>;
    /// Serializes the index to a local file.
    fn save(&self, path: &std::path::Path) -> Result<()>;
}
