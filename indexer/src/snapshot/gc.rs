//! Garbage collection of a snapshot root: every nightly run writes a whole new segment, so
//! old versions pile up. Removes the manifests (and reports and file tables) of versions older than the
//! newest `keep` up to LATEST and of versions a rollback abandoned, then every segment no kept
//! manifest names. Never touches LATEST's version, versions newer than LATEST that no rollback
//! abandoned (a run between its manifest and LATEST), or anything younger than `min_age` (a
//! run still writing its segment).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use object_store::{ObjectMeta, ObjectStoreExt};
use serde::Serialize;

use super::layout;
use super::manifest::Manifest;
use super::reader::SnapshotReader;
use super::versions::{abandoned_versions, rollback_records, versions_listed, RollbackRecord};
use crate::error::{IndexerError, Result};
use crate::store::{open_location, StoreOptions};

/// What to keep.
#[derive(Debug, Clone)]
pub struct GcOptions {
    /// Versions kept, LATEST's included (at least 1).
    pub keep: usize,
    /// Objects younger than this are never removed.
    pub min_age: Duration,
    /// Report what would go without removing anything.
    pub dry_run: bool,
}

impl Default for GcOptions {
    fn default() -> Self {
        Self {
            keep: 3,
            min_age: Duration::from_secs(3600),
            dry_run: false,
        }
    }
}

/// What a collection removed (or, in a dry run, would remove).
#[derive(Debug, Clone, Default, Serialize)]
pub struct GcReport {
    pub latest: String,
    pub versions_kept: Vec<String>,
    pub versions_removed: Vec<String>,
    pub segments_kept: usize,
    pub segments_removed: Vec<String>,
    /// Unreferenced objects left because they are younger than `min_age`.
    pub too_young: usize,
    /// Rollback records removed with the last versions they named.
    pub rollback_records_removed: usize,
    /// Sharded runs whose records were removed: published, or built on a version LATEST has
    /// moved past (those cannot publish any more).
    pub runs_removed: Vec<String>,
    /// Segments kept because a sharded run that may still publish names them.
    pub segments_of_pending_runs: usize,
    pub files_removed: usize,
    pub bytes_removed: u64,
    pub dry_run: bool,
}

