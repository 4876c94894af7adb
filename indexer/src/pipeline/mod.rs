//! The batch run: list -> fetch (async, bounded concurrency) -> parse + chunk (rayon) ->
//! embed (token-budget batches) -> FAISS + BM25 -> publish (a full version, or a delta over
//! the previous one; either way the segments are cut and written as the run embeds). Stages
//! are joined by bounded channels so parsing and chunking overlap embedding; one bad document
//! fails alone.

mod compact;
mod delta;
mod model_reading;
mod online;
mod plan;
mod progress;
mod publish;
mod rebase;
mod report;
mod reuse;
mod segment;
mod segmenter;
mod spilled_vectors;
mod stages;
mod types;

pub use delta::{DeltaReport, PreviousVersion, PublishMode};
pub use progress::ProgressMode;
pub use report::{languages_line, Failure, RunReport, StageReport};
pub use reuse::{ReuseReport, StoredEmbeddings};

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::StreamExt;

use crate::chunk::{Chunker, ChunkerConfig, TokenChunker};
use crate::embed::{load_embedder, version_precisions, EmbedOptions, Embedder, ModelDir};
use crate::error::{IndexerError, Result};
use crate::index::IndexOptions;
use crate::parse::{added_through_api, AutoParser, Parser};
use crate::snapshot::{layout, new_version_id, ChunkerManifest, Manifest, SnapshotReader, SnapshotWriter};
use crate::source::{open_source, Listing, Source, SourceOptions};
use crate::store::StoreOptions;
pub use compact::{compact, segments_to_merge, CompactOptions, CompactReport};
pub use model_reading::{
    language_name, language_readings, sum_by_language, version_readings, weak_reading_warning, whole_share,
    READING_SAMPLE, WEAK_READING_SHARE,
};
pub use online::{publish_next_version, VersionChange};
pub use plan::{plan_run, FileCount, RunPlan, PLAN_EXAMPLES};
use progress::Progress;
use publish::{Publisher, SegmentBuilder, Sizing};
pub use segment::{assemble, build_indexes, BuiltIndexes, SegmentRows};
use segmenter::Segmenter;
pub use stages::{embed_documents, parse_and_chunk, parse_and_chunk_observed, ChunkSettings};
use stages::{embed_stage, parse_stage, ParseOutputs, StageContext};
pub use types::{ChunkedDoc, EmbeddedDoc};

/// Chunks per segment of a full run: larger than a 1M-chunk corpus, and the size from which
/// `--index auto` builds IVF.
pub const DEFAULT_SEGMENT_CHUNKS: usize = 2_000_000;

/// Everything one `quarry index` run needs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub source: String,
    pub out: String,
    pub source_options: SourceOptions,
    /// How to reach the destination (the source has its own in `source_options`).
    pub out_store: StoreOptions,
    pub model_dir: PathBuf,
    pub embed: EmbedOptions,
    pub chunker: ChunkerConfig,
    pub index: IndexOptions,
    /// Tags added to every document.
    pub tags: Vec<String>,
    /// Documents with more tokens than this fail with "Document too large".
    pub max_document_tokens: usize,
    /// Chunks embedded per group (each group is split into token-budget batches).
    pub embed_group: usize,
    pub progress: ProgressMode,
    /// Also write the JSON report here.
    pub report_path: Option<PathBuf>,
    /// Queries for the publish-time recall check; a sample of the chunks when empty.
    pub recall_queries: Vec<String>,
    /// Refuse to publish when the ANN recall@10 is below this.
    pub min_recall: Option<f64>,
    /// Reuse the previous version's embeddings of unchanged documents (incremental run).
    pub reuse: bool,
    /// Delta (build on the previous version; the default) or full (one new segment).
    pub publish: PublishMode,
    /// When a delta run merges segments afterwards (its merged segment uses `index`).
    pub compact: CompactOptions,
    /// Called once the embed stage has ended, before the publishing stages (the `quarry`
    /// binary hands the memory its allocator kept for the embedding batches back).
    pub after_embedding: Option<fn()>,
    /// A run writes a segment each time its embedded documents (a delta's: those that changed
    /// or arrived) reach this many chunks, while it embeds the next ones, so that it holds
    /// about two segments' documents at most.
    pub segment_chunks: usize,
    /// What parses the files: in this process ([`AutoParser`], the default), or in worker
    /// processes that no file can take the run down with ([`crate::parse::IsolatedParser`]).
    pub parser: Arc<dyn Parser>,
}

