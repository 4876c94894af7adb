//! The benchmark harness behind `quarry bench WORKLOAD --out DIR` ([`harness`]): declarative
//! workloads ([`workload`]), dataset preparation and the indexing run ([`prepare`]), search
//! load in process and over HTTP ([`load`]), the ANN recall–QPS sweep ([`ann_sweep`]) and
//! two sweeps compared at equal recall ([`equal_recall`]), peers
//! on the same data ([`peers`]), Markdown ([`report`]) and SVG plots ([`plots`]). Also the
//! focused benchmarks: batch policies ([`embed_batching`]), search latency
//! ([`search_latency`]), synthetic snapshots at scale ([`synthetic_snapshot`]), embedding
//! throughput at full windows ([`embed_throughput`]), the CPU stages that feed it ([`cpu_stages`]), the vector kernels and the IVF build
//! ([`kernels_bench`]), the batch run with seeded vectors in place of the model ([`seeded_embedder`]), and typing
//! errors made on purpose for the "did you mean" benchmark ([`typos`]).

pub mod ann_sweep;
pub mod cpu_stages;
pub mod embed_batching;
pub mod embed_throughput;
pub mod equal_recall;
pub mod harness;
pub mod hnsw_build_bench;
pub mod kernels_bench;
pub mod load;
pub mod peers;
pub mod plots;
pub mod prepare;
pub mod report;
pub mod search_latency;
pub mod seeded_embedder;
pub mod synthetic_snapshot;
pub mod typos;
pub mod workload;

/// The value after `name` on the command line (`--docs 1000` gives `Some("1000")`), for the
/// focused benchmark binaries.
pub fn arg_value(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// The model the focused benchmark binaries load: the folder `QUARRY_MODEL` names, else the
/// default model's.
pub fn model_dir() -> anyhow::Result<quarry_indexer::embed::ModelDir> {
    let dir = match std::env::var("QUARRY_MODEL") {
        Ok(dir) => dir.into(),
        Err(_) => quarry_indexer::embed::default_model_dir()?,
    };
    Ok(quarry_indexer::embed::ModelDir::open(&dir)?)
}

/// `QUARRY_PRECISION` when set, else auto: the precision of the focused benchmark binaries,
/// which have no `--precision` option.
pub fn precision_from_env() -> anyhow::Result<quarry_indexer::embed::Precision> {
    match std::env::var("QUARRY_PRECISION") {
        Ok(value) => Ok(value.parse()?),
        Err(_) => Ok(Default::default()),
    }
}
