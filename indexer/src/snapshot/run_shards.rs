//! The records of a sharded run, under `runs/<run id>/`. Each shard of an array job writes its
//! segments, then its file table (`shard-NNNNN.files.parquet`), then its record
//! (`shard-NNNNN.json`): a shard has finished once its record is there, and a shard run again
//! replaces it. `quarry publish` merges the records into one version, then marks the run
//! published (`published.json`). Until then gc keeps the segments the records name, unless
//! LATEST has moved past the version the run built on (the run can no longer publish).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::file_table::FileTable;
use super::manifest::Manifest;
use super::reader::get;
use super::upload::put_bytes;
use super::writer::SnapshotWriter;
use crate::error::{IndexerError, Result};
use crate::store::Location;

/// Object names of a sharded run.
pub mod run_layout {
    /// The folder of one run's records.
    pub fn run(run_id: &str) -> String {
        format!("runs/{run_id}")
    }

    /// A shard's record: written last, once its segments and file table are.
    pub fn shard_record(run_id: &str, shard: usize) -> String {
        format!("runs/{run_id}/shard-{shard:05}.json")
    }

    /// A shard's file table: the files of its partition.
    pub fn shard_files(run_id: &str, shard: usize) -> String {
        format!("runs/{run_id}/shard-{shard:05}.files.parquet")
    }

    /// A shard's run report: stored before its record (with the failures and warnings, which
    /// `quarry publish` lists in the version's report), then again once the run is done.
    pub fn shard_report(run_id: &str, shard: usize) -> String {
        format!("runs/{run_id}/shard-{shard:05}.report.json")
    }

    /// Written once the run's version is published.
    pub fn published(run_id: &str) -> String {
        format!("runs/{run_id}/published.json")
    }
}

/// What one shard of a run built: its part of the version, as the manifest it would publish
/// alone (for a delta: the base version's segments and tombstones with its own change).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardRecord {
    pub run_id: String,
    pub shard: usize,
    pub shards: usize,
    /// The version LATEST named when the shard read the root (None: there was none); the
    /// run's version is published only over it.
    pub previous: Option<String>,
    /// The version the shard's delta builds on (None: its part is a full version).
    pub delta_base: Option<String>,
    pub finished_at: chrono::DateTime<chrono::Utc>,
    pub summary: ShardSummary,
    /// The shard's part: a full version's segments, or a delta's change to the base version
    /// (its new segments and their checksums, the tombstones it adds, its counts less the
    /// base's).
    pub manifest: Manifest,
    /// Tombstones of the base version the shard's delta lifts (documents back in the source).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lifted_tombstones: Vec<String>,
    /// Documents a delta shard wrote into its new segments (new, changed or back): when another
    /// writer published on the base meanwhile, the copies that writer added of them are hidden.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub written_documents: Vec<String>,
}

/// The counts of a shard's run that the publish step reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardSummary {
    pub files_listed: usize,
    /// Documents the shard's part serves (a delta: of its partition, with the unchanged ones).
    pub documents_indexed: usize,
    /// Documents written into the shard's new segments.
    pub documents_written: usize,
    /// Documents a delta hid (gone from the source or replaced).
    pub documents_removed: usize,
    pub documents_failed: usize,
    /// The first failure, `uri — reason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failure: Option<String>,
    /// Documents indexed though read in part.
    #[serde(default)]
    pub documents_warned: usize,
    /// The first warning, `uri — what was not read`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_warning: Option<String>,
    pub wall_secs: f64,
}

/// The mark of a published run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedRun {
    pub run_id: String,
    pub version: String,
    pub published_at: chrono::DateTime<chrono::Utc>,
}

/// Whether `run_id` may name a run: 1 to 128 letters, digits, `.`, `_` or `-`, starting with a
/// letter or digit (a Kubernetes Job name, a Slurm job id and an AWS Batch job id all are).
pub fn valid_run_id(run_id: &str) -> bool {
    (1..=128).contains(&run_id.len())
        && run_id.starts_with(|c: char| c.is_ascii_alphanumeric())
        && run_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn to_json<T: Serialize>(path: &str, value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec_pretty(value).map_err(|e| IndexerError::snapshot(path, e))
}

/// The JSON record at `path`, None when there is no such object.
async fn json_if_there<T: serde::de::DeserializeOwned>(root: &Location, path: &str) -> Result<Option<T>> {
    match get(root, path).await {
        Ok(bytes) => from_json(path, &bytes).map(Some),
        Err(IndexerError::Store {
            cause: object_store::Error::NotFound { .. },
            ..
        }) => Ok(None),
        Err(e) => Err(e),
    }
}

fn from_json<T: serde::de::DeserializeOwned>(path: &str, bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| IndexerError::snapshot(path, format!("unreadable record: {e}")))
}

