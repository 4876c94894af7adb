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
    Ok((links, detour_secs))
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
}
