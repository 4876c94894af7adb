//! `quarry publish ROOT --run-id ID --shards N`: the one publish of a sharded run. It checks
//! that every shard recorded its part, that the parts were built alike on the same version,
//! merges them (segments, tombstones, counts, checksums, recall checks, file tables) into one
//! version manifest and moves LATEST over the version the shards read. Publishing a run twice
//! publishes it once: the second call finds the run's mark (or LATEST already naming the run)
//! and says so.

use std::collections::{BTreeSet, HashSet};
use std::time::Instant;

use serde::Serialize;

use super::rebase::{built_on_base, rebase_delta, touched_documents, REBASES};
use crate::error::{IndexerError, Result};
use crate::snapshot::{
    layout, new_version_id, FileTable, LatestExpected, Manifest, ShardRecord, ShardSummary, SnapshotReader,
    SnapshotWriter,
};
use crate::store::StoreOptions;

/// What publishing a sharded run did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ShardPublishReport {
    pub run_id: String,
    /// The run's version.
    pub version: String,
    /// The run was already published (by an earlier call, or by another shard that finished
    /// at the same moment): nothing was written now.
    pub already_published: bool,
    pub shards: usize,
    /// The version the shards' deltas built on (None: a full version).
    pub delta_base: Option<String>,
    /// The version another writer published on the base while the shards ran, which the run's
    /// change was put on top of (none when the base was still LATEST).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebased_onto: Option<String>,
    /// Live documents the version serves.
    pub documents: usize,
    /// Documents written into the run's new segments, hidden by its deltas, failed.
    pub documents_written: usize,
    pub documents_removed: usize,
    pub documents_failed: usize,
    /// Documents indexed though read in part.
    pub documents_warned: usize,
    pub segments_added: usize,
    pub segments: usize,
    pub tombstones_added: usize,
    pub tombstones_lifted: usize,
    pub files: usize,
    pub publish_secs: f64,
    /// Each shard's counts, by shard.
    pub shard_summaries: Vec<ShardSummary>,
}

