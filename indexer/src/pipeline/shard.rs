//! One shard of a sharded run (`quarry index --shards N --shard I`): the tasks of an array job
//! (a Kubernetes Indexed Job, a Slurm job array, an AWS Batch array job) each index a stable
//! partition of the source's files, chosen by a hash of the file's URI so that a file stays in
//! its shard night after night and each shard's delta builds on its own part of the previous
//! version. A shard writes its segments and a record under `runs/<run id>/`
//! ([`crate::snapshot::ShardRecord`]) instead of moving LATEST; `quarry publish` merges the
//! records ([`super::publish_shards`]).

use std::collections::HashSet;

use sha2::Digest;

use super::report::RunReport;
use crate::error::{IndexerError, Result};
use crate::parse::{added_through_api, file_uri_of};
use crate::snapshot::{valid_run_id, Counts, FileTable, Manifest, ShardRecord, ShardSummary, SnapshotWriter};

/// Which part of a sharded run this process builds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ShardRun {
    pub run_id: String,
    /// 0-based.
    pub shard: usize,
    pub shards: usize,
}

impl ShardRun {
    /// Shard `shard` (0-based) of `shards` of run `run_id`.
    pub fn new(run_id: impl Into<String>, shard: usize, shards: usize) -> Result<Self> {
        let run_id = run_id.into();
        if !valid_run_id(&run_id) {
            return Err(IndexerError::Config(format!(
                "run id `{run_id}`: use 1 to 128 letters, digits, `.`, `_` or `-`, starting with a letter or digit"
            )));
        }
        if shards == 0 || shard >= shards {
            return Err(IndexerError::Config(format!(
                "shard {shard} of {shards}: shards are numbered 0 to {} (--shard, or the scheduler's task index)",
                shards.saturating_sub(1)
            )));
        }
        Ok(Self { run_id, shard, shards })
    }

    /// Whether the source file `file_uri` is this shard's.
    pub fn owns_file(&self, file_uri: &str) -> bool {
        shard_of(file_uri, self.shards) == self.shard
    }

    /// Whether the document at `document_uri` is this shard's: its file's shard, or shard 0
    /// for the documents added through a server's API (which no source file holds).
    pub fn owns_document(&self, document_uri: &str) -> bool {
        if added_through_api(document_uri) {
            self.shard == 0
        } else {
            self.owns_file(file_uri_of(document_uri))
        }
    }

    /// The tag the shard's segment ids carry, so that shards writing at once never name one
    /// segment alike.
    pub fn segment_tag(&self) -> String {
        format!("s{}", self.shard)
    }
}

/// The shard (0..`shards`) of the source file `file_uri`: the first 8 bytes of its sha256, as
/// a big-endian number, modulo `shards` (the same on every machine and every night).
pub fn shard_of(file_uri: &str, shards: usize) -> usize {
    let digest = sha2::Sha256::digest(file_uri.as_bytes());
    let head = u64::from_be_bytes(digest[..8].try_into().expect("8 bytes"));
    (head % shards.max(1) as u64) as usize
}

/// Stores what shard `shard` built: `manifest` (its part of the version, as it would publish
/// it alone; for a delta, only its change to `base`), the file table of its partition and the
/// counts of `report`.
pub(super) async fn record_shard(
    writer: &SnapshotWriter,
    shard: &ShardRun,
    manifest: &Manifest,
    base: Option<(&Manifest, &HashSet<String>)>,
    files: &FileTable,
    previous: Option<String>,
    report: &RunReport,
) -> Result<()> {
    let delta = report.delta.as_ref();
    let (change, lifted_tombstones) = match base {
        Some((base, _)) => change_of(manifest, base),
        None => (manifest.clone(), Vec::new()),
    };
    let mut written_documents: Vec<String> = base
        .map(|(_, written)| written.iter().cloned().collect())
        .unwrap_or_default();
    written_documents.sort();
    let record = ShardRecord {
        run_id: shard.run_id.clone(),
        shard: shard.shard,
        shards: shard.shards,
        previous,
        delta_base: manifest.parent.clone(),
        finished_at: chrono::Utc::now(),
        summary: ShardSummary {
            files_listed: report.files_listed,
            documents_indexed: report.documents_indexed,
            documents_written: delta.map_or(report.documents_indexed, |d| d.documents_written),
            documents_removed: delta.map_or(0, |d| d.documents_removed),
            documents_failed: report.documents_failed,
            first_failure: report
                .failures
                .first()
                .map(|f| format!("{} — {}", f.uri, f.reason_with_detail())),
            documents_warned: report.documents_warned,
            first_warning: report.warnings.first().map(|w| format!("{} — {}", w.uri, w.warning)),
            wall_secs: report.wall_secs,
        },
        manifest: change,
        lifted_tombstones,
        written_documents,
    };
    // The report as it stands (its failures and warnings are whole) goes first, so that a
    // recorded shard always has one for `quarry publish` to list them from; the run stores
    // it again once done.
    let path = crate::snapshot::run_layout::shard_report(&shard.run_id, shard.shard);
    let report_json = serde_json::to_value(report).map_err(|e| IndexerError::snapshot(&path, e))?;
    writer.put_json(&path, &report_json).await?;
    writer.put_shard_record(&record, files).await?;
    tracing::info!(
        "{}: shard {} of {} of run {} recorded ({} segments, {} documents); `quarry publish` merges the run once every shard has",
        writer.uri(),
        shard.shard,
        shard.shards,
        shard.run_id,
        manifest.segments.len(),
        report.documents_indexed
    );
    Ok(())
}

