//! `quarry eval SNAPSHOT --dataset DIR`: nDCG@10, recall@10, recall@100 and MRR@10 of each
//! mode (plus exact dense search), and the vector lane's ANN recall@10 against exact search.
//! Indexes nothing: the snapshot must hold the dataset's corpus (BEIR ids in the URI fragment).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use quarry_datasets::beir::BeirDataset;

use super::{runtime, LoadArgs};

#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    /// Snapshot of the dataset's corpus.
    pub snapshot: String,
    /// BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv).
    #[arg(long)]
    pub dataset: PathBuf,
    #[arg(long, default_value = "test")]
    pub split: String,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub load: LoadArgs,
}

pub fn run(args: EvalArgs) -> anyhow::Result<ExitCode> {
    let dataset = BeirDataset::load(&args.dataset, &args.split).with_context(|| format!("loading {}", args.dataset.display()))?;
    let searcher = runtime()?.block_on(args.load.searcher(&args.snapshot))?;
    let report = quarry_server::eval::evaluate(&searcher, &dataset)?;
    println!("{} queries, index {}, snapshot {}\n", report.queries, report.index, report.version);
    println!("{:<16} {:>8} {:>10} {:>11} {:>8}", "mode", "nDCG@10", "recall@10", "recall@100", "MRR@10");
    for mode in &report.modes {
        let s = &mode.summary;
        println!("{:<16} {:>8.4} {:>10.4} {:>11.4} {:>8.4}", mode.mode, s.ndcg_at_10, s.recall_at_10, s.recall_at_100, s.mrr_at_10);
    }
    println!("\nANN recall@10 of the vector lane against exact search: {:.4}", report.ann_recall_at_10);
    println!("mean query embedding time: {:.1} ms", report.mean_query_embed_ms);
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&report)?).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
