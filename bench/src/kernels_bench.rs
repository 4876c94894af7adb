//! `quarry bench-kernels`: the vector kernels at scale on the device they run on — exact
//! flat top-k QPS per query batch size against its roofs (one read of the base per batch at
//! the memory bandwidth; 2 · rows · dim FP32 operations per query at the device's peak: the
//! lower of the two is what a batch can reach), and the IVF build
//! (kernel k-means on a training sample, every row assigned to its list, FAISS add_core)
//! against FAISS's own CPU build of the same index. Seeded clustered unit vectors.

use std::sync::Arc;
use std::time::Instant;

use quarry_datasets::synthetic::clustered_unit_vectors;
use quarry_indexer::index::{
    ann_recall, build_vector_index, sample_rows, IndexSpec, IvfTrainer, KERNEL_KMEANS_ITERATIONS, KERNEL_KMEANS_SEED,
};
use quarry_kernels::{KMeansConfig, VectorKernels};

/// What to measure.
#[derive(Debug, Clone, serde::Serialize)]
pub struct KernelBenchConfig {
    pub rows: usize,
    pub dim: usize,
    pub k: usize,
    /// Query batch sizes for the flat top-k QPS.
    pub query_batches: Vec<usize>,
    pub nlist: usize,
    pub train_sample: usize,
    /// Device memory bandwidth in GB/s, for the flat top-k roof (0: not reported).
    pub bandwidth_gbs: f64,
    /// Device FP32 peak in TFLOP/s (fused multiply-adds, no tensor cores: the scores are an
    /// SGEMM), for the flat top-k compute roof (0: not reported).
    pub fp32_tflops: f64,
    /// Also build the IVF index with FAISS's own CPU training and assignment.
    pub faiss_baseline: bool,
    pub seed: u64,
}

/// Flat top-k at one query batch size.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TopKResult {
    pub batch: usize,
    pub seconds: f64,
    pub qps: f64,
    /// QPS if every batch read the base matrix once at the full bandwidth.
    pub roof_qps: Option<f64>,
    /// QPS if every query's 2 · rows · dim operations ran at the FP32 peak.
    pub compute_roof_qps: Option<f64>,
}

impl TopKResult {
    /// QPS as a fraction of the lower of the roofs that were given.
    pub fn fraction_of_roof(&self) -> Option<f64> {
        let roof = match (self.roof_qps, self.compute_roof_qps) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some(self.qps / roof)
    }
}

