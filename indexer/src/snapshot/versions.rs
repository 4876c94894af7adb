//! A root's versions: listing them, moving LATEST back (or forward) to one of them, and the
//! rollback records that tell garbage collection and later rollbacks which versions a
//! rollback abandoned.
//!
//! A rollback writes `rollbacks/<id>.json` (`{at, from, to, abandoned}`, append-only: no
//! object is rewritten, so it needs no lock on S3), then LATEST. The versions it abandons are
//! the ones newer than its target: `previous` never picks them again, `gc` does not count
//! them among the versions it keeps and removes them once they are older than its minimum
//! age. A later rollback to an abandoned version takes it back.

use std::collections::{BTreeMap, BTreeSet};

use futures::{StreamExt, TryStreamExt};
use object_store::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::latest_guard::LatestExpected;
use super::layout;
use super::manifest::Manifest;
use super::reader::{read_latest, SnapshotReader, Verification};
use super::writer::{new_version_id, put_then_point_latest};
use crate::error::{IndexerError, Result};
use crate::store::{open_location, Location, StoreOptions};

/// Where a version stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionState {
    /// LATEST names it: it is served.
    Latest,
    /// Older than LATEST: a rollback can return to it.
    Earlier,
    /// Newer than LATEST and not rolled back: a run between its manifest and LATEST (or one
    /// that died there).
    Pending,
    /// A rollback moved LATEST from it, or past it.
    RolledBack,
}

/// One version, as `quarry versions` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct VersionSummary {
    pub version: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub state: VersionState,
    /// The version it was built on (a delta, an online change, a compaction); none for a full one.
    pub parent: Option<String>,
    pub source: String,
    pub documents: usize,
    pub chunks: usize,
    pub tokens: u64,
    pub segments: usize,
    /// Segments the version before it (in time) did not have: what its run wrote.
    pub new_segments: usize,
    pub tombstones: usize,
    /// How its vectors were computed (`cpu f32`, `cuda f16`, ...).
    pub precisions: Vec<String>,
    /// Files the manifest lists that are missing or of another size in the store (listed,
    /// not read: `quarry inspect --version` checks their bytes).
    pub missing_files: Vec<String>,
    /// What the batch run that published it reported (`reports/<version>.json`); none for a
    /// version published online or an intermediate one (a run that compacted reports under the
    /// compacted version).
    pub run: Option<RunSummary>,
}

/// The counts of a run report that tell a bad night.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunSummary {
    /// Documents embedded or moved into the run's new segments (a full run: every document).
    pub documents_written: u64,
    /// Documents a delta run hid (deleted or replaced at the source); none for a full run.
    pub documents_removed: Option<u64>,
    pub documents_failed: u64,
    /// Documents indexed though read in part (0 in reports written before it was counted).
    pub documents_warned: u64,
    pub wall_secs: f64,
}

impl RunSummary {
    /// The summary of a run report's JSON; fields an older report lacks read as zero.
    fn of_report(report: &serde_json::Value) -> Self {
        let count = |value: &serde_json::Value| value.as_u64().unwrap_or(0);
        let delta = report.get("delta").filter(|d| d.is_object());
        Self {
            documents_written: delta.map_or(count(&report["documents_indexed"]), |d| count(&d["documents_written"])),
            documents_removed: delta.map(|d| count(&d["documents_removed"])),
            documents_failed: count(&report["documents_failed"]),
            documents_warned: count(&report["documents_warned"]),
            wall_secs: report["wall_secs"].as_f64().unwrap_or(0.0),
        }
    }
}

/// Every version of a root, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct VersionListing {
    pub latest: String,
    pub versions: Vec<VersionSummary>,
}

/// One rollback, as recorded under `rollbacks/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RollbackRecord {
    pub at: chrono::DateTime<chrono::Utc>,
    pub from: String,
    pub to: String,
    /// The versions newer than `to` when it ran.
    pub abandoned: Vec<String>,
}

/// Which version a rollback makes LATEST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RollbackTarget {
    /// The newest version older than LATEST that no rollback abandoned and whose files are all there.
    Previous,
    Version(String),
}