impl RunOptions {
    /// Defaults for a source and destination.
    pub fn new(source: impl Into<String>, out: impl Into<String>, model_dir: PathBuf) -> Self {
        Self {
            source: source.into(),
            out: out.into(),
            source_options: SourceOptions::default(),
            out_store: StoreOptions::default(),
            model_dir,
            embed: EmbedOptions::default(),
            chunker: ChunkerConfig::default(),
            index: IndexOptions::default(),
            tags: Vec::new(),
            max_document_tokens: 500_000,
            embed_group: 2048,
            progress: ProgressMode::Auto,
            report_path: None,
            recall_queries: Vec::new(),
            min_recall: None,
            reuse: true,
            publish: PublishMode::Delta,
            compact: CompactOptions::default(),
            after_embedding: None,
            segment_chunks: DEFAULT_SEGMENT_CHUNKS,
            parser: Arc::new(AutoParser),
        }
    }
}

/// Loads the model from `options.model_dir` and runs.
pub async fn run(options: RunOptions) -> Result<RunReport> {
    options.index.validate()?;
    let embedder = load_model(&options).await?;
    run_with_embedder(options, embedder).await
}

/// What [`run`] would do with these options; nothing is fetched, embedded or written.
pub async fn plan(options: RunOptions) -> Result<RunPlan> {
    options.index.validate()?;
    let embedder = load_model(&options).await?;
    plan_run(&options, embedder).await
}

/// The run's model, loaded on a blocking thread.
async fn load_model(options: &RunOptions) -> Result<Arc<dyn Embedder>> {
    let model_dir = options.model_dir.clone();
    let embed_options = options.embed;
    tokio::task::spawn_blocking(move || -> Result<Arc<dyn Embedder>> {
        load_embedder(&ModelDir::open(&model_dir)?, embed_options)
    })
    .await
    .map_err(|e| IndexerError::Embed(format!("model loader panicked: {e}")))?
}

