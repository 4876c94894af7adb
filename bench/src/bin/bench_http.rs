//! `bench-http --snapshot URI --queries queries.jsonl --corpus corpus.jsonl`: the seed-002
//! targets through real HTTP on loopback — ingest of a 10 KB document (POST /api/rag/ingest),
//! search (POST /v1/collections/{name}/search), embedding of a batch of 10 texts — as p50/p99,
//! and search QPS at concurrency 1, 8 and 32, without and with the recent-query cache.
//! Starts the server in-process on a free port, with `quarry serve`'s defaults unless
//! `--search-workers N`, `--query-embed-threads N` (0: each search embeds its own query) or
//! `--query-pass-queries N` say. The model's precision is `QUARRY_PRECISION`'s (default auto).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use quarry_bench::load::{http, BenchServer};
use quarry_datasets::beir::Query;
use quarry_indexer::embed::{BertEmbedder, EmbedOptions, Embedder};
use quarry_server::Mode;

/// The allocator `quarry` runs with (see src/main.rs), so the figures are quarry's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use quarry_bench::arg_value as value;

fn texts(path: &str, field: &str) -> anyhow::Result<Vec<String>> {
    Ok(std::fs::read_to_string(path)
        .with_context(|| format!("reading {path}"))?
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v[field].as_str().map(str::to_string))
        .collect())
}

/// A percentile of samples in seconds, in milliseconds.
fn p(samples: &mut [f64], q: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    quarry_bench::load::percentile(samples, q) * 1e3
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let snapshot = value("--snapshot").context("--snapshot URI is required")?;
    let queries = texts(&value("--queries").context("--queries FILE is required")?, "text")?;
    let passages = texts(&value("--corpus").context("--corpus FILE is required")?, "text")?;
    let requests: usize = value("--requests").and_then(|v| v.parse().ok()).unwrap_or(300);
    let model = quarry_bench::model_dir()?;
    let embedder = Arc::new(BertEmbedder::load(
        &model,
        EmbedOptions {
            precision: quarry_bench::precision_from_env()?,
            ..Default::default()
        },
    )?);

    // Embedding a batch of 10 texts, in process.
    let mut embed_ms = Vec::new();
    for round in 0..30 {
        let batch: Vec<&str> = passages[round * 10..round * 10 + 10]
            .iter()
            .map(String::as_str)
            .collect();
        let started = Instant::now();
        embedder.embed(&batch)?;
        embed_ms.push(started.elapsed().as_secs_f64());
    }

    // `quarry serve`'s defaults unless given: search workers, query embedding threads and pass size.
    let search_workers: Option<usize> = value("--search-workers")
        .map(|v| v.parse())
        .transpose()
        .context("--search-workers N")?;
    let query_embed_threads: Option<usize> = value("--query-embed-threads")
        .map(|v| v.parse())
        .transpose()
        .context("--query-embed-threads N")?;
    let query_pass_queries: Option<usize> = value("--query-pass-queries")
        .map(|v| v.parse())
        .transpose()
        .context("--query-pass-queries N")?;
    let tune = |query_cache: usize| {
        move |options: &mut quarry_server::app::ServeOptions| {
            options.query_cache = query_cache;
            if let Some(workers) = search_workers {
                options.search_workers = workers;
            }
            options.query_embed_threads = query_embed_threads.or(options.query_embed_threads);
            options.query_pass_queries = query_pass_queries.or(options.query_pass_queries);
        }
    };

    let data = tempfile::tempdir()?;
    let server = BenchServer::start(&snapshot, embedder.clone(), data.path(), tune(0)).await?;
    let client = reqwest::Client::new();

    // Ingest of ~10 KB documents.
    let mut ingest_ms = Vec::new();
    for i in 0..20 {
        let mut text = String::new();
        let mut j = i * 40;
        while text.len() < 10 * 1024 {
            text.push_str(&passages[j % passages.len()]);
            text.push_str("\n\n");
            j += 1;
        }
        let started = Instant::now();
        let response = client.post(format!("{}/api/rag/ingest", server.base)).json(&serde_json::json!({ "source": "bench", "path": format!("/doc/{i}"), "title": format!("Doc {i}"), "text": text })).send().await?;
        anyhow::ensure!(
            response.status().is_success(),
            "ingest failed: {}",
            response.text().await?
        );
        ingest_ms.push(started.elapsed().as_secs_f64());
    }

    // Search latency and QPS at each concurrency.
    let queries: Vec<Query> = queries
        .into_iter()
        .enumerate()
        .map(|(i, text)| Query {
            id: i.to_string(),
            text,
        })
        .collect();
    let mut rows = Vec::new();
    for concurrency in [1usize, 8, 32] {
        rows.push(
            http(
                &server.base,
                "bench",
                &queries,
                Mode::Vector,
                concurrency,
                requests,
                Duration::from_secs(120),
                10,
            )
            .await,
        );
    }
    server.stop().await?;
    // The same load with the recent-query cache `quarry serve` keeps by default: the 50 queries
    // repeat, so after the first round every search skips the model.
    let cached_data = tempfile::tempdir()?;
    let server = BenchServer::start(&snapshot, embedder.clone(), cached_data.path(), tune(4096)).await?;
    let mut cached_rows = Vec::new();
    for concurrency in [1usize, 8, 32] {
        cached_rows.push(
            http(
                &server.base,
                "bench",
                &queries,
                Mode::Vector,
                concurrency,
                requests,
                Duration::from_secs(120),
                10,
            )
            .await,
        );
    }
    server.stop().await?;
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    println!(
        "machine: {cpus} CPUs; snapshot {snapshot}; model on {}\n",
        embedder.device_name()
    );
    println!("| target (seed 002) | p50 ms | p99 ms | target |\n|---|---:|---:|---|");
    println!(
        "| ingest a 10 KB document (POST /api/rag/ingest, 20 docs) | {:.1} | {:.1} | < 5000 |",
        p(&mut ingest_ms, 0.5),
        p(&mut ingest_ms, 0.99)
    );
    println!(
        "| search at concurrency 1 (HTTP, top_k 10) | {:.1} | {:.1} | < 500 |",
        rows[0].p50_ms, rows[0].p99_ms
    );
    println!(
        "| embed a batch of 10 texts (in process) | {:.1} | {:.1} | < 200 |",
        p(&mut embed_ms, 0.5),
        p(&mut embed_ms, 0.99)
    );
    println!("\n| query cache | concurrency | requests | QPS | p50 ms | p99 ms | failed |\n|---|---:|---:|---:|---:|---:|---:|");
    for (cache, row) in rows
        .iter()
        .map(|r| ("off", r))
        .chain(cached_rows.iter().map(|r| ("on, queries repeat", r)))
    {
        println!(
            "| {cache} | {} | {requests} | {:.1} | {:.1} | {:.1} | {} |",
            row.concurrency, row.qps, row.p50_ms, row.p99_ms, row.failed
        );
    }
    Ok(())
}
