//! `quarry index --plan`: what a run would do, worked out from the source's listing and the
//! previous version's manifest, file table and document outlines alone: which files it would
//! fetch (new or changed), which it would not (unchanged), which files' documents it would
//! remove (gone from the source), and whether it would publish a delta or a full version.
//! Nothing is fetched, embedded or written.

use std::sync::Arc;

use serde::Serialize;

use super::{survey, ReuseReport, RunOptions, Survey};
use crate::chunk::Chunker;
use crate::embed::Embedder;
use crate::error::Result;
use crate::source::open_source;

/// Files named in each list of a plan, at most.
pub const PLAN_EXAMPLES: usize = 10;

/// A number of files and the first few of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FileCount {
    pub count: usize,
    /// The first [`PLAN_EXAMPLES`] URIs, sorted.
    pub examples: Vec<String>,
}

impl FileCount {
    fn of(mut uris: Vec<String>) -> Self {
        uris.sort();
        let count = uris.len();
        uris.truncate(PLAN_EXAMPLES);
        Self { count, examples: uris }
    }
}

/// What a run with these options would do.
#[derive(Debug, Clone, Serialize)]
pub struct RunPlan {
    pub source: String,
    pub out: String,
    /// The version the run would build on (or reuse embeddings from); none for a first run.
    pub previous_version: Option<String>,
    /// `delta`, `full`, or `first` (no version yet).
    pub publish: &'static str,
    pub files_listed: usize,
    /// Files the listing leaves out (hidden, unreadable names, ...).
    pub files_skipped: usize,
    /// Listed files the previous version already serves as they are: not fetched.
    pub files_unchanged: usize,
    /// Listed files the previous version does not know: fetched and embedded.
    pub files_new: FileCount,
    /// Listed files the previous version holds another state of (or, in a full run, any it
    /// holds): fetched, and only their new or changed chunks embedded.
    pub files_changed: FileCount,
    /// Files the previous version serves documents of that the source no longer lists: their
    /// documents leave the new version.
    pub files_gone: FileCount,
    pub documents_gone: u64,
    /// Why files cannot be skipped, or the run would publish a full version.
    pub notes: Vec<String>,
}

/// Plans a run of `options` with `embedder`'s model (its identity and tokenizer decide what
/// the previous version's embeddings are good for).
pub async fn plan_run(options: &RunOptions, embedder: Arc<dyn Embedder>) -> Result<RunPlan> {
    options.index.validate()?;
    let source = open_source(&options.source, &options.source_options)?;
    let settings = options.chunk_settings(embedder.as_ref(), chrono::Utc::now())?;
    let mut reuse = ReuseReport::default();
    let Survey {
        listing,
        previous,
        delta,
        unchanged_files,
        ..
    } = survey(
        options,
        source.as_ref(),
        embedder.as_ref(),
        &settings.chunker.signature(),
        &settings.signature(),
        &mut reuse,
    )
    .await?;
    let live = previous
        .as_ref()
        .map(|(_, previous)| previous.live_documents_per_file())
        .unwrap_or_default();
    let known = |uri: &str| live.contains_key(uri) || previous.as_ref().is_some_and(|(_, p)| p.lists_file(uri));
    let (mut new, mut changed) = (Vec::new(), Vec::new());
    for entry in listing
        .entries
        .iter()
        .filter(|entry| !unchanged_files.contains(&entry.uri))
    {
        if known(&entry.uri) {
            changed.push(entry.uri.clone())
        } else {
            new.push(entry.uri.clone())
        }
    }
    let listed: std::collections::HashSet<&str> = listing.entries.iter().map(|entry| entry.uri.as_str()).collect();
    let gone: Vec<(&str, u64)> = live
        .iter()
        .filter(|(uri, _)| !listed.contains(*uri))
        .map(|(uri, documents)| (*uri, *documents))
        .collect();
    Ok(RunPlan {
        source: source.uri().to_string(),
        out: options.out.clone(),
        previous_version: previous.as_ref().map(|(_, p)| p.version().to_string()),
        publish: match (&previous, delta) {
            (None, _) => "first",
            (Some(_), true) => "delta",
            (Some(_), false) => "full",
        },
        files_listed: listing.entries.len(),
        files_skipped: listing.skipped.len(),
        files_unchanged: unchanged_files.len(),
        files_new: FileCount::of(new),
        files_changed: FileCount::of(changed),
        documents_gone: gone.iter().map(|(_, documents)| documents).sum(),
        files_gone: FileCount::of(gone.into_iter().map(|(uri, _)| uri.to_string()).collect()),
        notes: reuse.notes,
    })
}
