//! `quarry bench-pipeline SOURCE --out SNAPSHOT [index options]`: the batch run of `quarry
//! index`, every stage as it is, with seeded unit vectors in place of the model's
//! (quarry_bench::seeded_embedder). It times fetch, parse + chunk, the indexes, the recall
//! check and the segment write, and the run's peak memory, at corpus sizes the machine could
//! not embed; the snapshot it publishes is labelled with the real model but its vectors mean
//! nothing, so publish it somewhere of its own.

use std::process::ExitCode;
use std::sync::Arc;

use quarry_bench::seeded_embedder::SeededEmbedder;
use quarry_indexer::embed::ModelDir;
use quarry_indexer::pipeline::run_with_embedder;

use super::index::{print_report, run_options, IndexArgs};
use super::runtime;

pub fn run(args: IndexArgs) -> anyhow::Result<ExitCode> {
    let json = args.json;
    let runtime = runtime()?;
    let options = run_options(args, runtime.handle())?;
    let embedder = Arc::new(SeededEmbedder::new(&ModelDir::open(&options.model_dir)?)?);
    let report = runtime.block_on(run_with_embedder(options, embedder))?;
    print_report(&report, json)?;
    Ok(ExitCode::SUCCESS)
}
