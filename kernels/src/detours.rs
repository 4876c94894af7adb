//! The first step of CAGRA's graph optimization (Ootomo et al., "CAGRA: Highly Parallel Graph
//! Construction and Approximate Nearest Neighbor Search for GPUs", 2024): each row's kNN list
//! reordered by its *detourable routes*, on ranks alone. A link a→c of rank j has a detour
//! through b when a→b has rank i and b→c rank r with max(i, r) < j; links few detours can
//! replace come first (ties: the nearer), and the first `degree` are kept. The CPU twin of
//! `order_by_detours` in kernels/cuda/detours.cu.

use rayon::prelude::*;

use crate::error::{KernelError, Result};

/// An empty place in a kNN list (its entries end at the first one).
pub const NO_NEIGHBOUR: u32 = u32::MAX;

/// Checks that `lists` holds whole lists of `k` and returns how many.
pub(crate) fn lists_of(lists: &[u32], k: usize) -> Result<usize> {
    if k == 0 || !lists.len().is_multiple_of(k) || k > 0xffff {
        return Err(KernelError::Input(format!(
            "kNN lists: {} ids are not whole lists of {k} (1 to 65,535)",
            lists.len()
        )));
    }
    Ok(lists.len() / k)
}

/// Each row's first `degree` links after ordering its list by detour count ([`NO_NEIGHBOUR`]
/// pads). `lists` holds `k` distinct row ids a row, nearest first.
pub fn order_by_detours(lists: &[u32], k: usize, degree: usize) -> Result<Vec<u32>> {
    let rows = lists_of(lists, k)?;
    let mut kept = vec![NO_NEIGHBOUR; rows * degree];
    if degree == 0 {
        return Ok(kept);
    }
    let list = |row: usize| &lists[row * k..(row + 1) * k];
    // Blocks of rows, a few per thread, each with one table of every row's rank in the list
    // being reordered (stamped with that list's row, so it is never cleared).
    let block_rows = rows.div_ceil(4 * rayon::current_num_threads()).max(256);
    kept.par_chunks_mut(block_rows * degree)
        .enumerate()
        .for_each(|(block, out)| {
            let mut rank_of = vec![0u64; rows];
            let mut detours = Vec::new();
            let mut order = Vec::new();
            for (offset, out) in out.chunks_mut(degree).enumerate() {
                let row = block * block_rows + offset;
                let stamp = (row as u64 + 1) << 16;
                let own = valid(list(row));
                for (rank, &id) in own.iter().enumerate() {
                    rank_of[id as usize] = stamp | rank as u64;
                }
                detours.clear();
                detours.resize(own.len(), 0u32);
                for (i, &via) in own.iter().enumerate() {
                    // A detour needs r < j ≤ the list's last rank.
                    for (r, &onward) in list(via as usize).iter().enumerate().take(own.len().saturating_sub(1)) {
                        if onward == NO_NEIGHBOUR {
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
                order.extend(0..own.len());
                order.sort_by_key(|&j| (detours[j], j));
                for (slot, &j) in out.iter_mut().zip(order.iter()) {
                    *slot = own[j];
                }
            }
        });
    Ok(kept)
}

/// The list up to its first padding.
fn valid(list: &[u32]) -> &[u32] {
    let end = list.iter().position(|&id| id == NO_NEIGHBOUR).unwrap_or(list.len());
    &list[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_with_a_detour_goes_behind_one_without() {
        // Row 0 lists 1, 2, 3; row 1 lists 2 first, so 0→2 (rank 1) has the detour 0→1→2
        // (ranks 0 and 0); 0→3 has none, so it moves ahead of 0→2.
        let lists = [1, 2, 3, 2, 0, 3, 1, 0, 3, 0, 1, 2];
        let kept = order_by_detours(&lists, 3, 2).unwrap();
        assert_eq!(&kept[..2], &[1, 3]);
        assert_eq!(kept.len(), 8);
    }

    /// Detours counted by looking each onward row up in the list itself.
    fn detours_by_search(lists: &[u32], k: usize, degree: usize) -> Vec<u32> {
        let rows = lists.len() / k;
        let list = |row: usize| valid(&lists[row * k..(row + 1) * k]);
        let mut kept = vec![NO_NEIGHBOUR; rows * degree];
        for row in 0..rows {
            let own = list(row);
            let mut detours = vec![0u32; own.len()];
            for (i, &via) in own.iter().enumerate() {
                for (r, &onward) in lists[via as usize * k..(via as usize + 1) * k]
                    .iter()
                    .enumerate()
                    .take(own.len().saturating_sub(1))
                    .take_while(|&(_, &onward)| onward != NO_NEIGHBOUR)
                {
                    if let Some(j) = own.iter().rposition(|&id| id == onward) {
                        if j > i.max(r) {
                            detours[j] += 1;
                        }
                    }
                }
            }
            let mut order: Vec<usize> = (0..own.len()).collect();
            order.sort_by_key(|&j| (detours[j], j));
            for (slot, &j) in kept[row * degree..(row + 1) * degree].iter_mut().zip(&order) {
                *slot = own[j];
            }
        }
        kept
    }

    #[test]
    fn detours_counted_through_the_rank_stamps_are_those_found_by_searching_each_list() {
        let mut lcg = crate::test_lcg::Lcg(5);
        let mut next = |below: u64| lcg.below(below);
        for (rows, k, degree) in [(600, 24, 10), (3_000, 127, 64), (40, 7, 7)] {
            // Each row's list: distinct ids near the row (so lists overlap, as kNN lists do),
            // some cut short by padding.
            let mut lists = Vec::with_capacity(rows * k);
            for row in 0..rows {
                let mut own: Vec<u32> = Vec::new();
                let length = if next(5) == 0 { next(k as u64) as usize } else { k };
                while own.len() < length {
                    let id = ((row as u64 + rows as u64 + next(4 * k as u64) - 2 * k as u64) % rows as u64) as u32;
                    if id as usize != row && !own.contains(&id) {
                        own.push(id);
                    }
                }
                own.resize(k, NO_NEIGHBOUR);
                lists.extend(own);
            }
            assert_eq!(
                order_by_detours(&lists, k, degree).unwrap(),
                detours_by_search(&lists, k, degree),
                "{rows} rows, k = {k}"
            );
        }
    }

    #[test]
    fn short_lists_are_padded_and_bad_shapes_refused() {
        let lists = [1, NO_NEIGHBOUR, NO_NEIGHBOUR, 0, NO_NEIGHBOUR, NO_NEIGHBOUR];
        assert_eq!(
            order_by_detours(&lists, 3, 2).unwrap(),
            [1, NO_NEIGHBOUR, 0, NO_NEIGHBOUR]
        );
        let error = order_by_detours(&lists, 4, 2).unwrap_err().to_string();
        assert!(error.contains("6 ids are not whole lists of 4"), "{error}");
    }
}
