//! ANN recall@k against exact search over the same vectors: measured at publish time and
//! stored in the manifest, so a bad index never ships silently.

use serde::{Deserialize, Serialize};

use super::{Hit, VectorIndex};
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

/// Rows past the `k`-th that exact search also finds, so that an answer tied with the `k`-th
/// (a duplicate chunk, say) counts as a true neighbour whichever of the tied rows it names.
const TIES_BEYOND_K: usize = 10;

/// Scores this close count as tied: two sums of the same 384 products in another order
/// (FAISS's BLAS and quarry's kernels) differ by up to a few 1e-7, which reorders rows whose
/// scores are that close (seen on gen-corpus chunks: 0.9034520 and 0.9034517, swapped).
pub const TIE_TOLERANCE: f32 = 1e-5;

/// Exact search's top `k` for each of a set of queries: what an index's answers are checked
/// against. It needs the vectors alone, not the index, so a run finds it while the index is
/// being built.
#[derive(Debug, Clone)]
pub struct ExactTruth {
    queries: Vec<f32>,
    k: usize,
    /// Each query's exact top `k` + [`TIES_BEYOND_K`] rows, best first, with their scores.
    hits: Vec<Vec<quarry_kernels::Scored>>,
}

impl ExactTruth {
    /// The exact top `k` over `base` (row-major, `dim` columns) of each of `queries`.
    pub fn of(base: &[f32], dim: usize, queries: Vec<f32>, k: usize) -> Result<Self> {
        let rows = base.len() / dim.max(1);
        let k = k.min(rows);
        let hits = match queries.is_empty() || base.is_empty() {
            true => Vec::new(),
            false => super::vector_kernels().exact_top_k(&queries, base, dim, (k + TIES_BEYOND_K).min(rows))?,
        };
        Ok(Self { queries, k, hits })
    }

    /// How many queries were searched.
    pub fn queries(&self) -> usize {
        self.hits.len()
    }

    /// Mean recall@k of `index` against these answers (1 with no queries or no rows): the
    /// share of each query's true top `k` the index's `k` answers hold, where an answer
    /// whose exact score ties the `k`-th's (within [`TIE_TOLERANCE`]) counts as one of them
    /// ([`Self::recall_of_answers`]).
    pub fn recall_of(&self, index: &dyn VectorIndex) -> Result<f64> {
        if self.hits.is_empty() {
            return Ok(1.0);
        }
        let answers = index.search(&self.queries, self.k)?;
        Ok(self.recall_of_answers(&answers, index.spec().scores_exactly()))
    }

    /// Each query's `k`-th exact score (the lowest a true neighbour has; minus infinity for
    /// a query with nothing to find).
    pub fn kth_scores(&self) -> Vec<f32> {
        self.hits
            .iter()
            .map(|truth| match self.k.min(truth.len()).checked_sub(1) {
                Some(last) => truth[last].score,
                None => f32::NEG_INFINITY,
            })
            .collect()
    }

    /// Each query's rows that count as one of its true top `k` by their row alone: the exact
    /// top `k`, then the rows exact search found whose score ties the `k`-th's (within
    /// [`TIE_TOLERANCE`]; up to [`TIES_BEYOND_K`] of them).
    pub fn true_neighbours(&self) -> Vec<Vec<u64>> {
        self.hits
            .iter()
            .zip(self.kth_scores())
            .map(|(truth, kth)| {
                let k = self.k.min(truth.len());
                truth
                    .iter()
                    .enumerate()
                    .take_while(|&(rank, hit)| rank < k || hit.score >= kth - TIE_TOLERANCE)
                    .map(|(_, hit)| hit.row)
                    .collect()
            })
            .collect()
    }

