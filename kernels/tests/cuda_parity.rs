//! Every CUDA kernel against its CPU twin on fresh random inputs, odd sizes included.
//! Built only with `--features cuda`, and run on a machine with a GPU (scripts/gpu-check.sh
//! carries the test binary to a GPU host); without a GPU these tests fail rather
//! than pass vacuously.
#![cfg(feature = "cuda")]

use quarry_kernels::{
    cluster_sums, dot, exact_top_k, gather_listed_rows, kmeans_assign, kmeans_train, l2_normalize, mean_pool,
    nearest_centroids, order_by_detours, CpuKernels, CudaKernels, KMeansConfig, ListHits, ResidentRows, Scored,
    VectorKernels, GPU_MAX_K, MAX_NEAREST_CENTROIDS, NO_CENTROID, NO_NEIGHBOUR,
};

/// A fresh seed per run (printed, so a failure can be replayed with PARITY_SEED).
fn seed() -> u64 {
    let seed = std::env::var("PARITY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("PARITY_SEED={seed}");
    seed
}

/// The next state of a seeded linear congruential generator.
fn next_state(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *state
}

fn random_unit_rows(rows: usize, dim: usize, state: &mut u64) -> Vec<f32> {
    let mut data: Vec<f32> = (0..rows * dim)
        .map(|_| ((next_state(state) >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
        .collect();
    l2_normalize(&mut data, dim);
    data
}

fn gpu() -> CudaKernels {
    CudaKernels::new(0).expect("these tests need a CUDA GPU (build with --features cuda, run on a GPU machine)")
}

/// GPU and CPU agree rank by rank on scores; where the rows differ, the GPU's row truly
/// scores (recomputed here) within `tolerance` of the CPU's row at that rank: a near-tie.
fn assert_same_top_k(
    gpu: &[Vec<Scored>],
    cpu: &[Vec<Scored>],
    queries: &[f32],
    base: &[f32],
    dim: usize,
    tolerance: f32,
) {
    assert_eq!(gpu.len(), cpu.len());
    for (q, (g, c)) in gpu.iter().zip(cpu).enumerate() {
        assert_eq!(g.len(), c.len(), "query {q}: list lengths");
        let query = &queries[q * dim..(q + 1) * dim];
        for (rank, (a, b)) in g.iter().zip(c).enumerate() {
            assert!(
                (a.score - b.score).abs() <= tolerance,
                "query {q} rank {rank}: gpu {a:?} cpu {b:?}"
            );
            if a.row != b.row {
                let row = &base[a.row as usize * dim..(a.row as usize + 1) * dim];
                let truth: f32 = row.iter().zip(query).map(|(x, y)| x * y).sum();
                assert!(
                    (truth - b.score).abs() <= tolerance,
                    "query {q} rank {rank}: gpu {a:?} (true score {truth}) cpu {b:?}"
                );
            }
        }
        let mut rows: Vec<u64> = g.iter().map(|h| h.row).collect();
        rows.sort_unstable();
        rows.dedup();
        assert_eq!(rows.len(), g.len(), "query {q}: a row listed twice");
    }
}

#[test]
fn top_k_matches_the_cpu_twin_at_odd_sizes() {
    let gpu = gpu();
    let mut state = seed();
    for (rows, dim, queries, k) in [
        (1, 3, 1, 1),
        (7, 5, 3, 10),
        (1_001, 33, 17, 10),
        (20_011, 384, 65, 100),
        (4_099, 64, 9, GPU_MAX_K),
        // The graph build's k-means lists (sorted slices): ~4,096 rows searched by themselves.
        (4_096, 64, 600, 127),
        (12_289, 48, 40, 64),
        (3_000, 16, 2, 200),
        (200_003, 64, 1, 10),
        (65_537, 24, 3, 1),
    ] {
        let base = random_unit_rows(rows, dim, &mut state);
        let query_rows = random_unit_rows(queries, dim, &mut state);
        let cpu = exact_top_k(&query_rows, &base, dim, k);
        let on_gpu = gpu.exact_top_k(&query_rows, &base, dim, k).unwrap();
        assert_same_top_k(&on_gpu, &cpu, &query_rows, &base, dim, 1e-4);
        assert!(on_gpu.iter().all(|list| list.len() == k.min(rows)), "rows={rows} k={k}");
    }
}

#[test]
fn top_k_over_several_row_chunks_and_query_groups() {
    // 300k rows × 1,000 queries crosses the 1 GiB score chunk; k = 128 makes several query groups.
    let gpu = gpu();
    let mut state = seed();
    let (rows, dim, queries, k) = (300_007, 32, 1_000, GPU_MAX_K);
    let base = random_unit_rows(rows, dim, &mut state);
    let query_rows = random_unit_rows(queries, dim, &mut state);
    let resident = gpu.upload(&base, dim).unwrap();
    let on_gpu = gpu.top_k(&resident, &query_rows, k).unwrap();
    let cpu = exact_top_k(&query_rows, &base, dim, k);
    assert_same_top_k(&on_gpu, &cpu, &query_rows, &base, dim, 1e-4);
}

/// Rows `first..first + count` of `hits` as lists of scored positions.
fn hits_of(hits: &ListHits, first: usize, count: usize) -> Vec<Vec<Scored>> {
    (first..first + count)
        .map(|row| {
            hits.of(row)
                .map(|(score, position)| Scored {
                    row: position as u64,
                    score,
                })
                .collect()
        })
        .collect()
}

#[test]
fn listed_rows_searched_among_themselves_match_the_cpu_twin() {
    // The graph build's k-means lists: rows of one resident matrix, gathered on the GPU by
    // number (in no order, one row twice), each list searched against itself, a batch of lists
    // a call: lists of one row, of fewer rows than k, of sorted slices of 2,048 and a short
    // last one (4,100 rows: 2,048, 2,048 and 4), of 16,384 (8 slices, a round of its own: its
    // scores fill the buffer) and of 17,000 (too many for a round: searched alone).
    let gpu = gpu();
    let mut state = seed();
    let (rows, dim) = (30_011, 96);
    let data = random_unit_rows(rows, dim, &mut state);
    let on_gpu = gpu.prepare_rows(&data, dim).unwrap();
    let on_cpu = CpuKernels.prepare_rows(&data, dim).unwrap();
    let lists: Vec<Vec<u32>> = [1, 5, 1_000, 4_100, 9_000, 16_384, 17_000]
        .into_iter()
        .map(|count| {
            let mut listed: Vec<u32> = (0..count)
                .map(|_| ((next_state(&mut state) >> 33) % rows as u64) as u32)
                .collect();
            if count > 2 {
                listed[2] = listed[0];
            }
            listed
        })
        .collect();
    let batch: Vec<&[u32]> = lists.iter().map(Vec::as_slice).collect();
    for k in [10, 128] {
        let found = on_gpu.top_k_among(&batch, k).unwrap();
        let cpu = on_cpu.top_k_among(&batch, k).unwrap();
        assert_eq!(found.rows(), lists.iter().map(Vec::len).sum::<usize>(), "k {k}");
        let mut first = 0;
        for listed in &lists {
            let count = listed.len();
            let gathered = gather_listed_rows(&data, dim, listed).unwrap();
            let (gpu_hits, cpu_hits) = (hits_of(&found, first, count), hits_of(&cpu, first, count));
            assert_same_top_k(&gpu_hits, &cpu_hits, &gathered, &gathered, dim, 1e-4);
            assert!(
                gpu_hits.iter().all(|hits| hits.len() == k.min(count)),
                "{count} rows, k {k}"
            );
            first += count;
        }
    }
    let error = on_gpu
        .top_k_among(&[&[1], &[0, rows as u32]], 1)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(&format!("row {rows} gathered from a matrix of {rows} rows")),
        "{error}"
    );
}

#[test]
fn exact_ties_keep_the_lower_row() {
    let gpu = gpu();
    let base = vec![0.5f32; 1_000 * 4];
    let hits = gpu.exact_top_k(&[1.0, 0.0, 0.0, 0.0], &base, 4, 10).unwrap();
    assert_eq!(
        hits[0].iter().map(|h| h.row).collect::<Vec<_>>(),
        (0..10).collect::<Vec<u64>>()
    );
    // A large k sorts slices of the rows: ties across slices keep the lower rows too.
    let base = vec![0.5f32; 9_000 * 4];
    let hits = gpu.exact_top_k(&[1.0, 0.0, 0.0, 0.0], &base, 4, 100).unwrap();
    assert_eq!(
        hits[0].iter().map(|h| h.row).collect::<Vec<_>>(),
        (0..100).collect::<Vec<u64>>()
    );
}

#[test]
fn kmeans_assign_matches_the_cpu_twin() {
    let gpu = gpu();
    let mut state = seed();
    for (rows, dim, k) in [(1, 8, 1), (999, 17, 31), (50_003, 384, 257)] {
        let data = random_unit_rows(rows, dim, &mut state);
        let centroids = random_unit_rows(k, dim, &mut state);
        let cpu = kmeans_assign(&data, &centroids, dim);
        let on_gpu = gpu.kmeans_assign(&data, &centroids, dim).unwrap();
        assert_eq!(on_gpu.len(), rows);
        for (row, (g, c)) in on_gpu.iter().zip(&cpu).enumerate() {
            assert!((g.1 - c.1).abs() <= 1e-4, "row {row}: gpu {g:?} cpu {c:?}");
            if g.0 != c.0 {
                // Only a near-tie may pick a different centroid.
                let other = &centroids[g.0 as usize * dim..(g.0 as usize + 1) * dim];
                let score: f32 = other
                    .iter()
                    .zip(&data[row * dim..(row + 1) * dim])
                    .map(|(a, b)| a * b)
                    .sum();
                assert!((score - c.1).abs() <= 1e-4, "row {row}: gpu {g:?} cpu {c:?}");
            }
        }
    }
}

#[test]
fn each_rows_nearest_centroids_match_the_cpu_twin() {
    let gpu = gpu();
    let mut state = seed();
    // The graph build's shape (1M rows, 488 lists, 2 each) scaled down; the most a row
    // keeps; fewer centroids than asked for; one row.
    for (rows, dim, k, each) in [
        (70_001, 384, 489, 2),
        (3_001, 64, 300, 8),
        (999, 17, 5, 8),
        (1, 8, 1, 1),
    ] {
        let data = random_unit_rows(rows, dim, &mut state);
        let centroids = random_unit_rows(k, dim, &mut state);
        let cpu = nearest_centroids(&data, &centroids, dim, each).unwrap();
        let resident: Box<dyn ResidentRows + '_> = gpu.prepare_rows(&data, dim).unwrap();
        let on_gpu = resident.nearest_centroids(&centroids, each).unwrap();
        assert_eq!(on_gpu.len(), rows * each);
        let score = |row: usize, centroid: u32| {
            dot(
                &data[row * dim..(row + 1) * dim],
                &centroids[centroid as usize * dim..(centroid as usize + 1) * dim],
            )
        };
        for row in 0..rows {
            for place in row * each..(row + 1) * each {
                let (g, c) = (on_gpu[place], cpu[place]);
                if g == c {
                    continue;
                }
                // Only a near-tie may order two centroids otherwise; padding must agree.
                assert!(g != NO_CENTROID && c != NO_CENTROID, "row {row}: gpu {g} cpu {c}");
                assert!(
                    (score(row, g) - score(row, c)).abs() <= 1e-4,
                    "row {row}: gpu {g} cpu {c}"
                );
            }
        }
    }
    let data = random_unit_rows(4, 8, &mut state);
    let resident = gpu.prepare_rows(&data, 8).unwrap();
    let error = resident
        .nearest_centroids(&data, MAX_NEAREST_CENTROIDS + 1)
        .unwrap_err()
        .to_string();
    assert!(error.contains("at most 8"), "{error}");
}

#[test]
fn one_lloyd_step_sums_like_the_cpu_twin() {
    let gpu = gpu();
    let mut state = seed();
    let (rows, dim, k) = (40_009, 96, 61);
    let data = random_unit_rows(rows, dim, &mut state);
    let centroids = random_unit_rows(k, dim, &mut state);
    let resident = gpu.upload(&data, dim).unwrap();
    let on_gpu = gpu.cluster_sums(&resident, &centroids).unwrap();
    let cpu = cluster_sums(&data, &centroids, dim);
    let moved: usize = on_gpu.counts.iter().zip(&cpu.counts).map(|(a, b)| a.abs_diff(*b)).sum();
    assert!(moved <= 4, "counts differ by {moved} rows (near-ties only)");
    for (i, (a, b)) in on_gpu.sums.iter().zip(&cpu.sums).enumerate() {
        assert!((a - b).abs() <= 2.0 * moved as f64 + 1e-2, "sum {i}: gpu {a} cpu {b}");
    }
}

#[test]
fn kmeans_train_reaches_the_cpu_objective() {
    let gpu = gpu();
    let mut state = seed();
    let (rows, dim) = (30_011, 48);
    // Clustered data: 40 random centres with noise, so both devices find the same structure.
    let centres = random_unit_rows(40, dim, &mut state);
    let noise = random_unit_rows(rows, dim, &mut state);
    let mut data: Vec<f32> = (0..rows * dim)
        .map(|i| centres[(i / dim % 40) * dim + i % dim] + 0.2 * noise[i])
        .collect();
    l2_normalize(&mut data, dim);
    let config = KMeansConfig {
        k: 40,
        iterations: 12,
        seed: state,
    };
    let objective = |centroids: &[f32]| {
        kmeans_assign(&data, centroids, dim)
            .iter()
            .map(|a| a.1 as f64)
            .sum::<f64>()
            / rows as f64
    };
    let cpu = objective(&kmeans_train(&data, dim, config));
    let on_gpu = objective(&gpu.kmeans_train(&data, dim, config).unwrap());
    assert!(
        (cpu - on_gpu).abs() < 1e-3,
        "mean inner product to the nearest centroid: gpu {on_gpu} cpu {cpu}"
    );
}

#[test]
fn mean_pool_normalize_matches_the_cpu_twins() {
    let gpu = gpu();
    let mut state = seed();
    for (rows, tokens, dim) in [(1, 1, 1), (3, 7, 5), (33, 129, 384), (5, 256, 1_000)] {
        let hidden = random_unit_rows(rows * tokens, dim, &mut state);
        let mask: Vec<u32> = (0..rows * tokens)
            .map(|i| u32::from(i % tokens <= (i / tokens * 13) % tokens))
            .collect();
        let mut cpu = mean_pool(&hidden, &mask, rows, tokens, dim);
        l2_normalize(&mut cpu, dim);
        let on_gpu = gpu.mean_pool_normalize(&hidden, &mask, rows, tokens, dim).unwrap();
        let worst = on_gpu.iter().zip(&cpu).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        assert!(
            worst <= 1e-5,
            "rows={rows} tokens={tokens} dim={dim}: max difference {worst}"
        );
    }
}

#[test]
fn pruning_by_detour_count_matches_the_cpu_twin() {
    let gpu = gpu();
    let mut state = seed();
    // Real kNN lists (exact, row itself left out) over random rows, some cut short.
    let (rows, dim) = (3_001, 24);
    let data = random_unit_rows(rows, dim, &mut state);
    for (k, degree) in [(127, 64), (33, 16), (8, 12)] {
        let mut lists = vec![NO_NEIGHBOUR; rows * k];
        for (row, hits) in exact_top_k(&data, &data, dim, k + 1).into_iter().enumerate() {
            let keep = if row % 7 == 0 { k / 2 } else { k };
            let others = hits.iter().filter(|hit| hit.row as usize != row).take(keep);
            for (slot, hit) in lists[row * k..].iter_mut().zip(others) {
                *slot = hit.row as u32;
            }
        }
        let cpu = order_by_detours(&lists, k, degree).unwrap();
        let on_gpu = VectorKernels::order_by_detours(&gpu, &lists, k, degree).unwrap();
        assert_eq!(on_gpu.len(), rows * degree);
        let differing = (0..rows)
            .filter(|&row| on_gpu[row * degree..(row + 1) * degree] != cpu[row * degree..(row + 1) * degree])
            .collect::<Vec<_>>();
        assert!(
            differing.is_empty(),
            "k {k}, degree {degree}: rows {:?} differ",
            &differing[..differing.len().min(10)]
        );
        assert!(
            (0..rows)
                .any(|row| cpu[row * degree..row * degree + degree.min(k)] != lists[row * k..row * k + degree.min(k)]),
            "some list must be reordered for the check to mean anything"
        );
    }
}
