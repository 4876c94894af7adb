//! The end of a batch run: documents become segments (indexes built, recall checked before
//! anything is written), then either a full version (this run's segments alone) or a delta
//! version (the previous version's segments plus this run's, with tombstones), then LATEST.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use super::compact::{compact, segments_to_merge, CompactOptions};
use super::delta::{DeltaReport, PreviousVersion};
use super::rebase::{built_on_base, carry_api_documents, rebase_delta, touched_documents, Carried, REBASES};
use super::report::{failed_files, no_document_files, Failure, RunReport, StageReport};
use super::segment::{assemble_onto, build_segment_blocking, BuiltAhead, SegmentRows, RECALL_K};
use super::segmenter::CutSegments;
use super::shard::{record_shard, ShardRun};
use super::types::EmbeddedDoc;
use super::RunOptions;
use crate::embed::Embedder;
use crate::error::{IndexerError, Result};
use crate::index::{sample_rows, ExactTruth, FaissIndex, IndexSpec, RecallCheck, VectorIndex};
use crate::parse::added_through_api;
use crate::snapshot::{
    new_version_id, ChunkerManifest, FileTable, IndexManifest, LatestExpected, Manifest, SegmentManifest,
    SnapshotReader, SnapshotWriter, WrittenSegment,
};

/// What publishing needs from the run.
pub(super) struct Publisher {
    /// The run's options, destination and embedder, which also write the delta's segment.
    pub builder: SegmentBuilder,
    pub chunker: ChunkerManifest,
    /// The run's parse signature, recorded so the next run can skip unchanged files.
    pub parse_sig: String,
    /// Every file the source listed, with its ETag (skipped files included).
    pub listed: HashMap<String, Option<String>>,
    /// When the run started (a shard's record tells how long it took).
    pub run_started: Instant,
}

/// A segment written from this run's documents (not yet named by any version).
pub(super) struct NewSegment {
    pub written: WrittenSegment,
    pub spec: IndexSpec,
    pub recall: RecallCheck,
    pub documents: usize,
    pub chunks: usize,
    pub tokens: u64,
    /// Its index stages: vector index, keyword index, row files, recall check, write segment.
    pub stages: Vec<StageReport>,
}

/// Builds, checks and writes a run's segments. It owns what it needs, so that a segment can be
/// built as a task of its own while the run embeds the next one.
#[derive(Clone)]
pub(super) struct SegmentBuilder {
    pub writer: SnapshotWriter,
    pub options: Arc<RunOptions>,
    pub embedder: Arc<dyn Embedder>,
}

/// How a segment's vector index is sized: the whole run's rules for the first segment of a
/// full run, [`IndexOptions::resolve_segment`] (flat when small, lists that fit) for the others.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Sizing {
    Run,
    Segment,
}

impl SegmentBuilder {
    /// Lays out `documents`, builds both indexes (the row files written beside them;
    /// finishing what was built `ahead` of the cut), checks recall
    /// (refusing below the minimum) and writes the segment `segment_id`.
    pub async fn write(
        &self,
        documents: Vec<EmbeddedDoc>,
        segment_id: String,
        sizing: Sizing,
        mut ahead: Option<BuiltAhead>,
    ) -> Result<NewSegment> {
        let started = Instant::now();
        let dim = self.embedder.info().dim;
        let laid_out = ahead
            .as_mut()
            .map(|ahead| std::mem::take(&mut ahead.vectors))
            .unwrap_or_default();
        let rows = tokio::task::spawn_blocking(move || assemble_onto(laid_out, documents, dim))
            .await
            .map_err(|e| IndexerError::VectorIndex {
                stage: "lay out rows",
                reason: e.to_string(),
            })??;
        let laid_out_secs = started.elapsed().as_secs_f64();
        let (row_count, dim) = (rows.chunks.len(), rows.embeddings.dim);
        let spec = match sizing {
            Sizing::Run => self.options.index.resolve(row_count, dim)?,
            Sizing::Segment => self.options.index.resolve_segment(row_count, dim)?,
        };
        let started = Instant::now();
        let (recall_queries, query_source) = recall_queries(&rows, &self.options, self.embedder.as_ref())?;
        let (mut built, row_files, counts) = build_segment_blocking(
            spec.clone(),
            rows,
            &self.writer,
            &segment_id,
            ahead,
            Some(self.embedder.tokenizer().clone()),
            Some(recall_queries),
        )
        .await?;
        tracing::info!(
            "{segment_id}: rows laid out in {laid_out_secs:.2} s, indexes built and row files written in {:.2} s",
            started.elapsed().as_secs_f64()
        );
        let started = Instant::now();
        let (truth, truth_secs) = built.recall_truth.take().ok_or_else(|| IndexerError::VectorIndex {
            stage: "recall check",
            reason: "the build found no exact answers to check the index against".into(),
        })?;
        // The index is searched once more, for the check (mapped from its file where it was
        // written alone), then let go: it was saved as it was built.
        let (path, checked_spec) = (built.saved_vectors.path().to_path_buf(), spec.clone());
        let recall = check_recall(
            move || built.vectors.searchable(&path, &checked_spec),
            truth,
            query_source,
            &self.options,
        )
        .await?;
        // Exact search ran beside the builds; its time counts here too.
        let recall_secs = truth_secs + started.elapsed().as_secs_f64();
        let chunks = counts.chunks;
        let mut stages = vec![
            StageReport::new("vector index", built.vector_secs, chunks as u64, "vectors"),
            StageReport::new("keyword index", built.keyword_secs, chunks as u64, "chunks"),
            StageReport::new("row files", row_files.secs, chunks as u64, "chunks"),
            StageReport::new("recall check", recall_secs, recall.queries as u64, "queries"),
        ];
        let started = Instant::now();
        let mut written = self
            .writer
            .finish_segment(row_files, built.saved_vectors, built.keyword_dir.path())
            .await?;
        written.manifest.languages = built.languages;
        stages.push(StageReport::new(
            "write segment",
            started.elapsed().as_secs_f64(),
            chunks as u64,
            "chunks",
        ));
        Ok(NewSegment {
            written,
            spec,
            recall,
            documents: counts.documents,
            chunks,
            tokens: counts.tokens,
            stages,
        })
    }
}

