//! CAGRA's graph optimization (Ootomo et al., "CAGRA: Highly Parallel Graph Construction and
//! Approximate Nearest Neighbor Search for GPUs", 2024), on ranks alone — no distances:
//!
//! 1. each row's kNN list is reordered by its *detourable routes*: a link a→c of rank j has
//!    a detour through b when a→b has rank i and b→c rank r with max(i, r) < j. Links few
//!    detours can replace come first (ties: the nearer); the first `degree` are kept;
//! 2. reverse links are added: half of a row's slots keep its first kept links, the rest
//!    take the rows that link to it (those that rank it highest first), and what is left
//!    is filled from its own kept links.

use rayon::prelude::*;

use super::hnsw_graph::NO_LINK;
use super::knn_lists::{KnnLists, NO_ROW};

/// `degree` links a row (padded with [`NO_LINK`]) for every row of `lists`.
pub fn prune_with_reverse_links(lists: &KnnLists, degree: usize) -> Vec<i32> {
    let rows = lists.rows();
    let kept = reorder_by_detours(lists, degree);
    let (reverse, reverse_len) = reverse_links(&kept, rows, degree);
    let mut links = vec![NO_LINK; rows * degree];
    links.par_chunks_mut(degree.max(1)).enumerate().for_each(|(row, out)| {
        let forward = &kept[row * degree..(row + 1) * degree];
        let incoming = &reverse[row * degree..row * degree + reverse_len[row] as usize];
        let mut filled = 0;
        let mut push = |id: u32, out: &mut [i32]| {
            if id != NO_ROW && filled < degree && id as usize != row && !out[..filled].contains(&(id as i32)) {
                out[filled] = id as i32;
                filled += 1;
            }
        };
        forward[..degree / 2].iter().for_each(|&id| push(id, out));
        incoming.iter().for_each(|&id| push(id, out));
        forward[degree / 2..].iter().for_each(|&id| push(id, out));
    });
    links
}

/// Each row's first `degree` kNN links after ordering by detour count ([`NO_ROW`] pads).
fn reorder_by_detours(lists: &KnnLists, degree: usize) -> Vec<u32> {
    let rows = lists.rows();
    assert!(
        lists.k <= 0xffff,
        "kNN lists of {} rows: ranks are kept in 16 bits",
        lists.k
    );
    let mut kept = vec![NO_ROW; rows * degree];
    // Blocks of rows, a few per thread, each with one table of every row's rank in the
    // list being reordered (stamped with that list's row, so it is never cleared).
    let block_rows = rows.div_ceil(4 * rayon::current_num_threads()).max(256);
    kept.par_chunks_mut((block_rows * degree).max(1))
        .enumerate()
        .for_each(|(block, out)| {
            let mut rank_of = vec![0u64; rows];
            let mut detours = Vec::new();
            let mut order = Vec::new();
            for (offset, out) in out.chunks_mut(degree.max(1)).enumerate() {
                let row = block * block_rows + offset;
                let stamp = (row as u64 + 1) << 16;
                let list = valid(lists.of(row));
                for (rank, &id) in list.iter().enumerate() {
                    rank_of[id as usize] = stamp | rank as u64;
                }
                detours.clear();
                detours.resize(list.len(), 0u32);
                for (i, &via) in list.iter().enumerate() {
                    // A detour needs r < j ≤ the list's last rank.
                    for (r, &onward) in lists
                        .of(via as usize)
                        .iter()
                        .enumerate()
                        .take(list.len().saturating_sub(1))
                    {
                        if onward == NO_ROW {
                            break;
                        }
                        let mark = rank_of[onward as usize];
                        if mark & !0xffff == stamp {
                            let j = (mark & 0xffff) as usize;
                            if j > i.max(r) {
                                detours[j] += 1;
                            }
                        }
                    }
                }
                order.clear();
                order.extend(0..list.len());
                order.sort_by_key(|&j| (detours[j], j));
                for (slot, &j) in out.iter_mut().zip(order.iter()) {
                    *slot = list[j];
                }
            }
        });
    kept
}

/// The list up to its first padding.
fn valid(list: &[u32]) -> &[u32] {
    let end = list.iter().position(|&id| id == NO_ROW).unwrap_or(list.len());
    &list[..end]
}

/// For each row, up to `degree` rows that keep a link to it, those that rank it highest
/// first; with their counts.
fn reverse_links(kept: &[u32], rows: usize, degree: usize) -> (Vec<u32>, Vec<u32>) {
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
    fn a_link_with_a_detour_goes_behind_one_without() {
        // Row 0 lists 1, 2, 3; row 1 lists 2 first, so 0→2 (rank 1) has the detour 0→1→2
        // (ranks 0 and 0); 0→3 has none, so it moves ahead of 0→2.
        let lists = KnnLists {
            k: 3,
            ids: vec![1, 2, 3, 2, 0, 3, 1, 0, 3, 0, 1, 2],
        };
        let kept = reorder_by_detours(&lists, 2);
        assert_eq!(&kept[..2], &[1, 3]);
    }

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
        let links = prune_with_reverse_links(&lists, 4);
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
}
