//! CAGRA's graph optimization (Ootomo et al., "CAGRA: Highly Parallel Graph Construction and
//! Approximate Nearest Neighbor Search for GPUs", 2024), on ranks alone — no distances:
//!
//! 1. each row's kNN list is reordered by its *detourable routes* and the first `degree`
//!    kept (`VectorKernels::order_by_detours`: the GPU in a `cuda` build with one);
//! 2. reverse links are added: half of a row's slots keep its first kept links, the rest
//!    take the rows that link to it (those that rank it highest first), and what is left
//!    is filled from its own kept links.

use quarry_kernels::VectorKernels;
use rayon::prelude::*;

use super::hnsw_graph::NO_LINK;
use super::knn_lists::{KnnLists, NO_ROW};
use super::row_bits::{place_once, words_for};
use crate::error::Result;

/// `degree` links a row (padded with [`NO_LINK`]) for every row of `lists`, with the
/// seconds the detour counts took (the kernels' share; the rest is the reverse links, on
/// the CPU).
pub fn prune_with_reverse_links(
    kernels: &dyn VectorKernels,
    lists: &KnnLists,
    degree: usize,
) -> Result<(Vec<i32>, f64)> {
    let rows = lists.rows();
    if degree == 0 {
        return Ok((Vec::new(), 0.0));
    }
    let started = std::time::Instant::now();
    let kept = kernels.order_by_detours(&lists.ids, lists.k, degree)?;
    let detour_secs = started.elapsed().as_secs_f64();
    Ok((with_reverse_links(&kept, rows, degree), detour_secs))
}

/// Each row's `degree` links from its `kept` links (pruned, best first) and the rows that
/// keep a link to it ([`reverse_links`]): the first half of its kept links, then the
/// incoming ones, then the rest of its kept ones, each row once (through a bit per row,
/// all clear between rows), never itself.
fn with_reverse_links(kept: &[u32], rows: usize, degree: usize) -> Vec<i32> {
    let (reverse, reverse_len) = reverse_links(kept, rows, degree);
    let mut links = vec![NO_LINK; rows * degree];
    links.par_chunks_mut(degree).enumerate().for_each_init(
        || vec![0u64; words_for(rows)],
        |seen, (row, out)| {
            let candidates = candidates(kept, &reverse, &reverse_len, row, degree).map(|id| id as i32);
            place_once(out, candidates, seen);
        },
    );
    links
}

/// Row `row`'s candidate links in the order it takes them: the first half of its `kept`
/// links, the rows that link to it (`reverse`, `reverse_len` of them), the rest of its kept
/// links; without empty places and itself.
fn candidates<'a>(
    kept: &'a [u32],
    reverse: &'a [u32],
    reverse_len: &[u32],
    row: usize,
    degree: usize,
) -> impl Iterator<Item = u32> + 'a {
    let forward = &kept[row * degree..(row + 1) * degree];
    let incoming = &reverse[row * degree..row * degree + reverse_len[row] as usize];
    forward[..degree / 2]
        .iter()
        .chain(incoming)
        .chain(&forward[degree / 2..])
        .copied()
        .filter(move |&id| id != NO_ROW && id as usize != row)
}

/// For each row, up to `degree` rows that keep a link to it, those that rank it highest
/// first (then the lower row); with their counts. Each thread of the pool owns a range of
/// target rows: it reads every kept list in memory order twice (to count its rows' incoming
/// links, then to place them), then orders each of its rows' incoming links. The same as
/// walking the ranks one after another over every row ([`reverse_links_by_rank`]), which
/// reads the lists across their memory and on one thread.
pub(super) fn reverse_links(kept: &[u32], rows: usize, degree: usize) -> (Vec<u32>, Vec<u32>) {
    let mut reverse = vec![NO_ROW; rows * degree];
    let mut len = vec![0u32; rows];
    if rows == 0 || degree == 0 {
        return (reverse, len);
    }
    let per_part = rows.div_ceil(rayon::current_num_threads().max(1));
    reverse
        .par_chunks_mut(per_part * degree)
        .zip(len.par_chunks_mut(per_part))
        .enumerate()
        .for_each(|(part, (reverse, len))| {
            let first = part * per_part;
            let targets = first..first + len.len();
            // (row of the part, rank, from) of every incoming link, in memory order.
            let incoming = |visit: &mut dyn FnMut(usize, u64)| {
                for (from, list) in kept.chunks_exact(degree).enumerate() {
                    for (rank, &to) in list.iter().enumerate() {
                        if to != NO_ROW && to as usize != from && targets.contains(&(to as usize)) {
                            visit(to as usize - first, ((rank as u64) << 32) | from as u64);
                        }
                    }
                }
            };
            let mut starts = vec![0usize; len.len() + 1];
            incoming(&mut |row, _| starts[row + 1] += 1);
            for row in 0..len.len() {
                starts[row + 1] += starts[row];
            }
            let mut keys = vec![0u64; starts[len.len()]];
            let mut filled = starts.clone();
            incoming(&mut |row, key| {
                keys[filled[row]] = key;
                filled[row] += 1;
            });
            for (row, (slots, count)) in reverse.chunks_mut(degree).zip(len.iter_mut()).enumerate() {
                let keys = &mut keys[starts[row]..starts[row + 1]];
                keys.sort_unstable();
                for (slot, &key) in slots.iter_mut().zip(keys.iter()) {
                    *slot = key as u32;
                }
                *count = keys.len().min(degree) as u32;
            }
        });
    (reverse, len)
}

