//! Exact top-k inner-product search: every query against every (or every allowed) row.
//! The ground truth for ANN recall checks and the search path for selective filters. A few
//! queries scan the base with dot products; more go through blocked matrix products
//! ([`crate::gemm_scores`]), a block of queries against a part of the base per task.

use std::cmp::Ordering;

use rayon::prelude::*;

use crate::dot::dot;
use crate::gemm_scores::block_scores;

/// A row and its inner product with the query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    pub row: u64,
    pub score: f32,
}

/// Higher score first, then the lower row: the order of every exact top-k here.
pub fn best_first(a: &Scored, b: &Scored) -> Ordering {
    b.score.total_cmp(&a.score).then(a.row.cmp(&b.row))
}

/// The `k` best rows offered so far. Rows are kept unordered, up to twice `k`, then cut to
/// the `k` best by one selection, whose last (the k-th best) every later row must beat: a
/// row no better costs one comparison, a better one a push, and each cut is linear in what
/// it keeps. (A binary heap of `k` paid a push and a pop, each a walk through its levels,
/// for every row it took: about a quarter of the graph build's kNN list searches at k = 128
/// in a profile, bench/RESULTS.md "Exact top-k without a heap".)
struct Best {
    k: usize,
    kept: Vec<Scored>,
    /// The k-th best kept at the last cut; `None` before the first.
    worst: Option<Scored>,
}

impl Best {
    fn new(k: usize) -> Self {
        Self {
            k,
            // Grown as rows come: a large k over few rows allocates for the rows.
            kept: Vec::with_capacity(Self::capacity(k).min(1_024)),
            worst: None,
        }
    }

    /// Rows kept before a cut.
    fn capacity(k: usize) -> usize {
        (2 * k).max(k + 16)
    }

    #[inline]
    fn offer(&mut self, row: u64, score: f32) {
        let hit = Scored { row, score };
        if let Some(worst) = &self.worst {
            if best_first(&hit, worst) != Ordering::Less {
                return;
            }
        }
        if self.k == 0 {
            return;
        }
        self.kept.push(hit);
        if self.kept.len() == Self::capacity(self.k) {
            self.cut();
        }
    }

    /// [`Best::offer`] of `scores`, the scores of rows `first_row`, `first_row + 1`, ...:
    /// eight at a time, eight that all score below the k-th best kept skipped with one
    /// vector comparison (which lets NaN, and scores equal to the k-th, through to `offer`).
    fn offer_run(&mut self, first_row: u64, scores: &[f32]) {
        const LANES: usize = 8;
        let mut row = first_row;
        for eight in scores.chunks(LANES) {
            if let Some(worst) = &self.worst {
                let floor = worst.score;
                if !eight
                    .iter()
                    .fold(false, |any, &score| any | (score >= floor) | score.is_nan())
                {
                    row += eight.len() as u64;
                    continue;
                }
            }
            for &score in eight {
                self.offer(row, score);
                row += 1;
            }
        }
    }

    /// Keeps the `k` best (unordered), the k-th of them last.
    fn cut(&mut self) {
        let k = self.k;
        self.kept.select_nth_unstable_by(k - 1, best_first);
        self.kept.truncate(k);
        self.worst = Some(self.kept[k - 1]);
    }

    /// Best first (ties keep the lower row).
    fn into_sorted(mut self) -> Vec<Scored> {
        self.kept.sort_unstable_by(best_first);
        self.kept.truncate(self.k);
        self.kept
    }
}

/// The `k` best of already scored rows, best first (ties keep the lower row): the selection
/// every exact search here ends with, for callers that score rows themselves.
pub fn top_k_of_scores(rows: impl Iterator<Item = (u64, f32)>, k: usize) -> Vec<Scored> {
    let mut best = Best::new(k);
    rows.for_each(|(row, score)| best.offer(row, score));
    best.into_sorted()
}

/// From this many queries on, [`exact_top_k`] scores by blocked matrix products: below it
/// each query reads the base once, which is all a dot product per row costs too.
const BLOCKED_MIN_QUERIES: usize = 4;
/// Queries per matrix product.
const QUERY_BLOCK: usize = 64;
/// Base rows per matrix product: 64 × 256 scores (64 KiB) stay in cache for the selection.
const BASE_BLOCK: usize = 256;
/// Base rows per task (a whole number of blocks, so block shapes, and with them the bits of
/// every score, do not depend on the thread count).
const PART_ROWS: usize = BASE_BLOCK * 256;