/// Publishes run `run_id` of `shards` shards in the snapshot root `uri` (see the module).
pub async fn publish_shards(
    uri: &str,
    store: &StoreOptions,
    run_id: &str,
    shards: usize,
) -> Result<ShardPublishReport> {
    let started = Instant::now();
    let writer = SnapshotWriter::open(uri, store)?;
    if let Some(mark) = writer.published_run(run_id).await? {
        return Ok(already_published(run_id, mark.version, shards));
    }
    let records = read_records(&writer, run_id, shards).await?;
    check_records(run_id, shards, &records)?;
    let first = &records[0];
    let base = match &first.delta_base {
        Some(base) => Some(SnapshotReader::open_version(uri, base, store).await?.manifest().clone()),
        None => None,
    };
    let version = new_version_id();
    let parts: Vec<Part<'_>> = records
        .iter()
        .map(|r| (&r.manifest, r.lifted_tombstones.as_slice()))
        .collect();
    let merged = merge_parts(base.as_ref(), &parts, version.clone(), run_id);
    let mut files = FileTable::default();
    for record in &records {
        // The shards' partitions share no file: each entry (ETag and failure included) is taken whole.
        files
            .files
            .extend(writer.shard_files(run_id, record.shard).await?.files);
    }
    let summaries: Vec<ShardSummary> = records.iter().map(|r| r.summary.clone()).collect();
    let sum = |count: fn(&ShardSummary) -> usize| summaries.iter().map(count).sum::<usize>();
    let mut report = ShardPublishReport {
        run_id: run_id.to_string(),
        version: version.clone(),
        shards,
        delta_base: first.delta_base.clone(),
        documents: sum(|s| s.documents_indexed),
        documents_written: sum(|s| s.documents_written),
        documents_removed: sum(|s| s.documents_removed),
        documents_failed: sum(|s| s.documents_failed),
        documents_warned: sum(|s| s.documents_warned),
        segments_added: merged.segments_added,
        segments: merged.manifest.segments.len(),
        tombstones_added: merged.tombstones_added,
        tombstones_lifted: merged.tombstones_lifted,
        files: files.len(),
        shard_summaries: summaries,
        ..Default::default()
    };
    if report.documents == 0 {
        return Err(IndexerError::NothingToPublish(format!(
            "no shard of run {run_id} indexed a document ({} failed)",
            report.documents_failed
        )));
    }
    // Over the version the shards read; over a version another writer (an upload, a delete, a
    // compaction) published on it meanwhile, with the run's change put on top of it.
    let written: HashSet<String> = records
        .iter()
        .flat_map(|r| r.written_documents.iter().cloned())
        .collect();
    let mut manifest = merged.manifest.clone();
    let mut expected = first.previous.clone();
    for rebase in 0..=REBASES {
        let moved_to = match writer
            .publish_with_file_table(&manifest, &files, LatestExpected::Is(expected.as_deref()))
            .await
        {
            Ok(()) => break,
            Err(IndexerError::LatestMoved { found, .. }) => found,
            Err(e) => return Err(e),
        };
        let latest = writer.latest_manifest().await?;
        if let Some(latest) = latest.as_ref().filter(|m| m.run_id.as_deref() == Some(run_id)) {
            // Another call published this run meanwhile (two shards finishing at once).
            writer.mark_run_published(run_id, &latest.version).await?;
            return Ok(already_published(run_id, latest.version.clone(), shards));
        }
        let outdated = || IndexerError::RunOutdated {
            uri: writer.uri().to_string(),
            run_id: run_id.to_string(),
            previous: first.previous.clone().unwrap_or_else(|| "(none)".into()),
            latest: moved_to.clone(),
        };
        let (Some(base), Some(latest), true) = (&base, latest, rebase < REBASES) else {
            return Err(outdated());
        };
        let Some((reader, copies)) = built_on_base(uri, store, base, &latest.version).await? else {
            return Err(outdated());
        };
        let onto = reader.manifest();
        let touched = touched_documents(&merged.manifest, base, &written);
        manifest = rebase_delta(&merged.manifest, base, onto, &copies, &touched, &written);
        manifest.run_id = Some(run_id.to_string());
        tracing::info!(
            "{uri}: LATEST moved from {} to {} meanwhile; run {run_id} goes on top of it",
            base.version,
            onto.version
        );
        report.rebased_onto = Some(onto.version.clone());
        expected = Some(onto.version.clone());
    }
    let version = manifest.version.clone();
    report.version = version.clone();
    report.publish_secs = started.elapsed().as_secs_f64();
    // LATEST has moved: the mark and the report only tell about it.
    if let Err(e) = writer.mark_run_published(run_id, &version).await {
        tracing::warn!("run {run_id} published as {version}, but its mark could not be stored: {e}");
    }
    let listed = listed_documents(&writer, run_id, shards).await;
    if let Err(e) = writer
        .put_json(
            &layout::report(&version),
            &run_report(&report, &merged.manifest, listed),
        )
        .await
    {
        tracing::warn!("run {run_id} published as {version}, but its report could not be stored: {e}");
    }
    tracing::info!(
        "{uri}: run {run_id} published as {version} ({} shards, {} documents, {} new segments)",
        shards,
        report.documents,
        report.segments_added
    );
    Ok(report)
}

fn already_published(run_id: &str, version: String, shards: usize) -> ShardPublishReport {
    ShardPublishReport {
        run_id: run_id.to_string(),
        version,
        already_published: true,
        shards,
        ..Default::default()
    }
}

/// Every shard's record, or which have not finished.
async fn read_records(writer: &SnapshotWriter, run_id: &str, shards: usize) -> Result<Vec<ShardRecord>> {
    let reads = (0..shards).map(|shard| writer.shard_record(run_id, shard));
    let found = futures::future::try_join_all(reads).await?;
    let missing: Vec<String> = found
        .iter()
        .enumerate()
        .filter(|(_, record)| record.is_none())
        .map(|(shard, _)| shard.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(IndexerError::ShardsMissing {
            uri: writer.uri().to_string(),
            run_id: run_id.to_string(),
            missing: missing.join(", "),
            shards,
        });
    }
    Ok(found.into_iter().flatten().collect())
}

/// Refuses parts that do not make one version: another shard count, another base, another
/// model, chunker, parse settings or keyword analyzer.
fn check_records(run_id: &str, shards: usize, records: &[ShardRecord]) -> Result<()> {
    let disagree = |reason: String| IndexerError::ShardsDisagree {
        run_id: run_id.to_string(),
        reason,
    };
    let first = &records[0];
    let show = |version: &Option<String>| version.clone().unwrap_or_else(|| "no version".into());
    for record in records {
        let shard = record.shard;
        if record.shards != shards {
            return Err(disagree(format!(
                "shard {shard} was run as one of {} shards, not {shards}",
                record.shards
            )));
        }
        let (part, one) = (&record.manifest, &first.manifest);
        let differs = [
            (record.previous != first.previous, "read another version"),
            (record.delta_base != first.delta_base, "built on another version"),
            (part.model.sha256 != one.model.sha256, "embedded with another model"),
            (part.chunker.sig != one.chunker.sig, "chunked with other settings"),
            (part.parse_sig != one.parse_sig, "parsed with other settings"),
            (part.keyword != one.keyword, "used another keyword analyzer"),
        ];
        if let Some((_, what)) = differs.iter().find(|(differs, _)| *differs) {
            return Err(disagree(format!(
                "shard {shard} {what} than shard 0 (shard {shard}: {} on {}, shard 0: {} on {}); run it again with the same settings",
                record.previous.as_deref().unwrap_or("nothing"),
                show(&record.delta_base),
                first.previous.as_deref().unwrap_or("nothing"),
                show(&first.delta_base),
            )));
        }
    }
    Ok(())
}

