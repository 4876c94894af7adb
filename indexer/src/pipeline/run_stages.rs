//! The run's stages, joined by bounded channels so they overlap: fetch (async, bounded
//! concurrency) -> parse + chunk (its own thread, rayon inside) -> embed (its own thread) ->
//! the segmenter, which builds and writes a segment each time the embedded documents reach
//! `--segment-chunks` chunks. Ends with the last good versions of failed files (and, for a
//! full version, the documents added through the API) pushed into the segments.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::base::{Base, FullBase};
use super::fetch_stage::fetch_stage;
use super::file_completion::FileCompletion;
use super::progress::{Counters, Progress};
use super::publish::{SegmentBuilder, Sizing};
use super::report::{self, Failure, Warning};
use super::reuse::{self, StoredEmbeddings};
use super::segmenter::Segmenter;
use super::stages::{self, embed_group_for, embed_stage, parse_stage, ChunkSettings, ParseOutputs, StageContext};
use super::types::EmbeddedDoc;
use super::RunOptions;
use crate::embed::Embedder;
use crate::error::{IndexerError, Result};
use crate::parse::added_through_api;
use crate::snapshot::{new_version_id, SnapshotWriter};
use crate::source::{Source, SourceEntry};

/// What the stages did, for the publish.
pub(super) struct StageOutcome {
    /// Builds segments; the publish writes the rest with it.
    pub builder: SegmentBuilder,
    /// The segments cut so far, and the documents taken.
    pub segmenter: Segmenter,
    pub counters: Arc<Counters>,
    /// Files and documents that failed, by URI.
    pub failures: Vec<Failure>,
    /// Documents read in part, by URI.
    pub warnings: Vec<Warning>,
    pub files_fetched: usize,
    /// The fetch loop's seconds not held back by the stages after it.
    pub fetch_secs: f64,
    pub parse_busy: f64,
    pub embed_busy: f64,
    /// Tokens the model embedded (chunks that kept a stored vector left out).
    pub embedded_tokens: u64,
    pub embed_peak_rss_mib: Option<f64>,
    /// Documents a delta leaves where they are.
    pub unchanged_documents: HashSet<String>,
    /// A full version's documents added through the API, kept: id -> chunks.
    pub kept_api_documents: HashMap<String, usize>,
}

/// Runs the stages over `base.listing`'s files; the reuse counts go into `base.reuse`.
pub(super) async fn run_stages(
    options: &RunOptions,
    source: Arc<dyn Source>,
    embedder: Arc<dyn Embedder>,
    writer: &SnapshotWriter,
    settings: ChunkSettings,
    base: &mut Base,
) -> Result<StageOutcome> {
    let entries = std::mem::take(&mut base.listing.entries);
    let files_fetched = entries.len();
    let completion = file_completion(options, base, &entries);
    let progress = Progress::start(options.progress, files_fetched as u64);
    // The failures of unchanged files that are no document stand as they were reported.
    let failures = Arc::new(Mutex::new(std::mem::take(&mut base.unchanged_failures)));
    let warnings = Arc::new(Mutex::new(Vec::<Warning>::new()));
    let context = Arc::new(StageContext {
        settings,
        counters: progress.counters.clone(),
        failures: failures.clone(),
        warnings: warnings.clone(),
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
            drop_unchanged: base.delta_base.is_some(),
            completion: completion.clone(),
        };
        let stored = base.stored.take();
        std::thread::spawn(move || parse_stage(raw_rx, outputs, &context, stored))
    };
    let embed_thread = {
        let group = options
            .embed_group
            .unwrap_or_else(|| embed_group_for(embedder.as_ref()));
        tracing::debug!("embedding in groups of {group} chunks");
        let (context, embedder) = (context.clone(), embedder.clone());
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
    let first_sizing = if base.delta_base.is_some() {
        Sizing::Segment
    } else {
        Sizing::Run
    };
    let segments_named = match &options.shard {
        Some(shard) => format!("{}-{}", new_version_id(), shard.segment_tag()),
        None => new_version_id(),
    };
    let mut segmenter = Segmenter::new(
        builder.clone(),
        segments_named,
        options.segment_chunks,
        first_sizing,
        completion.clone(),
    );
    let fetch = fetch_stage(
        entries,
        source,
        options.source_options.concurrency,
        fetched_budget,
        raw_tx,
        &context.counters,
        |uri, why| {
            context.fail(uri, "fetch", why);
            if let Some(completion) = &completion {
                completion.report([(uri, true)], []);
            }
        },
    );
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
    let (fetched, received) = tokio::join!(fetch, receive);
    let (parse_busy, reused, stored) = join_stage(parse_thread, "parse").await?;
    let (embed_busy, embed_tokens) = join_stage(embed_thread, "embed").await??;
    received?;
    let embed_peak_rss_mib = crate::process_memory::peak_rss_mib();
    if let Some(after_embedding) = options.after_embedding {
        after_embedding();
    }
    progress.finish();
    let (unchanged_documents, changed_documents) = stored.map(StoredEmbeddings::into_outcome).unwrap_or_default();
    let reuse = &mut base.reuse;
    reuse.changed_documents = changed_documents;
    // What the model embedded: the embed stage's documents less their chunks that kept a stored vector.
    let embedded_tokens = embed_tokens - changed_documents.tokens;
    (reuse.documents, reuse.chunks, reuse.tokens) = (reused.documents, reused.chunks, reused.tokens);
    let mut kept_api_documents = HashMap::new();
    if let (None, Some(from)) = (&base.delta_base, reuse.from_version.clone()) {
        let api_documents = base.full_base.as_ref().map_or(0, |base: &FullBase| base.api_documents);
        match keep_last_good_versions(options, &from, &failures, segmenter.seen(), api_documents > 0).await {
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
    let mut failures = std::mem::take(&mut *failures.lock().expect("failures lock"));
    failures.sort_by(|a, b| a.uri.cmp(&b.uri));
    let mut warnings = std::mem::take(&mut *warnings.lock().expect("warnings lock"));
    // Stable: a document's warnings stay in the order its parser gave them.
    warnings.sort_by(|a, b| a.uri.cmp(&b.uri));
    Ok(StageOutcome {
        builder,
        segmenter,
        counters: context.counters.clone(),
        failures,
        warnings,
        files_fetched,
        fetch_secs: fetched.busy,
        parse_busy,
        embed_busy,
        embedded_tokens,
        embed_peak_rss_mib,
        unchanged_documents,
        kept_api_documents,
    })
}

/// What tells the segmenter which documents' places in the rows are settled, so that it
/// writes their rows while the run embeds on: none where that is off, or where the run may
/// add documents of any URI after its stages (a full version over a previous one carries the
/// documents added through the API over). A full version over a previous one may also put a
/// failed file's last good version back after the stages: such a file stays open.
fn file_completion(options: &RunOptions, base: &Base, entries: &[SourceEntry]) -> Option<Arc<FileCompletion>> {
    let over_previous = base.delta_base.is_none() && base.reuse.from_version.is_some();
    let api_documents = base.full_base.as_ref().is_some_and(|full| full.api_documents > 0);
    (options.rows_while_embedding && !(over_previous && api_documents)).then(|| {
        Arc::new(FileCompletion::new(
            entries.iter().map(|entry| entry.uri.clone()),
            over_previous,
        ))
    })
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