/// Top-`k` rows of `base` (row-major, `dim` columns) for each query, best first.
pub fn exact_top_k(queries: &[f32], base: &[f32], dim: usize, k: usize) -> Vec<Vec<Scored>> {
    let count = queries.len() / dim.max(1);
    if count < BLOCKED_MIN_QUERIES || k == 0 {
        return queries
            .par_chunks(dim.max(1))
            .map(|q| top_k_of_scores(base.chunks(dim).enumerate().map(|(row, v)| (row as u64, dot(q, v))), k))
            .collect();
    }
    let rows = base.len() / dim;
    let parts = rows.div_ceil(PART_ROWS);
    let tasks: Vec<(usize, usize)> = (0..count.div_ceil(QUERY_BLOCK))
        .flat_map(|block| (0..parts).map(move |part| (block, part)))
        .collect();
    let found: Vec<Vec<Vec<Scored>>> = tasks
        .par_iter()
        .map(|&(block, part)| {
            let block_queries = &queries[block * QUERY_BLOCK * dim..((block + 1) * QUERY_BLOCK).min(count) * dim];
            let first_row = part * PART_ROWS;
            blocked_top_k(
                block_queries,
                &base[first_row * dim..(first_row + PART_ROWS).min(rows) * dim],
                first_row,
                dim,
                k,
            )
        })
        .collect();
    // Each query's lists from every part of the base, merged (none for an empty base).
    (0..count)
        .map(|query| {
            let (block, within) = (query / QUERY_BLOCK, query % QUERY_BLOCK);
            let lists = &found[block * parts..(block + 1) * parts];
            top_k_of_scores(
                lists
                    .iter()
                    .filter_map(|lists| lists.get(within))
                    .flatten()
                    .map(|hit| (hit.row, hit.score)),
                k,
            )
        })
        .collect()
}

/// Top-`k` among the listed `rows` of `base` for one query, best first.
pub fn exact_top_k_in(query: &[f32], base: &[f32], dim: usize, rows: &[u64], k: usize) -> Vec<Scored> {
    top_k_of_scores(
        rows.iter()
            .map(|&row| (row, dot(query, &base[row as usize * dim..(row as usize + 1) * dim]))),
        k,
    )
}

