//! Online changes to a published snapshot: new documents become one small immutable
//! segment, deletes become tombstones, and each change is published as the next manifest
//! version (segment first, manifest next, LATEST last), exactly like a batch run.

use super::rebase::REBASES;
use super::segment::{assemble, build_segment_blocking, SegmentCounts};
use super::types::EmbeddedDoc;
use crate::embed::{version_precisions, Embedder};
use crate::error::{IndexerError, Result};
use crate::index::IndexOptions;
use crate::snapshot::{new_version_id, ChunkerManifest, IndexManifest, LatestExpected, Manifest, SnapshotWriter};

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

/// Publishes `base` plus `change` as the next version (`base = None` starts a snapshot). When
/// another writer (a batch run, another server) moved LATEST since `base` was read, the change
/// goes on top of the version LATEST names instead: the new segment is built once, and its
/// documents and tombstones are added to whatever that version holds.
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
        same_model(writer, base, &model)?;
    }
    let first_version = new_version_id();
    let segment = match change.documents.is_empty() {
        true => None,
        false => {
            let rows = assemble(change.documents, model.dim);
            let spec = index.resolve(rows.chunks.len(), model.dim)?;
            let (built, row_files, counts) = build_segment_blocking(
                spec,
                rows,
                writer,
                &format!("seg-{first_version}"),
                None,
                Some(embedder.tokenizer().clone()),
                None,
            )
            .await?;
            let SegmentCounts {
                documents,
                chunks,
                tokens,
            } = counts;
            let mut written = writer
                .finish_segment(row_files, built.saved_vectors, built.keyword_dir.path())
                .await?;
            written.manifest.languages = built.languages;
            Some((written, documents, chunks, tokens))
        }
    };
    let own_precisions = (segment.is_some() && change.embedded_chunks > 0).then_some(model.precisions.as_slice());
    let mut base = base.cloned();
    let mut version = first_version;
    for rebase in 0..=REBASES {
        let mut manifest = match &base {
            Some(base) => base.successor(String::new()),
            None => Manifest::new(
                String::new(),
                "online".into(),
                model.clone(),
                chunker.clone(),
                IndexManifest::new(crate::index::IndexSpec::Flat, "cpu".into()),
            ),
        };
        manifest.version = version.clone();
        manifest.created_at = chrono::Utc::now();
        if let Some((written, documents, chunks, tokens)) = &segment {
            manifest.model.precisions = version_precisions(
                base.as_ref().map(|base| base.model.precisions.as_slice()),
                own_precisions,
            );
            manifest.counts.documents += documents;
            manifest.counts.chunks += chunks;
            manifest.counts.tokens += tokens;
            manifest.checksums.extend(written.checksums.clone());
            manifest.segments.push(written.manifest.clone());
        }
        for id in &change.tombstones {
            if !manifest.tombstones.contains(id) {
                manifest.tombstones.push(id.clone());
            }
        }
        let expected = LatestExpected::Is(base.as_ref().map(|base| base.version.as_str()));
        match writer.publish(&manifest, expected).await {
            Err(IndexerError::LatestMoved { found, .. }) if rebase < REBASES => {
                tracing::info!(
                    "{}: LATEST moved to {found} meanwhile; the change goes on top of it",
                    writer.uri()
                );
                base = writer.latest_manifest().await?;
                if let Some(base) = &base {
                    same_model(writer, base, &model)?;
                }
                version = new_version_id();
            }
            published => return published.map(|()| manifest),
        }
    }
    unreachable!("the last rebase returns")
}

/// An error unless `base` was embedded by `model`.
fn same_model(writer: &SnapshotWriter, base: &Manifest, model: &crate::embed::ModelInfo) -> Result<()> {
    if base.model.sha256 == model.sha256 {
        return Ok(());
    }
    Err(IndexerError::Config(format!(
        "{} was embedded with model {} (sha256 {}); this server runs {} (sha256 {})",
        writer.uri(),
        base.model.name,
        base.model.sha256,
        model.name,
        model.sha256
    )))
}
