//! The host's share of a GPU top-k: a launch of `select_top_k` or `select_top_k_sorted`
//! (kernels/cuda/topk.cu) leaves each query one list of its k best per slice of the base,
//! best first; those lists are merged into the query's k best so far. Each list is already
//! sorted, so a query's merge is linear in its lists' length, not a sort of them all, and the
//! queries are merged side by side on the thread pool. For the graph build's k-means lists
//! (about 4,100 queries, two slices of k = 128 each) the host used to sort about a million
//! candidates a list, one query after another on one thread (`bench-slice-merge` times both).

use std::cmp::Ordering;

use rayon::prelude::*;

use crate::{best_first, Scored};

/// The row of an empty place in a slice's list (fewer rows than k).
pub const EMPTY_ROW: u64 = u64::MAX;

/// Merges one launch's lists into `lists`, each query's k best so far (best first): query
/// `q` (of `lists.len()`) has `slices` lists of `k` places, list `s` at
/// `[(q·slices + s)·k, (q·slices + s + 1)·k)` of `scores` and `rows`, best first, where
/// [`EMPTY_ROW`] marks an empty place. A list out of order (the kernels order -0.0 and +0.0,
/// and NaN, as equals) makes that query's candidates sorted whole instead, so the answer is
/// always the k best in [`best_first`] order.
pub fn merge_slice_lists(lists: &mut [Vec<Scored>], scores: &[f32], rows: &[u64], slices: usize, k: usize) {
    let per_query = slices * k;
    assert!(
        scores.len() >= lists.len() * per_query && rows.len() >= lists.len() * per_query,
        "a launch's lists hold {} places for {} queries of {slices} slices of {k}",
        scores.len().min(rows.len()),
        lists.len()
    );
    lists.par_iter_mut().enumerate().for_each(|(query, list)| {
        let first = query * per_query;
        let slice = |slice: usize| {
            let range = first + slice * k..first + (slice + 1) * k;
            (&rows[range.clone()], &scores[range])
        };
        let lengths: Option<Vec<usize>> = (0..slices).map(|s| sorted_length(slice(s))).collect();
        let Some(lengths) = lengths else {
            for (rows, scores) in (0..slices).map(slice) {
                let hits = rows.iter().zip(scores).filter(|&(&row, _)| row != EMPTY_ROW);
                list.extend(hits.map(|(&row, &score)| Scored { row, score }));
            }
            list.sort_by(best_first);
            list.truncate(k);
            return;
        };
        let mut merged = Vec::with_capacity(k);
        for (s, &length) in lengths.iter().enumerate() {
            let (rows, scores) = slice(s);
            let (mut ours, mut theirs) = (0, 0);
            while merged.len() < k && ours < list.len() && theirs < length {
                let hit = Scored {
                    row: rows[theirs],
                    score: scores[theirs],
                };
                let theirs_first = best_first(&hit, &list[ours]) == Ordering::Less;
                merged.push(if theirs_first { hit } else { list[ours] });
                theirs += theirs_first as usize;
                ours += !theirs_first as usize;
            }
            let room = k - merged.len();
            merged.extend(list[ours..].iter().take(room).copied());
            let room = k - merged.len();
            merged.extend(
                rows[theirs..length]
                    .iter()
                    .zip(&scores[theirs..length])
                    .take(room)
                    .map(|(&row, &score)| Scored { row, score }),
            );
            std::mem::swap(list, &mut merged);
            merged.clear();
        }
    });
}

