//! Exact top-k inner-product search: every query against every (or every allowed) row.
//! The ground truth for ANN recall checks and the search path for selective filters.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rayon::prelude::*;

use crate::dot::dot;

/// A row and its inner product with the query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    pub row: u64,
    pub score: f32,
}

/// Min-heap entry: the worst kept hit sits on top. Ties keep the lower row.
struct Entry(Scored);

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.score.total_cmp(&self.0.score).then(self.0.row.cmp(&other.0.row))
    }
}

/// The `k` best of already scored rows, best first (ties keep the lower row): the selection
/// every exact search here ends with, for callers that score rows themselves.
pub fn top_k_of_scores(rows: impl Iterator<Item = (u64, f32)>, k: usize) -> Vec<Scored> {
    let mut heap = BinaryHeap::with_capacity(k + 1);
    for (row, score) in rows {
        heap.push(Entry(Scored { row, score }));
        if heap.len() > k {
            heap.pop();
        }
    }
    let mut hits: Vec<Scored> = heap.into_iter().map(|e| e.0).collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.row.cmp(&b.row)));
    hits
}

/// Top-`k` rows of `base` (row-major, `dim` columns) for each query, best first.
pub fn exact_top_k(queries: &[f32], base: &[f32], dim: usize, k: usize) -> Vec<Vec<Scored>> {
    queries
        .par_chunks(dim)
        .map(|q| top_k_of_scores(base.chunks(dim).enumerate().map(|(row, v)| (row as u64, dot(q, v))), k))
        .collect()
}

/// Top-`k` among the listed `rows` of `base` for one query, best first.
pub fn exact_top_k_in(query: &[f32], base: &[f32], dim: usize, rows: &[u64], k: usize) -> Vec<Scored> {
    top_k_of_scores(rows.iter().map(|&row| (row, dot(query, &base[row as usize * dim..(row as usize + 1) * dim]))), k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_best_rows_in_order() {
        let base = [1.0, 0.0, 0.0, 1.0, 0.7, 0.7, -1.0, 0.0];
        let hits = exact_top_k(&[1.0, 0.0, 0.0, 1.0], &base, 2, 2);
        assert_eq!(hits[0].iter().map(|h| h.row).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(hits[1].iter().map(|h| h.row).collect::<Vec<_>>(), [1, 2]);
        let hits = exact_top_k_in(&[1.0, 0.0], &base, 2, &[1, 3], 5);
        assert_eq!(hits.iter().map(|h| h.row).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(hits[1].score, -1.0);
    }

    #[test]
    fn ties_keep_the_lower_row() {
        let base = [1.0, 1.0, 1.0, 1.0];
        let hits = exact_top_k(&[1.0], &base, 1, 2);
        assert_eq!(hits[0].iter().map(|h| h.row).collect::<Vec<_>>(), [0, 1]);
    }
}
