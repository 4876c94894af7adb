//! A run's documents cut into segments as they arrive: once the documents waiting hold
//! `segment_chunks` chunks, they are built and written as a segment (a task of its own, not
//! yet published) while the run embeds the next ones. A run then holds about two segments'
//! documents at most, however large its corpus or its delta; fewer documents than one
//! segment give one segment.
//!
//! Told which documents' places are settled ([`FileCompletion`]), it hands their rows to the
//! segment's row files as they come ([`RowStream`]), so that a cut leaves only the rest of
//! the rows to write.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::file_completion::{FileCompletion, Settled};
use super::publish::{NewSegment, SegmentBuilder, Sizing};
use super::row_stream::{RowStream, StoppedStream};
use super::segment::BuiltAhead;
use super::stages::StageContext;
use super::types::{Arrival, EmbeddedDoc};
use crate::error::{IndexerError, Result};
use crate::snapshot::{FileTable, RowFilesWriting, ROW_GROUP_ROWS};

pub(super) struct Segmenter {
    builder: SegmentBuilder,
    /// Names the run's segments.
    run_id: String,
    segment_chunks: usize,
    /// How the first segment is sized (the later ones are sized to their rows).
    first_sizing: Sizing,
    /// The next segment's documents not yet handed to its row files, by URI.
    pending: BTreeMap<String, EmbeddedDoc>,
    /// The next segment's chunks (in `pending` and in `stream`).
    pending_chunks: usize,
    /// Which documents' places are settled; none: the rows are written once the segment is cut.
    completion: Option<Arc<FileCompletion>>,
    /// The next segment's row files, holding its settled documents.
    stream: Option<RowStream>,
    /// The URI of the last document handed to `stream`.
    streamed_last: Option<String>,
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
    /// Segments named after `run_id`, cut at `segment_chunks` chunks; the first one sized by
    /// `first_sizing`. With `completion`, the rows of documents whose places are settled are
    /// written while the run goes on.
    pub fn new(
        builder: SegmentBuilder,
        run_id: String,
        segment_chunks: usize,
        first_sizing: Sizing,
        completion: Option<Arc<FileCompletion>>,
    ) -> Self {
        Self {
            builder,
            run_id,
            segment_chunks: segment_chunks.max(1),
            first_sizing,
            pending: BTreeMap::new(),
            pending_chunks: 0,
            completion,
            stream: None,
            streamed_last: None,
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
    /// segment as soon as enough chunks wait, after the segment being built is written; then
    /// hands the settled documents' rows to the next segment's row files.
    pub async fn push(&mut self, documents: Vec<EmbeddedDoc>, context: &StageContext) -> Result<()> {
        if let Some(completion) = &self.completion {
            completion.arrived(documents.iter().map(|d| d.record.uri.as_str()));
        }
        for document in documents {
            if self.pending.contains_key(&document.record.uri) || !self.seen.insert(document.record.doc_id.clone()) {
                context.fail(
                    &document.record.uri,
                    "parse",
                    "duplicate document: an earlier document has the same URI".into(),
                );
                continue;
            }
            if self
                .streamed_last
                .as_ref()
                .is_some_and(|last| document.record.uri <= *last)
            {
                self.write_rows_at_cut(&document.record.uri).await?;
            }
            self.live
                .add_document(&document.record.uri, document.chunks.len() as u64, document.tokens());
            self.pending_chunks += document.chunks.len();
            self.pending.insert(document.record.uri.clone(), document);
            if self.pending_chunks >= self.segment_chunks {
                self.cut().await?;
            }
        }
        self.stream_settled()
    }

    /// Hands the documents waiting whose places are settled to the next segment's row files.
    fn stream_settled(&mut self) -> Result<()> {
        let Some(completion) = &self.completion else {
            return Ok(());
        };
        let settled = match completion.settled() {
            Settled::All => std::mem::take(&mut self.pending),
            Settled::Below(uri) => {
                let rest = self.pending.split_off(&uri);
                std::mem::replace(&mut self.pending, rest)
            }
        };
        if settled.is_empty() {
            return Ok(());
        }
        if self.stream.is_none() {
            let (segment_id, _) = self.segment_name(self.started + 1);
            let dim = self.builder.embedder.info().dim;
            let files = self.builder.writer.start_row_files(&segment_id, dim)?;
            self.stream = Some(RowStream::new(files, dim, self.segment_chunks));
        }
        if let Some(stream) = &mut self.stream {
            self.streamed_last = settled.keys().next_back().cloned();
            stream.push(settled.into_values())?;
        }
        Ok(())
    }

    /// A document (`uri`) arrived that sorts before (or with) rows already handed to the row files:
    /// its place was taken for settled (a document whose URI sorts before its own file's,
    /// say). The rows handed over go back to wait, and this run's segments write their rows
    /// at the cut.
    async fn write_rows_at_cut(&mut self, uri: &str) -> Result<()> {
        tracing::warn!(
            "{uri} arrived after rows sorting after it were written: this run writes its segments' rows once each is cut"
        );
        self.completion = None;
        self.streamed_last = None;
        if let Some(stream) = self.stream.take() {
            let stopped = stop(stream).await?;
            let mut documents = stopped.documents;
            stopped
                .vectors
                .hand_back(&mut documents, self.builder.embedder.info().dim)?;
            for document in documents {
                self.pending.insert(document.record.uri.clone(), document);
            }
        }
        Ok(())
    }

    /// Writes what waits as the last segment; returns every segment written, in order, with
    /// what they hold.
    pub async fn finish(mut self) -> Result<CutSegments> {
        if !self.pending.is_empty() || self.stream.is_some() {
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

    /// The `n`th segment's id and sizing: the first is `seg-<run id>` (sized by
    /// `first_sizing`); later ones `seg-<run id>-<n>`, sized to their rows.
    fn segment_name(&self, n: usize) -> (String, Sizing) {
        match n {
            1 => (format!("seg-{}", self.run_id), self.first_sizing),
            n => (format!("seg-{}-{n}", self.run_id), Sizing::Segment),
        }
    }

    /// Starts building the next segment's documents (those handed to its row files, then
    /// those waiting), once the one being built is written.
    async fn cut(&mut self) -> Result<()> {
        self.wait().await?;
        self.streamed_last = None;
        let (mut documents, ahead, keyword_rows) = match self.stream.take() {
            Some(stream) => {
                let stopped = stop(stream).await?;
                let ahead = BuiltAhead {
                    row_files: stopped.files,
                    keyword_parts: stopped.keyword_parts,
                    vectors: stopped.vectors,
                };
                (stopped.documents, Some(ahead), stopped.keyword_rows)
            }
            None => (Vec::new(), None, 0),
        };
        documents.extend(std::mem::take(&mut self.pending).into_values());
        let written = |groups: fn(&RowFilesWriting) -> usize| {
            ahead
                .as_ref()
                .map_or(0, |ahead| groups(&ahead.row_files) * ROW_GROUP_ROWS)
        };
        let (rows_written, documents_written) = (
            written(RowFilesWriting::groups_appended),
            written(RowFilesWriting::document_groups_appended),
        );
        self.started += 1;
        let (segment_id, sizing) = self.segment_name(self.started);
        tracing::info!(
            "{segment_id}: building from {} documents; {rows_written} of its {} rows and {documents_written} of its documents written and {keyword_rows} rows taken into keyword parts while the run embedded",
            documents.len(),
            self.pending_chunks
        );
        self.pending_chunks = 0;
        let builder = self.builder.clone();
        self.building = Some(tokio::spawn(async move {
            builder.write(documents, segment_id, sizing, ahead).await
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

/// `stream` stopped, off the async runtime (it waits for the row groups being encoded).
async fn stop(stream: RowStream) -> Result<StoppedStream> {
    tokio::task::spawn_blocking(move || stream.stop())
        .await
        .map_err(|e| IndexerError::snapshot("chunks.parquet", format!("row files task: {e}")))?
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
