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
/// the CPU). The lists are let go once the detours have ordered them, before the reverse
/// links are placed (at 1M rows they are half a gigabyte).
pub fn prune_with_reverse_links(
    kernels: &dyn VectorKernels,
    lists: KnnLists,
    degree: usize,
) -> Result<(Vec<i32>, f64)> {
    let rows = lists.rows();
    if degree == 0 {
        return Ok((Vec::new(), 0.0));
    }
    let started = std::time::Instant::now();
    let kept = kernels.order_by_detours(&lists.ids, lists.k, degree)?;
    drop(lists);
    let detour_secs = started.elapsed().as_secs_f64();
    Ok((with_reverse_links(&kept, rows, degree), detour_secs))
}

/// Each row's `degree` links from its `kept` links (pruned, best first) and the rows that
/// keep a link to it (as [`reverse_links`] finds them): the first half of its kept links,
/// then the incoming ones, then the rest of its kept ones, each row once (through a bit per
/// row, all clear between rows), never itself. Each row's links are filled as soon as its
/// incoming links are known, so those are never held for every row at once.
fn with_reverse_links(kept: &[u32], rows: usize, degree: usize) -> Vec<i32> {
    let mut links = vec![NO_LINK; rows * degree];
    for_each_rows_incoming(
        kept,
        rows,
        degree,
        &mut links,
        || vec![0u64; words_for(rows)],
        |seen, row, incoming, out| {
            let candidates = candidates(kept, incoming, row, degree).map(|id| id as i32);
            place_once(out, candidates, seen);
        },
    );
    links
}

/// Row `row`'s candidate links in the order it takes them: the first half of its `kept`
/// links, the rows that link to it (`incoming`), the rest of its kept links; without empty
/// places and itself.
fn candidates<'a>(kept: &'a [u32], incoming: &'a [u32], row: usize, degree: usize) -> impl Iterator<Item = u32> + 'a {
    let forward = &kept[row * degree..(row + 1) * degree];
    forward[..degree / 2]
        .iter()
        .chain(incoming)
        .chain(&forward[degree / 2..])
        .copied()
        .filter(move |&id| id != NO_ROW && id as usize != row)
}

/// For each row, up to `degree` rows that keep a link to it, those that rank it highest
/// first (then the lower row), padded with [`NO_ROW`]; with their counts.
pub(super) fn reverse_links(kept: &[u32], rows: usize, degree: usize) -> (Vec<u32>, Vec<u32>) {
    let mut reverse = vec![NO_ROW; rows * degree];
    if degree == 0 {
        return (reverse, vec![0; rows]);
    }
    for_each_rows_incoming(kept, rows, degree, &mut reverse, || (), copy_incoming);
    // A row's incoming links are row numbers, never NO_ROW: they end where the padding starts.
    let len = reverse
        .par_chunks(degree)
        .map(|slots| slots.iter().position(|&id| id == NO_ROW).unwrap_or(degree) as u32)
        .collect();
    (reverse, len)
}

/// Row `_row`'s `incoming` links into the first of its `slots` (the rest keep their padding).
fn copy_incoming(_: &mut (), _row: usize, incoming: &[u32], slots: &mut [u32]) {
    slots[..incoming.len()].copy_from_slice(incoming);
}

/// Calls `each(state, row, incoming, out)` for every row of `kept` (`degree` links a row),
/// `out` being that row's `degree` values of `out` and `incoming` up to `degree` rows that
/// keep a link to it, those that rank it highest first (then the lower row). Each thread of
/// the pool owns a range of rows (and a `state` made by `init`): it reads every kept list
/// in memory order twice (to count its rows' incoming links, then to place them, each as one
/// number that sorts by rank, then by row: 32 bits where they fit), then sorts each of its
/// rows' incoming links. The same as walking the ranks one after another over every row
/// ([`reverse_links_by_rank`]), which reads the lists across their memory and on one thread.
fn for_each_rows_incoming<T: Send, S>(
    kept: &[u32],
    rows: usize,
    degree: usize,
    out: &mut [T],
    init: impl Fn() -> S + Sync,
    each: impl Fn(&mut S, usize, &[u32], &mut [T]) + Sync,
) {
    if rows == 0 || degree == 0 {
        return;
    }
    let shift = bits_for(rows);
    if shift + bits_for(degree) <= u32::BITS {
        incoming_in_parts::<u32, T, S>(kept, rows, degree, shift, out, &init, &each);
    } else {
        incoming_in_parts::<u64, T, S>(kept, rows, degree, shift, out, &init, &each);
    }
}

/// Bits that hold every number below `count`.
fn bits_for(count: usize) -> u32 {
    usize::BITS - count.saturating_sub(1).leading_zeros()
}

/// An incoming link as one number: the rank at which its row keeps the link above that
/// row's number (`shift` bits), so that numbers sort by rank, then by row.
trait IncomingKey: Copy + Ord + Send + Default {
    fn of(rank: usize, from: usize, shift: u32) -> Self;
    fn row(self, shift: u32) -> u32;
}

/// The low `shift` bits (`shift` is at most 32: row numbers are `u32`s).
fn row_mask(shift: u32) -> u64 {
    (1u64 << shift) - 1
}

impl IncomingKey for u32 {
    fn of(rank: usize, from: usize, shift: u32) -> Self {
        // A shift of 32 leaves no bits for the rank: only rank 0 comes here then.
        (rank as u32).checked_shl(shift).unwrap_or(0) | from as u32
    }
    fn row(self, shift: u32) -> u32 {
        (u64::from(self) & row_mask(shift)) as u32
    }
}

