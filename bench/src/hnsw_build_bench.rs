//! `quarry bench-hnsw-build`: HNSW built by quarry's graph build (the base level's kNN
//! lists from the vector kernels — the GPU in a `cuda` build with one — CAGRA's pruning,
//! FAISS's insertion for the levels above) against FAISS's own build on all the CPU's
//! cores, over the same vectors — seeded clustered unit vectors, or a published snapshot's
//! embeddings with some of its rows held out as queries: build seconds, then recall@10
//! against exact search and single-query QPS at each efSearch, both indexes read back from
//! their files as a server reads them.

use std::time::Instant;

use quarry_datasets::synthetic::clustered_unit_vectors;
use quarry_indexer::index::graph::GraphBuildOptions;
use quarry_indexer::index::{build_graph_hnsw, build_vector_index, HnswBuilder, IndexSpec, VectorIndex};
use serde::Serialize;

use crate::ann_sweep::{ground_truth, sweep, SweepPoint};
use crate::equal_recall::qps_ratios_at_equal_recall;

/// What to measure.
#[derive(Debug, Clone, Serialize)]
pub struct HnswBuildBenchConfig {
    pub rows: usize,
    pub dim: usize,
    /// Clusters the vectors are drawn around.
    pub clusters: usize,
    pub m: usize,
    pub ef_construction: usize,
    /// efSearch values of the recall / QPS sweep.
    pub ef_search: Vec<usize>,
    /// Held-out queries drawn like the rows.
    pub queries: usize,
    /// Also build with FAISS's own insertion on the CPU.
    pub faiss_baseline: bool,
    /// Rows whose kNN lists (before pruning) are compared with exact search; 0: none.
    pub knn_recall_sample: usize,
    /// The graph build's choices to build with, one build each (the default alone unless asked).
    pub graph_variants: Vec<GraphBuildOptions>,
    pub seed: u64,
}

/// The vectors to index and to query.
pub enum BenchVectors {
    /// `config.rows` rows and `config.queries` queries drawn around `config.clusters` centres.
    Clustered,
    /// A snapshot's embeddings (row-major, `dim` columns), named by `source`: `config.queries`
    /// of its rows, spread evenly over it, are held out as the queries.
    Embeddings { source: String, dim: usize, data: Vec<f32> },
}

impl BenchVectors {
    /// The base rows, the queries, their dimensions, and what they are (for the report).
    fn split(self, config: &HnswBuildBenchConfig) -> (Vec<f32>, Vec<f32>, usize, String) {
        match self {
            Self::Clustered => {
                let dim = config.dim;
                let mut vectors =
                    clustered_unit_vectors(config.rows + config.queries, dim, config.clusters, config.seed);
                let queries = vectors.split_off(config.rows * dim);
                let what = format!("clustered vectors ({} clusters)", config.clusters);
                (vectors, queries, dim, what)
            }
            Self::Embeddings { source, dim, data } => {
                let rows = data.len() / dim.max(1);
                let stride = (rows / config.queries.max(1)).max(2);
                let (mut base, mut queries) = (Vec::new(), Vec::new());
                for (row, vector) in data.chunks_exact(dim.max(1)).enumerate() {
                    let held_out = row % stride == stride - 1 && queries.len() < config.queries * dim;
                    match held_out {
                        true => queries.extend_from_slice(vector),
                        false => base.extend_from_slice(vector),
                    }
                }
                (base, queries, dim, format!("embeddings of {source}"))
            }
        }
    }
}

