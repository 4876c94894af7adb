//! Compaction: online uploads add one small segment each, and every search and every load
//! pays per segment. Merges segments from their stored rows and embeddings (nothing is
//! embedded again) into as few as a segment's size allows, drops the rows tombstones hide,
//! and publishes the result as the next version (segments first, manifest next, LATEST last).

use serde::Serialize;

use super::model_reading::sum_by_language;
use super::segment::{build_segment_blocking, SegmentRows};
use crate::error::{IndexerError, Result};
use crate::index::IndexOptions;
use crate::snapshot::{
    new_version_id, LanguageReading, LatestExpected, Manifest, SnapshotReader, SnapshotWriter, WantedRows,
    WrittenSegment,
};

/// When and how to compact.
#[derive(Debug, Clone)]
pub struct CompactOptions {
    /// Segments with fewer chunks than this count as small.
    pub small_segment_chunks: usize,
    /// Compact once there are more small segments than this.
    pub max_small_segments: usize,
    /// A batch run rewrites each segment whose rows tombstones hide more than this fraction of
    /// (with the small ones, when those are due).
    pub max_hidden_fraction: f64,
    /// The merged segments' vector index, sized to their rows (`IndexOptions::resolve_segment`: flat when small).
    pub index: IndexOptions,
    /// Live chunks per merged segment at most (a merged segment larger than this alone stays whole).
    pub max_segment_chunks: usize,
}

impl Default for CompactOptions {
    fn default() -> Self {
        Self {
            small_segment_chunks: 50_000,
            max_small_segments: 8,
            max_hidden_fraction: 0.3,
            index: IndexOptions::default(),
            max_segment_chunks: super::DEFAULT_SEGMENT_CHUNKS,
        }
    }
}

/// What a compaction did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CompactReport {
    /// The version published; None when there was nothing to merge.
    pub version: Option<String>,
    pub merged_segments: Vec<String>,
    /// The segments written in their place (none when every row was hidden).
    pub new_segments: Vec<String>,
    pub chunks_kept: usize,
    pub chunks_dropped: usize,
    pub documents_kept: usize,
    pub documents_dropped: usize,
    pub tombstones_before: usize,
    pub tombstones_after: usize,
}

/// The segments `options` says to merge in `manifest`: its small segments, once there are
/// more than `max_small_segments` of them; none otherwise.
pub fn segments_to_merge(manifest: &Manifest, options: &CompactOptions) -> Vec<String> {
    let small: Vec<String> = manifest
        .segments
        .iter()
        .filter(|s| s.chunks < options.small_segment_chunks)
        .map(|s| s.id.clone())
        .collect();
    if small.len() > options.max_small_segments {
        small
    } else {
        Vec::new()
    }
}

/// Merges `merge` (segment ids of the version `reader` holds) into new segments and publishes
/// the next version through `writer`; returns what it did and the manifest now current.
/// Consecutive merged segments go into one new segment (in the place of the last of them)
/// until it would hold more than `options.max_segment_chunks` live chunks, so a compaction
/// holds about one new segment's rows, however large the version. Fewer than two segments to
/// merge is a no-op unless tombstones hide rows in the one named.
pub async fn compact(
    reader: &SnapshotReader,
    writer: &SnapshotWriter,
    merge: &[String],
    options: &CompactOptions,
) -> Result<(CompactReport, Manifest)> {
    let base = reader.manifest();
    let mut report = CompactReport {
        tombstones_before: base.tombstones.len(),
        tombstones_after: base.tombstones.len(),
        ..Default::default()
    };
    if let Some(unknown) = merge.iter().find(|id| !base.segments.iter().any(|s| &s.id == *id)) {
        return Err(IndexerError::Config(format!(
            "compact: version {} has no segment {unknown}",
            base.version
        )));
    }
    if merge.is_empty() || (merge.len() == 1 && base.tombstones.is_empty()) {
        return Ok((report, base.clone()));
    }
    let version = new_version_id();
    let tombstones = base.tombstone_set();
    let dim = base.model.dim;
    let mut merged = MergedSegments::new(writer, &version, options, dim);
    let mut dropped_tokens = 0u64;
    let mut merged_documents = 0usize;
    // In manifest order, so a later copy of a document keeps its place after an earlier one.
    for (position, segment) in base.segments.iter().enumerate().filter(|(_, s)| merge.contains(&s.id)) {
        let records = reader.read_segment_documents(&segment.id).await?;
        merged_documents += records.len();
        let mut live = SegmentRows::empty(dim);
        let mut live_chunks: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
        // A row group at a time: only the live rows are kept.
        reader
            .read_segment_rows_in_parts(&segment.id, WantedRows::All, |chunks, embeddings| {
                for (row, chunk) in chunks.into_iter().enumerate() {
                    if tombstones.hides(&segment.id, &chunk.doc_id, &chunk.chunk_id) {
                        report.chunks_dropped += 1;
                        dropped_tokens += chunk.token_count as u64;
                        continue;
                    }
                    *live_chunks.entry(chunk.doc_id.clone()).or_default() += 1;
                    live.embeddings.data.extend_from_slice(embeddings.row(row));
                    live.chunks.push(chunk);
                }
                Ok(())
            })
            .await?;
        for mut record in records {
            match live_chunks.get(&record.doc_id) {
                Some(&count) => {
                    record.chunk_count = count;
                    live.records.push(record);
                }
                None => report.documents_dropped += 1,
            }
        }
        report.chunks_kept += live.chunks.len();
        report.documents_kept += live.records.len();
        let kept = if segment.chunks == 0 {
            0.0
        } else {
            live.chunks.len() as f64 / segment.chunks as f64
        };
        merged.add(live, position, &segment.languages, kept).await?;
        report.merged_segments.push(segment.id.clone());
    }
    let written = merged.finish().await?;

    let mut manifest = base.successor(version.clone());
    let merged_files: Vec<String> = base
        .segments
        .iter()
        .filter(|s| merge.contains(&s.id))
        .flat_map(|s| s.files.clone())
        .collect();
    manifest.checksums.retain(|path, _| !merged_files.contains(path));
    manifest.counts.documents = manifest.counts.documents.saturating_sub(merged_documents) + report.documents_kept;
    manifest.counts.chunks = manifest.counts.chunks.saturating_sub(report.chunks_dropped);
    manifest.counts.tokens = manifest.counts.tokens.saturating_sub(dropped_tokens);
    let mut placed = written.into_iter().peekable();
    manifest.segments.clear();
    for (position, segment) in base.segments.iter().enumerate() {
        if !merge.contains(&segment.id) {
            manifest.segments.push(segment.clone());
        }
        while let Some((_, new)) = placed.next_if(|(at, _)| *at == position) {
            report.new_segments.push(new.manifest.id.clone());
            manifest.checksums.extend(new.checksums);
            manifest.segments.push(new.manifest);
        }
    }
    // Tombstones scoped to a merged segment are spent; with every segment merged, all are.
    let every_segment = base.segments.iter().all(|s| merge.contains(&s.id));
    manifest
        .tombstones
        .retain(|t| !every_segment && !merge.iter().any(|id| t.starts_with(&format!("{id}/"))));
    report.tombstones_after = manifest.tombstones.len();
    // Compaction serves the same documents: a batch run's file table holds for the new version too.
    // Published only over the version it merged: one published meanwhile is not undone.
    let expected = LatestExpected::Is(Some(&base.version));
    match reader.read_file_table().await {
        Ok(Some(files)) => writer.publish_with_file_table(&manifest, &files, expected).await?,
        _ => writer.publish(&manifest, expected).await?,
    }
    report.version = Some(version);
    Ok((report, manifest))
}