/// What `part` (a delta built on `base`) changes: its new segments with their checksums, the
/// tombstones it adds, its counts less the base's; and the tombstones of `base` it lifts. A
/// record holds this much, not a copy of the base version's manifest (which grows with the
/// corpus).
pub(crate) fn change_of(part: &Manifest, base: &Manifest) -> (Manifest, Vec<String>) {
    let base_segments: HashSet<&str> = base.segments.iter().map(|s| s.id.as_str()).collect();
    let base_tombstones: HashSet<&str> = base.tombstones.iter().map(String::as_str).collect();
    let kept: HashSet<&str> = part.tombstones.iter().map(String::as_str).collect();
    let mut change = part.clone();
    change.segments.retain(|s| !base_segments.contains(s.id.as_str()));
    let new_files: HashSet<&String> = change.segments.iter().flat_map(|s| &s.files).collect();
    change.checksums = part
        .checksums
        .iter()
        .filter(|(path, _)| new_files.contains(path))
        .map(|(path, sum)| (path.clone(), sum.clone()))
        .collect();
    change.tombstones.retain(|t| !base_tombstones.contains(t.as_str()));
    change.counts = Counts {
        documents: part.counts.documents.saturating_sub(base.counts.documents),
        chunks: part.counts.chunks.saturating_sub(base.counts.chunks),
        tokens: part.counts.tokens.saturating_sub(base.counts.tokens),
    };
    let lifted = base
        .tombstones
        .iter()
        .filter(|t| !kept.contains(t.as_str()))
        .cloned()
        .collect();
    (change, lifted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_stays_in_its_shard_and_the_shards_share_the_files() {
        let uris: Vec<String> = (0..3000).map(|i| format!("s3://bucket/docs/{i:05}.md")).collect();
        let mut sizes = [0usize; 3];
        for uri in &uris {
            let shard = shard_of(uri, 3);
            assert_eq!(shard, shard_of(uri, 3), "the same shard every time");
            sizes[shard] += 1;
        }
        // A hash spreads 3000 files evenly: each shard within 10% of a third.
        assert!(sizes.iter().all(|&n| (900..=1100).contains(&n)), "{sizes:?}");
        // Pinned values (Python's hashlib gives the same): the partition must not change
        // between builds, or every shard's delta would see other shards' files as new.
        assert_eq!(shard_of("s3://bucket/docs/00000.md", 7), 4);
        assert_eq!(shard_of("s3://bucket/docs/00001.md", 1_000_003), 615_582);
        let owners = |uri: &str| {
            (0..3)
                .filter(|&s| ShardRun::new("r", s, 3).unwrap().owns_file(uri))
                .count()
        };
        assert!(uris.iter().all(|uri| owners(uri) == 1));
    }

    #[test]
    fn documents_added_through_the_api_are_shard_zeros() {
        let first = ShardRun::new("r", 0, 4).unwrap();
        let second = ShardRun::new("r", 1, 4).unwrap();
        assert!(first.owns_document("upload://docs/f1/a.pdf"));
        assert!(!second.owns_document("upload://docs/f1/a.pdf"));
        // A document inside a file goes with its file.
        let file = "s3://b/data.jsonl";
        assert_eq!(first.owns_document(&format!("{file}#3")), first.owns_file(file));
    }

    #[test]
    fn a_shard_outside_its_run_or_a_bad_run_id_is_refused() {
        assert!(ShardRun::new("r", 3, 3)
            .unwrap_err()
            .to_string()
            .contains("numbered 0 to 2"));
        assert!(ShardRun::new("r", 0, 0).is_err());
        assert!(ShardRun::new("../r", 0, 1)
            .unwrap_err()
            .to_string()
            .contains("run id `../r`"));
    }
}