impl std::str::FromStr for RollbackTarget {
    type Err = std::convert::Infallible;
    fn from_str(value: &str) -> std::result::Result<Self, Self::Err> {
        Ok(if value == "previous" {
            Self::Previous
        } else {
            Self::Version(value.to_string())
        })
    }
}

/// How to roll back.
#[derive(Debug, Clone)]
pub struct RollbackOptions {
    pub target: RollbackTarget,
    /// Hash every file of the target against its manifest first (without it, files are only
    /// checked to be there at their sizes).
    pub verify: bool,
    /// Say what would happen; write nothing.
    pub dry_run: bool,
}

/// What a rollback did (or, in a dry run, would do).
#[derive(Debug, Clone, Serialize)]
pub struct RollbackReport {
    pub from: String,
    pub to: String,
    /// False when the target already was LATEST: nothing was written.
    pub changed: bool,
    pub abandoned: Vec<String>,
    pub verification: Option<Verification>,
    /// Differences a server loading the target would notice (another model, another chunker).
    pub notes: Vec<String>,
    pub dry_run: bool,
}

/// The version ids of a listing of `manifests/`, sorted (ids sort by time).
pub(super) fn versions_listed(manifests: &BTreeMap<String, ObjectMeta>) -> BTreeSet<String> {
    manifests
        .keys()
        .filter_map(|k| k.strip_prefix("manifests/")?.strip_suffix(".json").map(str::to_string))
        .collect()
}

async fn version_ids(root: &Location) -> Result<BTreeSet<String>> {
    Ok(versions_listed(&root.list_below("manifests").await?))
}

/// A rollback record and the object it is stored in.
#[derive(Debug, Clone)]
pub struct StoredRollback {
    pub path: String,
    pub bytes: u64,
    pub record: RollbackRecord,
}

/// The rollback records of a root, oldest first.
pub async fn rollback_records(root: &Location) -> Result<Vec<StoredRollback>> {
    let mut records = Vec::new();
    for (path, meta) in root.list_below("rollbacks").await? {
        let bytes = super::reader::get(root, &path).await?;
        let record = serde_json::from_slice::<RollbackRecord>(&bytes)
            .map_err(|e| IndexerError::snapshot(&path, format!("invalid rollback record: {e}")))?;
        records.push(StoredRollback {
            path,
            bytes: meta.size,
            record,
        });
    }
    records.sort_by_key(|a| a.record.at);
    Ok(records)
}

/// The versions rollbacks abandoned and no later rollback took back.
pub fn abandoned_versions<'a>(records: impl IntoIterator<Item = &'a RollbackRecord>) -> BTreeSet<String> {
    let mut abandoned = BTreeSet::new();
    for record in records {
        abandoned.remove(&record.to);
        abandoned.extend(record.abandoned.iter().cloned());
    }
    abandoned
}

/// The files `manifest` lists that `segment_files` lacks or holds at another size.
fn missing_files(manifest: &Manifest, segment_files: &BTreeMap<String, ObjectMeta>) -> Vec<String> {
    manifest
        .checksums
        .iter()
        .filter(|(path, expected)| segment_files.get(*path).is_none_or(|meta| meta.size != expected.bytes))
        .map(|(path, _)| path.clone())
        .collect()
}

/// Manifests and run reports `list_versions` reads at once: on S3 each is a round trip, so a
/// root of hundreds of versions lists in a fraction of the time one after another took.
const READ_AHEAD: usize = 16;

/// The summary of the run report at `path`.
async fn read_run_summary(root: &Location, path: &str) -> Result<RunSummary> {
    let bytes = super::reader::get(root, path).await?;
    let report: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| IndexerError::snapshot(path, format!("invalid run report: {e}")))?;
    Ok(RunSummary::of_report(&report))
}