/// [`with_reverse_links`] with each row's links found by searching the ones it holds so far:
/// the reference it is tested against.
#[cfg(test)]
fn with_reverse_links_by_search(kept: &[u32], rows: usize, degree: usize) -> Vec<i32> {
    let (reverse, reverse_len) = reverse_links(kept, rows, degree);
    let mut links = vec![NO_LINK; rows * degree];
    links.par_chunks_mut(degree).enumerate().for_each(|(row, out)| {
        let mut filled = 0;
        for id in candidates(kept, &reverse, &reverse_len, row, degree) {
            if filled < degree && !out[..filled].contains(&(id as i32)) {
                out[filled] = id as i32;
                filled += 1;
            }
        }
    });
    links
}

/// [`reverse_links`] rank after rank over every row, on one thread: the reference it is
/// tested against.
#[cfg(test)]
fn reverse_links_by_rank(kept: &[u32], rows: usize, degree: usize) -> (Vec<u32>, Vec<u32>) {
    let mut reverse = vec![NO_ROW; rows * degree];
    let mut len = vec![0u32; rows];
    for rank in 0..degree {
        for from in 0..rows {
            let to = kept[from * degree + rank];
            if to == NO_ROW || to as usize == from {
                continue;
            }
            let count = &mut len[to as usize];
            if (*count as usize) < degree {
                reverse[to as usize * degree + *count as usize] = from as u32;
                *count += 1;
            }
        }
    }
    (reverse, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverse_links_reach_a_row_nobody_lists() {
        // Nobody lists row 5; it lists row 0 first, so row 0 links back to it.
        #[rustfmt::skip]
        let ids = vec![
            1, 2, 3, 4,
            2, 0, 3, 4,
            1, 3, 0, 4,
            2, 4, 1, 0,
            3, 2, 1, 0,
            0, 1, 2, 3,
        ];
        let lists = KnnLists { k: 4, ids };
        let (links, _) = prune_with_reverse_links(&quarry_kernels::CpuKernels, &lists, 4).unwrap();
        for row in 0..6 {
            let mut row_links = links[row * 4..row * 4 + 4].to_vec();
            assert!(!row_links.contains(&(row as i32)), "row {row} links itself");
            assert!(!row_links.contains(&NO_LINK), "row {row}: {row_links:?}");
            row_links.sort_unstable();
            row_links.dedup();
            assert_eq!(row_links.len(), 4, "row {row} links a row twice");
        }
        assert!(links[..4].contains(&5), "{:?}", &links[..4]);
        assert_eq!(&links[..2], &[1, 2], "half the slots keep the first kept links");
    }

    /// Seeded kept lists of `rows` × `degree`: a few popular rows (more incoming links than
    /// slots, and listed twice in a list), empty places, and rows that keep themselves.
    fn seeded_kept(rows: usize, degree: usize, seed: u64) -> Vec<u32> {
        let mut state = seed;
        let mut next = |below: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % below
        };
        (0..rows * degree)
            .map(|i| match next(10) {
                0 => NO_ROW,
                1 => (i / degree) as u32,
                2 => next(3) as u32,
                _ => next(rows as u64) as u32,
            })
            .collect()
    }

    #[test]
    fn each_rows_links_are_those_a_search_of_what_it_holds_keeps() {
        for (rows, degree) in [(1, 4), (7, 3), (1_000, 8), (5_003, 16), (300, 64)] {
            let kept = seeded_kept(rows, degree, 0x6c69_6e6b);
            assert_eq!(
                with_reverse_links(&kept, rows, degree),
                with_reverse_links_by_search(&kept, rows, degree),
                "{rows} rows of {degree}"
            );
        }
    }

    #[test]
    fn reverse_links_are_those_of_a_walk_rank_after_rank() {
        for (rows, degree) in [(1, 4), (7, 3), (1_000, 8), (5_003, 16)] {
            let kept = seeded_kept(rows, degree, 0x0072_6576_6572_7365);
            assert_eq!(
                reverse_links(&kept, rows, degree),
                reverse_links_by_rank(&kept, rows, degree),
                "{rows} rows of {degree}"
            );
        }
    }
}