impl IncomingKey for u64 {
    fn of(rank: usize, from: usize, shift: u32) -> Self {
        ((rank as u64) << shift) | from as u64
    }
    fn row(self, shift: u32) -> u32 {
        (self & row_mask(shift)) as u32
    }
}

/// [`for_each_rows_incoming`] with incoming links as `K`s.
fn incoming_in_parts<K: IncomingKey, T: Send, S>(
    kept: &[u32],
    rows: usize,
    degree: usize,
    shift: u32,
    out: &mut [T],
    init: &(impl Fn() -> S + Sync),
    each: &(impl Fn(&mut S, usize, &[u32], &mut [T]) + Sync),
) {
    let per_part = rows.div_ceil(rayon::current_num_threads().max(1));
    out.par_chunks_mut(per_part * degree)
        .enumerate()
        .for_each(|(part, out)| {
            let first = part * per_part;
            let part_rows = out.len() / degree;
            let targets = first..first + part_rows;
            // (row of the part, key) of every incoming link, in memory order.
            let incoming = |visit: &mut dyn FnMut(usize, K)| {
                for (from, list) in kept.chunks_exact(degree).enumerate() {
                    for (rank, &to) in list.iter().enumerate() {
                        if to != NO_ROW && to as usize != from && targets.contains(&(to as usize)) {
                            visit(to as usize - first, K::of(rank, from, shift));
                        }
                    }
                }
            };
            let mut starts = vec![0usize; part_rows + 1];
            incoming(&mut |row, _| starts[row + 1] += 1);
            for row in 0..part_rows {
                starts[row + 1] += starts[row];
            }
            let mut keys = vec![K::default(); starts[part_rows]];
            let mut filled = starts.clone();
            incoming(&mut |row, key| {
                keys[filled[row]] = key;
                filled[row] += 1;
            });
            drop(filled);
            let mut state = init();
            let mut rows_in = Vec::with_capacity(degree);
            for (row, out) in out.chunks_mut(degree).enumerate() {
                let keys = &mut keys[starts[row]..starts[row + 1]];
                keys.sort_unstable();
                rows_in.clear();
                rows_in.extend(keys.iter().take(degree).map(|key| key.row(shift)));
                each(&mut state, first + row, &rows_in, out);
            }
        });
}

/// [`with_reverse_links`] with each row's links found by searching the ones it holds so far:
/// the reference it is tested against.
#[cfg(test)]
fn with_reverse_links_by_search(kept: &[u32], rows: usize, degree: usize) -> Vec<i32> {
    let (reverse, reverse_len) = reverse_links(kept, rows, degree);
    let mut links = vec![NO_LINK; rows * degree];
    links.par_chunks_mut(degree).enumerate().for_each(|(row, out)| {
        let incoming = &reverse[row * degree..row * degree + reverse_len[row] as usize];
        let mut filled = 0;
        for id in candidates(kept, incoming, row, degree) {
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
        let (links, _) = prune_with_reverse_links(&quarry_kernels::CpuKernels, lists, 4).unwrap();
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

    /// `kept`'s reverse links found with incoming links as `K`s.
    fn reverse_with<K: IncomingKey>(kept: &[u32], rows: usize, degree: usize) -> Vec<u32> {
        let mut reverse = vec![NO_ROW; rows * degree];
        incoming_in_parts::<K, _, _>(kept, rows, degree, bits_for(rows), &mut reverse, &|| (), &copy_incoming);
        reverse
    }

    #[test]
    fn incoming_links_as_64_bit_numbers_are_those_as_32_bit_ones() {
        for (rows, degree) in [(1, 4), (7, 3), (5_003, 16), (300, 64)] {
            let kept = seeded_kept(rows, degree, 0x6b65_7973);
            let narrow = reverse_with::<u32>(&kept, rows, degree);
            assert_eq!(
                narrow,
                reverse_with::<u64>(&kept, rows, degree),
                "{rows} rows of {degree}"
            );
            assert_eq!(
                narrow,
                reverse_links_by_rank(&kept, rows, degree).0,
                "{rows} rows of {degree}"
            );
        }
    }

    #[test]
    fn an_incoming_link_sorts_by_rank_then_row_and_gives_its_row_back() {
        assert_eq!([1, 2, 3, 1 << 20, (1 << 20) + 1].map(bits_for), [0, 1, 2, 20, 21]);
        // The most rows whose keys fit 32 bits at 64 links a row: 2^26.
        let shift = bits_for(1 << 26);
        assert_eq!(shift + bits_for(64), u32::BITS);
        let last_row = (1 << 26) - 1;
        let keys = [(0, 0), (0, last_row), (1, 0), (62, last_row), (63, 0), (63, last_row)];
        for pair in keys.windows(2) {
            let [(rank, from), (next_rank, next_from)] = [pair[0], pair[1]];
            assert!(u32::of(rank, from, shift) < u32::of(next_rank, next_from, shift));
            assert!(u64::of(rank, from, shift) < u64::of(next_rank, next_from, shift));
        }
        for (rank, from) in keys {
            assert_eq!(u32::of(rank, from, shift).row(shift), from as u32);
            assert_eq!(u64::of(rank, from, 32).row(32), from as u32);
        }
        // One row and one link a row: no bits for either.
        assert_eq!(u32::of(0, 0, 0).row(0), 0);
        assert_eq!(u32::of(0, 0, 32).row(32), 0);
    }
}
