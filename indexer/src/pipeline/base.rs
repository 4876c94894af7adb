//! What a run builds on, prepared before any file is fetched: the source's listing, the
//! previous version (its documents, not its rows, read while the source is listed), whether
//! the run is a delta on it, the listed files a delta need not fetch, and the stored vectors
//! the run may reuse.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use super::delta::{PreviousVersion, PublishMode};
use super::report::Failure;
use super::reuse::{ReuseReport, StoredEmbeddings};
use super::RunOptions;
use crate::embed::Embedder;
use crate::error::Result;
use crate::snapshot::{Manifest, SnapshotReader};
use crate::source::{Listing, Source};

/// What the run builds on.
pub(super) struct Base {
    /// The listed files left to fetch (a delta's unchanged files are not).
    pub listing: Listing,
    /// Every listed file's ETag, by URI (for the new version's file table).
    pub listed: HashMap<String, Option<String>>,
    pub files_listed: usize,
    /// Listed files a delta does not fetch: their ETag is the one the previous version saw.
    pub unchanged_files: HashSet<String>,
    /// The failures of those that are no document (a picture, an empty file), carried over.
    pub unchanged_failures: Vec<Failure>,
    /// The previous version's vectors this run may hand to documents it parses again.
    pub stored: Option<StoredEmbeddings>,
    pub documents_stored: usize,
    /// The version a delta builds on (None: the run publishes a full version).
    pub delta_base: Option<PreviousVersion>,
    /// What a full version carries over from the previous version.
    pub full_base: Option<FullBase>,
    /// How the previous version's vectors were computed.
    pub previous_precisions: Option<Vec<String>>,
    /// Seconds spent reading the previous version.
    pub previous_secs: f64,
    pub reuse: ReuseReport,
}

/// Lists the source and reads the previous version, then decides what the run builds on.
pub(super) async fn prepare_base(
    options: &RunOptions,
    source: &dyn Source,
    embedder: &dyn Embedder,
    chunker_sig: &str,
    parse_sig: &str,
) -> Result<Base> {
    let mut reuse = ReuseReport::default();
    let Survey {
        mut listing,
        previous,
        delta,
        mut unchanged_files,
        mut previous_secs,
    } = survey(options, source, embedder, chunker_sig, parse_sig, &mut reuse).await?;
    let listed: HashMap<String, Option<String>> = listing
        .entries
        .iter()
        .map(|entry| (entry.uri.clone(), entry.etag.clone()))
        .collect();
    let (mut stored, mut delta_base, mut full_base) = (None, None, None);
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
        if delta && !delta_allowed(&previous, options, &mut reuse.notes) {
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
        delta_base = delta.then_some(previous);
    }
    let unchanged_failures = delta_base
        .as_ref()
        .map(|previous| previous.no_document_failures(&unchanged_files))
        .unwrap_or_default();
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
    Ok(Base {
        listing,
        listed,
        files_listed,
        unchanged_files,
        unchanged_failures,
        stored,
        documents_stored,
        delta_base,
        full_base,
        previous_precisions,
        previous_secs,
        reuse,
    })
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
    let mut listing = listing?;
    let mut previous = previous;
    if let Some(shard) = &options.shard {
        // This shard's files, and its part of the previous version.
        listing.entries.retain(|entry| shard.owns_file(&entry.uri));
        listing.skipped.retain(|skipped| shard.owns_file(&skipped.uri));
        if let Some((_, previous)) = &mut previous {
            previous.keep_part(|uri| shard.owns_document(uri));
        }
    }
    let started = Instant::now();
    let mut unchanged_files = HashSet::new();
    // A delta builds on the previous version; files whose ETag is the stored one are not
    // fetched, and segments holding only their documents are not read.
    let delta = previous.as_ref().is_some_and(|(_, previous)| {
        options.publish == PublishMode::Delta && delta_allowed(previous, options, &mut reuse.notes)
    });
    if let (true, Some((_, previous))) = (delta, &previous) {
        unchanged_files =
            previous.unchanged_files(&listing.entries, parse_sig, options.summarizer.name(), &mut reuse.notes);
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
pub(super) struct FullBase {
    /// Live documents the previous version holds that were added through the API.
    pub api_documents: usize,
    pub manifest: Manifest,
}

/// Whether a delta may build on `previous` (else the reason goes into `notes`).
pub(super) fn delta_allowed(previous: &PreviousVersion, options: &RunOptions, notes: &mut Vec<String>) -> bool {
    match previous.delta_refusal(&options.index, options.min_recall) {
        Some(reason) => {
            notes.push(reason);
            false
        }
        None => true,
    }
}