/// Removes old versions and unreferenced segments from the snapshot root at `uri`.
pub async fn collect_garbage(uri: &str, store: &StoreOptions, options: &GcOptions) -> Result<GcReport> {
    if options.keep == 0 {
        return Err(IndexerError::Config(
            "gc: keep must be at least 1 (LATEST's version is always kept)".into(),
        ));
    }
    let latest = SnapshotReader::open(uri, store).await?;
    let root = open_location(uri, store, false)?;
    let latest_version = latest.manifest().version.clone();
    let now = chrono::Utc::now();
    let old_enough = |meta: &ObjectMeta| {
        (now - meta.last_modified)
            .to_std()
            .map(|age| age >= options.min_age)
            .unwrap_or(false)
    };

    let manifests = root.list_below("manifests").await?;
    let versions = versions_listed(&manifests);
    let records = rollback_records(&root).await?;
    let mut abandoned = abandoned_versions(records.iter().map(|r| &r.record));
    abandoned.remove(&latest_version);
    let mut report = GcReport {
        latest: latest_version.clone(),
        dry_run: options.dry_run,
        ..Default::default()
    };
    let mut doomed_files: Vec<(String, u64)> = Vec::new();
    let mut kept_manifests: Vec<Manifest> = vec![latest.manifest().clone()];
    // Version ids sort by time: keep LATEST, the keep-1 before it and every version after it
    // (a run between its manifest and LATEST) that no rollback abandoned. Abandoned versions
    // do not count and go once old enough.
    let older: Vec<&String> = versions
        .iter()
        .filter(|v| v.as_str() < latest_version.as_str() && !abandoned.contains(*v))
        .collect();
    let cut = older.len().saturating_sub(options.keep - 1);
    let keep_older: BTreeSet<&String> = older
        .iter()
        .enumerate()
        .filter(|(i, _)| *i >= cut)
        .map(|(_, v)| *v)
        .collect();
    for version in versions.iter().filter(|v| **v != latest_version) {
        let path = layout::manifest(version);
        let meta = &manifests[&path];
        let wanted = if version.as_str() < latest_version.as_str() {
            keep_older.contains(version)
        } else {
            !abandoned.contains(version)
        };
        if wanted || !old_enough(meta) {
            kept_manifests.push(
                SnapshotReader::open_version(uri, version, store)
                    .await?
                    .manifest()
                    .clone(),
            );
            report.versions_kept.push(version.clone());
        } else {
            report.versions_removed.push(version.clone());
            doomed_files.push((path, meta.size));
        }
    }
    report.versions_kept.push(latest_version.clone());
    report.versions_kept.sort();
    // A rollback record whose versions are all gone tells nothing about the ones left.
    let remaining: BTreeSet<&String> = report.versions_kept.iter().collect();
    for stored in &records {
        let RollbackRecord { to, abandoned, .. } = &stored.record;
        if !std::iter::once(to).chain(abandoned).any(|v| remaining.contains(v)) {
            doomed_files.push((stored.path.clone(), stored.bytes));
            report.rollback_records_removed += 1;
        }
    }
    let (reports, file_tables) = (root.list_below("reports").await?, root.list_below("files").await?);
    for version in &report.versions_removed {
        for (listed, path) in [
            (&reports, layout::report(version)),
            (&file_tables, layout::files(version)),
        ] {
            if let Some(meta) = listed.get(&path) {
                doomed_files.push((path, meta.size));
            }
        }
    }

    let runs = super::run_shards::run_files(&root, &latest_version).await?;
    for (run, files) in &runs.finished {
        if files.iter().all(|(_, meta)| old_enough(meta)) {
            doomed_files.extend(files.iter().map(|(path, meta)| (path.clone(), meta.size)));
            report.runs_removed.push(run.clone());
        }
    }
    let mut referenced: BTreeSet<&str> = kept_manifests
        .iter()
        .flat_map(|m| m.segments.iter().map(|s| s.id.as_str()))
        .collect();
    for segment in &runs.pending_segments {
        if referenced.insert(segment.as_str()) {
            report.segments_of_pending_runs += 1;
        }
    }
    let mut segments: BTreeMap<String, Vec<(String, &ObjectMeta)>> = BTreeMap::new();
    let segment_files = root.list_below("segments").await?;
    for (path, meta) in &segment_files {
        if let Some(id) = path.strip_prefix("segments/").and_then(|rest| rest.split('/').next()) {
            segments.entry(id.to_string()).or_default().push((path.clone(), meta));
        }
    }
    for (id, files) in segments {
        if referenced.contains(id.as_str()) {
            report.segments_kept += 1;
        } else if files.iter().all(|(_, meta)| old_enough(meta)) {
            doomed_files.extend(files.iter().map(|(path, meta)| (path.clone(), meta.size)));
            report.segments_removed.push(id);
        } else {
            report.too_young += 1;
        }
    }

    report.files_removed = doomed_files.len();
    report.bytes_removed = doomed_files.iter().map(|(_, size)| size).sum();
    if !options.dry_run {
        // Manifests first, then segments: a crash halfway leaves no manifest naming a missing
        // segment, only unreferenced segments that the next collection removes. Rollback
        // records last: until its abandoned versions are gone, a record keeps them abandoned.
        doomed_files.sort_by_key(|(path, _)| (path.starts_with("rollbacks/"), path.starts_with("segments/")));
        for (path, _) in &doomed_files {
            let key = root.child(path);
            root.store
                .delete(&key)
                .await
                .map_err(|e| IndexerError::store(root.uri_of(&key), e))?;
        }
        if let Some(folder) = root.local_path() {
            for id in &report.segments_removed {
                remove_empty_dirs(&folder.join("segments").join(id));
            }
        }
    }
    Ok(report)
}

/// Removes `dir` and the folders under it when no file is left (local roots only: object
/// stores have no folders).
fn remove_empty_dirs(dir: &std::path::Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.path().is_dir() {
                remove_empty_dirs(&entry.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}