impl Publisher {
    /// Publishes `cut` (the segments written from this run's documents) alone as the next
    /// version. `base` is the previous version the run read, with the documents added through
    /// the API that the run carried over from it (their rows are in `cut`; id and chunks): when another writer
    /// published on top of it meanwhile, the documents that writer added through the API are
    /// carried over too ([`carry_api_documents`]). A full version replaces anything else.
    pub async fn full(
        &self,
        cut: CutSegments,
        base: Option<(Manifest, HashMap<String, usize>)>,
        report: &mut RunReport,
    ) -> Result<Manifest> {
        let CutSegments {
            segments, files: live, ..
        } = cut;
        let version = new_version_id();
        let files = self.file_table(live, &report.failures);
        // A shard's part may hold nothing: the other shards' parts may.
        let spec = match (segments.first(), &self.builder.options.shard) {
            (Some(first), _) => first.spec.clone(),
            (None, Some(_)) => IndexSpec::Flat,
            (None, None) => return Err(IndexerError::Config("a full version needs a segment".into())),
        };
        report.index = spec.factory();
        let mut run = Manifest {
            parse_sig: Some(self.parse_sig.clone()),
            ..Manifest::new(
                version,
                report.source.clone(),
                self.builder.embedder.info().clone(),
                self.chunker.clone(),
                IndexManifest::new(spec, self.builder.embedder.device_name()),
            )
        };
        run.model.precisions = report.precisions.clone();
        for segment in segments {
            add_segment(&mut run, segment, report);
        }
        report.recall_at_10 = run.recall_check.as_ref().map(|r| r.recall);
        if let Some(shard) = &self.builder.options.shard {
            (report.documents_indexed, report.chunks, report.tokens) =
                (run.counts.documents, run.counts.chunks, run.counts.tokens);
            let previous = base.map(|(base, _)| base.version);
            return self.record_part(shard, run, None, &files, previous, report).await;
        }
        let started = Instant::now();
        let writer = &self.builder.writer;
        let mut manifest = run.clone();
        let mut expected = base.as_ref().map(|(base, _)| base.version.clone());
        let mut carried = Carried::default();
        for rebase in 0..=REBASES {
            match writer
                .publish_with_file_table(&manifest, &files, LatestExpected::Is(expected.as_deref()))
                .await
            {
                Err(IndexerError::LatestMoved { .. }) if rebase < REBASES => {
                    // Only LATEST's name is needed to replace it: a full version may be what
                    // replaces a version whose manifest is unreadable.
                    let latest = writer.latest_version().await?;
                    (manifest, carried) = (
                        Manifest {
                            version: new_version_id(),
                            ..run.clone()
                        },
                        Carried::default(),
                    );
                    if let (Some(latest), Some((base, kept))) = (&latest, &base) {
                        match self.carry_from(latest, &run, base, kept).await {
                            Ok(Some(with_carried)) => (manifest, carried) = with_carried,
                            Ok(None) => {}
                            Err(e) => report.reuse.notes.push(format!(
                                "documents added through the API in version {latest} could not be carried over: {e}"
                            )),
                        }
                    }
                    expected = latest;
                }
                published => {
                    published?;
                    break;
                }
            }
        }
        // The manifest's counts hold every row of the carried segments; the report counts what it serves.
        report.reuse.api_documents_kept =
            report.reuse.api_documents_kept + carried.documents - carried.hidden_documents;
        report.documents_indexed = run.counts.documents + carried.documents - carried.hidden_documents;
        (report.chunks, report.tokens) = (
            run.counts.chunks + carried.chunks - carried.hidden_chunks,
            run.counts.tokens,
        );
        report.stages.push(StageReport::new(
            "publish",
            started.elapsed().as_secs_f64(),
            manifest.checksums.len() as u64,
            "files",
        ));
        Ok(manifest)
    }