impl SnapshotWriter {
    /// Stores a shard's file table, then its record (which replaces one an earlier attempt of
    /// the shard left).
    pub async fn put_shard_record(&self, record: &ShardRecord, files: &FileTable) -> Result<()> {
        let (run_id, shard) = (&record.run_id, record.shard);
        put_bytes(
            self.root(),
            &run_layout::shard_files(run_id, shard),
            files.to_parquet()?,
        )
        .await?;
        let path = run_layout::shard_record(run_id, shard);
        put_bytes(self.root(), &path, to_json(&path, record)?).await.map(|_| ())
    }

    /// Shard `shard`'s record of run `run_id`; None when that shard has not finished.
    pub async fn shard_record(&self, run_id: &str, shard: usize) -> Result<Option<ShardRecord>> {
        json_if_there(self.root(), &run_layout::shard_record(run_id, shard)).await
    }

    /// Shard `shard`'s run report of run `run_id`, as stored; None when there is none.
    pub async fn shard_report(&self, run_id: &str, shard: usize) -> Result<Option<serde_json::Value>> {
        json_if_there(self.root(), &run_layout::shard_report(run_id, shard)).await
    }

    /// Shard `shard`'s file table of run `run_id`.
    pub async fn shard_files(&self, run_id: &str, shard: usize) -> Result<FileTable> {
        let path = run_layout::shard_files(run_id, shard);
        FileTable::from_parquet(get(self.root(), &path).await?)
            .map_err(|e| IndexerError::snapshot(&path, format!("unreadable file table: {e}")))
    }

    /// The mark of run `run_id`, once published.
    pub async fn published_run(&self, run_id: &str) -> Result<Option<PublishedRun>> {
        json_if_there(self.root(), &run_layout::published(run_id)).await
    }

    /// Marks run `run_id` published as `version`.
    pub async fn mark_run_published(&self, run_id: &str, version: &str) -> Result<()> {
        let path = run_layout::published(run_id);
        let mark = PublishedRun {
            run_id: run_id.to_string(),
            version: version.to_string(),
            published_at: chrono::Utc::now(),
        };
        put_bytes(self.root(), &path, to_json(&path, &mark)?).await.map(|_| ())
    }
}

/// The runs under `runs/` for gc: the segments that runs which may still publish name, and
/// the record files of the others (published, or built on a version LATEST has moved past).
pub(super) struct RunFiles {
    pub pending_segments: BTreeSet<String>,
    /// Runs that will not publish again, with their files.
    pub finished: BTreeMap<String, Vec<(String, object_store::ObjectMeta)>>,
}

pub(super) async fn run_files(root: &Location, latest: &str) -> Result<RunFiles> {
    let mut by_run: BTreeMap<String, Vec<(String, object_store::ObjectMeta)>> = BTreeMap::new();
    for (path, meta) in root.list_below("runs").await? {
        if let Some(run) = path.strip_prefix("runs/").and_then(|rest| rest.split('/').next()) {
            by_run.entry(run.to_string()).or_default().push((path.clone(), meta));
        }
    }
    let mut files = RunFiles {
        pending_segments: BTreeSet::new(),
        finished: BTreeMap::new(),
    };
    for (run, listed) in by_run {
        let published = listed.iter().any(|(path, _)| *path == run_layout::published(&run));
        let mut segments = BTreeSet::new();
        let mut outdated = false;
        for (path, _) in listed.iter().filter(|(path, _)| is_shard_record(path)) {
            let record: ShardRecord = from_json(path, &get(root, path).await?)?;
            outdated |= record.previous.as_deref() != Some(latest);
            segments.extend(record.manifest.segments.iter().map(|s| s.id.clone()));
        }
        if published || outdated {
            files.finished.insert(run, listed);
        } else {
            files.pending_segments.extend(segments);
        }
    }
    Ok(files)
}

fn is_shard_record(path: &str) -> bool {
    path.rsplit('/')
        .next()
        .is_some_and(|name| name.starts_with("shard-") && name.ends_with(".json") && !name.ends_with(".report.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_names_a_scheduler_gives() {
        for good in [
            "nightly-29388320",
            "4242",
            "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
            "run_2026.11.26",
        ] {
            assert!(valid_run_id(good), "{good}");
        }
        for bad in ["", "-x", "a/b", "../x", "a b", "a:b", &"x".repeat(129)] {
            assert!(!valid_run_id(bad), "{bad}");
        }
    }

    #[test]
    fn only_shard_records_are_read_as_records() {
        assert!(is_shard_record("runs/r/shard-00002.json"));
        assert!(!is_shard_record("runs/r/shard-00002.report.json"));
        assert!(!is_shard_record("runs/r/shard-00002.files.parquet"));
        assert!(!is_shard_record("runs/r/published.json"));
    }
}
