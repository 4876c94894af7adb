//! The recall–QPS curve of the vector index: each efSearch (HNSW) or nprobe (IVF) value,
//! recall@10 against exact search over the same vectors, single-query QPS.

use std::path::Path;
use std::time::Instant;

use quarry_indexer::index::{load_vector_index, ExactTruth, Hit, IndexSpec, VectorIndex};
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

/// The answers recall@10 is counted against: exact search's top 10 for every query, where a
/// row tied with the 10th (a duplicate chunk, say) counts whichever of the tied rows an index
/// names, as the run's recall check counts them.
pub fn ground_truth(base: &[f32], queries: &[f32], dim: usize) -> anyhow::Result<ExactTruth> {
    Ok(ExactTruth::of(base, dim, queries.to_vec(), RECALL_K)?)
}

/// The k of recall@k in every sweep.
pub const RECALL_K: usize = 10;

/// Sweeps the search-time parameter of the index stored at `index_file`.
pub fn sweep(
    index_file: &Path,
    spec: &IndexSpec,
    queries: &[f32],
    dim: usize,
    truth: &ExactTruth,
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
        let found: Vec<Vec<Hit>> = queries
            .chunks(dim)
            .map(|q| index.search(q, RECALL_K).map(|mut hits| hits.remove(0)))
            .collect::<Result<_, _>>()?;
        let qps = timed_qps(queries.len() / dim, repetitions, |i| {
            index
                .search(&queries[i * dim..(i + 1) * dim], RECALL_K)
                .map(|_| ())
                .map_err(Into::into)
        })?;
        points.push(SweepPoint {
            engine: "quarry".into(),
            parameter: parameter.into(),
            value,
            recall_at_10: truth.recall_of_answers(&found, spec.scores_exactly()),
            qps,
        });
    }
    Ok(points)
}
