//! ANN recall@k against exact search over the same vectors: measured at publish time and
//! stored in the manifest, so a bad index never ships silently.

use serde::{Deserialize, Serialize};

use super::VectorIndex;
use crate::error::Result;

/// What the check measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecallCheck {
    pub k: usize,
    pub queries: usize,
    /// `given` (user queries) or `chunks` (a seeded sample of the indexed chunks).
    pub query_source: String,
    pub recall: f64,
}

/// Exact search's top `k` for each of a set of queries: what an index's answers are checked
/// against. It needs the vectors alone, not the index, so a run finds it while the index is
/// being built.
#[derive(Debug, Clone)]
pub struct ExactTruth {
    queries: Vec<f32>,
    k: usize,
    /// Each query's exact top-`k` rows.
    rows: Vec<Vec<u64>>,
}

impl ExactTruth {
    /// The exact top `k` over `base` (row-major, `dim` columns) of each of `queries`.
    pub fn of(base: &[f32], dim: usize, queries: Vec<f32>, k: usize) -> Result<Self> {
        let k = k.min(base.len() / dim.max(1));
        let rows = match queries.is_empty() || base.is_empty() {
            true => Vec::new(),
            false => super::vector_kernels()
                .exact_top_k(&queries, base, dim, k)?
                .into_iter()
                .map(|truth| truth.into_iter().map(|hit| hit.row).collect())
                .collect(),
        };
        Ok(Self { queries, k, rows })
    }

    /// How many queries were searched.
    pub fn queries(&self) -> usize {
        self.rows.len()
    }

    /// Mean recall@k of `index` against these answers (1 with no queries or no rows).
    pub fn recall_of(&self, index: &dyn VectorIndex) -> Result<f64> {
        if self.rows.is_empty() {
            return Ok(1.0);
        }
        let approximate = index.search(&self.queries, self.k)?;
        let total: f64 = self
            .rows
            .iter()
            .zip(&approximate)
            .map(|(truth, found)| {
                let hits = truth.iter().filter(|&&row| found.iter().any(|f| f.row == row)).count();
                hits as f64 / truth.len().max(1) as f64
            })
            .sum();
        Ok(total / self.rows.len() as f64)
    }
}

/// Mean recall@k of `index` against exact search over `base` for `queries` (row-major).
pub fn ann_recall(index: &dyn VectorIndex, base: &[f32], dim: usize, queries: &[f32], k: usize) -> Result<f64> {
    ExactTruth::of(base, dim, queries.to_vec(), k)?.recall_of(index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{build_vector_index, sample_rows, IndexSpec};

    #[test]
    fn flat_is_exact_and_a_starved_ivf_is_not() {
        let dim = 16;
        let base = crate::index::test_unit_vectors(2000, dim);
        let queries = sample_rows(&base, dim, 50);
        let flat = build_vector_index(&IndexSpec::Flat, dim, &base).unwrap();
        assert_eq!(ann_recall(&flat, &base, dim, &queries, 10).unwrap(), 1.0);
        let spec = IndexSpec::IvfFlat {
            nlist: 64,
            nprobe: 1,
            train_sample: 2000,
            trainer: Default::default(),
        };
        let ivf = build_vector_index(&spec, dim, &base).unwrap();
        let recall = ann_recall(&ivf, &base, dim, &queries, 10).unwrap();
        assert!(
            recall < 0.9,
            "nprobe=1 of 64 lists should miss neighbours, got {recall}"
        );
    }
}