/// The new segments of a compaction, filled one at a time with the live rows of consecutive
/// merged segments: once the next segment's rows would take the one being filled past its
/// size, it is built and written (named `seg-<version>`, then `seg-<version>-<n>`).
struct MergedSegments<'a> {
    writer: &'a SnapshotWriter,
    version: &'a str,
    options: &'a CompactOptions,
    filling: SegmentRows,
    /// Where the segment being filled goes: the manifest position of its last merged segment.
    position: usize,
    /// The languages of the segment being filled: its merged segments' readings, each scaled
    /// to the share of its rows kept, summed when it is written (the model is the same, so
    /// nothing is measured again).
    languages: Vec<LanguageReading>,
    /// Written segments with their positions, in order.
    written: Vec<(usize, WrittenSegment)>,
    started: usize,
}

impl<'a> MergedSegments<'a> {
    fn new(writer: &'a SnapshotWriter, version: &'a str, options: &'a CompactOptions, dim: usize) -> Self {
        let filling = SegmentRows::empty(dim);
        Self {
            writer,
            version,
            options,
            filling,
            position: 0,
            languages: Vec::new(),
            written: Vec::new(),
            started: 0,
        }
    }

    /// Adds the live rows of the merged segment at manifest position `position` (its
    /// language readings, of which the rows kept are the share `kept`).
    async fn add(
        &mut self,
        rows: SegmentRows,
        position: usize,
        languages: &[LanguageReading],
        kept: f64,
    ) -> Result<()> {
        if !self.filling.chunks.is_empty()
            && self.filling.chunks.len() + rows.chunks.len() > self.options.max_segment_chunks
        {
            self.write().await?;
        }
        self.languages.extend(languages.iter().map(|r| LanguageReading {
            language: r.language.clone(),
            chunks: (r.chunks as f64 * kept).round() as u64,
            reading: r.reading.scaled(kept),
        }));
        self.filling.extend(rows);
        self.position = position;
        Ok(())
    }

    /// Builds and writes the segment being filled, if it holds any row.
    async fn write(&mut self) -> Result<()> {
        if self.filling.chunks.is_empty() {
            return Ok(());
        }
        let dim = self.filling.embeddings.dim;
        let rows = std::mem::replace(&mut self.filling, SegmentRows::empty(dim));
        self.started += 1;
        let segment_id = match self.started {
            1 => format!("seg-{}", self.version),
            n => format!("seg-{}-{n}", self.version),
        };
        let spec = self.options.index.resolve_segment(rows.chunks.len(), dim)?;
        let (built, row_files, _) =
            build_segment_blocking(spec, rows, self.writer, &segment_id, None, None, None).await?;
        let mut segment = self
            .writer
            .finish_segment(row_files, built.saved_vectors, built.keyword_dir.path())
            .await?;
        segment.manifest.languages = sum_by_language(std::mem::take(&mut self.languages));
        self.written.push((self.position, segment));
        Ok(())
    }

    /// Writes the last segment; every segment written, with its manifest position, in order.
    async fn finish(mut self) -> Result<Vec<(usize, WrittenSegment)>> {
        self.write().await?;
        Ok(self.written)
    }
}
