//! `bench-reload --synthetic N --out DIR [--uploads U] [--deleted-fraction F] [--replace]`:
//! how long an online upload takes to become searchable. Builds a seeded synthetic snapshot
//! of N chunks (with `--deleted-fraction`, a version hiding that fraction of its documents
//! behind tombstones, as deletes and replaced documents leave them until compaction), then
//! publishes U one-document uploads (parsed, chunked and embedded by the real pipeline, as
//! the server does; with `--replace` each one also hides a synthetic document, as an update
//! of a document hides its previous copy) and times, for each new version, a full load
//! against a reload that keeps the previous version's segments (`LoadedSnapshot::load_after`).
//! Prints JSON and a table.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use quarry_indexer::chunk::{Chunker, TokenChunker};
use quarry_indexer::embed::{BertEmbedder, EmbedOptions, Embedder};
use quarry_indexer::index::IndexOptions;
use quarry_indexer::parse::AutoParser;
use quarry_indexer::pipeline::{embed_documents, parse_and_chunk, publish_next_version, ChunkSettings, VersionChange};
use quarry_indexer::snapshot::{ChunkerManifest, SnapshotReader, SnapshotWriter};
use quarry_indexer::source::RawDocument;
use quarry_indexer::store::StoreOptions;
use quarry_server::{LoadOptions, LoadedSnapshot};

/// The allocator `quarry` runs with (see src/main.rs), so the figures are quarry's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use quarry_bench::arg_value as value;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let model = quarry_bench::model_dir()?;
    let chunks: usize = value("--synthetic").context("--synthetic N is required")?.parse()?;
    let out = value("--out").context("--out DIR is required")?;
    let uploads: usize = value("--uploads").and_then(|v| v.parse().ok()).unwrap_or(5);
    let deleted_fraction: f64 = value("--deleted-fraction")
        .map(|v| v.parse())
        .transpose()?
        .unwrap_or(0.0);
    anyhow::ensure!(
        (0.0..1.0).contains(&deleted_fraction),
        "--deleted-fraction must be in [0, 1)"
    );
    let replace = std::env::args().any(|a| a == "--replace");
    let started = Instant::now();
    let manifest = quarry_bench::synthetic_snapshot::write_synthetic_snapshot(
        out.as_ref(),
        chunks,
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

    let embedder: Arc<dyn Embedder> = Arc::new(BertEmbedder::load(&model, EmbedOptions::default())?);
    let chunker = Arc::new(TokenChunker::new(
        manifest.chunker.config,
        embedder.tokenizer().clone(),
        &embedder.info().sha256,
    )?);
    let settings = ChunkSettings {
        parser: std::sync::Arc::new(AutoParser),
        chunker: chunker.clone(),
        tags: Vec::new(),
        max_document_tokens: 500_000,
        summarizer: quarry_indexer::summary::default_summarizer(),
        ingested_at: chrono::Utc::now(),
    };
    let writer = SnapshotWriter::open(&out, &StoreOptions::default())?;
    let chunker_manifest = ChunkerManifest {
        config: chunker.config(),
        sig: chunker.signature(),
    };
    if deleted_fraction > 0.0 {
        // Every k-th document hidden, spread over the segment.
        let reader = SnapshotReader::open(&out, &StoreOptions::default()).await?;
        let loaded = LoadedSnapshot::load(&out, &LoadOptions::default()).await?;
        let every = (1.0 / deleted_fraction).round().max(1.0) as usize;
        let tombstones: Vec<String> = loaded.documents().step_by(every).map(|d| d.doc_id.clone()).collect();
        eprintln!(
            "hiding {} of {} documents behind tombstones",
            tombstones.len(),
            loaded.documents().count()
        );
        publish_next_version(
            &writer,
            Some(reader.manifest()),
            VersionChange {
                documents: Vec::new(),
                tombstones,
                embedded_chunks: 0,
            },
            embedder.as_ref(),
            chunker_manifest.clone(),
            &IndexOptions::default(),
        )
        .await?;
    }
    let options = LoadOptions::default();
    let started = Instant::now();
    let mut previous = Arc::new(LoadedSnapshot::load(&out, &options).await?);
    // Documents an upload hides with --replace: ones the deletes above left visible.
    let hidden: std::collections::HashSet<&String> = previous.manifest.tombstones.iter().collect();
    let mut replaced = previous
        .documents()
        .map(|d| d.doc_id.clone())
        .filter(|id| !hidden.contains(id))
        .take(uploads)
        .collect::<Vec<_>>()
        .into_iter();
    let first_load = started.elapsed().as_secs_f64();
    let (mut full, mut kept) = (Vec::new(), Vec::new());
    for upload in 0..uploads {
        let text =
            format!("Upload {upload}: a short note about reloading snapshots after an online upload, number {upload}.");
        let raw = RawDocument {
            uri: format!("upload://bench/{upload}.txt"),
            relative_path: format!("{upload}.txt"),
            size: text.len() as u64,
            bytes: text.into_bytes().into(),
            etag: None,
            source: "upload".into(),
            content_type: None,
        };
        let (documents, failures) = parse_and_chunk(&raw, &settings);
        anyhow::ensure!(failures.is_empty(), "{failures:?}");
        let embedded_chunks = documents.iter().map(|d| d.chunks.len()).sum();
        let documents = embed_documents(documents, embedder.as_ref(), 256, &|_| {})?;
        let base = SnapshotReader::open(&out, &StoreOptions::default())
            .await?
            .manifest()
            .clone();
        let tombstones = if replace {
            replaced.next().into_iter().collect()
        } else {
            Vec::new()
        };
        publish_next_version(
            &writer,
            Some(&base),
            VersionChange {
                documents,
                tombstones,
                embedded_chunks,
            },
            embedder.as_ref(),
            chunker_manifest.clone(),
            &IndexOptions::default(),
        )
        .await?;

        let started = Instant::now();
        let fresh = LoadedSnapshot::load(&out, &options).await?;
        full.push(started.elapsed().as_secs_f64());
        let started = Instant::now();
        let reloaded = LoadedSnapshot::load_after(&out, &options, Some(previous.clone())).await?;
        kept.push(started.elapsed().as_secs_f64());
        anyhow::ensure!(
            reloaded.row_count() == fresh.row_count() && reloaded.reused_segments == reloaded.segments.len() - 1,
            "the reload kept the wrong segments"
        );
        anyhow::ensure!(
            reloaded.tombstoned == fresh.tombstoned && reloaded.hidden_keyword_stats() == fresh.hidden_keyword_stats(),
            "the reload hides other rows than a full load"
        );
        previous = Arc::new(reloaded);
    }
    let (full_median, kept_median) = (median(full.clone()), median(kept.clone()));
    let report = serde_json::json!({
        "chunks": chunks, "deleted_fraction": deleted_fraction, "replace": replace, "index": manifest.index.params.factory(), "uploads": uploads, "first_load_secs": first_load,
        "full_load_secs": full, "reload_keeping_segments_secs": kept, "full_median_secs": full_median, "kept_median_secs": kept_median,
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    println!("\n| {chunks} chunks + one upload | median s |\n|---|---:|\n| full load of the new version | {full_median:.3} |\n| reload keeping the previous segments | {kept_median:.4} |");
    println!("\nratio: {:.0}x", full_median / kept_median.max(1e-9));
    Ok(())
}
