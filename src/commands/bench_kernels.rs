//! `quarry bench-kernels`: exact flat top-k QPS against the bandwidth and compute roofs, and the IVF
//! build through quarry's kernels against FAISS's own, on seeded clustered vectors.

use std::path::PathBuf;
use std::process::ExitCode;

use quarry_bench::kernels_bench::{markdown, run as run_bench, KernelBenchConfig};
use quarry_indexer::embed::DeviceSpec;

#[derive(clap::Args, Debug)]
pub struct BenchKernelsArgs {
    #[arg(long, default_value_t = 100_000)]
    pub rows: usize,
    #[arg(long, default_value_t = 384)]
    pub dim: usize,
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Query batch sizes for flat top-k, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16,256")]
    pub batches: Vec<usize>,
    #[arg(long, default_value_t = 1_024)]
    pub nlist: usize,
    #[arg(long, default_value_t = 65_536)]
    pub train_sample: usize,
    /// Device memory bandwidth in GB/s for the flat top-k roof (H100 SXM: 3350, H200: 4800; 0: none).
    #[arg(long, default_value_t = 0.0)]
    pub bandwidth_gbs: f64,
    /// Device FP32 peak in TFLOP/s for the flat top-k compute roof (H100/H200 SXM: 67, the
    /// datasheet's; 0: none).
    #[arg(long, default_value_t = 0.0)]
    pub fp32_tflops: f64,
    /// Skip the FAISS CPU build of the same IVF index.
    #[arg(long)]
    pub no_faiss_baseline: bool,
    /// auto | cpu | cuda:N — where quarry's kernels run.
    #[arg(long, env = "QUARRY_DEVICE", default_value = "auto")]
    pub device: DeviceSpec,
    /// Also write the report as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(args: BenchKernelsArgs) -> anyhow::Result<ExitCode> {
    let kernels = quarry_indexer::index::init_vector_kernels(&args.device);
    let config = KernelBenchConfig {
        rows: args.rows,
        dim: args.dim,
        k: args.k,
        query_batches: args.batches,
        nlist: args.nlist,
        train_sample: args.train_sample,
        bandwidth_gbs: args.bandwidth_gbs,
        fp32_tflops: args.fp32_tflops,
        faiss_baseline: !args.no_faiss_baseline,
        seed: 0x6b65726e,
    };
    let report = run_bench(kernels, config)?;
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&report)?)?;
    }
    print!("{}", markdown(&report));
    Ok(ExitCode::SUCCESS)
}
