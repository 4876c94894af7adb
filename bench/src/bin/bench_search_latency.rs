//! `bench-search-latency --snapshot URI --queries queries.jsonl [--reps N] [--max-chunks-per-document N]`, or
//! `bench-search-latency --synthetic N --out DIR --queries ...` to build a seeded synthetic
//! snapshot of N chunks first. Prints the load time and resident memory after loading, JSON
//! and a Markdown table of p50/p99 per mode (and again with at most N chunks of a document), a filtered search on the exact-scan path at its
//! largest (20,000 allowed rows), then vector searches per second with `--threads 1,2,...`
//! threads at once (queries embedded beforehand: the index's share of a search worker).
//! Load a snapshot built by an earlier run (`--snapshot`) for the memory figure: right after
//! `--synthetic` the process still holds what building it allocated. The model's precision is
//! `QUARRY_PRECISION`'s (default auto).

use std::sync::Arc;

use anyhow::Context;
use quarry_indexer::embed::{BertEmbedder, EmbedOptions};
use quarry_indexer::index::IndexOptions;
use quarry_server::{LoadOptions, LoadedSnapshot, Searcher};

/// The allocator `quarry` runs with (see src/main.rs), so the figures are quarry's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use quarry_bench::arg_value as value;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let model = quarry_bench::model_dir()?;
    let queries_path = value("--queries").context("--queries FILE is required")?;
    let queries: Vec<String> = std::fs::read_to_string(&queries_path)?
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["text"].as_str().map(str::to_string))
        .collect();
    let reps: usize = value("--reps").and_then(|v| v.parse().ok()).unwrap_or(3);
    let snapshot = match value("--synthetic") {
        Some(n) => {
            let out = value("--out").context("--synthetic needs --out DIR")?;
            let started = std::time::Instant::now();
            let manifest = quarry_bench::synthetic_snapshot::write_synthetic_snapshot(
                out.as_ref(),
                n.parse()?,
                42,
                &model,
                &IndexOptions::default(),
            )
            .await?;
            eprintln!(
                "synthetic snapshot: {} chunks, index {}, built in {:.1} s",
                manifest.counts.chunks,
                manifest.index.params.factory(),
                started.elapsed().as_secs_f64()
            );
            out
        }
        None => value("--snapshot").context("--snapshot URI or --synthetic N is required")?,
    };
    let started = std::time::Instant::now();
    let loaded = LoadedSnapshot::load(&snapshot, &LoadOptions::default()).await?;
    let (load_secs, rss_mb, anon_mb) = (
        started.elapsed().as_secs_f64(),
        resident_mb("VmRSS:"),
        resident_mb("RssAnon:"),
    );
    let chunks = loaded.row_count();
    let index = loaded.manifest.index.params.factory();
    let embedder = Arc::new(BertEmbedder::load(
        &model,
        EmbedOptions {
            precision: quarry_bench::precision_from_env()?,
            ..Default::default()
        },
    )?);
    let searcher = Searcher::new(Arc::new(loaded), embedder)?;
    let results = quarry_bench::search_latency::measure(&searcher, &queries, reps, None)?;
    let per_document: Option<usize> = value("--max-chunks-per-document")
        .map(|n| n.parse())
        .transpose()
        .context("--max-chunks-per-document: a count")?;
    let collapsed = match per_document {
        Some(n) => Some(quarry_bench::search_latency::measure(
            &searcher,
            &queries,
            reps,
            Some(n),
        )?),
        None => None,
    };
    let thread_counts: Vec<usize> = value("--threads")
        .unwrap_or_else(|| "1,2".into())
        .split(',')
        .map(|t| t.trim().parse())
        .collect::<Result<_, _>>()
        .context("--threads: comma-separated counts")?;
    let throughput = quarry_bench::search_latency::vector_throughput(&searcher, &queries, &thread_counts)?;
    let filtered = quarry_bench::search_latency::filtered_exact_scan(&searcher, &queries, reps)?;
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "snapshot": snapshot, "chunks": chunks, "index": index, "queries": queries.len(), "reps": reps, "load_secs": load_secs, "rss_mb_after_load": rss_mb, "anonymous_rss_mb_after_load": anon_mb,
            "modes": results, "max_chunks_per_document": per_document, "modes_with_max_chunks_per_document": collapsed, "filtered_exact_scan": filtered, "vector_throughput": throughput
        }))?
    );
    println!("\nloaded in {load_secs:.2} s; resident memory after loading {rss_mb:.0} MB, of which anonymous (not file pages) {anon_mb:.0} MB");
    println!("\n{chunks} chunks, index {index}, {} queries x {reps}\n\n| mode | embed p50 ms | embed p99 ms | search p50 ms | search p99 ms |\n|---|---:|---:|---:|---:|", queries.len());
    for r in &results {
        println!(
            "| {} | {:.2} | {:.2} | {:.3} | {:.3} |",
            r.mode, r.embed.p50_ms, r.embed.p99_ms, r.search.p50_ms, r.search.p99_ms
        );
    }
    if let (Some(n), Some(collapsed)) = (per_document, &collapsed) {
        println!("\nat most {n} chunks per document\n\n| mode | search p50 ms | search p99 ms |\n|---|---:|---:|");
        for r in collapsed {
            println!("| {} | {:.3} | {:.3} |", r.mode, r.search.p50_ms, r.search.p99_ms);
        }
    }
    println!(
        "\nfiltered vector search, exact scan of {} allowed rows: p50 {:.3} ms, p99 {:.3} ms",
        filtered.allowed_rows, filtered.scan.p50_ms, filtered.scan.p99_ms
    );
    println!("\n| threads | vector searches | searches/s (query embedded beforehand) |\n|---:|---:|---:|");
    for t in &throughput {
        println!("| {} | {} | {:.0} |", t.threads, t.searches, t.qps);
    }
    Ok(())
}

/// One of this process's resident-memory lines of /proc/self/status (`VmRSS:` all of it,
/// `RssAnon:` the heap and other anonymous pages), in MB; 0 where /proc is missing.
fn resident_mb(field: &str) -> f64 {
    quarry_indexer::process_memory::status_mib(field).unwrap_or(0.0)
}