/// Every version of the root at `uri`, with its state and whether its files are all there.
pub async fn list_versions(uri: &str, store: &StoreOptions) -> Result<VersionListing> {
    let root = open_location(uri, store, false)?;
    let latest = read_latest(&root).await?;
    let abandoned = abandoned_versions(rollback_records(&root).await?.iter().map(|r| &r.record));
    let segment_files = root.list_below("segments").await?;
    let reports = root.list_below("reports").await?;
    // Each version's manifest and run report, READ_AHEAD versions at a time, in order.
    let read = futures::stream::iter(version_ids(&root).await?)
        .map(|version| {
            let (root, has_report) = (root.clone(), reports.contains_key(&layout::report(&version)));
            async move {
                let manifest = SnapshotReader::open_at(root.clone(), &version)
                    .await?
                    .manifest()
                    .clone();
                let run = match has_report {
                    true => Some(read_run_summary(&root, &layout::report(&version)).await?),
                    false => None,
                };
                Ok::<_, IndexerError>((version, manifest, run))
            }
        })
        .buffered(READ_AHEAD)
        .try_collect::<Vec<_>>()
        .await?;
    let mut versions = Vec::new();
    let mut previous_segments: BTreeSet<String> = BTreeSet::new();
    for (version, m, run) in read {
        let m = &m;
        let state = if version == latest {
            VersionState::Latest
        } else if abandoned.contains(&version) {
            VersionState::RolledBack
        } else if version < latest {
            VersionState::Earlier
        } else {
            VersionState::Pending
        };
        let segments: BTreeSet<String> = m.segments.iter().map(|s| s.id.clone()).collect();
        versions.push(VersionSummary {
            version: version.clone(),
            created_at: m.created_at,
            state,
            parent: m.parent.clone(),
            source: m.source.clone(),
            documents: m.counts.documents,
            chunks: m.counts.chunks,
            tokens: m.counts.tokens,
            segments: segments.len(),
            new_segments: segments.difference(&previous_segments).count(),
            tombstones: m.tombstones.len(),
            precisions: m.model.precisions.clone(),
            missing_files: missing_files(m, &segment_files),
            run,
        });
        previous_segments = segments;
    }
    Ok(VersionListing { latest, versions })
}

/// The newest version older than `latest` that no rollback abandoned and whose files are all there.
async fn previous_whole_version(
    uri: &str,
    store: &StoreOptions,
    versions: &BTreeSet<String>,
    latest: &str,
    abandoned: &BTreeSet<String>,
    segment_files: &BTreeMap<String, ObjectMeta>,
) -> Result<Option<String>> {
    for version in versions
        .iter()
        .rev()
        .filter(|v| v.as_str() < latest && !abandoned.contains(*v))
    {
        let reader = SnapshotReader::open_version(uri, version, store).await?;
        if missing_files(reader.manifest(), segment_files).is_empty() {
            return Ok(Some(version.clone()));
        }
    }
    Ok(None)
}

