//! `quarry bench WORKLOAD --out DIR`: prepares the workload's snapshot, then measures
//! indexing, quality, search load (in process and over HTTP), the ANN recall–QPS curve and
//! the peers, and writes `<date>-<host>-<workload>.json`, `.md` and `-*.svg` plots into DIR.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use quarry_indexer::embed::{
    default_model_dir, load_embedder, BatchPolicy, DeviceSpec, EmbedOptions, Embedder, ModelDir,
};
use quarry_indexer::index::KeywordQuery;
use quarry_indexer::snapshot::layout;
use quarry_server::search::eval::{evaluate, EvalReport};
use quarry_server::{LoadOptions, LoadedSnapshot, Mode, Searcher};
use serde::Serialize;

use crate::ann_sweep::{ground_truth, sweep, timed_qps, SweepPoint};
use crate::load::{http, in_process, BenchServer, LoadPoint};
use crate::peers::PeerResults;
use crate::prepare::{prepare, IndexingResult};
use crate::workload::Workload;

#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub host: String,
    pub cpus: usize,
    pub os: String,
    pub device: String,
}

/// Quarry beside its peers, as ratios (> 1 means quarry is faster / better).
#[derive(Debug, Clone, Serialize, Default)]
pub struct Ratios {
    /// quarry's ANN QPS over faiss-cpu's on the same index file at the workload's efSearch/nprobe.
    pub vector_qps_vs_faiss: Option<f64>,
    /// quarry's own overhead on top of FAISS, percent (the bar: under 10%): the search lane
    /// against the raw FAISS index it wraps (same build, same file, same parameters).
    pub overhead_vs_own_faiss_percent: Option<f64>,
    /// The search lane against the faiss-cpu wheel on the same file: quarry's overhead plus
    /// any difference between the two FAISS builds.
    pub overhead_vs_faiss_cpu_percent: Option<f64>,
    pub vector_qps_vs_hnswlib: Option<f64>,
    pub keyword_qps_vs_bm25s: Option<f64>,
    pub keyword_ndcg_vs_bm25s: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchResults {
    pub workload: String,
    pub date: String,
    pub command: String,
    pub machine: Machine,
    pub indexing: IndexingResult,
    pub quality: Option<EvalReport>,
    pub load: Vec<LoadPoint>,
    pub ann: Vec<SweepPoint>,
    /// Single-query QPS of quarry's lanes with the query already embedded.
    pub vector_lane_qps: f64,
    pub keyword_lane_qps: f64,
    pub peers: Option<PeerResults>,
    pub ratios: Ratios,
}

/// `count` seeded rows of `base` with Gaussian noise (sigma 0.1 per dimension), re-normalized.
fn perturbed_rows(base: &[f32], dim: usize, count: usize, seed: u64) -> Vec<f32> {
    let mut rng = quarry_datasets::synthetic::SeededRng::new(seed ^ 0xA11CE);
    let rows = base.len() / dim.max(1);
    let mut out = Vec::with_capacity(count * dim);
    for _ in 0..count {
        let row = rng.below(rows);
        let mut vector: Vec<f32> = base[row * dim..(row + 1) * dim]
            .iter()
            .map(|x| x + 0.1 * rng.normal() as f32 / (dim as f32).sqrt())
            .collect();
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        vector.iter_mut().for_each(|x| *x /= norm);
        out.extend(vector);
    }
    out
}

fn host() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into())
}

