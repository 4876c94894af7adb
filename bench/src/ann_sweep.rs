//! The recall–QPS curve of the vector index: each efSearch (HNSW) or nprobe (IVF) value,
//! recall@10 against exact search over the same vectors, single-query QPS.

use std::path::Path;
use std::time::Instant;

use quarry_indexer::index::{load_vector_index, IndexSpec, VectorIndex};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepPoint {
    pub engine: String,
    pub parameter: String,
    pub value: usize,
    pub recall_at_10: f64,
    pub qps: f64,
}

/// Shortest timing window: shorter ones are dominated by scheduler noise on shared machines.
pub const MIN_WINDOW_SECS: f64 = 0.5;

/// Queries per second of `run` over `n` queries: the query set is repeated until the window
/// lasts at least [`MIN_WINDOW_SECS`], and the best of `repetitions` windows is kept.
pub fn timed_qps(
    n: usize,
    repetitions: usize,
    mut run: impl FnMut(usize) -> anyhow::Result<()>,
) -> anyhow::Result<f64> {
    let mut best = 0f64;
    for _ in 0..repetitions.max(1) {
        let started = Instant::now();
        let mut done = 0usize;
        while done == 0 || started.elapsed().as_secs_f64() < MIN_WINDOW_SECS {
            for i in 0..n {
                run(i)?;
            }
            done += n;
        }
        best = best.max(done as f64 / started.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// Recall of `found` rows against `truth` rows, averaged.
pub fn recall(truth: &[Vec<u64>], found: &[Vec<u64>]) -> f64 {
    let total: f64 = truth
        .iter()
        .zip(found)
        .map(|(t, f)| t.iter().filter(|r| f.contains(r)).count() as f64 / t.len().max(1) as f64)
        .sum();
    total / truth.len().max(1) as f64
}

/// Exact top-10 rows for every query.
pub fn ground_truth(base: &[f32], queries: &[f32], dim: usize) -> Vec<Vec<u64>> {
    quarry_kernels::exact_top_k(queries, base, dim, 10)
        .into_iter()
        .map(|hits| hits.into_iter().map(|h| h.row).collect())
        .collect()
}

/// Sweeps the search-time parameter of the index stored at `index_file`.
pub fn sweep(
    index_file: &Path,
    spec: &IndexSpec,
    queries: &[f32],
    dim: usize,
    truth: &[Vec<u64>],
    values: &[usize],
    repetitions: usize,
) -> anyhow::Result<Vec<SweepPoint>> {
    let mut points = Vec::new();
    for &value in values {
        let (parameter, variant) = match spec {
            IndexSpec::Hnsw {
                m,
                ef_construction,
                builder,
                ..
            } => (
                "efSearch",
                IndexSpec::Hnsw {
                    m: *m,
                    ef_construction: *ef_construction,
                    ef_search: value,
                    builder: *builder,
                },
            ),
            IndexSpec::IvfFlat {
                nlist,
                train_sample,
                trainer,
                ..
            } => (
                "nprobe",
                IndexSpec::IvfFlat {
                    nlist: *nlist,
                    nprobe: value,
                    train_sample: *train_sample,
                    trainer: *trainer,
                },
            ),
            IndexSpec::IvfPq {
                nlist,
                pq_m,
                nbits,
                train_sample,
                ..
            } => (
                "nprobe",
                IndexSpec::IvfPq {
                    nlist: *nlist,
                    nprobe: value,
                    pq_m: *pq_m,
                    nbits: *nbits,
                    train_sample: *train_sample,
                },
            ),
            IndexSpec::Flat => return Ok(points),
        };
        let index = load_vector_index(index_file, &variant)?;
        let found: Vec<Vec<u64>> = queries
            .chunks(dim)
            .map(|q| {
                index
                    .search(q, 10)
                    .map(|mut hits| hits.remove(0).into_iter().map(|h| h.row).collect())
            })
            .collect::<Result<_, _>>()?;
        let qps = timed_qps(queries.len() / dim, repetitions, |i| {
            index
                .search(&queries[i * dim..(i + 1) * dim], 10)
                .map(|_| ())
                .map_err(Into::into)
        })?;
        points.push(SweepPoint {
            engine: "quarry".into(),
            parameter: parameter.into(),
            value,
            recall_at_10: recall(truth, &found),
            qps,
        });
    }
    Ok(points)
}