/// The merged manifest and what it changed.
pub(super) struct Merged {
    pub manifest: Manifest,
    pub segments_added: usize,
    pub tombstones_added: usize,
    pub tombstones_lifted: usize,
}

/// A shard's part for [`merge_parts`]: its record's manifest (a full version's segments, or a
/// delta's change to the base: see [`super::shard::change_of`]) and the base's tombstones it lifts.
pub(super) type Part<'a> = (&'a Manifest, &'a [String]);

/// One version of the shards' `parts`: for a delta, `base` with every part's change to it
/// (its new segments, the tombstones it added and lifted, its counts); for a full version,
/// every part's segments. Segments keep their part's index spec where it is not the version's.
pub(super) fn merge_parts(base: Option<&Manifest>, parts: &[Part<'_>], version: String, run_id: &str) -> Merged {
    let with_segments = parts
        .iter()
        .map(|(part, _)| *part)
        .find(|p| !p.segments.is_empty())
        .unwrap_or(parts[0].0);
    let mut merged = match base {
        Some(base) => base.successor(version),
        None => Manifest {
            version,
            segments: Vec::new(),
            tombstones: Vec::new(),
            counts: Default::default(),
            checksums: Default::default(),
            recall_check: None,
            parent: None,
            created_at: chrono::Utc::now(),
            ..with_segments.clone()
        },
    };
    merged.run_id = Some(run_id.to_string());
    let base_segments: HashSet<&str> =
        base.map_or_else(HashSet::new, |b| b.segments.iter().map(|s| s.id.as_str()).collect());
    let base_tombstones: BTreeSet<&str> =
        base.map_or_else(BTreeSet::new, |b| b.tombstones.iter().map(String::as_str).collect());
    let (mut added, mut lifted) = (Vec::new(), BTreeSet::new());
    let mut segments_added = 0;
    let mut precisions: Vec<String> = base.map_or_else(Vec::new, |b| b.model.precisions.clone());
    for &(part, lifted_by_part) in parts {
        added.extend(
            part.tombstones
                .iter()
                .filter(|t| !base_tombstones.contains(t.as_str()))
                .cloned(),
        );
        lifted.extend(lifted_by_part.iter().cloned());
        for segment in part.segments.iter().filter(|s| !base_segments.contains(s.id.as_str())) {
            let mut segment = segment.clone();
            if segment.index.is_none() && part.index.params != merged.index.params {
                segment.index = Some(part.index.params.clone());
            }
            merged.counts.documents += segment.documents;
            merged.counts.chunks += segment.chunks;
            for file in &segment.files {
                if let Some(sum) = part.checksums.get(file) {
                    merged.checksums.insert(file.clone(), sum.clone());
                }
            }
            merged.segments.push(segment);
            segments_added += 1;
        }
        // Tokens are counted per version, not per segment: a part's counts are its change.
        merged.counts.tokens += part.counts.tokens;
        merged.recall_check = match (merged.recall_check.take(), &part.recall_check) {
            (Some(kept), Some(other)) if other.recall < kept.recall => Some(other.clone()),
            (None, other) => other.clone(),
            (kept, _) => kept,
        };
        for precision in &part.model.precisions {
            if !precisions.contains(precision) {
                precisions.push(precision.clone());
            }
        }
    }
    merged.model.precisions = precisions;
    merged.tombstones.retain(|t| !lifted.contains(t));
    let mut present: HashSet<String> = merged.tombstones.iter().cloned().collect();
    let mut tombstones_added = 0;
    for tombstone in added {
        if present.insert(tombstone.clone()) {
            merged.tombstones.push(tombstone);
            tombstones_added += 1;
        }
    }
    Merged {
        manifest: merged,
        segments_added,
        tombstones_added,
        tombstones_lifted: lifted.len(),
    }
}

/// The documents the shards' reports list: every failure and every warning, each list in
/// shard order (a shard's sorted by URI). A report that cannot be read is logged and named in
/// `notes`; its shard's documents are counted in the summaries all the same.
#[derive(Debug, Default)]
struct ListedDocuments {
    failures: Vec<serde_json::Value>,
    warnings: Vec<serde_json::Value>,
    notes: Vec<String>,
}

async fn listed_documents(writer: &SnapshotWriter, run_id: &str, shards: usize) -> ListedDocuments {
    let mut listed = ListedDocuments::default();
    for shard in 0..shards {
        let report = match writer.shard_report(run_id, shard).await {
            Ok(Some(report)) => report,
            Ok(None) => {
                listed.notes.push(format!(
                    "shard {shard} stored no run report: its failures and warnings are not listed"
                ));
                continue;
            }
            Err(e) => {
                listed.notes.push(format!(
                    "shard {shard}'s run report could not be read ({e}): its failures and warnings are not listed"
                ));
                continue;
            }
        };
        let list = |key: &str| report[key].as_array().cloned().unwrap_or_default();
        listed.failures.extend(list("failures"));
        listed.warnings.extend(list("warnings"));
    }
    for note in &listed.notes {
        tracing::warn!("run {run_id}: {note}");
    }
    listed
}

/// The run report stored beside the version (`reports/<version>.json`): the counts `quarry
/// versions` reads, each shard's, and the documents that failed or were read in part.
fn run_report(report: &ShardPublishReport, manifest: &Manifest, listed: ListedDocuments) -> serde_json::Value {
    let wall_secs = report.shard_summaries.iter().map(|s| s.wall_secs).fold(0.0, f64::max);
    let mut json = serde_json::json!({
        "source": manifest.source,
        "version": report.version,
        "run_id": report.run_id,
        "documents_indexed": report.documents,
        "documents_failed": report.documents_failed,
        "documents_warned": report.documents_warned,
        "failures": listed.failures,
        "warnings": listed.warnings,
        "chunks": manifest.counts.chunks,
        "tokens": manifest.counts.tokens,
        "wall_secs": wall_secs + report.publish_secs,
        "shards": report.shard_summaries,
        "publish_secs": report.publish_secs,
    });
    if !listed.notes.is_empty() {
        json["notes"] = listed.notes.into();
    }
    if let Some(base) = &report.delta_base {
        json["delta"] = serde_json::json!({
            "base_version": base,
            "documents_written": report.documents_written,
            "documents_removed": report.documents_removed,
            "tombstones_added": report.tombstones_added,
            "tombstones_lifted": report.tombstones_lifted,
            "segments": report.segments,
        });
    }
    json
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::ChunkerConfig;
    use crate::embed::{ModelInfo, Pooling};
    use crate::index::{IndexSpec, RecallCheck};
    use crate::snapshot::{ChunkerManifest, Counts, IndexManifest, SegmentManifest};

    fn manifest(version: &str) -> Manifest {
        let model = ModelInfo {
            name: "m".into(),
            sha256: "s".into(),
            dim: 4,
            max_tokens: 256,
            pooling: Pooling::Mean,
            precisions: vec!["f32".into()],
        };
        let chunker = ChunkerManifest {
            config: ChunkerConfig::default(),
            sig: "c".into(),
        };
        Manifest::new(
            version.into(),
            "s3://b/src".into(),
            model,
            chunker,
            IndexManifest::new(IndexSpec::Flat, "cpu".into()),
        )
    }

    fn with_segment(mut manifest: Manifest, id: &str, documents: usize, recall: f64) -> Manifest {
        manifest.segments.push(SegmentManifest {
            id: id.into(),
            index: None,
            documents,
            chunks: documents * 2,
            files: vec![format!("segments/{id}/chunks.parquet")],
            languages: Vec::new(),
        });
        manifest.checksums.insert(
            format!("segments/{id}/chunks.parquet"),
            crate::snapshot::FileChecksum {
                sha256: id.into(),
                bytes: 1,
                blocks: None,
            },
        );
        manifest.counts.documents += documents;
        manifest.counts.chunks += documents * 2;
        manifest.counts.tokens += documents as u64 * 100;
        manifest.recall_check = Some(RecallCheck {
            k: 10,
            queries: 10,
            query_source: "chunks".into(),
            recall: recall.min(manifest.recall_check.as_ref().map_or(1.0, |r| r.recall)),
        });
        manifest
    }

    #[test]
    fn full_parts_make_one_version_of_every_segment() {
        let first = with_segment(manifest("p0"), "seg-a-s0", 5, 1.0);
        let mut second = with_segment(manifest("p1"), "seg-b-s1", 3, 0.97);
        second.index = IndexManifest::new(
            IndexSpec::Hnsw {
                m: 32,
                ef_construction: 200,
                ef_search: 128,
                builder: crate::index::HnswBuilder::Faiss,
            },
            "cpu".into(),
        );
        let empty = manifest("p2");
        let parts: [Part<'_>; 3] = [(&first, &[]), (&second, &[]), (&empty, &[])];
        let merged = merge_parts(None, &parts, "v1".into(), "night-1");
        let m = &merged.manifest;
        assert_eq!(
            (m.version.as_str(), m.parent.as_ref(), m.run_id.as_deref()),
            ("v1", None, Some("night-1"))
        );
        let ids: Vec<&str> = m.segments.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["seg-a-s0", "seg-b-s1"]);
        assert_eq!(
            m.counts,
            Counts {
                documents: 8,
                chunks: 16,
                tokens: 800
            }
        );
        assert_eq!(m.checksums.len(), 2);
        // The second part's HNSW segment keeps its index; the version's recall is the worst.
        assert_eq!(m.segment_index(&m.segments[1]).name(), "hnsw");
        assert_eq!(m.segment_index(&m.segments[0]).name(), "flat");
        assert_eq!(m.recall_check.as_ref().unwrap().recall, 0.97);
    }

    #[test]
    fn delta_parts_add_their_changes_to_the_base() {
        let mut base = with_segment(manifest("v1"), "seg-a", 10, 1.0);
        base.tombstones = vec!["seg-a/old".into(), "seg-a/back".into()];
        // Shard 0 replaced a document and hid another; shard 1 brought one back.
        let mut first = with_segment(base.successor("p0".into()), "seg-b-s0", 1, 1.0);
        first
            .tombstones
            .extend(["seg-a/changed".to_string(), "seg-a/gone".to_string()]);
        let mut second = with_segment(base.successor("p1".into()), "seg-c-s1", 2, 1.0);
        second.tombstones.retain(|t| t != "seg-a/back");
        let unchanged = base.successor("p2".into());
        // What each shard records: its change to the base, not the base again.
        let changes = [&first, &second, &unchanged].map(|part| super::super::shard::change_of(part, &base));
        assert_eq!(changes[0].0.segments.len(), 1);
        assert_eq!(changes[0].0.checksums.len(), 1);
        assert_eq!(changes[1].1, ["seg-a/back"]);
        assert!(changes[2].0.segments.is_empty() && changes[2].0.tombstones.is_empty());
        let parts: Vec<Part<'_>> = changes.iter().map(|(m, lifted)| (m, lifted.as_slice())).collect();
        let merged = merge_parts(Some(&base), &parts, "v2".into(), "night-2");
        let m = &merged.manifest;
        assert_eq!(m.parent.as_deref(), Some("v1"));
        let ids: Vec<&str> = m.segments.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["seg-a", "seg-b-s0", "seg-c-s1"]);
        assert_eq!(m.tombstones, ["seg-a/old", "seg-a/changed", "seg-a/gone"]);
        assert_eq!(
            (merged.tombstones_added, merged.tombstones_lifted, merged.segments_added),
            (2, 1, 2)
        );
        assert_eq!(
            m.counts,
            Counts {
                documents: 13,
                chunks: 26,
                tokens: 1300
            }
        );
    }

    fn record(shard: usize, shards: usize, part: Manifest) -> ShardRecord {
        ShardRecord {
            run_id: "r".into(),
            shard,
            shards,
            previous: Some("v1".into()),
            delta_base: Some("v1".into()),
            finished_at: chrono::Utc::now(),
            summary: ShardSummary::default(),
            manifest: part,
            lifted_tombstones: Vec::new(),
            written_documents: Vec::new(),
        }
    }

    #[test]
    fn parts_built_otherwise_are_refused_by_name() {
        let part = manifest("p");
        assert!(check_records("r", 2, &[record(0, 2, part.clone()), record(1, 2, part.clone())]).is_ok());
        let other_count = check_records("r", 2, &[record(0, 2, part.clone()), record(1, 3, part.clone())]);
        assert!(other_count
            .unwrap_err()
            .to_string()
            .contains("shard 1 was run as one of 3 shards, not 2"));
        let mut other_model = part.clone();
        other_model.model.sha256 = "t".into();
        let error = check_records("r", 2, &[record(0, 2, part.clone()), record(1, 2, other_model)]).unwrap_err();
        assert!(
            error.to_string().contains("shard 1 embedded with another model"),
            "{error}"
        );
        let mut other_base = record(1, 2, part.clone());
        other_base.delta_base = Some("v0".into());
        let error = check_records("r", 2, &[record(0, 2, part), other_base]).unwrap_err();
        assert!(
            error.to_string().contains("shard 1 built on another version"),
            "{error}"
        );
    }
}