/// One IVF build, by stage.
#[derive(Debug, Clone, serde::Serialize)]
pub struct IvfBuildResult {
    pub builder: String,
    pub train_secs: Option<f64>,
    pub assign_secs: Option<f64>,
    pub total_secs: f64,
    /// Recall@10 of the built index (nprobe 32) against exact search, over 200 rows as queries.
    pub recall_at_10: f64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct KernelBenchReport {
    pub device: String,
    pub config: KernelBenchConfig,
    pub top_k: Vec<TopKResult>,
    pub ivf: Vec<IvfBuildResult>,
}

fn timed<T>(run: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<(T, f64)> {
    let started = Instant::now();
    let value = run()?;
    Ok((value, started.elapsed().as_secs_f64()))
}

/// Flat top-k QPS at each batch size: repeated for at least half a second, best of the runs.
fn flat_top_k(
    kernels: &dyn VectorKernels,
    base: &[f32],
    config: &KernelBenchConfig,
) -> anyhow::Result<Vec<TopKResult>> {
    // The base is prepared once (resident on a GPU), as a flat search path would hold it.
    let flat = kernels.prepare_flat(base, config.dim)?;
    measure_batches(config, base, |queries| {
        flat.top_k(queries, config.k).map(|_| ()).map_err(Into::into)
    })
}

fn measure_batches(
    config: &KernelBenchConfig,
    base: &[f32],
    mut search: impl FnMut(&[f32]) -> anyhow::Result<()>,
) -> anyhow::Result<Vec<TopKResult>> {
    let dim = config.dim;
    let mut results = Vec::new();
    for &batch in &config.query_batches {
        let queries = &base[..batch.min(config.rows) * dim];
        search(queries)?; // warm-up (and, on a GPU, module load)
        let (mut runs, started) = (0usize, Instant::now());
        while started.elapsed().as_secs_f64() < 0.5 || runs < 3 {
            search(queries)?;
            runs += 1;
        }
        let seconds = started.elapsed().as_secs_f64() / runs as f64;
        let base_bytes = (config.rows * dim * 4) as f64;
        let roof_qps = (config.bandwidth_gbs > 0.0).then(|| config.bandwidth_gbs * 1e9 / base_bytes * batch as f64);
        let compute_roof_qps =
            (config.fp32_tflops > 0.0).then(|| config.fp32_tflops * 1e12 / (2.0 * (config.rows * dim) as f64));
        results.push(TopKResult {
            batch,
            seconds,
            qps: batch as f64 / seconds,
            roof_qps,
            compute_roof_qps,
        });
    }
    Ok(results)
}

/// Runs every measurement on `kernels`' device.
pub fn run(kernels: Arc<dyn VectorKernels>, config: KernelBenchConfig) -> anyhow::Result<KernelBenchReport> {
    let dim = config.dim;
    tracing::info!(
        "bench-kernels on {}: {} × {dim} clustered unit vectors",
        kernels.device(),
        config.rows
    );
    let base = clustered_unit_vectors(config.rows, dim, 1024, config.seed);
    let top_k = flat_top_k(kernels.as_ref(), &base, &config)?;

    let mut ivf = Vec::new();
    let sample = sample_rows(&base, dim, config.train_sample);
    // The same k-means the build runs, so train + assign are the build's own stages.
    let kmeans = KMeansConfig {
        k: config.nlist,
        iterations: KERNEL_KMEANS_ITERATIONS,
        seed: KERNEL_KMEANS_SEED,
    };
    let (centroids, train_secs) = timed(|| Ok(kernels.kmeans_train(&sample, dim, kmeans)?))?;
    let (_, assign_secs) = timed(|| Ok(kernels.kmeans_assign(&base, &centroids, dim)?))?;
    let nprobe = 32.min(config.nlist);
    let recall_queries = sample_rows(&base, dim, 200);
    for trainer in [IvfTrainer::Kernels, IvfTrainer::Faiss] {
        if trainer == IvfTrainer::Faiss && !config.faiss_baseline {
            continue;
        }
        let spec = IndexSpec::IvfFlat {
            nlist: config.nlist,
            nprobe,
            train_sample: config.train_sample,
            trainer,
        };
        let (index, total_secs) = timed(|| Ok(build_vector_index(&spec, dim, &base)?))?;
        let recall = ann_recall(&index, &base, dim, &recall_queries, 10)?;
        let (builder, train, assign) = match trainer {
            IvfTrainer::Kernels => (
                format!("quarry kernels on {} + FAISS add_core", kernels.device()),
                Some(train_secs),
                Some(assign_secs),
            ),
            IvfTrainer::Faiss | IvfTrainer::Auto => ("FAISS train + add (CPU)".to_string(), None, None),
        };
        ivf.push(IvfBuildResult {
            builder,
            train_secs: train,
            assign_secs: assign,
            total_secs,
            recall_at_10: recall,
        });
    }
    Ok(KernelBenchReport {
        device: kernels.device(),
        config,
        top_k,
        ivf,
    })
}

/// The report as Markdown tables.
pub fn markdown(report: &KernelBenchReport) -> String {
    use std::fmt::Write;
    let c = &report.config;
    let mut md = format!(
        "## Vector kernels on {}: {} × {} vectors, k = {}\n\n",
        report.device, c.rows, c.dim, c.k
    );
    md.push_str("| query batch | s per batch | QPS | bandwidth roof QPS | FP32 compute roof QPS | fraction of the lower roof |\n|---:|---:|---:|---:|---:|---:|\n");
    let or_dash = |value: Option<f64>, digits: usize| value.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    for t in &report.top_k {
        let _ = writeln!(
            md,
            "| {} | {:.5} | {:.1} | {} | {} | {} |",
            t.batch,
            t.seconds,
            t.qps,
            or_dash(t.roof_qps, 0),
            or_dash(t.compute_roof_qps, 0),
            or_dash(t.fraction_of_roof(), 2)
        );
    }
    let _ = writeln!(
        md,
        "\nIVF-Flat build, nlist {}, training sample {}, {KERNEL_KMEANS_ITERATIONS} k-means iterations:\n",
        c.nlist, c.train_sample
    );
    md.push_str(
        "| builder | train s | assign s | whole build s | recall@10 (nprobe 32) |\n|---|---:|---:|---:|---:|\n",
    );
    for b in &report.ivf {
        let secs = |s: Option<f64>| s.map_or("-".into(), |s| format!("{s:.2}"));
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.2} | {:.4} |",
            b.builder,
            secs(b.train_secs),
            secs(b.assign_secs),
            b.total_secs,
            b.recall_at_10
        );
    }
    md
}
