//! Spherical k-means for IVF on unit vectors (inner product): seeded k-means++ initial
//! centroids, Lloyd iterations, centroids re-normalized, empty clusters re-seeded
//! from the points farthest from their centroid. The CPU twin of the CUDA kernel.

use rayon::prelude::*;

use crate::dot::dot;
use crate::gemm_scores::block_scores;

/// Settings of one training run.
#[derive(Debug, Clone, Copy)]
pub struct KMeansConfig {
    pub k: usize,
    pub iterations: usize,
    pub seed: u64,
}

/// splitmix64, so the CPU and CUDA paths can draw the same initial centroids.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Scores per matrix product in [`kmeans_assign`] (rows × centroids): 2 MiB of them.
const ASSIGN_SCORES: usize = 1 << 19;

/// Rows scored by one matrix product against `k` centroids, as [`kmeans_assign`] and
/// [`crate::nearest_centroids`] block them.
pub(crate) fn assign_block_rows(k: usize) -> usize {
    (ASSIGN_SCORES / k.max(1)).clamp(1, 256)
}

/// The nearest centroid (highest inner product; the lower centroid on ties) of every row,
/// with that inner product: blocks of rows scored against every centroid by one matrix
/// product each, in parallel.
pub fn kmeans_assign(data: &[f32], centroids: &[f32], dim: usize) -> Vec<(u32, f32)> {
    let k = centroids.len() / dim.max(1);
    if k == 0 {
        return vec![(0, f32::NEG_INFINITY); data.len() / dim.max(1)];
    }
    let block_rows = assign_block_rows(k);
    data.par_chunks(block_rows * dim)
        .flat_map_iter(|rows| {
            let mut scores = Vec::new();
            block_scores(rows, centroids, dim, &mut scores);
            scores
                .chunks(k)
                .map(|row| {
                    row.iter()
                        .enumerate()
                        .fold((0u32, f32::NEG_INFINITY), |best, (c, &score)| {
                            if score > best.1 {
                                (c as u32, score)
                            } else {
                                best
                            }
                        })
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Row-to-centroid distances k-means++ may compute (sample size × k). Seeding is serial in
/// k, so its cost grows with k²: at k = 4096 over 16·k rows it took 127 s, where the 20
/// Lloyd steps it seeds took well under one on an H100.
const SEEDING_PAIRS: usize = 1 << 24;

/// k-means++ seeding over a seeded sample of at most 16·k rows (fewer for large k, so that
/// sample × k stays within [`SEEDING_PAIRS`]): each next centroid is a row drawn with
/// probability proportional to its distance (1 - inner product) from the centroids so far,
/// so the first centroids spread over the clusters. Where the sample is only k rows (k of
/// 4096 and more) every sampled row is a centroid: FAISS's own random seeding.
fn kmeans_plus_plus(data: &[f32], dim: usize, rows: usize, k: usize, seed: u64) -> Vec<f32> {
    let mut state = seed;
    let sample_size = rows.min(16 * k).min((SEEDING_PAIRS / k.max(1)).max(k));
    let mut ids: Vec<usize> = (0..rows).collect();
    for i in 0..sample_size {
        let j = i + (next(&mut state) % (rows - i) as u64) as usize;
        ids.swap(i, j);
    }
    // The sample's rows side by side: every step below reads all of them.
    let rows_of_sample = crate::gather_rows(data, dim, ids[..sample_size].iter().copied());
    let row = |i: usize| &rows_of_sample[i * dim..(i + 1) * dim];
    if sample_size <= k {
        return rows_of_sample;
    }
    let mut chosen = vec![0];
    let mut distance: Vec<f64> = (0..sample_size)
        .map(|i| (1.0 - dot(row(i), row(0)) as f64).max(0.0))
        .collect();
    while chosen.len() < k {
        let total: f64 = distance.iter().sum();
        let pick = if total <= 0.0 {
            (0..sample_size).find(|i| !chosen.contains(i)).unwrap_or(0)
        } else {
            let mut target = (next(&mut state) >> 11) as f64 / (1u64 << 53) as f64 * total;
            distance
                .iter()
                .position(|d| {
                    target -= d;
                    target <= 0.0
                })
                .unwrap_or(sample_size - 1)
        };
        chosen.push(pick);
        let new = row(pick);
        distance
            .par_iter_mut()
            .zip(rows_of_sample.par_chunks(dim))
            .with_min_len(1024)
            .for_each(|(d, sampled)| {
                *d = d.min((1.0 - dot(sampled, new) as f64).max(0.0));
            });
    }
    chosen.iter().flat_map(|&i| row(i).iter().copied()).collect()
}

/// What one Lloyd step over all rows yields: per-centroid sums (f64, row-major `k × dim`)
/// and counts of the rows assigned to each centroid, and every row's best inner product.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterSums {
    pub sums: Vec<f64>,
    pub counts: Vec<usize>,
    pub best: Vec<f32>,
}

/// One Lloyd step on the CPU: assign every row, then sum the rows of each centroid.
pub fn cluster_sums(data: &[f32], centroids: &[f32], dim: usize) -> ClusterSums {
    let k = centroids.len() / dim;
    let assignment = kmeans_assign(data, centroids, dim);
    let mut sums = vec![0f64; k * dim];
    let mut counts = vec![0usize; k];
    for (row, &(c, _)) in assignment.iter().enumerate() {
        counts[c as usize] += 1;
        for (s, x) in sums[c as usize * dim..(c as usize + 1) * dim]
            .iter_mut()
            .zip(&data[row * dim..(row + 1) * dim])
        {
            *s += *x as f64;
        }
    }
    ClusterSums {
        sums,
        counts,
        best: assignment.into_iter().map(|a| a.1).collect(),
    }
}

/// The `count` rows whose best inner product is lowest, worst first (the lower row on ties):
/// a selection, then a sort of those only, not of every row (a million at IVF scale).
fn worst_fitting_rows(best: &[f32], count: usize) -> Vec<usize> {
    let count = count.min(best.len());
    if count == 0 {
        return Vec::new();
    }
    let order = |a: &usize, b: &usize| best[*a].total_cmp(&best[*b]).then(a.cmp(b));
    let mut rows: Vec<usize> = (0..best.len()).collect();
    if count < rows.len() {
        rows.select_nth_unstable_by(count - 1, order);
        rows.truncate(count);
    }
    rows.sort_by(order);
    rows
}

/// Moves every centroid to the normalized mean of its rows; an empty cluster takes the row
/// that fits its own centroid worst (each such row used once).
fn update_centroids(centroids: &mut [f32], step: &ClusterSums, data: &[f32], dim: usize) {
    let empty = step.counts.iter().filter(|&&count| count == 0).count();
    let mut spare = worst_fitting_rows(&step.best, empty).into_iter();
    for (c, centroid) in centroids.chunks_mut(dim).enumerate() {
        if step.counts[c] == 0 {
            if let Some(row) = spare.next() {
                centroid.copy_from_slice(&data[row * dim..(row + 1) * dim]);
            }
            continue;
        }
        let sum = &step.sums[c * dim..(c + 1) * dim];
        let norm = sum.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
        for (x, s) in centroid.iter_mut().zip(sum) {
            *x = (*s / norm) as f32;
        }
    }
}

/// Trains `config.k` unit-length centroids over `data` (row-major, `dim` columns) with the
/// given Lloyd step (the CPU's [`cluster_sums`] or a GPU's): the same seeding and the same
/// update whichever device sums.
pub fn kmeans_train_with<E>(
    data: &[f32],
    dim: usize,
    config: KMeansConfig,
    mut step: impl FnMut(&[f32]) -> Result<ClusterSums, E>,
) -> Result<Vec<f32>, E> {
    let rows = data.len() / dim.max(1);
    let k = config.k.min(rows).max(1);
    let mut centroids = kmeans_plus_plus(data, dim, rows, k, config.seed);
    for _ in 0..config.iterations {
        let sums = step(&centroids)?;
        update_centroids(&mut centroids, &sums, data, dim);
    }
    Ok(centroids)
}

/// Trains `config.k` unit-length centroids over `data` (row-major, `dim` columns) on the CPU.
pub fn kmeans_train(data: &[f32], dim: usize, config: KMeansConfig) -> Vec<f32> {
    let trained = kmeans_train_with(data, dim, config, |centroids| {
        Ok::<_, std::convert::Infallible>(cluster_sums(data, centroids, dim))
    });
    match trained {
        Ok(centroids) => centroids,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points around `clusters` well-separated unit centres.
    fn clustered(rows_per: usize, dim: usize) -> (Vec<f32>, Vec<f32>) {
        let centres: Vec<f32> = (0..4 * dim)
            .map(|i| if i % (dim + 1) == 0 { 1.0 } else { 0.0 })
            .collect();
        let mut state = 9;
        let mut data = Vec::new();
        for c in 0..4 {
            for _ in 0..rows_per {
                let mut row: Vec<f32> = centres[c * dim..(c + 1) * dim]
                    .iter()
                    .map(|x| x + (next(&mut state) % 1000) as f32 / 10_000.0)
                    .collect();
                let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
                row.iter_mut().for_each(|x| *x /= norm);
                data.extend(row);
            }
        }
        (data, centres)
    }

    #[test]
    fn finds_separated_clusters_and_is_seeded() {
        let dim = 8;
        let (data, centres) = clustered(50, dim);
        let config = KMeansConfig {
            k: 4,
            iterations: 10,
            seed: 3,
        };
        let centroids = kmeans_train(&data, dim, config);
        assert_eq!(centroids, kmeans_train(&data, dim, config), "same seed, same centroids");
        // Every true centre has a learned centroid within a small angle.
        for centre in centres.chunks(dim) {
            let best = centroids.chunks(dim).map(|c| dot(c, centre)).fold(f32::MIN, f32::max);
            assert!(best > 0.99, "{best}");
        }
        for c in centroids.chunks(dim) {
            assert!((dot(c, c) - 1.0).abs() < 1e-4);
        }
        // All points of one true cluster share an assignment.
        let assignment = kmeans_assign(&data, &centroids, dim);
        for cluster in assignment.chunks(50) {
            assert!(cluster.iter().all(|a| a.0 == cluster[0].0));
        }
    }

    #[test]
    fn large_k_seeds_with_distinct_sampled_rows() {
        let (dim, rows, k) = (4, 6000, 4096);
        let mut state = 5;
        let data: Vec<f32> = (0..rows * dim).map(|_| (next(&mut state) % 10_000) as f32).collect();
        let seeds = kmeans_plus_plus(&data, dim, rows, k, 11);
        let mut picked: Vec<&[f32]> = seeds.chunks(dim).collect();
        assert_eq!(picked.len(), k);
        assert!(
            picked.iter().all(|seed| data.chunks(dim).any(|row| row == *seed)),
            "every seed is a data row"
        );
        picked.sort_by(|a, b| a.partial_cmp(b).unwrap());
        picked.dedup();
        assert_eq!(picked.len(), k, "no row seeds twice");
        assert_eq!(seeds, kmeans_plus_plus(&data, dim, rows, k, 11), "seeded");
    }

    #[test]
    fn empty_clusters_take_the_worst_fitting_rows_in_order() {
        let best: [f32; 7] = [0.9, 0.1, 0.5, 0.1, -0.2, 0.7, 0.3];
        let sorted = |count: usize| {
            let mut all: Vec<usize> = (0..best.len()).collect();
            all.sort_by(|a, b| best[*a].total_cmp(&best[*b]).then(a.cmp(b)));
            all.truncate(count);
            all
        };
        for count in 0..=best.len() + 1 {
            assert_eq!(
                worst_fitting_rows(&best, count),
                sorted(count),
                "{count} empty clusters"
            );
        }
        assert_eq!(worst_fitting_rows(&best, 3), vec![4, 1, 3], "ties go to the lower row");
        // Two clusters left empty take the two worst rows, worst first.
        let data = [1.0, 0.0, 0.0, 1.0, 0.6, 0.8];
        let mut centroids = vec![1.0, 0.0, 0.0, -1.0, -1.0, 0.0];
        let step = ClusterSums {
            sums: vec![1.6, 1.8, 0.0, 0.0, 0.0, 0.0],
            counts: vec![3, 0, 0],
            best: vec![1.0, 0.0, 0.6],
        };
        update_centroids(&mut centroids, &step, &data, 2);
        assert_eq!(&centroids[2..], &[0.0, 1.0, 0.6, 0.8]);
    }

    #[test]
    fn blocked_assignment_finds_the_nearest_centroid_at_odd_sizes() {
        let mut state = 21;
        let mut value = || (next(&mut state) % 20_001) as f32 / 10_000.0 - 1.0;
        for (rows, k, dim) in [(1, 1, 3), (517, 300, 24), (300, 3000, 7)] {
            let data: Vec<f32> = (0..rows * dim).map(|_| value()).collect();
            let centroids: Vec<f32> = (0..k * dim).map(|_| value()).collect();
            let assigned = kmeans_assign(&data, &centroids, dim);
            assert_eq!(assigned.len(), rows);
            for (row, &(c, score)) in data.chunks(dim).zip(&assigned) {
                let scores: Vec<f32> = centroids.chunks(dim).map(|centroid| dot(row, centroid)).collect();
                let best = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                assert!(
                    (scores[c as usize] - best).abs() < 1e-5 && (score - scores[c as usize]).abs() < 1e-5,
                    "{rows}×{k}×{dim}: centroid {c} scores {score}, the best {best}"
                );
            }
        }
        assert_eq!(
            kmeans_assign(&[1.0, 0.0, 0.0, 1.0], &[], 2),
            vec![(0, f32::NEG_INFINITY); 2],
            "no centroids"
        );
    }

    #[test]
    fn k_larger_than_the_data_is_capped() {
        let data = [1.0, 0.0, 0.0, 1.0];
        assert_eq!(
            kmeans_train(
                &data,
                2,
                KMeansConfig {
                    k: 5,
                    iterations: 3,
                    seed: 1
                }
            )
            .len(),
            4
        );
    }
}