/// Runs with an already loaded embedder (tests and benchmarks load it once).
pub async fn run_with_embedder(options: RunOptions, embedder: Arc<dyn Embedder>) -> Result<RunReport> {
    options.index.validate()?;
    let started = Instant::now();
    let ingested_at = chrono::Utc::now();
    crate::index::init_vector_kernels(&options.embed.device);
    let source: Arc<dyn Source> = open_source(&options.source, &options.source_options)?;
    let writer = SnapshotWriter::open(&options.out, &options.out_store)?;
    let chunker = Arc::new(TokenChunker::new(
        options.chunker,
        embedder.tokenizer().clone(),
        &embedder.info().sha256,
    )?);
    let settings = ChunkSettings {
        parser: options.parser.clone(),
        chunker: chunker.clone(),
        tags: options.tags.clone(),
        max_document_tokens: options.max_document_tokens,
        ingested_at,
    };
    let parse_sig = settings.signature();
    let mut reuse = ReuseReport::default();
    let Survey {
        mut listing,
        previous,
        delta,
        mut unchanged_files,
        mut previous_secs,
    } = survey(
        &options,
        source.as_ref(),
        embedder.as_ref(),
        &chunker.signature(),
        &parse_sig,
        &mut reuse,
    )
    .await?;
    let listed: HashMap<String, Option<String>> = listing
        .entries
        .iter()
        .map(|entry| (entry.uri.clone(), entry.etag.clone()))
        .collect();
    let (mut stored, mut base, mut full_base) = (None, None, None);
    // How the previous version's vectors were computed (for the new version's record).
    let mut previous_precisions = None;
    if let Some((reader, mut previous)) = previous {
        let started = Instant::now();
        reuse.from_version = Some(previous.version().to_string());
        previous_precisions = Some(previous.manifest.model.precisions.clone());
        let mut delta = delta;
        let mut embeddings = StoredEmbeddings::new(previous.version());
        // Only the documents of the files this run fetches can be handed stored embeddings.
        let fetched = |unchanged: &HashSet<String>, uri: &str| listed.contains_key(uri) && !unchanged.contains(uri);
        embeddings
            .read_segments(&reader, &mut previous, |uri| fetched(&unchanged_files, uri), &mut reuse)
            .await;
        if delta && !delta_allowed(&previous, &options, &mut reuse.notes) {
            // A segment failed its checksum: everything is fetched, and every readable segment read.
            delta = false;
            unchanged_files.clear();
            embeddings
                .read_segments(&reader, &mut previous, |uri| fetched(&unchanged_files, uri), &mut reuse)
                .await;
        }
        previous_secs += started.elapsed().as_secs_f64();
        reuse.bytes_read = reader.rows_bytes_read();
        tracing::info!(
            "reusing embeddings of unchanged documents from version {} ({} documents from {} rows of {} segments, {:.1} MiB of their files, read in {previous_secs:.2} s; resident memory {:.0} MiB)",
            previous.version(),
            embeddings.len(),
            reuse.rows_read,
            reuse.segments_read,
            reuse.bytes_read as f64 / (1 << 20) as f64,
            crate::process_memory::rss_mib().unwrap_or(0.0)
        );
        stored = Some(embeddings);
        if !delta {
            // A full version carries over the documents added through the API.
            full_base = Some(FullBase {
                api_documents: previous.api_documents(),
                manifest: previous.manifest.clone(),
            });
        }
        base = delta.then_some(previous);
    }
    let documents_stored = stored.as_ref().map_or(0, StoredEmbeddings::len);
    let files_listed = listing.entries.len();
    listing.entries.retain(|entry| !unchanged_files.contains(&entry.uri));
    reuse.notes.iter().for_each(|note| tracing::warn!("{note}"));
    tracing::info!(
        "{}: {} files listed, {} to fetch ({} unchanged), {} skipped; model {} on {}",
        source.uri(),
        files_listed,
        listing.entries.len(),
        unchanged_files.len(),
        listing.skipped.len(),
        embedder.info().name,
        embedder.device_name()
    );

    let progress = Progress::start(options.progress, listing.entries.len() as u64);
    let failures = Arc::new(Mutex::new(Vec::<Failure>::new()));
    let context = Arc::new(StageContext {
        settings,
        counters: progress.counters.clone(),
        failures: failures.clone(),
    });

    // fetch -> (raw channel) -> parse + chunk -> (doc channel) -> embed -> (embedded channel)
    // -> segments of a full version (built while the run embeds on), or a delta's documents
    let (raw_tx, raw_rx) = tokio::sync::mpsc::channel(64);
    let fetched_budget = Arc::new(tokio::sync::Semaphore::new(stages::FETCHED_BUDGET_KIB));
    let (doc_tx, doc_rx) = crossbeam_channel::bounded(stages::WAITING_MESSAGES);
    let (embedded_tx, mut embedded_rx) = tokio::sync::mpsc::channel(4);
    let parse_thread = {
        let context = context.clone();
        // Documents with stored embeddings go straight to the segments; a delta leaves those that did not change where they are.
        let outputs = ParseOutputs {
            to_embed: doc_tx,
            reused: embedded_tx.clone(),
            drop_unchanged: base.is_some(),
        };
        std::thread::spawn(move || parse_stage(raw_rx, outputs, &context, stored))
    };
    let embed_thread = {
        let (context, embedder, group) = (context.clone(), embedder.clone(), options.embed_group);
        std::thread::spawn(move || embed_stage(doc_rx, embedder.as_ref(), group, &context, embedded_tx))
    };
    let builder = SegmentBuilder {
        writer: writer.clone(),
        options: Arc::new(options.clone()),
        embedder: embedder.clone(),
    };
    // Segments are named after the run (the version id, taken when it publishes, sorts after
    // any published meanwhile). A full version's first segment takes the run's index rules; a
    // delta's segments are sized to their rows.
    let first_sizing = if base.is_some() { Sizing::Segment } else { Sizing::Run };
    let mut segmenter = Segmenter::new(builder.clone(), new_version_id(), options.segment_chunks, first_sizing);
    let files_fetched = listing.entries.len();
    let fetch = async {
        let fetch_started = Instant::now();
        let concurrency = options.source_options.concurrency.max(1);
        let mut fetched = futures::stream::iter(listing.entries)
            .map(|entry| {
                let source = source.clone();
                async move {
                    let result = source.fetch(&entry).await;
                    (entry, result)
                }
            })
            .buffer_unordered(concurrency);
        while let Some((entry, result)) = fetched.next().await {
            context.counters.fetched.fetch_add(1, Ordering::Relaxed);
            match result {
                Ok(raw) => {
                    // Waits while the fetched files not yet parsed hold the whole budget.
                    let kib = (raw.bytes.len() / 1024).clamp(1, stages::FETCHED_BUDGET_KIB) as u32;
                    let Ok(held) = fetched_budget.clone().acquire_many_owned(kib).await else {
                        break;
                    };
                    if raw_tx.send((raw, held)).await.is_err() {
                        break; // a later stage stopped; its error is reported below
                    }
                }
                Err(e) => context.fail(&entry.uri, "fetch", e.to_string()),
            }
        }
        drop(raw_tx);
        fetch_started.elapsed().as_secs_f64()
    };
    let receive = async {
        while let Some(arrival) = embedded_rx.recv().await {
            if let Err(e) = segmenter.take(arrival, &context).await {
                // The stages before stop once nothing listens: the embed stage's next send
                // fails, then the parse stage's, then the fetch loop's.
                embedded_rx.close();
                return Err(e);
            }
        }
        Ok::<(), IndexerError>(())
    };
    let (fetch_secs, received) = tokio::join!(fetch, receive);
    let (parse_busy, reused, stored) = join_stage(parse_thread, "parse").await?;
    let (embed_busy, embed_tokens) = join_stage(embed_thread, "embed").await??;
    received?;
    let embed_peak_rss_mib = crate::process_memory::peak_rss_mib();
    if let Some(after_embedding) = options.after_embedding {
        after_embedding();
    }
    progress.finish();
    let (unchanged_documents, changed_documents) = stored.map(StoredEmbeddings::into_outcome).unwrap_or_default();
    reuse.changed_documents = changed_documents;
    // What the model embedded: the embed stage's documents less their chunks that kept a stored vector.
    let embedded_tokens = embed_tokens - changed_documents.tokens;
    (reuse.documents, reuse.chunks, reuse.tokens) = (reused.documents, reused.chunks, reused.tokens);
    let mut kept_api_documents = HashMap::new();
    if let (None, Some(from)) = (&base, reuse.from_version.clone()) {
        let api_documents = full_base.as_ref().map_or(0, |base: &FullBase| base.api_documents);
        match keep_last_good_versions(&options, &from, &failures, segmenter.seen(), api_documents > 0).await {
            Ok(kept) => {
                let (api, after_failure): (Vec<&EmbeddedDoc>, Vec<&EmbeddedDoc>) =
                    kept.iter().partition(|d| added_through_api(&d.record.uri));
                reuse.kept_after_failure = after_failure.iter().map(|d| d.record.uri.clone()).collect();
                kept_api_documents = api.iter().map(|d| (d.record.doc_id.clone(), d.chunks.len())).collect();
                reuse.api_documents_kept = kept_api_documents.len();
                segmenter.push(kept, &context).await?;
            }
            Err(e) => reuse.notes.push(format!(
                "the last good versions of failed files and the documents added through the API could not be kept: {e}"
            )),
        }
    }
    let taken = segmenter.documents();
    let mut failures = std::mem::take(&mut *failures.lock().expect("failures lock"));
    failures.sort_by(|a, b| a.uri.cmp(&b.uri));
    let mut report = RunReport {
        source: source.uri().to_string(),
        out: writer.uri().to_string(),
        device: embedder.device_name(),
        files_listed,
        // A document kept after its file failed is counted once, as failed.
        documents_seen: taken - reuse.kept_after_failure.len() + failures.len(),
        documents_failed: failures.len(),
        failures,
        skipped: listing.skipped,
        followed_links: listing.followed_links,
        reuse,
        embed_peak_rss_mib,
        ..Default::default()
    };
    if taken == 0 && base.is_none() {
        return Err(nothing_to_publish(&report));
    }
    let counters = &context.counters;
    report.stages = vec![
        // The previous version: its documents (overlapping listing), then the rows of the segments the run needs.
        StageReport::new("read previous", previous_secs, documents_stored as u64, "documents"),
        StageReport::new("fetch", fetch_secs, files_fetched as u64, "files"),
        StageReport::new(
            "parse+chunk",
            parse_busy,
            counters.parsed.load(Ordering::Relaxed),
            "files",
        ),
        StageReport::new("embed", embed_busy, embedded_tokens, "tokens"),
    ];
    // A delta serves the previous version's vectors; a full version those it reused or kept.
    let carried = (base.is_some() || report.reuse.chunks > 0 || !report.reuse.kept_after_failure.is_empty())
        .then_some(previous_precisions)
        .flatten();
    report.precisions = version_precisions(
        carried.as_deref(),
        (embedded_tokens > 0).then_some(embedder.info().precisions.as_slice()),
    );
    let publisher = Publisher {
        builder,
        chunker: ChunkerManifest {
            config: chunker.config(),
            sig: chunker.signature(),
        },
        parse_sig,
        listed,
    };
    let cut = segmenter.finish().await?;
    let manifest = match base {
        Some(base) => {
            publisher
                .delta(base, cut, &unchanged_documents, &unchanged_files, &mut report)
                .await?
        }
        None => {
            publisher
                .full(
                    cut,
                    full_base.map(|base| (base.manifest, kept_api_documents)),
                    &mut report,
                )
                .await?
        }
    };
    report.version = Some(manifest.version.clone());
    report.languages = version_readings(&manifest);
    report.model_reading_warning = weak_reading_warning(&report.languages);
    if let Some(warning) = &report.model_reading_warning {
        tracing::warn!("{warning}");
    }
    report.wall_secs = started.elapsed().as_secs_f64();
    report.peak_rss_mib = crate::process_memory::peak_rss_mib();
    // LATEST has moved: what fails from here on is told with the report, not as the run's
    // error (which would say nothing was published).
    let report_json = serde_json::to_value(&report).map_err(|e| IndexerError::snapshot("report", e))?;
    let mut failed_after = Vec::new();
    if let Err(e) = writer.put_json(&layout::report(&manifest.version), &report_json).await {
        failed_after.push(format!("the run report could not be stored in the snapshot ({e})"));
    }
    if let Some(path) = &options.report_path {
        if let Err(e) = std::fs::write(path, serde_json::to_vec_pretty(&report_json).unwrap_or_default()) {
            failed_after.push(format!(
                "the run report could not be written to {} ({e})",
                path.display()
            ));
        }
    }
    if !failed_after.is_empty() {
        report.failed_after_publishing = Some(failed_after.join("; "));
    }
    Ok(report)
}

