//! `quarry bench WORKLOAD.toml --out DIR`: one harness for indexing throughput, search
//! latency and QPS, ANN recall and quality, with peers side by side.

use std::path::PathBuf;
use std::process::ExitCode;

use super::runtime;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// A workload file (bench/workloads/*.toml).
    pub workload: PathBuf,
    /// Where the JSON, summary.md and SVG plots go.
    #[arg(long, env = "QUARRY_BENCH_OUT", default_value = "bench/results")]
    pub out: PathBuf,
}

pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let results = runtime()?.block_on(quarry_bench::harness::run(&args.workload, &args.out))?;
    print!("{}", quarry_bench::report::markdown(&results));
    println!("\nresults written to {}", args.out.display());
    Ok(ExitCode::SUCCESS)
}