    /// `run` (a full version) with the documents added through the API in `latest` carried
    /// over, when `latest` builds on `base` (None when it does not: nothing to carry).
    async fn carry_from(
        &self,
        latest: &str,
        run: &Manifest,
        base: &Manifest,
        kept: &HashMap<String, usize>,
    ) -> Result<Option<(Manifest, Carried)>> {
        let (uri, store) = (self.builder.writer.uri(), &self.builder.options.out_store);
        let Some((onto, copies)) = built_on_base(uri, store, base, latest).await? else {
            return Ok(None);
        };
        let (manifest, carried) = carry_api_documents(run, base, onto.manifest(), &copies, kept);
        tracing::info!(
            "{uri}: LATEST moved from {} to {latest} meanwhile; {} documents it added through the API are carried over",
            base.version,
            carried.documents
        );
        Ok(Some((manifest, carried)))
    }

    /// The file table of the new version: what it serves of each file (`live`), with the
    /// ETag every listed file had, whether any of it failed in this run (`failures`), and why
    /// it is no document where that was its failure.
    fn file_table(&self, mut live: FileTable, failures: &[Failure]) -> FileTable {
        let (failed, mut no_document) = (failed_files(failures), no_document_files(failures));
        // Documents added through the API are no source file's.
        live.files.retain(|uri, _| !added_through_api(uri));
        for (uri, etag) in &self.listed {
            let entry = live.files.entry(uri.clone()).or_default();
            entry.etag = etag.clone();
            entry.failed = failed.contains(uri.as_str());
            entry.no_document = no_document.remove(uri.as_str());
        }
        live
    }

