//! `quarry eval [SNAPSHOT] --dataset DIR [--dataset DIR ...]`: nDCG@10, recall@10,
//! recall@100 and MRR@10 of every mode (plus exact dense search) on BEIR sets, in one table,
//! the default mode's rows marked, and the vector lane's ANN recall@10 against exact search.
//! With SNAPSHOT, it must hold the one dataset's corpus (BEIR ids in the URI fragment);
//! without, each dataset's corpus.jsonl is indexed into `--work-dir/<dataset>` first (an
//! incremental run: a corpus indexed before is not embedded again).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use quarry_datasets::beir::BeirDataset;
use quarry_indexer::pipeline::{run as run_pipeline, ProgressMode, RunOptions};
use quarry_server::search::eval::EvalReport;
use serde::Serialize;

use super::{runtime, LoadArgs};

#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    /// Snapshot of the dataset's corpus (one dataset only); left out, each dataset is indexed into --work-dir.
    pub snapshot: Option<String>,
    /// BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv); repeat for several sets.
    #[arg(long = "dataset", required = true)]
    pub datasets: Vec<PathBuf>,
    #[arg(long, default_value = "test")]
    pub split: String,
    /// Where datasets are indexed when no snapshot is given (one snapshot root per dataset, kept for the next eval).
    #[arg(long, default_value = ".quarry-eval")]
    pub work_dir: PathBuf,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Also write each mode's ranking as a TREC run, `<dataset>.<mode>.trec`, and the weight
    /// `auto` gave the vector lane per query, `<dataset>.auto-weights.tsv`, into this folder
    /// (bench/fusion/compare.py compares other fusions on them).
    #[arg(long)]
    pub runs: Option<PathBuf>,
    /// Search without typo tolerance (the lanes then read the query only as typed).
    #[arg(long)]
    pub no_typo_tolerance: bool,
    #[command(flatten)]
    pub load: LoadArgs,
}

/// What `--json` writes.
#[derive(Serialize)]
struct EvalOutput<'a> {
    default_mode: &'a str,
    datasets: Vec<DatasetReport<'a>>,
}

#[derive(Serialize)]
struct DatasetReport<'a> {
    dataset: String,
    #[serde(flatten)]
    report: &'a EvalReport,
}

fn dataset_name(dir: &Path) -> String {
    dir.canonicalize()
        .unwrap_or_else(|_| dir.to_path_buf())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "dataset".into())
}

/// Indexes `dir`'s corpus.jsonl into `out` (nothing embedded again where a run did before).
async fn index_dataset(dir: &Path, out: &Path, load: &LoadArgs) -> anyhow::Result<()> {
    let mut options = RunOptions::new(
        dir.to_str().context("dataset path is not UTF-8")?,
        out.to_str().context("work dir path is not UTF-8")?,
        load.model.model_dir()?,
    );
    options.source_options.include = vec!["corpus.jsonl".into()];
    options.embed = load.model.embed_options();
    options.progress = ProgressMode::Quiet;
    options.after_embedding = Some(crate::allocator::hand_back_freed_memory);
    let report = run_pipeline(options)
        .await
        .with_context(|| format!("indexing {}", dir.display()))?;
    eprintln!(
        "{}: version {} serves {} documents ({} parsed by this run)",
        dir.display(),
        report.version.as_deref().unwrap_or("-"),
        report.documents_indexed,
        report.documents_seen
    );
    Ok(())
}

pub fn run(args: EvalArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.snapshot.is_none() || args.datasets.len() == 1,
        "a snapshot holds one dataset's corpus: give one --dataset with it, or none to index each dataset"
    );
    let runtime = runtime()?;
    let mut reports = Vec::new();
    for dir in &args.datasets {
        let dataset = BeirDataset::load(dir, &args.split).with_context(|| format!("loading {}", dir.display()))?;
        let name = dataset_name(dir);
        let snapshot = match &args.snapshot {
            Some(snapshot) => snapshot.clone(),
            None => {
                let out = args.work_dir.join(&name);
                runtime.block_on(index_dataset(dir, &out, &args.load))?;
                out.to_string_lossy().into_owned()
            }
        };
        let searcher = runtime.block_on(args.load.searcher(&snapshot))?;
        let base = quarry_server::SearchRequest {
            typo_tolerance: !args.no_typo_tolerance,
            ..Default::default()
        };
        let report = quarry_server::search::eval::evaluate_with(&searcher, &dataset, &base)?;
        if let Some(folder) = &args.runs {
            std::fs::create_dir_all(folder).with_context(|| format!("creating {}", folder.display()))?;
            for mode in &report.modes {
                let path = folder.join(format!(
                    "{name}.{}.trec",
                    mode.mode.replace(' ', "_").replace(['(', ')'], "")
                ));
                std::fs::write(&path, report.trec_run(&mode.mode).unwrap_or_default())
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            let weights: String = report
                .auto_vector_weights
                .iter()
                .map(|(query, weight)| format!("{query}\t{weight}\n"))
                .collect();
            let path = folder.join(format!("{name}.auto-weights.tsv"));
            std::fs::write(&path, weights).with_context(|| format!("writing {}", path.display()))?;
        }
        reports.push((name, report));
    }
    let default_mode = reports.first().map(|(_, r)| r.default_mode.clone()).unwrap_or_default();
    println!(
        "{:<16} {:<18} {:>7} {:>8} {:>10} {:>11} {:>8}",
        "dataset", "mode", "queries", "nDCG@10", "recall@10", "recall@100", "MRR@10"
    );
    for (name, report) in &reports {
        for mode in &report.modes {
            let s = &mode.summary;
            let label = if mode.mode == report.default_mode {
                format!("{} (default)", mode.mode)
            } else {
                mode.mode.clone()
            };
            println!(
                "{:<16} {:<18} {:>7} {:>8.4} {:>10.4} {:>11.4} {:>8.4}",
                name, label, report.queries, s.ndcg_at_10, s.recall_at_10, s.recall_at_100, s.mrr_at_10
            );
        }
    }
    println!();
    for (name, report) in &reports {
        println!("{name}: index {}, version {}, ANN recall@10 of the vector lane against exact search {:.4}, mean query embedding {:.1} ms", report.index, report.version, report.ann_recall_at_10, report.mean_query_embed_ms);
    }
    if let Some(path) = &args.json {
        let output = EvalOutput {
            default_mode: &default_mode,
            datasets: reports
                .iter()
                .map(|(name, report)| DatasetReport {
                    dataset: name.clone(),
                    report,
                })
                .collect(),
        };
        std::fs::write(path, serde_json::to_vec_pretty(&output)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
