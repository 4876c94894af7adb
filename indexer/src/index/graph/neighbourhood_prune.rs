//! HNSW's own neighbour heuristic (Malkov & Yashunin, algorithm 4; FAISS's
//! `shrink_neighbor_list`) over the kNN lists, with distances: a row keeps a candidate,
//! nearest first, unless a row it already keeps is nearer to that candidate than the row
//! itself is. Then every row's kept links and the rows that keep it are pruned once more
//! the same way, so that reverse links are kept only where they add a direction.

use quarry_kernels::dot;
use rayon::prelude::*;

use super::hnsw_graph::NO_LINK;
use super::knn_lists::{KnnLists, NO_ROW};
use super::prune::reverse_links;

/// `degree` links a row (padded with [`NO_LINK`]) for every row of `lists` over `data`
/// (row-major unit vectors, `dim` columns).
pub fn prune_by_neighbourhood(data: &[f32], dim: usize, lists: &KnnLists, degree: usize) -> Vec<i32> {
    let rows = lists.rows();
    let vector = |row: u32| &data[row as usize * dim..(row as usize + 1) * dim];
    // Pass 1: each row's kNN list (nearest first) pruned.
    let mut forward = vec![NO_ROW; rows * degree];
    forward.par_chunks_mut(degree).enumerate().for_each(|(row, out)| {
        let mut candidates: Vec<(f32, u32)> = lists
            .of(row)
            .iter()
            .filter(|&&id| id != NO_ROW && id as usize != row)
            .map(|&id| (dot(vector(row as u32), vector(id)), id))
            .collect();
        candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        keep_diverse(&candidates, degree, &vector, out);
    });
    // Pass 2: kept links and incoming ones, pruned together.
    let (incoming, incoming_len) = reverse_links(&forward, rows, degree);
    let mut links = vec![NO_LINK; rows * degree];
    links.par_chunks_mut(degree).enumerate().for_each(|(row, out)| {
        let own = forward[row * degree..(row + 1) * degree].iter();
        let back = incoming[row * degree..row * degree + incoming_len[row] as usize].iter();
        let mut candidates: Vec<(f32, u32)> = own
            .chain(back)
            .copied()
            .filter(|&id| id != NO_ROW && id as usize != row)
            .map(|id| (dot(vector(row as u32), vector(id)), id))
            .collect();
        candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        candidates.dedup_by_key(|c| c.1);
        let mut kept = vec![NO_ROW; degree];
        keep_diverse(&candidates, degree, &vector, &mut kept);
        for (slot, id) in out.iter_mut().zip(kept) {
            *slot = if id == NO_ROW { NO_LINK } else { id as i32 };
        }
    });
    links
}

/// The heuristic over `candidates` (similarity to the row, id; most similar first): into
/// `out`, up to its length, each candidate no kept row is more similar to than the row is.
fn keep_diverse<'a>(candidates: &[(f32, u32)], degree: usize, vector: &impl Fn(u32) -> &'a [f32], out: &mut [u32]) {
    let mut kept = 0;
    for &(similarity, id) in candidates {
        if kept == degree {
            break;
        }
        let candidate = vector(id);
        if out[..kept]
            .iter()
            .all(|&other| dot(candidate, vector(other)) <= similarity)
        {
            out[kept] = id;
            kept += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::graph::knn_lists::{knn_lists, MEMBERSHIPS};

    #[test]
    fn each_kept_link_is_nearer_the_row_than_to_any_link_kept_before_it() {
        let (dim, rows, degree) = (16, 3_000, 16);
        let data = crate::index::test_clustered_vectors(rows, dim);
        let lists = knn_lists(&quarry_kernels::CpuKernels, &data, dim, 2 * degree, 7, MEMBERSHIPS).unwrap();
        let links = prune_by_neighbourhood(&data, dim, &lists, degree);
        let vector = |row: usize| &data[row * dim..(row + 1) * dim];
        let mut kept_in_all = 0;
        for row in 0..rows {
            let kept: Vec<usize> = links[row * degree..(row + 1) * degree]
                .iter()
                .take_while(|&&link| link != NO_LINK)
                .map(|&link| link as usize)
                .collect();
            assert!(
                links[row * degree + kept.len()..(row + 1) * degree]
                    .iter()
                    .all(|&link| link == NO_LINK),
                "row {row}: links after the first empty slot"
            );
            assert!(!kept.is_empty(), "row {row} keeps no link");
            assert!(!kept.contains(&row), "row {row} links itself");
            let mut unique = kept.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), kept.len(), "row {row} links a row twice: {kept:?}");
            for (j, &later) in kept.iter().enumerate() {
                let to_row = dot(vector(row), vector(later));
                for &earlier in &kept[..j] {
                    assert!(dot(vector(row), vector(earlier)) >= to_row, "row {row}: nearest first");
                    assert!(
                        dot(vector(later), vector(earlier)) <= to_row,
                        "row {row}: {later} is nearer {earlier}, kept before it, than the row"
                    );
                }
            }
            kept_in_all += kept.len();
        }
        // The heuristic keeps the links that add a direction: fewer than the slots.
        let mean = kept_in_all as f64 / rows as f64;
        assert!(mean > 2.0 && mean < degree as f64, "{mean} links a row");
    }
}