    /// Publishes `base` plus the segments `cut` wrote (the documents that changed or arrived;
    /// those in `unchanged_documents` stay where they are), hiding replaced and deleted copies;
    /// then compacts when small segments or hidden rows have piled up.
    pub async fn delta(
        &self,
        base: PreviousVersion,
        cut: CutSegments,
        unchanged_documents: &HashSet<String>,
        unchanged_files: &HashSet<String>,
        report: &mut RunReport,
    ) -> Result<Manifest> {
        let failed = failed_files(&report.failures);
        let CutSegments {
            segments,
            files: written_files,
            doc_ids: written,
        } = cut;
        let changes = base.changes(&written, written_files, unchanged_documents, unchanged_files, &failed);
        let mut live = changes.files.totals();
        (live.documents, live.chunks, live.tokens) = (
            live.documents + changes.api_documents.documents,
            live.chunks + changes.api_documents.chunks,
            live.tokens + changes.api_documents.tokens,
        );
        // A shard's part may hold nothing: the other shards' parts may.
        if live.documents == 0 && self.builder.options.shard.is_none() {
            return Err(super::publish_run::nothing_to_publish(report));
        }
        let mut delta = DeltaReport {
            base_version: base.version().to_string(),
            files_unchanged: unchanged_files.len(),
            documents_unchanged: unchanged_documents.len(),
            documents_written: written.len(),
            chunks_written: segments.iter().map(|s| s.chunks).sum(),
            documents_removed: changes.removed_documents,
            documents_from_api: changes.api_documents.documents as usize,
            tombstones_added: changes.add_tombstones.len(),
            tombstones_lifted: changes.lift_tombstones.len(),
            ..Default::default()
        };
        let version = new_version_id();
        let base = base.manifest;
        let mut manifest = base.successor(version.clone());
        manifest.source = report.source.clone();
        manifest.parse_sig = Some(self.parse_sig.clone());
        manifest.model.precisions = report.precisions.clone();
        manifest.tombstones.retain(|t| !changes.lift_tombstones.contains(t));
        manifest.tombstones.extend(changes.add_tombstones);
        if segments.is_empty() {
            report.stages.push(StageReport::new("vector index", 0.0, 0, "vectors"));
            report.stages.push(StageReport::new("keyword index", 0.0, 0, "chunks"));
        }
        for segment in segments {
            add_segment(&mut manifest, segment, report);
        }
        report.recall_at_10 = manifest.recall_check.as_ref().map(|r| r.recall);
        // The snapshot's index; a small delta segment is exact search whatever it is.
        report.index = manifest.index.params.factory();
        (report.documents_indexed, report.chunks, report.tokens) =
            (live.documents as usize, live.chunks as usize, live.tokens);
        let files = self.file_table(changes.files, &report.failures);
        report.reuse.kept_after_failure = changes.kept_after_failure;
        if let Some(shard) = &self.builder.options.shard {
            // No compaction: it would rewrite other shards' documents.
            delta.segments = manifest.segments.len();
            report.delta = Some(delta);
            let previous = Some(base.version.clone());
            return self
                .record_part(shard, manifest, Some((&base, &written)), &files, previous, report)
                .await;
        }
        let started = Instant::now();
        manifest = self.publish_over(manifest, &base, &written, &files, &mut delta).await?;
        let version = manifest.version.clone();
        report.stages.push(StageReport::new(
            "publish",
            started.elapsed().as_secs_f64(),
            manifest.checksums.len() as u64,
            "files",
        ));

        let merge = merge_plan(&manifest, &changes.hidden_rows, &self.builder.options.compact);
        if !merge.is_empty() {
            let started = Instant::now();
            match self.compact(&manifest, &merge).await {
                Ok((compaction, compacted)) => {
                    tracing::info!(
                        "compacted {} segments into {:?}",
                        compaction.merged_segments.len(),
                        compaction.new_segments
                    );
                    report.stages.push(StageReport::new(
                        "compact",
                        started.elapsed().as_secs_f64(),
                        compaction.chunks_kept as u64,
                        "chunks",
                    ));
                    delta.compaction = Some(compaction);
                    manifest = compacted;
                }
                Err(e) => report.reuse.notes.push(format!(
                    "compaction after version {version} failed (that version stays published): {e}"
                )),
            }
        }
        delta.segments = manifest.segments.len();
        report.delta = Some(delta);
        Ok(manifest)
    }

    /// Records `part` (this shard's part of the run's version; a delta's built on `base`, with
    /// the documents it wrote) with
    /// its file table under `runs/<run id>/` instead of publishing it. `previous` is the version
    /// the shard read (None: LATEST's now), over which `quarry publish` will publish the run.
    async fn record_part(
        &self,
        shard: &ShardRun,
        part: Manifest,
        base: Option<(&Manifest, &HashSet<String>)>,
        files: &FileTable,
        previous: Option<String>,
        report: &mut RunReport,
    ) -> Result<Manifest> {
        let started = Instant::now();
        let writer = &self.builder.writer;
        let previous = match previous {
            Some(version) => Some(version),
            None => writer.latest_version().await?,
        };
        report.wall_secs = self.run_started.elapsed().as_secs_f64();
        record_shard(writer, shard, &part, base, files, previous, report).await?;
        report.stages.push(StageReport::new(
            "record shard",
            started.elapsed().as_secs_f64(),
            part.segments.len() as u64,
            "segments",
        ));
        Ok(part)
    }

    /// Publishes `run` (a delta built on `base`) over `base`, or, when another writer published
    /// a version that builds on `base` meanwhile, over that version with the run's change put on
    /// top of it ([`rebase_delta`]); refuses when LATEST moved to a version that does not.
    async fn publish_over(
        &self,
        run: Manifest,
        base: &Manifest,
        written: &HashSet<String>,
        files: &FileTable,
        delta: &mut DeltaReport,
    ) -> Result<Manifest> {
        let (writer, store) = (&self.builder.writer, &self.builder.options.out_store);
        let touched = touched_documents(&run, base, written);
        let mut manifest = run.clone();
        for rebase in 0..=REBASES {
            let expected = manifest.parent.clone();
            match writer
                .publish_with_file_table(&manifest, files, LatestExpected::Is(expected.as_deref()))
                .await
            {
                Err(IndexerError::LatestMoved { .. }) if rebase < REBASES => {
                    let latest = writer.latest_version().await?.ok_or_else(|| IndexerError::NoSnapshot {
                        uri: writer.uri().to_string(),
                    })?;
                    let Some((onto, copies)) = built_on_base(writer.uri(), store, base, &latest).await? else {
                        return Err(IndexerError::BaseReplaced {
                            uri: writer.uri().to_string(),
                            base: base.version.clone(),
                            latest,
                        });
                    };
                    tracing::info!(
                        "{}: LATEST moved from {} to {latest} meanwhile; this run's change goes on top of it",
                        writer.uri(),
                        base.version
                    );
                    manifest = rebase_delta(&run, base, onto.manifest(), &copies, &touched, written);
                    delta.rebased_onto = Some(latest);
                }
                published => return published.map(|()| manifest),
            }
        }
        unreachable!("the last attempt returns")
    }