/// Top-`k` of one part of the base (its rows numbered from `first_row`) for each query of a
/// block, scored `BASE_BLOCK` rows at a time.
fn blocked_top_k(queries: &[f32], part: &[f32], first_row: usize, dim: usize, k: usize) -> Vec<Vec<Scored>> {
    let mut best: Vec<Best> = (0..queries.len() / dim).map(|_| Best::new(k)).collect();
    let mut scores = Vec::new();
    for (block, rows) in part.chunks(BASE_BLOCK * dim).enumerate() {
        block_scores(queries, rows, dim, &mut scores);
        let (row0, width) = (first_row + block * BASE_BLOCK, rows.len() / dim);
        for (best, row_scores) in best.iter_mut().zip(scores.chunks(width)) {
            best.offer_run(row0 as u64, row_scores);
        }
    }
    best.into_iter().map(Best::into_sorted).collect()
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

    #[test]
    fn the_k_best_are_those_of_a_full_sort_through_many_cuts_and_ties() {
        let mut lcg = crate::test_lcg::Lcg(11);
        // Scores from a few values, so that the k-th best ties with rows still to come
        // (NaN and the infinities among them); the rows offered in a scrambled order, each
        // once.
        let few = [1.0, 0.5, 0.5, 0.0];
        let odd = [
            0.5,
            -0.25,
            1.0,
            f32::NAN,
            0.5,
            f32::NEG_INFINITY,
            0.75,
            f32::INFINITY,
            0.0,
        ];
        for values in [&few[..], &odd[..]] {
            for (count, k) in [
                (0, 3),
                (5, 0),
                (5, 9),
                (40, 1),
                (1_000, 7),
                (5_000, 128),
                (5_000, 700),
                (20_000, 5_000),
            ] {
                let offered: Vec<(u64, f32)> = (0..count as u64)
                    .map(|i| {
                        let value = values[lcg.below(values.len() as u64) as usize];
                        ((i * 7919) % count.max(1) as u64, value)
                    })
                    .collect();
                let mut sorted: Vec<Scored> = offered.iter().map(|&(row, score)| Scored { row, score }).collect();
                sorted.sort_by(best_first);
                sorted.truncate(k);
                // One by one, and as runs of consecutive rows (37 at a time).
                let mut by_row = vec![0.0; count];
                offered.iter().for_each(|&(row, score)| by_row[row as usize] = score);
                let mut runs = Best::new(k);
                for (run, scores) in by_row.chunks(37).enumerate() {
                    runs.offer_run(37 * run as u64, scores);
                }
                for found in [top_k_of_scores(offered.iter().copied(), k), runs.into_sorted()] {
                    assert_eq!(found.len(), sorted.len(), "{count} rows, k = {k}");
                    for (hit, truth) in found.iter().zip(&sorted) {
                        assert!(
                            hit.row == truth.row && hit.score.total_cmp(&truth.score).is_eq(),
                            "{count} rows, k = {k}: {hit:?} vs {truth:?}"
                        );
                    }
                }
            }
        }
    }

    /// Seeded unit vectors.
    fn unit_rows(rows: usize, dim: usize, seed: u64) -> Vec<f32> {
        let mut lcg = crate::test_lcg::Lcg(seed);
        let mut data: Vec<f32> = (0..rows * dim).map(|_| lcg.centred()).collect();
        for row in data.chunks_mut(dim) {
            let norm = dot(row, row).sqrt().max(1e-6);
            row.iter_mut().for_each(|x| *x /= norm);
        }
        data
    }

    #[test]
    fn blocked_products_find_what_a_scan_finds_across_parts_and_ties() {
        let (dim, rows, k) = (8, PART_ROWS + 1000, 7);
        let mut base = unit_rows(rows, dim, 3);
        // Row PART_ROWS + 7, in the second part, is row 7 again: an exact tie across parts.
        base.copy_within(7 * dim..8 * dim, (PART_ROWS + 7) * dim);
        let mut queries = unit_rows(QUERY_BLOCK + 5, dim, 4);
        queries[..dim].copy_from_slice(&base[7 * dim..8 * dim]);
        let blocked = exact_top_k(&queries, &base, dim, k);
        assert_eq!(blocked.len(), QUERY_BLOCK + 5);
        for (query, found) in queries.chunks(dim).zip(&blocked) {
            let scanned = top_k_of_scores(
                base.chunks(dim).enumerate().map(|(row, v)| (row as u64, dot(query, v))),
                k,
            );
            assert_eq!(found.len(), k);
            for (hit, truth) in found.iter().zip(&scanned) {
                assert!((hit.score - truth.score).abs() < 1e-5, "{hit:?} vs {truth:?}");
                let own = dot(query, &base[hit.row as usize * dim..(hit.row as usize + 1) * dim]);
                assert!(
                    (own - hit.score).abs() < 1e-5 && own >= scanned[k - 1].score - 1e-5,
                    "row {} does not belong in the top {k}",
                    hit.row
                );
            }
            assert!(
                found
                    .windows(2)
                    .all(|w| w[0].score > w[1].score || (w[0].score == w[1].score && w[0].row < w[1].row)),
                "best first"
            );
        }
        let tied: Vec<u64> = blocked[0][..2].iter().map(|h| h.row).collect();
        assert_eq!(
            tied,
            [7, PART_ROWS as u64 + 7],
            "the tie keeps the lower row first: {:?}",
            blocked[0]
        );
        // Fewer queries than the blocked path takes, k of zero, and an empty base.
        assert_eq!(
            exact_top_k(&queries[..dim], &base, dim, k)[0]
                .iter()
                .map(|h| h.row)
                .collect::<Vec<_>>()[..2],
            [7, PART_ROWS as u64 + 7]
        );
        assert!(exact_top_k(&queries, &base, dim, 0).iter().all(Vec::is_empty));
        assert!(exact_top_k(&queries, &[], dim, k).iter().all(Vec::is_empty));
    }
}
