//! `quarry bench-hnsw-build`: HNSW from quarry's graph build against FAISS's own build, on
//! seeded clustered vectors or a published snapshot's embeddings: build time, recall@10 and
//! QPS at each efSearch.

use std::path::PathBuf;
use std::process::ExitCode;

use quarry_bench::hnsw_build_bench::{markdown, run as run_bench, BenchVectors, HnswBuildBenchConfig};
use quarry_indexer::embed::DeviceSpec;
use quarry_indexer::snapshot::SnapshotReader;

use super::{runtime, StoreArgs};

#[derive(clap::Args, Debug)]
pub struct BenchHnswBuildArgs {
    #[arg(long, default_value_t = 100_000)]
    pub rows: usize,
    #[arg(long, default_value_t = 384)]
    pub dim: usize,
    /// Clusters the seeded vectors are drawn around.
    #[arg(long, default_value_t = 1_024)]
    pub clusters: usize,
    #[arg(long = "hnsw-m", default_value_t = 32)]
    pub m: usize,
    #[arg(long, default_value_t = 200)]
    pub ef_construction: usize,
    /// efSearch values to sweep, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,32,64,128,256")]
    pub ef_search: Vec<usize>,
    /// Held-out queries for recall and QPS.
    #[arg(long, default_value_t = 1_000)]
    pub queries: usize,
    /// Skip FAISS's own build of the same index.
    #[arg(long)]
    pub no_faiss_baseline: bool,
    /// Also compare the graph build's kNN lists (before pruning) with exact search over this
    /// many rows spread over the base: how much the k-means split loses (0: not measured;
    /// it builds the lists once more).
    #[arg(long, default_value_t = 0)]
    pub knn_recall_sample: usize,
    /// The graph build's choices to compare, one build each, comma-separated
    /// MEMBERSHIPS:PRUNE: how many k-means lists each row joins (the default 2; more finds
    /// more true neighbours where the data does not split cleanly, at about the square of
    /// the lists' growth in products) and how its links are pruned (`detours`: CAGRA's rank
    /// pruning on the kernels, the default, every row keeps 2·M links; `neighbourhood`:
    /// HNSW's heuristic with distances on the CPU, fewer links). E.g. 2:detours,3:detours.
    #[arg(long, value_delimiter = ',', default_value = "2:detours")]
    pub graph_variants: Vec<quarry_indexer::index::graph::GraphBuildOptions>,
    /// auto | cpu | cuda:N — where the graph build's kNN lists are computed.
    #[arg(long, env = "QUARRY_DEVICE", default_value = "auto")]
    pub device: DeviceSpec,
    /// Index this published snapshot's embeddings (a local path or s3://…), holding out
    /// `--queries` of its rows spread over it, instead of clustered vectors (`--rows`,
    /// `--dim`, `--clusters` are then unused).
    #[arg(long)]
    pub snapshot: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Also write the report as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(args: BenchHnswBuildArgs) -> anyhow::Result<ExitCode> {
    let kernels = quarry_indexer::index::init_vector_kernels(&args.device);
    let config = HnswBuildBenchConfig {
        rows: args.rows,
        dim: args.dim,
        clusters: args.clusters,
        m: args.m,
        ef_construction: args.ef_construction,
        ef_search: args.ef_search,
        queries: args.queries,
        faiss_baseline: !args.no_faiss_baseline,
        knn_recall_sample: args.knn_recall_sample,
        graph_variants: args.graph_variants,
        seed: 0x686e_7377,
    };
    let vectors = match &args.snapshot {
        None => BenchVectors::Clustered,
        Some(uri) => {
            let options = args.store.options();
            let (_, embeddings) = runtime()?.block_on(async {
                let reader = SnapshotReader::open(uri, &options).await?;
                reader.read_chunks().await
            })?;
            BenchVectors::Embeddings {
                source: uri.clone(),
                dim: embeddings.dim,
                data: embeddings.data,
            }
        }
    };
    let report = run_bench(kernels.device(), config, vectors)?;
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&report)?)?;
    }
    print!("{}", markdown(&report));
    Ok(ExitCode::SUCCESS)
}