    async fn compact(&self, manifest: &Manifest, merge: &[String]) -> Result<(super::CompactReport, Manifest)> {
        let reader = SnapshotReader::open_version(
            self.builder.writer.uri(),
            &manifest.version,
            &self.builder.options.out_store,
        )
        .await?;
        // The merged segments take the run's index rules and segment size.
        let options = &self.builder.options;
        compact(
            &reader,
            &self.builder.writer,
            merge,
            &CompactOptions {
                index: options.index.clone(),
                max_segment_chunks: options.segment_chunks,
                ..options.compact.clone()
            },
        )
        .await
    }
}

/// Adds a written segment to `manifest`: its counts, files and index stages; the version's
/// recall is its worst segment's.
fn add_segment(manifest: &mut Manifest, segment: NewSegment, report: &mut RunReport) {
    manifest.counts.documents += segment.documents;
    manifest.counts.chunks += segment.chunks;
    manifest.counts.tokens += segment.tokens;
    manifest.checksums.extend(segment.written.checksums);
    manifest.segments.push(segment.written.manifest);
    let recall = match manifest.recall_check.take() {
        Some(kept) if kept.recall < segment.recall.recall => kept,
        _ => segment.recall,
    };
    manifest.recall_check = Some(recall);
    report.add_stages(segment.stages);
}

/// The segments to merge after a delta, in manifest order: each one whose rows tombstones
/// (`hidden_rows`, by segment) hide more than the allowed fraction of, and the small ones
/// once too many have piled up. A segment with few hidden rows is not rewritten.
fn merge_plan(manifest: &Manifest, hidden_rows: &HashMap<String, u64>, options: &CompactOptions) -> Vec<String> {
    let small = segments_to_merge(manifest, options);
    let mostly_hidden = |segment: &SegmentManifest| {
        let hidden = hidden_rows.get(&segment.id).copied().unwrap_or(0);
        segment.chunks > 0 && hidden as f64 > options.max_hidden_fraction * segment.chunks as f64
    };
    manifest
        .segments
        .iter()
        .filter(|s| mostly_hidden(s) || small.contains(&s.id))
        .map(|s| s.id.clone())
        .collect()
}

/// Queries sampled from the chunks when the user gives none.
const RECALL_SAMPLE: usize = 200;

/// The recall check's queries (row-major) and where they come from: the user's, embedded,
/// or a seeded sample of the rows.
fn recall_queries(
    rows: &SegmentRows,
    options: &RunOptions,
    embedder: &dyn Embedder,
) -> Result<(Vec<f32>, &'static str)> {
    match options.recall_queries.is_empty() {
        true => Ok((
            sample_rows(&rows.embeddings.data, rows.embeddings.dim, RECALL_SAMPLE),
            "chunks",
        )),
        false => {
            let texts: Vec<&str> = options.recall_queries.iter().map(String::as_str).collect();
            Ok((embedder.embed(&texts)?.data, "given"))
        }
    }
}

/// Measures the ANN recall@10 of `index` against exact search's answers `truth` and enforces
/// `min_recall`, before anything is written.
async fn check_recall(
    index: impl FnOnce() -> Result<FaissIndex> + Send + 'static,
    truth: ExactTruth,
    query_source: &str,
    options: &RunOptions,
) -> Result<RecallCheck> {
    let checked = tokio::task::spawn_blocking(move || {
        let index = index()?;
        let recall = truth.recall_of(&index)?;
        Ok::<_, IndexerError>((index.spec().factory(), recall, truth.queries()))
    })
    .await
    .map_err(|e| IndexerError::VectorIndex {
        stage: "recall check",
        reason: e.to_string(),
    })?;
    let (factory, recall, queries) = checked?;
    tracing::info!("ANN recall@{RECALL_K} = {recall:.4} over {queries} queries ({query_source})");
    if let Some(min) = options.min_recall {
        if recall < min {
            return Err(IndexerError::RecallBelowMinimum {
                index: factory,
                recall,
                min,
            });
        }
    }
    Ok(RecallCheck {
        k: RECALL_K,
        queries,
        query_source: query_source.into(),
        recall,
    })
}