/// Runs a workload and writes its results under `out`.
pub async fn run(workload_path: &Path, out: &Path) -> anyhow::Result<BenchResults> {
    let workload = Workload::load(workload_path)?;
    std::fs::create_dir_all(out)?;
    let work = tempfile::tempdir()?;
    let model_dir = match &workload.model.path {
        Some(path) => path.clone(),
        None => std::env::var_os("QUARRY_MODEL")
            .map(PathBuf::from)
            .map(Ok)
            .unwrap_or_else(default_model_dir)?,
    };
    let model = ModelDir::open(&model_dir)?;
    let device: DeviceSpec = workload.model.device.as_deref().unwrap_or("auto").parse()?;
    let batch = workload
        .model
        .batch_tokens
        .map(|max_tokens| BatchPolicy::TokenBudget { max_tokens });
    let embedder: Arc<dyn Embedder> = load_embedder(
        &model,
        EmbedOptions {
            device,
            batch,
            ..Default::default()
        },
    )?;
    tracing::info!("bench {}: preparing the snapshot", workload.name);
    let prepared = prepare(&workload, work.path(), &model, embedder.clone()).await?;

    let loaded = LoadedSnapshot::load(
        &prepared.snapshot,
        &LoadOptions {
            cache_dir: work.path().join("cache"),
            ..Default::default()
        },
    )
    .await?;
    let searcher = Arc::new(Searcher::new(Arc::new(loaded), embedder.clone())?);
    let quality = match &prepared.dataset {
        Some(dataset) => {
            let (searcher, dataset) = (searcher.clone(), dataset.clone());
            Some(tokio::task::spawn_blocking(move || evaluate(&searcher, &dataset)).await??)
        }
        None => None,
    };

    // Load: in process, then over HTTP.
    let s = &workload.search;
    let max = Duration::from_secs_f64(s.max_seconds);
    let mut load = Vec::new();
    for mode in &s.modes {
        let mode: Mode = mode.parse()?;
        for &c in &s.concurrency {
            let (searcher, queries) = (searcher.clone(), prepared.queries.clone());
            let (requests, top_k) = (s.requests, s.top_k);
            load.push(
                tokio::task::spawn_blocking(move || in_process(&searcher, &queries, mode, c, requests, max, top_k))
                    .await?,
            );
        }
    }
    if s.http {
        let server = BenchServer::start(
            &prepared.snapshot,
            embedder.clone(),
            &work.path().join("server"),
            |options| {
                options.query_cache = 0;
                options.search_workers = s.search_workers.unwrap_or(options.search_workers);
                options.query_embed_threads = s.query_embed_threads.or(options.query_embed_threads);
                options.query_pass_queries = s.query_pass_queries.or(options.query_pass_queries);
            },
        )
        .await?;
        for mode in &s.modes {
            let mode: Mode = mode.parse()?;
            for &c in &s.concurrency {
                load.push(
                    http(
                        &server.base,
                        "bench",
                        &prepared.queries,
                        mode,
                        c,
                        s.requests,
                        max,
                        s.top_k,
                    )
                    .await,
                );
            }
        }
        server.stop().await?;
    }

    // The ANN curve against exact search, and the lanes' own QPS.
    let snapshot = searcher.snapshot().clone();
    let dim = snapshot.dim();
    let base = snapshot.all_embeddings()?;
    let query_vectors = match &workload.dataset {
        // Synthetic vectors have no text: queries come from the data's own distribution.
        crate::workload::Dataset::SyntheticVectors { seed, .. } => {
            perturbed_rows(&base, dim, prepared.queries.len(), *seed)
        }
        _ => {
            let query_texts: Vec<&str> = prepared.queries.iter().map(|q| q.text.as_str()).collect();
            embedder.embed(&query_texts)?.data
        }
    };
    let truth = ground_truth(&base, &query_vectors, dim)?;
    let segment = &snapshot.manifest.segments[0];
    let index_file = Path::new(&prepared.snapshot).join(layout::segment_file(&segment.id, layout::VECTORS));
    let spec = snapshot.manifest.segment_index(segment);
    let sweep_values: Vec<usize> = match spec {
        quarry_indexer::index::IndexSpec::Hnsw { .. } => workload.ann.ef_search.clone(),
        quarry_indexer::index::IndexSpec::Flat => Vec::new(),
        _ => workload.ann.nprobe.clone(),
    };
    let ann = sweep(
        &index_file,
        &spec,
        &query_vectors,
        dim,
        &truth,
        &sweep_values,
        workload.repetitions,
    )?;
    let n = prepared.queries.len();
    let vector_lane_qps = timed_qps(n, workload.repetitions, |i| {
        searcher
            .vector_lane(&query_vectors[i * dim..(i + 1) * dim], 10, None)
            .map(|_| ())
            .map_err(Into::into)
    })?;
    let keyword_queries: Vec<KeywordQuery> = prepared.queries.iter().map(|q| KeywordQuery::text(&q.text)).collect();
    let keyword_lane_qps = timed_qps(n, workload.repetitions, |i| {
        searcher
            .keyword_lane(&keyword_queries[i], 100, None)
            .map(|_| ())
            .map_err(Into::into)
    })?;

    // Peers on the same data.
    let peers = if workload.peers.enabled {
        let python = workload
            .peers
            .python
            .clone()
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv-bench/bin/python"));
        let texts = prepared.dataset.as_ref().map(|_| {
            let chunks: Vec<(String, String)> = snapshot
                .chunks()
                .enumerate()
                .map(|(row, c)| {
                    let uri = &snapshot.document_of(row).uri;
                    (
                        c.text.clone(),
                        uri.rsplit_once('#')
                            .map(|(_, id)| id.to_string())
                            .unwrap_or_else(|| c.doc_id.clone()),
                    )
                })
                .collect();
            let queries = prepared
                .queries
                .iter()
                .map(|q| (q.id.clone(), q.text.clone()))
                .collect();
            (chunks, queries, prepared.qrels.clone())
        });
        Some(crate::peers::run(crate::peers::PeerInput {
            python,
            work: work.path(),
            base: &base,
            queries: &query_vectors,
            dim,
            truth: &truth,
            faiss_index: &index_file,
            spec: &spec,
            sweep_values: &sweep_values,
            texts,
            repetitions: workload.repetitions,
        })?)
    } else {
        None
    };
    let mut ratios = ratios(
        &spec,
        vector_lane_qps,
        keyword_lane_qps,
        quality.as_ref(),
        peers.as_ref(),
    );

    if let Some(raw) = default_point(&spec, &ann) {
        ratios.overhead_vs_own_faiss_percent = Some((raw / vector_lane_qps - 1.0) * 100.0);
    }
    let results = BenchResults {
        workload: workload.name.clone(),
        date: chrono::Utc::now().to_rfc3339(),
        command: format!("quarry bench {} --out {}", workload_path.display(), out.display()),
        machine: Machine {
            host: host(),
            cpus: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
            os: std::env::consts::OS.into(),
            device: embedder.device_name(),
        },
        indexing: prepared.indexing,
        quality,
        load,
        ann,
        vector_lane_qps,
        keyword_lane_qps,
        peers,
        ratios,
    };
    let stem = format!(
        "{}-{}-{}",
        chrono::Utc::now().format("%Y-%m-%d"),
        results.machine.host,
        workload.name
    );
    std::fs::write(out.join(format!("{stem}.json")), serde_json::to_vec_pretty(&results)?)?;
    std::fs::write(out.join(format!("{stem}.md")), crate::report::markdown(&results))?;
    crate::plots::write_all(&results, out, &stem)?;
    Ok(results)
}

