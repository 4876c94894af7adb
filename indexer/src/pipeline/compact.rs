//! Compaction: online uploads add one small segment each, and every search and every load
//! pays per segment. Merges segments into one from their stored rows and embeddings
//! (nothing is embedded again), drops the rows tombstones hide, and publishes the result as
//! the next version (segment first, manifest next, LATEST last).

use serde::Serialize;

use super::segment::{build_segment_blocking, SegmentRows};
use crate::embed::Embeddings;
use crate::error::{IndexerError, Result};
use crate::index::IndexOptions;
use crate::snapshot::{new_version_id, Manifest, SnapshotReader, SnapshotWriter};

/// When and how to compact.
#[derive(Debug, Clone)]
pub struct CompactOptions {
    /// Segments with fewer chunks than this count as small.
    pub small_segment_chunks: usize,
    /// Compact once there are more small segments than this.
    pub max_small_segments: usize,
    /// A batch run merges every segment once tombstones hide more than this fraction of the rows.
    pub max_hidden_fraction: f64,
    /// The merged segment's vector index, sized to its rows (`IndexOptions::resolve_segment`: flat when small).
    pub index: IndexOptions,
}

impl Default for CompactOptions {
    fn default() -> Self {
        Self { small_segment_chunks: 50_000, max_small_segments: 8, max_hidden_fraction: 0.3, index: IndexOptions::default() }
    }
}

/// What a compaction did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CompactReport {
    /// The version published; None when there was nothing to merge.
    pub version: Option<String>,
    pub merged_segments: Vec<String>,
    pub new_segment: Option<String>,
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
    let small: Vec<String> = manifest.segments.iter().filter(|s| s.chunks < options.small_segment_chunks).map(|s| s.id.clone()).collect();
    if small.len() > options.max_small_segments {
        small
    } else {
        Vec::new()
    }
}

/// Merges `merge` (segment ids of the version `reader` holds) into one new segment and
/// publishes the next version through `writer`; returns what it did and the manifest now
/// current. Fewer than two segments to merge is a no-op unless tombstones hide rows in the one named.
pub async fn compact(reader: &SnapshotReader, writer: &SnapshotWriter, merge: &[String], index: &IndexOptions) -> Result<(CompactReport, Manifest)> {
    let base = reader.manifest();
    let mut report = CompactReport { tombstones_before: base.tombstones.len(), tombstones_after: base.tombstones.len(), ..Default::default() };
    if let Some(unknown) = merge.iter().find(|id| !base.segments.iter().any(|s| &s.id == *id)) {
        return Err(IndexerError::Config(format!("compact: version {} has no segment {unknown}", base.version)));
    }
    if merge.is_empty() || (merge.len() == 1 && base.tombstones.is_empty()) {
        return Ok((report, base.clone()));
    }
    let tombstones = base.tombstone_set();
    let dim = base.model.dim;
    let mut rows = SegmentRows { chunks: Vec::new(), embeddings: Embeddings { dim, data: Vec::new() }, records: Vec::new() };
    let mut dropped_tokens = 0u64;
    let mut merged_documents = 0usize;
    // In manifest order, so a later copy of a document keeps its place after an earlier one.
    for segment in base.segments.iter().filter(|s| merge.contains(&s.id)) {
        let (records, chunks, embeddings) = reader.read_segment(&segment.id).await?;
        merged_documents += records.len();
        let mut live_chunks: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
        for (row, chunk) in chunks.into_iter().enumerate() {
            if tombstones.hides(&segment.id, &chunk.doc_id, &chunk.chunk_id) {
                report.chunks_dropped += 1;
                dropped_tokens += chunk.token_count as u64;
                continue;
            }
            *live_chunks.entry(chunk.doc_id.clone()).or_default() += 1;
            rows.embeddings.data.extend_from_slice(&embeddings.data[row * dim..(row + 1) * dim]);
            rows.chunks.push(chunk);
        }
        for mut record in records {
            match live_chunks.get(&record.doc_id) {
                Some(&count) => {
                    record.chunk_count = count;
                    rows.records.push(record);
                }
                None => report.documents_dropped += 1,
            }
        }
        report.merged_segments.push(segment.id.clone());
    }
    report.chunks_kept = rows.chunks.len();
    report.documents_kept = rows.records.len();

    let version = new_version_id();
    let mut manifest = base.clone();
    manifest.version = version.clone();
    manifest.created_at = chrono::Utc::now();
    let merged_files: Vec<String> = base.segments.iter().filter(|s| merge.contains(&s.id)).flat_map(|s| s.files.clone()).collect();
    manifest.checksums.retain(|path, _| !merged_files.contains(path));
    let position = base.segments.iter().rposition(|s| merge.contains(&s.id)).unwrap_or(base.segments.len());
    let kept_before = base.segments[..position].iter().filter(|s| !merge.contains(&s.id)).count();
    manifest.segments.retain(|s| !merge.contains(&s.id));
    manifest.counts.documents = manifest.counts.documents.saturating_sub(merged_documents) + rows.records.len();
    manifest.counts.chunks = manifest.counts.chunks.saturating_sub(report.chunks_dropped);
    manifest.counts.tokens = manifest.counts.tokens.saturating_sub(dropped_tokens);
    if !rows.chunks.is_empty() {
        let spec = index.resolve_segment(rows.chunks.len(), dim)?;
        let segment_id = format!("seg-{version}");
        let (built, row_files, _) = build_segment_blocking(spec, rows, writer, &segment_id).await?;
        let segment = writer.finish_segment(row_files, &built.vectors, built.keyword_dir.path()).await?;
        manifest.checksums.extend(segment.checksums);
        manifest.segments.insert(kept_before, segment.manifest);
        report.new_segment = Some(segment_id);
    }
    // Tombstones scoped to a merged segment are spent; with every segment merged, all are.
    let every_segment = manifest.segments.len() == usize::from(report.new_segment.is_some());
    manifest.tombstones.retain(|t| !every_segment && !merge.iter().any(|id| t.starts_with(&format!("{id}/"))));
    report.tombstones_after = manifest.tombstones.len();
    // Compaction serves the same documents: a batch run's file table holds for the new version too.
    if let Ok(Some(files)) = reader.read_file_table().await {
        writer.put_file_table(&version, &files).await?;
    }
    writer.publish(&manifest).await?;
    report.version = Some(version);
    Ok((report, manifest))
}