/// Makes an earlier (or a rolled-back) version LATEST again: checks that its files are there
/// (and, with `verify`, their bytes), records the rollback, then writes LATEST. A server
/// polling the root serves the target at its next poll (or its reload).
pub async fn roll_back(uri: &str, store: &StoreOptions, options: &RollbackOptions) -> Result<RollbackReport> {
    let root = open_location(uri, store, false)?;
    let latest = read_latest(&root).await?;
    let versions = version_ids(&root).await?;
    let abandoned = abandoned_versions(rollback_records(&root).await?.iter().map(|r| &r.record));
    let segment_files = root.list_below("segments").await?;
    let target = match &options.target {
        RollbackTarget::Version(version) if versions.contains(version) => version.clone(),
        RollbackTarget::Version(version) => {
            return Err(IndexerError::NoSuchVersion {
                uri: uri.to_string(),
                version: version.clone(),
            })
        }
        RollbackTarget::Previous => previous_whole_version(uri, store, &versions, &latest, &abandoned, &segment_files)
            .await?
            .ok_or_else(|| IndexerError::NoEarlierVersion {
                uri: uri.to_string(),
                latest: latest.clone(),
            })?,
    };
    let mut report = RollbackReport {
        from: latest.clone(),
        to: target.clone(),
        changed: target != latest,
        abandoned: Vec::new(),
        verification: None,
        notes: Vec::new(),
        dry_run: options.dry_run,
    };
    if !report.changed {
        return Ok(report);
    }
    let reader = SnapshotReader::open_version(uri, &target, store).await?;
    let missing = missing_files(reader.manifest(), &segment_files);
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(5).map(String::as_str).collect();
        return Err(IndexerError::snapshot(
            layout::manifest(&target),
            format!(
                "cannot roll back to it: {} of its files are missing or of another size ({}{})",
                missing.len(),
                shown.join(", "),
                if missing.len() > 5 { ", ..." } else { "" }
            ),
        ));
    }
    if options.verify {
        let verification = reader.verify().await?;
        if let Some((path, problem)) = verification.problems.first() {
            return Err(IndexerError::snapshot(
                path,
                format!(
                    "cannot roll back to {target}: {problem} ({} of {} files fail their checksums)",
                    verification.problems.len(),
                    verification.files_checked
                ),
            ));
        }
        report.verification = Some(verification);
    }
    let current = SnapshotReader::open_version(uri, &latest, store).await?;
    let (from, to) = (current.manifest(), reader.manifest());
    if from.model.sha256 != to.model.sha256 {
        report.notes.push(format!("{target} was embedded by another model ({}, sha256 {}) than LATEST ({}): a server must load that model to serve it", to.model.name, to.model.sha256, from.model.name));
    }
    if from.chunker.sig != to.chunker.sig {
        report.notes.push(format!("{target} was chunked with other settings than LATEST: a run with LATEST's settings reuses none of its embeddings"));
    }
    report.abandoned = versions
        .iter()
        .filter(|v| v.as_str() > target.as_str())
        .cloned()
        .collect();
    if options.dry_run {
        return Ok(report);
    }
    let record = RollbackRecord {
        at: chrono::Utc::now(),
        from: latest.clone(),
        to: target.clone(),
        abandoned: report.abandoned.clone(),
    };
    let path = layout::rollback(&new_version_id());
    let bytes = serde_json::to_vec_pretty(&record).map_err(|e| IndexerError::snapshot(&path, e))?;
    // Only over the LATEST it checked: a version published meanwhile is not abandoned unseen.
    put_then_point_latest(&root, &path, bytes, &target, LatestExpected::Is(Some(&latest))).await?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(to: &str, abandoned: &[&str]) -> RollbackRecord {
        RollbackRecord {
            at: chrono::Utc::now(),
            from: String::new(),
            to: to.into(),
            abandoned: abandoned.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn a_later_rollback_takes_its_target_back() {
        let back = record("a", &["b", "c"]);
        let forward = record("b", &["c"]);
        assert_eq!(abandoned_versions([&back]), ["b", "c"].map(String::from).into());
        assert_eq!(abandoned_versions([&back, &forward]), ["c"].map(String::from).into());
        assert!(abandoned_versions([]).is_empty());
    }

    #[test]
    fn a_run_summary_reads_delta_and_full_reports() {
        let delta = serde_json::json!({ "documents_indexed": 9, "documents_failed": 2, "documents_warned": 4, "wall_secs": 1.5, "delta": { "documents_written": 3, "documents_removed": 1 } });
        assert_eq!(
            RunSummary::of_report(&delta),
            RunSummary {
                documents_written: 3,
                documents_removed: Some(1),
                documents_failed: 2,
                documents_warned: 4,
                wall_secs: 1.5
            }
        );
        let full =
            serde_json::json!({ "documents_indexed": 9, "documents_failed": 0, "wall_secs": 2.0, "delta": null });
        assert_eq!(
            RunSummary::of_report(&full),
            RunSummary {
                documents_written: 9,
                documents_removed: None,
                documents_failed: 0,
                // A report from before warnings were counted.
                documents_warned: 0,
                wall_secs: 2.0
            }
        );
    }

    #[test]
    fn previous_is_a_keyword_and_anything_else_a_version() {
        assert_eq!("previous".parse::<RollbackTarget>().unwrap(), RollbackTarget::Previous);
        assert_eq!(
            "20261125T000000000Z-0001".parse::<RollbackTarget>().unwrap(),
            RollbackTarget::Version("20261125T000000000Z-0001".into())
        );
    }
}