/// How many places of a slice's list hold rows, when they come first and best first; `None`
/// when a row follows an empty place or the rows are out of [`best_first`] order.
fn sorted_length((rows, scores): (&[u64], &[f32])) -> Option<usize> {
    let length = rows.iter().position(|&row| row == EMPTY_ROW).unwrap_or(rows.len());
    let empties_last = rows[length..].iter().all(|&row| row == EMPTY_ROW);
    let in_order = (1..length).all(|i| {
        let (a, b) = (
            Scored {
                row: rows[i - 1],
                score: scores[i - 1],
            },
            Scored {
                row: rows[i],
                score: scores[i],
            },
        );
        best_first(&a, &b) == Ordering::Less
    });
    (empties_last && in_order).then_some(length)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch's out arrays from each query's slices (unsorted hits, sorted and padded here
    /// as the kernels write them).
    fn launch(slices_of_queries: &[Vec<Vec<(u64, f32)>>], k: usize) -> (Vec<f32>, Vec<u64>) {
        let (mut scores, mut rows) = (Vec::new(), Vec::new());
        for slices in slices_of_queries {
            for hits in slices {
                let mut hits: Vec<Scored> = hits.iter().map(|&(row, score)| Scored { row, score }).collect();
                hits.sort_by(best_first);
                hits.truncate(k);
                for place in 0..k {
                    let hit = hits.get(place);
                    scores.push(hit.map_or(f32::NEG_INFINITY, |h| h.score));
                    rows.push(hit.map_or(EMPTY_ROW, |h| h.row));
                }
            }
        }
        (scores, rows)
    }

    /// What the host did before: every candidate sorted, the first k kept.
    fn sorted_whole(list: &[Scored], scores: &[f32], rows: &[u64], k: usize) -> Vec<Scored> {
        let mut all = list.to_vec();
        all.extend(
            rows.iter()
                .zip(scores)
                .filter(|&(&row, _)| row != EMPTY_ROW)
                .map(|(&row, &score)| Scored { row, score }),
        );
        all.sort_by(best_first);
        all.truncate(k);
        all
    }

    #[test]
    fn merged_slices_keep_the_k_best_of_them_all_across_launches() {
        let mut lcg = crate::test_lcg::Lcg(0x736c_6963_6573);
        let mut next = |below: u64| lcg.below(below);
        for (queries, slices, k) in [(1, 1, 1), (5, 2, 8), (300, 3, 16), (64, 16, 128)] {
            let mut lists = vec![Vec::new(); queries];
            let mut expected = vec![Vec::new(); queries];
            let mut counter = 0u64;
            for launch_index in 0..3 {
                // Scores from a few values, so that ties (kept by the lower row) are common;
                // some slices short of k.
                // Distinct rows in no order across slices and launches (an odd multiplier
                // permutes the u32 values).
                let hits: Vec<Vec<Vec<(u64, f32)>>> = (0..queries)
                    .map(|_| {
                        (0..slices)
                            .map(|_| {
                                let rows = next(2 * k as u64 + 1);
                                (0..rows)
                                    .map(|_| {
                                        counter += 1;
                                        let row = (counter * 2_654_435_761) % (1 << 32);
                                        (row, next(7) as f32 / 4.0)
                                    })
                                    .collect()
                            })
                            .collect()
                    })
                    .collect();
                let (scores, rows) = launch(&hits, k);
                for (query, expected) in expected.iter_mut().enumerate() {
                    let range = query * slices * k..(query + 1) * slices * k;
                    *expected = sorted_whole(expected, &scores[range.clone()], &rows[range], k);
                }
                merge_slice_lists(&mut lists, &scores, &rows, slices, k);
                assert_eq!(
                    lists, expected,
                    "{queries} queries, {slices} slices of {k}, launch {launch_index}"
                );
            }
        }
    }

    #[test]
    fn a_slice_out_of_order_is_sorted_whole() {
        // The kernels rank -0.0 and +0.0 as equals (the lower row first); NaN places anywhere.
        let k = 3;
        let scores = [-0.0, 0.0, -1.0, f32::NAN, 0.5, 0.25];
        let rows = [1, 2, 3, 7, 8, EMPTY_ROW];
        let mut lists = vec![vec![Scored { row: 9, score: 0.0 }]];
        merge_slice_lists(&mut lists, &scores, &rows, 2, k);
        let expected = sorted_whole(&[Scored { row: 9, score: 0.0 }], &scores, &rows, k);
        assert_eq!(format!("{:?}", lists[0]), format!("{expected:?}"));
        assert_eq!(lists[0].iter().map(|h| h.row).collect::<Vec<_>>(), [7, 8, 2]);
    }
}