/// One build and its sweep.
#[derive(Debug, Clone, Serialize)]
pub struct HnswBuildResult {
    pub builder: String,
    /// The graph build's choices (None: FAISS's insertion).
    pub graph: Option<GraphBuildOptions>,
    pub build_secs: f64,
    /// Links a row keeps on the base level, on average (of `2·M` slots), read from the file.
    pub base_links: f64,
    pub sweep: Vec<SweepPoint>,
    /// For a graph build beside FAISS's: at each point of its sweep, its QPS over FAISS's
    /// QPS at the same recall ([`qps_ratios_at_equal_recall`]; null where FAISS's sweep did
    /// not measure that recall). Empty for FAISS's own build, or without it.
    pub qps_over_faiss_at_equal_recall: Vec<Option<f64>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HnswBuildBenchReport {
    /// Where the graph build's kernels ran.
    pub device: String,
    /// Threads of the CPU's pool (FAISS's build and search, the pruning).
    pub cpu_threads: usize,
    pub config: HnswBuildBenchConfig,
    /// What the vectors are.
    pub vectors: String,
    /// Rows indexed and queries held out (of `dim` dimensions).
    pub rows: usize,
    pub queries: usize,
    pub dim: usize,
    pub builds: Vec<HnswBuildResult>,
    /// The graph build's kNN lists against exact search over the sampled rows (the share of
    /// each row's true nearest its list holds), for each number of lists a row joins among
    /// the variants, when asked for.
    pub knn_list_recall: Vec<ListRecall>,
}

/// The kNN lists' recall when each row joins `memberships` k-means lists.
#[derive(Debug, Clone, Serialize)]
pub struct ListRecall {
    pub memberships: usize,
    pub recall: f64,
}

/// Builds the index each way and sweeps efSearch over the saved files.
pub fn run(
    device: String,
    config: HnswBuildBenchConfig,
    vectors: BenchVectors,
) -> anyhow::Result<HnswBuildBenchReport> {
    let (base, queries, dim, what) = vectors.split(&config);
    let rows = base.len() / dim.max(1);
    anyhow::ensure!(
        rows > 0 && !queries.is_empty(),
        "no rows to index or no queries to hold out"
    );
    tracing::info!(
        "bench-hnsw-build: {rows} × {dim} {what}, HNSW{} efConstruction {}, graph build on {device}",
        config.m,
        config.ef_construction
    );
    let truth = ground_truth(&base, &queries, dim)?;
    let dir = tempfile::tempdir()?;
    let mut builds = Vec::new();
    let variants = match config.graph_variants.is_empty() {
        true => vec![GraphBuildOptions::default()],
        false => config.graph_variants.clone(),
    };
    let faiss = config.faiss_baseline.then_some(None);
    for (n, graph) in variants.iter().map(Some).chain(faiss).enumerate() {
        let builder = match graph {
            Some(_) => HnswBuilder::Graph,
            None => HnswBuilder::Faiss,
        };
        let spec = IndexSpec::Hnsw {
            m: config.m,
            ef_construction: config.ef_construction,
            ef_search: config.ef_search.first().copied().unwrap_or(128),
            builder,
        };
        let started = Instant::now();
        let index = match graph {
            Some(options) => build_graph_hnsw(&spec, dim, &base, options)?,
            None => build_vector_index(&spec, dim, &base)?,
        };
        let build_secs = started.elapsed().as_secs_f64();
        let path = dir.path().join(format!("{n}.faiss"));
        index.save(&path)?;
        drop(index);
        let base_links = quarry_indexer::index::graph::read_hnsw_links(&std::fs::read(&path)?)?.mean_base_links();
        let sweep = sweep(&path, &spec, &queries, dim, &truth, &config.ef_search, 1)?;
        let label = match graph {
            Some(options) if *options == GraphBuildOptions::default() => {
                format!("quarry graph build (kNN lists on {device})")
            }
            Some(options) => format!(
                "quarry graph build (kNN lists on {device}; {} lists a row, {} pruning)",
                options.memberships, options.prune
            ),
            None => "FAISS insertion (CPU)".to_string(),
        };
        builds.push(HnswBuildResult {
            builder: label,
            graph: graph.copied(),
            build_secs,
            base_links,
            sweep,
            qps_over_faiss_at_equal_recall: Vec::new(),
        });
    }
    if let Some(faiss) = builds.iter().find(|b| b.graph.is_none()).map(|b| b.sweep.clone()) {
        for build in builds.iter_mut().filter(|b| b.graph.is_some()) {
            build.qps_over_faiss_at_equal_recall = qps_ratios_at_equal_recall(&build.sweep, &faiss);
        }
    }
    let mut knn_list_recall = Vec::new();
    if config.knn_recall_sample > 0 {
        let mut memberships: Vec<usize> = variants.iter().map(|v| v.memberships).collect();
        memberships.sort_unstable();
        memberships.dedup();
        let kernels = quarry_indexer::index::vector_kernels();
        for each in memberships {
            let sample = config.knn_recall_sample;
            let recall =
                quarry_indexer::index::graph::knn_list_recall(kernels.as_ref(), &base, dim, config.m, each, sample)?;
            tracing::info!(
                "bench-hnsw-build: kNN list recall {recall:.4} over {sample} sampled rows, {each} lists a row"
            );
            knn_list_recall.push(ListRecall {
                memberships: each,
                recall,
            });
        }
    }
    Ok(HnswBuildBenchReport {
        device,
        cpu_threads: rayon::current_num_threads(),
        config,
        vectors: what,
        rows,
        queries: queries.len() / dim.max(1),
        dim,
        builds,
        knn_list_recall,
    })
}

/// The report as a Markdown table: a row per build, recall@10 and QPS per efSearch.
pub fn markdown(report: &HnswBuildBenchReport) -> String {
    use std::fmt::Write;
    let c = &report.config;
    let mut md = format!(
        "## HNSW{} build over {} × {} {}, {} queries held out, efConstruction {}, {} CPU threads\n\n",
        c.m, report.rows, report.dim, report.vectors, report.queries, c.ef_construction, report.cpu_threads
    );
    md.push_str("| builder | build s | base links a row |");
    for ef in &c.ef_search {
        let _ = write!(md, " efSearch {ef}: recall@10 (QPS) |");
    }
    md.push_str("\n|---|---:|---:|");
    md.push_str(&"---:|".repeat(c.ef_search.len()));
    md.push('\n');
    for build in &report.builds {
        let _ = write!(
            md,
            "| {} | {:.2} | {:.1} |",
            build.builder, build.build_secs, build.base_links
        );
        for point in &build.sweep {
            let _ = write!(md, " {:.4} ({:.0}) |", point.recall_at_10, point.qps);
        }
        md.push('\n');
    }
    for list in &report.knn_list_recall {
        let _ = writeln!(
            md,
            "\nThe graph build's kNN lists (before pruning), each row in {} k-means lists, hold {:.4} of each of {} sampled rows' {} true nearest rows.",
            list.memberships,
            list.recall,
            c.knn_recall_sample,
            quarry_indexer::index::graph::list_length(2 * c.m)
        );
    }
    let graph = report.builds.iter().find(|b| b.graph.is_some());
    let faiss = report.builds.iter().find(|b| b.graph.is_none());
    if let (Some(graph), Some(faiss)) = (graph, faiss) {
        let _ = writeln!(
            md,
            "\nFAISS's build time / the graph build's ({}): {:.2}",
            graph.graph.map(|g| g.to_string()).unwrap_or_default(),
            faiss.build_secs / graph.build_secs.max(1e-9)
        );
    }
    for build in report
        .builds
        .iter()
        .filter(|b| !b.qps_over_faiss_at_equal_recall.is_empty())
    {
        let points: Vec<String> = build
            .sweep
            .iter()
            .zip(&build.qps_over_faiss_at_equal_recall)
            .map(|(point, ratio)| match ratio {
                Some(ratio) => format!("efSearch {} {ratio:.2}", point.value),
                None => format!("efSearch {} — (outside FAISS's sweep)", point.value),
            })
            .collect();
        let _ = writeln!(
            md,
            "\n{}: QPS / FAISS's at the same recall@10, {}",
            build.builder,
            points.join("; ")
        );
    }
    md
}