    /// Mean recall@k of an index's `answers` (in query order): each query's distinct answered
    /// rows that are true neighbours, at most `k`, over `k` (1 for a query with nothing to
    /// find). An answer is a true neighbour when it is one of [`Self::true_neighbours`], or,
    /// where the index's scores are the exact inner products (`exact_scores`), when its
    /// score ties the `k`-th's: a query among more copies of one chunk than exact search
    /// listed then counts whichever copies the index names.
    pub fn recall_of_answers(&self, answers: &[Vec<Hit>], exact_scores: bool) -> f64 {
        if self.hits.is_empty() {
            return 1.0;
        }
        let total: f64 = self
            .true_neighbours()
            .iter()
            .zip(self.kth_scores())
            .zip(answers)
            .map(|((truth, kth), found)| {
                let wanted = self.k.min(truth.len());
                if wanted == 0 {
                    return 1.0;
                }
                let mut rows: Vec<u64> = found
                    .iter()
                    .filter(|hit| truth.contains(&hit.row) || (exact_scores && hit.score >= kth - TIE_TOLERANCE))
                    .map(|hit| hit.row)
                    .collect();
                rows.sort_unstable();
                rows.dedup();
                rows.len().min(wanted) as f64 / wanted as f64
            })
            .sum();
        total / self.hits.len() as f64
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

    /// An IVF over `base` searching one of its `nlist` lists: it misses neighbours.
    fn starved_ivf(base: &[f32], dim: usize, nlist: usize) -> crate::index::FaissIndex {
        let spec = IndexSpec::IvfFlat {
            nlist,
            nprobe: 1,
            train_sample: base.len() / dim,
            trainer: Default::default(),
        };
        build_vector_index(&spec, dim, base).unwrap()
    }

    #[test]
    fn flat_is_exact_and_a_starved_ivf_is_not() {
        let dim = 16;
        let base = crate::index::test_unit_vectors(2000, dim);
        let queries = sample_rows(&base, dim, 50);
        let flat = build_vector_index(&IndexSpec::Flat, dim, &base).unwrap();
        assert_eq!(ann_recall(&flat, &base, dim, &queries, 10).unwrap(), 1.0);
        let ivf = starved_ivf(&base, dim, 64);
        let recall = ann_recall(&ivf, &base, dim, &queries, 10).unwrap();
        assert!(
            recall < 0.9,
            "nprobe=1 of 64 lists should miss neighbours, got {recall}"
        );
    }

    /// A flat index over the rows in reverse order, answering with the original rows: of
    /// tied rows it names the last ones, where exact search names the first.
    struct LastOfTies {
        reversed: crate::index::FaissIndex,
        rows: u64,
    }

    impl VectorIndex for LastOfTies {
        fn spec(&self) -> &IndexSpec {
            self.reversed.spec()
        }
        fn len(&self) -> usize {
            self.reversed.len()
        }
        fn search(&self, queries: &[f32], k: usize) -> Result<Vec<Vec<crate::index::Hit>>> {
            let mut answers = self.reversed.search(queries, k)?;
            for hit in answers.iter_mut().flatten() {
                hit.row = self.rows - 1 - hit.row;
            }
            Ok(answers)
        }
        fn search_in(&self, _: &[f32], _: usize, _: &crate::index::RowSet) -> Result<Vec<crate::index::Hit>> {
            unreachable!("the recall check searches without a filter")
        }
        fn save(&self, path: &std::path::Path) -> Result<()> {
            self.reversed.save(path)
        }
        fn write_to(&self, out: &mut dyn std::io::Write) -> Result<()> {
            self.reversed.write_to(out)
        }
    }

    #[test]
    fn an_answer_tied_with_the_kth_counts_whichever_tied_row_it_names() {
        let dim = 16;
        // Rows 0..15 are one vector (ties for a query near it), the rest distinct.
        let mut base = crate::index::test_unit_vectors(600, dim);
        let copy = base[..dim].to_vec();
        for row in 1..15 {
            base[row * dim..(row + 1) * dim].copy_from_slice(&copy);
        }
        let rows = base.len() / dim;
        let reversed: Vec<f32> = base.chunks_exact(dim).rev().flatten().copied().collect();
        let index = LastOfTies {
            reversed: build_vector_index(&IndexSpec::Flat, dim, &reversed).unwrap(),
            rows: rows as u64,
        };
        // A copy itself: its 10 nearest are 10 of the 15 copies; the index names the last 10,
        // exact search the first 10 (only rows 5..9 in both).
        let truth = ExactTruth::of(&base, dim, copy.clone(), 10).unwrap();
        assert_eq!(truth.recall_of(&index).unwrap(), 1.0);
        // Distinct rows are not ties: the index's answers are exact, so recall is still 1,
        // and an index that misses a true neighbour is still caught.
        let queries = sample_rows(&base[15 * dim..], dim, 20);
        assert_eq!(ann_recall(&index, &base, dim, &queries, 10).unwrap(), 1.0);
        let ivf = starved_ivf(&base, dim, 32);
        assert!(ann_recall(&ivf, &base, dim, &queries, 10).unwrap() < 0.95);
    }
}
