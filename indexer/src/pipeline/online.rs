//! Online changes to a published snapshot: new documents become one small immutable
//! segment, deletes become tombstones, and each change is published as the next manifest
//! version (segment first, manifest next, LATEST last), exactly like a batch run.

use super::segment::{assemble, build_segment_blocking, SegmentRows};
use super::stages::EmbeddedDoc;
use crate::embed::{version_precisions, Embedder};
use crate::error::{IndexerError, Result};
use crate::index::IndexOptions;
use crate::snapshot::{new_version_id, ChunkerManifest, IndexManifest, Manifest, SnapshotWriter};

/// What the next version adds and hides.
#[derive(Default)]
pub struct VersionChange {
    /// New documents: one new segment when not empty.
    pub documents: Vec<EmbeddedDoc>,
    /// Document or chunk ids to hide from every result.
    pub tombstones: Vec<String>,
    /// Chunks of `documents` whose vectors the embedder computed for this change (the others
    /// took stored vectors): the version adds the embedder's precision only when some were.
    pub embedded_chunks: usize,
}

/// Publishes `base` plus `change` as the next version (`base = None` starts a snapshot).
pub async fn publish_next_version(
    writer: &SnapshotWriter,
    base: Option<&Manifest>,
    change: VersionChange,
    embedder: &dyn Embedder,
    chunker: ChunkerManifest,
    index: &IndexOptions,
) -> Result<Manifest> {
    let model = embedder.info().clone();
    if let Some(base) = base {
        if base.model.sha256 != model.sha256 {
            return Err(IndexerError::Config(format!(
                "{} was embedded with model {} (sha256 {}); this server runs {} (sha256 {})",
                writer.uri(),
                base.model.name,
                base.model.sha256,
                model.name,
                model.sha256
            )));
        }
    }
    let version = new_version_id();
    let mut manifest = match base {
        Some(base) => base.clone(),
        None => Manifest::new(String::new(), "online".into(), model.clone(), chunker, IndexManifest::new(crate::index::IndexSpec::Flat, "cpu".into())),
    };
    manifest.version = version.clone();
    manifest.created_at = chrono::Utc::now();
    if !change.documents.is_empty() {
        let own = (change.embedded_chunks > 0).then_some(model.precisions.as_slice());
        manifest.model.precisions = version_precisions(base.map(|base| base.model.precisions.as_slice()), own);
        let rows = assemble(change.documents, model.dim);
        let spec = index.resolve(rows.chunks.len(), model.dim)?;
        let (built, row_files, rows) = build_segment_blocking(spec, rows, writer, &format!("seg-{version}")).await?;
        let SegmentRows { chunks, records, .. } = &rows;
        let segment = writer.finish_segment(row_files, &built.vectors, built.keyword_dir.path()).await?;
        manifest.counts.documents += records.len();
        manifest.counts.chunks += chunks.len();
        manifest.counts.tokens += rows.tokens();
        manifest.checksums.extend(segment.checksums);
        manifest.segments.push(segment.manifest);
    }
    for id in change.tombstones {
        if !manifest.tombstones.contains(&id) {
            manifest.tombstones.push(id);
        }
    }
    writer.publish(&manifest).await?;
    Ok(manifest)
}