/// The source's listing, the previous version (its documents, not its rows, read while the
/// source is listed), whether the run builds a delta on it, and the listed files a delta need
/// not fetch.
pub(crate) struct Survey {
    pub listing: Listing,
    pub previous: Option<(SnapshotReader, PreviousVersion)>,
    pub delta: bool,
    pub unchanged_files: HashSet<String>,
    pub previous_secs: f64,
}

pub(crate) async fn survey(
    options: &RunOptions,
    source: &dyn Source,
    embedder: &dyn Embedder,
    chunker_sig: &str,
    parse_sig: &str,
    reuse: &mut ReuseReport,
) -> Result<Survey> {
    let (listing, (previous, mut previous_secs)) = tokio::join!(source.list(), async {
        if !options.reuse {
            return (None, 0.0);
        }
        let started = Instant::now();
        let opened = StoredEmbeddings::open_previous(
            &options.out,
            &options.out_store,
            &embedder.info().sha256,
            chunker_sig,
            reuse,
        )
        .await;
        (opened, started.elapsed().as_secs_f64())
    });
    let listing = listing?;
    let started = Instant::now();
    let mut unchanged_files = HashSet::new();
    // A delta builds on the previous version; files whose ETag is the stored one are not
    // fetched, and segments holding only their documents are not read.
    let delta = previous.as_ref().is_some_and(|(_, previous)| {
        options.publish == PublishMode::Delta && delta_allowed(previous, options, &mut reuse.notes)
    });
    if let (true, Some((_, previous))) = (delta, &previous) {
        unchanged_files = previous.unchanged_files(&listing.entries, parse_sig, &mut reuse.notes);
    }
    previous_secs += started.elapsed().as_secs_f64();
    Ok(Survey {
        listing,
        previous,
        delta,
        unchanged_files,
        previous_secs,
    })
}

