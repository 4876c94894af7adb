//! A run's documents cut into segments as they arrive: once the documents waiting hold
//! `segment_chunks` chunks, they are built and written as a segment (a task of its own, not
//! yet published) while the run embeds the next ones. A run then holds about two segments'
//! documents at most, however large its corpus or its delta; fewer documents than one
//! segment give one segment.

use std::collections::HashSet;

use super::publish::{NewSegment, SegmentBuilder, Sizing};
use super::stages::StageContext;
use super::types::{Arrival, EmbeddedDoc};
use crate::error::{IndexerError, Result};
use crate::snapshot::FileTable;

pub(super) struct Segmenter {
    builder: SegmentBuilder,
    /// Names the run's segments.
    run_id: String,
    segment_chunks: usize,
    /// How the first segment is sized (the later ones are sized to their rows).
    first_sizing: Sizing,
    pending: Vec<EmbeddedDoc>,
    pending_chunks: usize,
    /// The segment being built, if any.
    building: Option<tokio::task::JoinHandle<Result<NewSegment>>>,
    started: usize,
    written: Vec<NewSegment>,
    /// Doc ids taken so far: a later document with one of them fails as a duplicate.
    seen: HashSet<String>,
    /// Those of them a delta leaves where they are (not written).
    unchanged: HashSet<String>,
    /// What the version serves of each file.
    live: FileTable,
}

impl Segmenter {
    /// Segments named after `run_id`, cut at `segment_chunks` chunks; the first one sized by `first_sizing`.
    pub fn new(builder: SegmentBuilder, run_id: String, segment_chunks: usize, first_sizing: Sizing) -> Self {
        Self {
            builder,
            run_id,
            segment_chunks: segment_chunks.max(1),
            first_sizing,
            pending: Vec::new(),
            pending_chunks: 0,
            building: None,
            started: 0,
            written: Vec::new(),
            seen: HashSet::new(),
            unchanged: HashSet::new(),
            live: FileTable::default(),
        }
    }

    /// Doc ids taken so far.
    pub fn seen(&self) -> &HashSet<String> {
        &self.seen
    }

    /// Documents taken so far (unchanged ones included).
    pub fn documents(&self) -> usize {
        self.seen.len()
    }

    /// Takes what arrived: documents to write, or the ids of unchanged ones.
    pub async fn take(&mut self, arrival: Arrival, context: &StageContext) -> Result<()> {
        match arrival {
            Arrival::Documents(documents) => self.push(documents, context).await,
            Arrival::Unchanged(ids) => {
                for id in ids {
                    self.seen.insert(id.clone());
                    self.unchanged.insert(id);
                }
                Ok(())
            }
        }
    }

    /// Takes `documents` (one whose doc id was taken before fails as a duplicate); cuts a
    /// segment as soon as enough chunks wait, after the segment being built is written.
    pub async fn push(&mut self, documents: Vec<EmbeddedDoc>, context: &StageContext) -> Result<()> {
        for document in documents {
            if !self.seen.insert(document.record.doc_id.clone()) {
                context.fail(
                    &document.record.uri,
                    "parse",
                    "duplicate document: an earlier document has the same URI".into(),
                );
                continue;
            }
            self.live
                .add_document(&document.record.uri, document.chunks.len() as u64, document.tokens());
            self.pending_chunks += document.chunks.len();
            self.pending.push(document);
            if self.pending_chunks >= self.segment_chunks {
                self.cut().await?;
            }
        }
        Ok(())
    }

    /// Writes what waits as the last segment; returns every segment written, in order, with
    /// what they hold.
    pub async fn finish(mut self) -> Result<CutSegments> {
        if !self.pending.is_empty() {
            self.cut().await?;
        }
        self.wait().await?;
        let mut doc_ids = std::mem::take(&mut self.seen);
        doc_ids.retain(|id| !self.unchanged.contains(id));
        Ok(CutSegments {
            segments: std::mem::take(&mut self.written),
            files: std::mem::take(&mut self.live),
            doc_ids,
        })
    }

    /// Starts building the documents waiting as the next segment, once the one being built is
    /// written. The first segment is `seg-<run id>` (sized by `first_sizing`); later ones
    /// `seg-<run id>-<n>`, sized to their rows.
    async fn cut(&mut self) -> Result<()> {
        self.wait().await?;
        let documents = std::mem::take(&mut self.pending);
        self.pending_chunks = 0;
        self.started += 1;
        let (segment_id, sizing) = match self.started {
            1 => (format!("seg-{}", self.run_id), self.first_sizing),
            n => (format!("seg-{}-{n}", self.run_id), Sizing::Segment),
        };
        tracing::info!("{segment_id}: building from {} documents", documents.len());
        let builder = self.builder.clone();
        self.building = Some(tokio::spawn(async move {
            builder.write(documents, segment_id, sizing).await
        }));
        Ok(())
    }

    /// Waits for the segment being built, if any.
    async fn wait(&mut self) -> Result<()> {
        if let Some(task) = self.building.take() {
            let segment = task.await.map_err(|e| IndexerError::VectorIndex {
                stage: "build",
                reason: format!("segment task: {e}"),
            })??;
            self.written.push(segment);
        }
        Ok(())
    }
}

/// The segments a run wrote, not yet published.
pub(super) struct CutSegments {
    /// In the order they were cut.
    pub segments: Vec<NewSegment>,
    /// What they hold of each file.
    pub files: FileTable,
    /// The ids of their documents (not those taken as unchanged).
    pub doc_ids: HashSet<String>,
}

impl Drop for Segmenter {
    /// A run that fails stops building the segment in hand (its files were never published).
    fn drop(&mut self) {
        if let Some(task) = &self.building {
            task.abort();
        }
    }
}