/// The QPS of a sweep at the index's own efSearch / nprobe.
fn default_point(spec: &quarry_indexer::index::IndexSpec, sweep: &[SweepPoint]) -> Option<f64> {
    let value = match spec {
        quarry_indexer::index::IndexSpec::Hnsw { ef_search, .. } => *ef_search,
        quarry_indexer::index::IndexSpec::IvfFlat { nprobe, .. }
        | quarry_indexer::index::IndexSpec::IvfPq { nprobe, .. } => *nprobe,
        quarry_indexer::index::IndexSpec::Flat => return None,
    };
    sweep.iter().find(|p| p.value == value).map(|p| p.qps)
}

fn ratios(
    spec: &quarry_indexer::index::IndexSpec,
    vector_qps: f64,
    keyword_qps: f64,
    quality: Option<&EvalReport>,
    peers: Option<&PeerResults>,
) -> Ratios {
    let mut ratios = Ratios::default();
    let Some(peers) = peers else { return ratios };
    let at = |sweep: &[SweepPoint]| default_point(spec, sweep);
    if let Some(faiss) = peers.faiss.as_ref().and_then(|f| at(&f.sweep)) {
        ratios.vector_qps_vs_faiss = Some(vector_qps / faiss);
        // Time per query through quarry's lane over time per query in faiss-cpu, minus one.
        ratios.overhead_vs_faiss_cpu_percent = Some((faiss / vector_qps - 1.0) * 100.0);
    }
    if let Some(hnswlib) = peers.hnswlib.as_ref().and_then(|h| at(&h.sweep)) {
        ratios.vector_qps_vs_hnswlib = Some(vector_qps / hnswlib);
    }
    if let Some(bm25s) = &peers.bm25s {
        ratios.keyword_qps_vs_bm25s = Some(keyword_qps / bm25s.qps);
        if let (Some(theirs), Some(ours)) = (bm25s.ndcg_at_10, quality.and_then(|q| q.mode("keyword"))) {
            ratios.keyword_ndcg_vs_bm25s = Some(ours.ndcg_at_10 / theirs);
        }
    }
    ratios
}