/// What a full version needs of the previous version: the documents it carries over.
struct FullBase {
    /// Live documents the previous version holds that were added through the API.
    api_documents: usize,
    manifest: Manifest,
}

/// Whether a delta may build on `previous` (else the reason goes into `notes`).
fn delta_allowed(previous: &PreviousVersion, options: &RunOptions, notes: &mut Vec<String>) -> bool {
    match previous.delta_refusal(&options.index, options.min_recall) {
        Some(reason) => {
            notes.push(reason);
            false
        }
        None => true,
    }
}

/// The refusal to publish a version without documents (an empty or unreachable listing, every
/// document failing): the previous version stays.
fn nothing_to_publish(report: &RunReport) -> IndexerError {
    let first = report
        .failures
        .first()
        .map(|f| format!("; first failure: {} — {}", f.uri, f.reason))
        .unwrap_or_default();
    IndexerError::NothingToPublish(format!(
        "no document could be indexed ({} failed{first})",
        report.documents_failed
    ))
}

/// The previous version's documents from files that failed in this run (a fetch error, a file
/// that no longer parses, some or all of its items failing) that this run did not index: a
/// bad line in a JSONL file cannot be told from a deleted one, so both keep their last good version.
/// With `api_documents`, also the documents added through a server's API, which a full version
/// carries over.
async fn keep_last_good_versions(
    options: &RunOptions,
    version: &str,
    failures: &Mutex<Vec<Failure>>,
    present: &HashSet<String>,
    api_documents: bool,
) -> Result<Vec<EmbeddedDoc>> {
    let failed = report::failed_files(&failures.lock().expect("failures lock"));
    if failed.is_empty() && !api_documents {
        return Ok(Vec::new());
    }
    let present: HashSet<&str> = present.iter().map(String::as_str).collect();
    let keep = |uri: &str| failed.contains(crate::parse::file_uri_of(uri)) || (api_documents && added_through_api(uri));
    let kept = reuse::last_good_versions(&options.out, &options.out_store, version, &keep, &present).await?;
    kept.iter().filter(|d| !added_through_api(&d.record.uri)).for_each(|d| {
        tracing::warn!(
            "{}: failed in this run; its last good version from {version} stays",
            d.record.uri
        )
    });
    Ok(kept)
}

/// Waits for a stage thread without blocking the async runtime.
async fn join_stage<T: Send + 'static>(handle: std::thread::JoinHandle<T>, stage: &str) -> Result<T> {
    tokio::task::spawn_blocking(move || handle.join())
        .await
        .map_err(|e| IndexerError::Embed(format!("{stage} stage: {e}")))?
        .map_err(|_| IndexerError::Embed(format!("{stage} stage panicked")))
}
