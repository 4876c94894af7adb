//! Turns a workload's dataset into a published snapshot (timing the indexing run), the
//! query set, and the relevance judgements when there are any.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use quarry_datasets::beir::{BeirDataset, Query};
use quarry_datasets::synthetic::synthetic_documents;
use quarry_indexer::chunk::ChunkerConfig;
use quarry_indexer::embed::{Embedder, ModelDir};
use quarry_indexer::index::{IndexKind, IndexOptions};
use quarry_indexer::pipeline::{run_with_embedder, ProgressMode, RunOptions, StageReport};
use serde::Serialize;

use crate::workload::{Dataset, Workload};

/// The indexing run's figures.
#[derive(Debug, Clone, Serialize)]
pub struct IndexingResult {
    pub wall_secs: f64,
    pub documents: usize,
    pub chunks: usize,
    pub tokens: u64,
    pub stages: Vec<StageReport>,
    /// Peak resident memory of the benchmark process after indexing (VmHWM), MiB.
    pub peak_rss_mib: f64,
    pub snapshot_bytes: u64,
}

pub struct Prepared {
    pub snapshot: String,
    pub indexing: IndexingResult,
    pub queries: Vec<Query>,
    pub qrels: Option<HashMap<String, HashMap<String, i32>>>,
    pub dataset: Option<BeirDataset>,
}

/// Peak resident set size of this process, MiB (Linux; 0 elsewhere).
pub fn peak_rss_mib() -> f64 {
    quarry_indexer::process_memory::peak_rss_mib().unwrap_or(0.0)
}

pub fn index_options(workload: &Workload) -> anyhow::Result<IndexOptions> {
    let i = &workload.index;
    Ok(IndexOptions {
        kind: i.kind.parse::<IndexKind>()?,
        hnsw_m: i.m,
        ef_construction: i.ef_construction,
        ef_search: i.ef_search,
        nlist: i.nlist,
        nprobe: i.nprobe,
        ..Default::default()
    })
}

fn snapshot_bytes(dir: &Path) -> u64 {
    fn walk(dir: &Path) -> u64 {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| {
                        if e.path().is_dir() {
                            walk(&e.path())
                        } else {
                            e.metadata().map(|m| m.len()).unwrap_or(0)
                        }
                    })
                    .sum()
            })
            .unwrap_or(0)
    }
    walk(dir)
}

/// Indexes a folder of documents through the real pipeline.
async fn index_folder(
    workload: &Workload,
    source: &Path,
    out: &Path,
    model: &ModelDir,
    embedder: Arc<dyn Embedder>,
) -> anyhow::Result<IndexingResult> {
    let mut options = RunOptions::new(
        source.to_str().unwrap_or_default(),
        out.to_str().unwrap_or_default(),
        model.path.clone(),
    );
    options.index = index_options(workload)?;
    options.chunker = ChunkerConfig {
        max_tokens: workload.chunker.max_tokens,
        overlap_tokens: workload.chunker.overlap,
    };
    options.progress = ProgressMode::Quiet;
    // A benchmark measures a full run: nothing from an earlier run in the same folder is reused.
    options.reuse = false;
    let started = Instant::now();
    let report = run_with_embedder(options, embedder).await?;
    Ok(IndexingResult {
        wall_secs: started.elapsed().as_secs_f64(),
        documents: report.documents_indexed,
        chunks: report.chunks,
        tokens: report.tokens,
        stages: report.stages,
        peak_rss_mib: peak_rss_mib(),
        snapshot_bytes: snapshot_bytes(out),
    })
}

/// Builds the workload's snapshot under `work`.
pub async fn prepare(
    workload: &Workload,
    work: &Path,
    model: &ModelDir,
    embedder: Arc<dyn Embedder>,
) -> anyhow::Result<Prepared> {
    let out = work.join("snapshot");
    let source = work.join("source");
    std::fs::create_dir_all(&source)?;
    match &workload.dataset {
        Dataset::Beir { path, limit, split } => {
            let dataset = BeirDataset::load(path, split.as_deref().unwrap_or("test"))?;
            let corpus = std::fs::read_to_string(path.join("corpus.jsonl"))?;
            let lines: String = corpus
                .lines()
                .take(limit.unwrap_or(usize::MAX))
                .map(|l| format!("{l}\n"))
                .collect();
            std::fs::write(source.join("corpus.jsonl"), lines)?;
            let indexing = index_folder(workload, &source, &out, model, embedder).await?;
            let queries = dataset.judged_queries().into_iter().cloned().collect();
            let qrels = Some(dataset.qrels.clone());
            Ok(Prepared {
                snapshot: out.display().to_string(),
                indexing,
                queries,
                qrels,
                dataset: Some(dataset),
            })
        }
        Dataset::SyntheticDocs {
            documents,
            seed,
            queries,
        } => {
            let docs = synthetic_documents(*documents, *seed);
            let lines: String = docs
                .iter()
                .map(|d| {
                    format!(
                        "{}\n",
                        serde_json::json!({ "_id": d.id, "title": d.title, "text": d.text })
                    )
                })
                .collect();
            std::fs::write(source.join("corpus.jsonl"), lines)?;
            let indexing = index_folder(workload, &source, &out, model, embedder).await?;
            // Known-item queries: a document's title should find that document.
            let count = queries.unwrap_or(50).min(docs.len());
            let queries: Vec<Query> = docs
                .iter()
                .take(count)
                .map(|d| Query {
                    id: format!("q-{}", d.id),
                    text: d.title.clone(),
                })
                .collect();
            let qrels: HashMap<String, HashMap<String, i32>> = docs
                .iter()
                .take(count)
                .map(|d| (format!("q-{}", d.id), HashMap::from([(d.id.clone(), 1)])))
                .collect();
            let dataset = BeirDataset {
                corpus: docs,
                queries: queries.clone(),
                qrels: qrels.clone(),
            };
            Ok(Prepared {
                snapshot: out.display().to_string(),
                indexing,
                queries,
                qrels: Some(qrels),
                dataset: Some(dataset),
            })
        }
        Dataset::SyntheticVectors {
            vectors, seed, queries, ..
        } => {
            let started = Instant::now();
            let manifest = crate::synthetic_snapshot::write_synthetic_snapshot(
                &out,
                *vectors,
                *seed,
                model,
                &index_options(workload)?,
            )
            .await?;
            let indexing = IndexingResult {
                wall_secs: started.elapsed().as_secs_f64(),
                documents: manifest.counts.documents,
                chunks: manifest.counts.chunks,
                tokens: manifest.counts.tokens,
                stages: Vec::new(),
                peak_rss_mib: peak_rss_mib(),
                snapshot_bytes: snapshot_bytes(&out),
            };
            let docs = synthetic_documents(queries.unwrap_or(100), seed ^ 0x51);
            let queries = docs
                .iter()
                .map(|d| Query {
                    id: d.id.clone(),
                    text: d.title.clone(),
                })
                .collect();
            Ok(Prepared {
                snapshot: out.display().to_string(),
                indexing,
                queries,
                qrels: None,
                dataset: None,
            })
        }
    }
}
