//! The two worker stages of a run: parse + chunk (rayon over small groups of files) and
//! embed (token-budget batches inside the embedder). The model's input ids come from the
//! chunker, which tokenized each chunk while cutting it; the few it could not hand over are
//! tokenized one group ahead of the model.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;

use super::fetch_stage::{Fetched, FetchedFile};
use super::file_completion::FileCompletion;
use super::progress::Counters;
use super::report::{Failure, Warning};
use super::reuse::StoredEmbeddings;
use super::types::{Arrival, ChunkedDoc, EmbeddedDoc};
use crate::chunk::{Chunk, Chunker, DocumentChunks, TokenChunker};
use crate::embed::{Embedder, Embeddings};
use crate::error::Result;
use crate::index::analysis::{detect, Detected};
use crate::parse::{
    detect_format, leave_out_encoded_data, stated_contents_size, Document, ParseError, Parser, RecordStream, StreamKind,
};
use crate::snapshot::DocumentRecord;
use crate::source::{RawDocument, StreamedFile};
use crate::summary::{sentences_of, DocumentLayers, DocumentSentences, Sentence, Summarizer};

/// How files become chunked documents: shared by batch runs and online ingestion.
pub struct ChunkSettings {
    pub parser: Arc<dyn Parser>,
    pub chunker: Arc<TokenChunker>,
    /// Tags added to every document.
    pub tags: Vec<String>,
    pub max_document_tokens: usize,
    pub ingested_at: chrono::DateTime<chrono::Utc>,
    /// Makes each document's layers (L0, L1) from the sentences the chunker keeps
    /// ([`add_layers`]).
    pub summarizer: Arc<dyn Summarizer>,
}

impl ChunkSettings {
    /// What shapes a document record besides the file itself: this indexer build (its
    /// version and its parsers' sources, digested by build.rs), the tags added, the size
    /// limit and the summarizer. Recorded in the manifest; a later run skips unchanged files
    /// only under the same signature, so a build that reads files differently reads them again.
    pub fn signature(&self) -> String {
        let settings = format!(
            "quarry-indexer {} (parsers {}); tags {:?}; max_document_tokens {}; summaries {}",
            env!("CARGO_PKG_VERSION"),
            env!("QUARRY_PARSERS_DIGEST"),
            self.tags,
            self.max_document_tokens,
            self.summarizer.name()
        );
        crate::snapshot::sha256_hex(settings.as_bytes())[..16].to_string()
    }
}

/// Shared, read-only state of the worker stages, plus the failure list.
pub(super) struct StageContext {
    pub settings: ChunkSettings,
    pub counters: Arc<Counters>,
    pub failures: Arc<Mutex<Vec<Failure>>>,
    /// What documents that were indexed were read without ([`ChunkedDoc::warnings`]).
    pub warnings: Arc<Mutex<Vec<Warning>>>,
}

impl StageContext {
    pub fn fail(&self, uri: &str, stage: &'static str, reason: String) {
        self.record(Failure::new(uri, stage, reason));
    }

    /// Counts and keeps `failure` (its detail with it).
    pub fn record(&self, failure: Failure) {
        tracing::warn!(
            "{}: {} failed: {}",
            failure.uri,
            failure.stage,
            failure.reason_with_detail()
        );
        self.counters.failed.fetch_add(1, Ordering::Relaxed);
        self.failures.lock().expect("failures lock").push(failure);
    }

    /// Counts, logs and keeps `document`'s warnings for the run report (its record keeps them too).
    pub fn report_warnings(&self, document: &ChunkedDoc) {
        if document.record.warnings.is_empty() {
            return;
        }
        self.counters.warned.fetch_add(1, Ordering::Relaxed);
        log_read_in_part(&document.record);
        let uri = &document.record.uri;
        let mut kept = self.warnings.lock().expect("warnings lock");
        kept.extend(document.record.warnings.iter().map(|warning| Warning {
            uri: uri.clone(),
            warning: warning.clone(),
        }));
    }
}

/// Logs what `record`'s document was read without, a line a warning (a batch run's and an
/// upload's alike).
pub fn log_read_in_part(record: &DocumentRecord) {
    for warning in &record.warnings {
        tracing::warn!("{}: read in part: {warning}", record.uri);
    }
}

fn record_of(document: Document, chunk_count: usize, settings: &ChunkSettings) -> DocumentRecord {
    let mut tags = document.tags;
    for tag in &settings.tags {
        if !tags.contains(tag) {
            tags.push(tag.clone());
        }
    }
    DocumentRecord {
        doc_id: document.doc_id,
        uri: document.uri,
        file_name: document.file_name,
        title: document.title,
        source: document.source,
        tags,
        content_hash: document.content_hash,
        size: document.size,
        etag: document.etag,
        chunk_count: chunk_count as u32,
        metadata: serde_json::Value::Object(document.metadata).to_string(),
        ingested_at: settings.ingested_at,
        // The texts are made once the document is known to go on (add_layers).
        layers: DocumentLayers {
            made_by: settings.summarizer.name().to_string(),
            ..Default::default()
        },
        warnings: document.warnings,
    }
}

/// Tells `documents`' chunks' languages (where not told yet) and makes their layers from the
/// sentences the chunker kept, each in its first chunk's language: the summarizer is handed
/// them all at once ([`Summarizer::layers_of_all`]).
pub fn add_layers<'a>(documents: impl IntoIterator<Item = &'a mut ChunkedDoc>, summarizer: &dyn Summarizer) {
    let mut documents: Vec<&mut ChunkedDoc> = documents.into_iter().collect();
    documents.par_iter_mut().for_each(|document| {
        if document.languages.len() != document.chunks.len() {
            document.languages = languages_of(&document.chunks);
        }
    });
    let mut summarized: Vec<&mut ChunkedDoc> = documents.into_iter().filter(|d| !d.sentences.is_empty()).collect();
    let sentences: Vec<Vec<Sentence>> = summarized
        .iter_mut()
        .map(|d| std::mem::take(&mut d.sentences))
        .collect();
    let inputs: Vec<DocumentSentences<'_>> = summarized
        .iter()
        .zip(&sentences)
        .map(|(document, sentences)| DocumentSentences {
            sentences,
            language: document.languages.first().and_then(Detected::stem_language),
        })
        .collect();
    let layers = summarizer.layers_of_all(&inputs);
    for (document, layers) in summarized.into_iter().zip(layers) {
        let made_by = match layers.made_by.is_empty() {
            true => std::mem::take(&mut document.record.layers.made_by),
            false => layers.made_by.clone(),
        };
        document.record.layers = DocumentLayers { made_by, ..layers };
    }
}

/// The document's own tokens (before chunk overlap), counted block by block as the chunker
/// counts them (a token longer than [`crate::chunk::MAX_TOKEN_BYTES`] as one per that many
/// bytes), when they may exceed the limit. A token always covers at least one byte of the
/// text (a word piece is a non-empty part of a word; NFD expands a character only into
/// marks, which are stripped, or into at most as many jamo as it has bytes), so text of at
/// most `max_document_tokens` bytes is not tokenized for the count.
fn document_tokens(document: &Document, settings: &ChunkSettings) -> Result<Option<usize>> {
    if document.blocks.iter().map(|b| b.text.len()).sum::<usize>() <= settings.max_document_tokens {
        return Ok(None);
    }
    let tokenizer = settings.chunker.tokenizer();
    document
        .blocks
        .iter()
        .map(|b| crate::chunk::weighed_token_count(tokenizer, &b.text))
        .sum::<Result<usize>>()
        .map(Some)
}

/// Parses and chunks one file: its documents, and every failure with its URI and reason.
/// The documents of a file with many (a JSONL corpus) are chunked in parallel.
pub fn parse_and_chunk(raw: &RawDocument, settings: &ChunkSettings) -> (Vec<ChunkedDoc>, Vec<Failure>) {
    parse_and_chunk_observed(raw, settings, || {})
}

/// [`parse_and_chunk`], calling `on_parsed` between the stages (when the file parsed).
pub fn parse_and_chunk_observed(
    raw: &RawDocument,
    settings: &ChunkSettings,
    on_parsed: impl FnOnce(),
) -> (Vec<ChunkedDoc>, Vec<Failure>) {
    let parsed = match settings.parser.parse(raw) {
        Ok(parsed) => parsed,
        Err(e) => return (Vec::new(), vec![Failure::of(&raw.uri, "parse", &e)]),
    };
    on_parsed();
    chunk_parsed(parsed, settings)
}

/// Chunks a parse's documents in parallel: the chunked documents, and every failure (the
/// parse's failed items first).
fn chunk_parsed(parsed: crate::parse::Parsed, settings: &ChunkSettings) -> (Vec<ChunkedDoc>, Vec<Failure>) {
    let mut failures: Vec<Failure> = parsed
        .failures
        .into_iter()
        .map(|item| failure(&item.uri, "parse", item.reason))
        .collect();
    let chunked: Vec<std::result::Result<ChunkedDoc, Failure>> = parsed
        .documents
        .into_par_iter()
        .map(|document| chunk_document(document, settings))
        .collect();
    let mut out = Vec::with_capacity(chunked.len());
    for result in chunked {
        match result {
            Ok(document) => out.push(document),
            Err(failed) => failures.push(failed),
        }
    }
    (out, failures)
}

/// Each chunk's language.
fn languages_of(chunks: &[Chunk]) -> Vec<Detected> {
    chunks.iter().map(|chunk| detect(&chunk.text)).collect()
}

fn failure(uri: &str, stage: &'static str, reason: String) -> Failure {
    Failure::new(uri, stage, reason)
}

/// Checks one parsed document's size and chunks it.
fn chunk_document(mut document: Document, settings: &ChunkSettings) -> std::result::Result<ChunkedDoc, Failure> {
    if leave_out_encoded_data(&mut document) > 0 && document.blocks.iter().all(|b| b.text.trim().is_empty()) {
        let only_data = ParseError::NoTextIn("only base64-encoded data (an embedded file or picture)".into());
        return Err(Failure::of(&document.uri, "chunk", &only_data));
    }
    match document_tokens(&document, settings) {
        Ok(Some(tokens)) if tokens > settings.max_document_tokens => {
            let too_large = ParseError::TooLarge {
                tokens,
                limit: settings.max_document_tokens,
            };
            return Err(Failure::of(&document.uri, "chunk", &too_large));
        }
        Ok(_) => {}
        Err(e) => return Err(failure(&document.uri, "chunk", e.to_string())),
    }
    let sentences = match settings.summarizer.reads_sentences() {
        true => sentences_of(&document),
        false => Vec::new(),
    };
    match settings.chunker.chunk_for_model(&document) {
        Ok(DocumentChunks { chunks, .. }) if chunks.is_empty() => {
            Err(failure(&document.uri, "chunk", ParseError::NoText.to_string()))
        }
        Ok(DocumentChunks { chunks, model_ids }) => Ok(ChunkedDoc {
            record: record_of(document, chunks.len(), settings),
            languages: Vec::new(),
            chunks,
            model_ids,
            tokenized_by: settings.chunker.tokenizer().clone(),
            stored_vectors: Vec::new(),
            sentences,
        }),
        Err(e) => Err(failure(&document.uri, "chunk", e.to_string())),
    }
}

/// KiB of fetched files waiting to be parsed at most (a larger file takes the whole budget).
pub(super) const FETCHED_BUDGET_KIB: usize = 128 << 10;
/// Files the parse stage parses together (in parallel) at most...
const PARSE_GROUP_FILES: usize = 32;
/// ...and bytes: their documents and chunks are in memory at once, so a group of large
/// JSONL files is cut short (its first file always goes in)...
const PARSE_GROUP_BYTES: usize = 16 << 20;
/// ...and bytes once read: an archive or a compressed file counts the size it states it
/// holds (a megabyte of gzipped JSONL may hold a gigabyte of records: 32 of them in one
/// group held all of theirs at once). Larger than the files' own budget: eight 40 MiB
/// gzipped shards parsed one to a group took 1.5 times the parse stage's time.
const PARSE_GROUP_READ_BYTES: u64 = 1 << 30;

/// The bytes `raw` holds once read, as far as it states.
fn read_bytes_of(raw: &RawDocument) -> u64 {
    match detect_format(&raw.relative_path, &raw.bytes) {
        Ok(format) => stated_contents_size(format, &raw.bytes),
        Err(_) => raw.bytes.len() as u64,
    }
}

/// Chunks per message to the embed stage at most...
const MESSAGE_CHUNKS: usize = 1024;
/// ...and messages waiting for it: together they bound the parsed chunks waiting for the
/// model (64k, several seconds of GPU embedding), where whole groups used to pile up.
pub(super) const WAITING_MESSAGES: usize = 64;

/// `documents` cut into messages of whole documents and at most `most` chunks (a larger
/// document alone), in order.
fn messages<T>(documents: Vec<T>, chunks_of: impl Fn(&T) -> usize, most: usize) -> impl Iterator<Item = Vec<T>> {
    let mut documents = documents.into_iter().peekable();
    std::iter::from_fn(move || {
        let first = documents.next()?;
        let mut chunks = chunks_of(&first);
        let mut message = vec![first];
        while let Some(next) = documents.next_if(|d| chunks + chunks_of(d) <= most) {
            chunks += chunks_of(&next);
            message.push(next);
        }
        Some(message)
    })
}

/// Documents the parse stage found stored embeddings for (all of their chunks).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct ReusedCount {
    pub documents: usize,
    pub chunks: usize,
    pub tokens: u64,
}

/// Where the parse stage sends its documents: those left to embed to the embed stage, those
/// whose embeddings `stored` holds straight on to the run (the embed stage's destination).
pub(super) struct ParseOutputs {
    pub to_embed: crossbeam_channel::Sender<Vec<ChunkedDoc>>,
    pub reused: tokio::sync::mpsc::Sender<Arrival>,
    /// A delta leaves the documents that did not change at all where they are: only their
    /// ids are sent.
    pub drop_unchanged: bool,
    /// Hears each file the stage is done with and the documents it sends on.
    pub completion: Option<Arc<FileCompletion>>,
}

/// Receives raw files, parses and chunks them in parallel, sends chunked documents on;
/// documents whose embeddings `stored` holds skip the embed stage (as they are found, so a
/// run that reuses most of its corpus does not hold it). A file read as a stream is parsed
/// alone, a batch of its records at a time. Returns the seconds spent working, what was
/// reused, and `stored` (which knows which documents did not change at all).
pub(super) fn parse_stage(
    mut raw_rx: tokio::sync::mpsc::Receiver<FetchedFile>,
    outputs: ParseOutputs,
    context: &StageContext,
    mut stored: Option<StoredEmbeddings>,
) -> (f64, ReusedCount, Option<StoredEmbeddings>) {
    let mut busy = 0.0;
    let mut passing = PassOn {
        outputs: &outputs,
        context,
        stored: &mut stored,
        reused: ReusedCount::default(),
    };
    // A stream taken while a group was gathered, parsed after it.
    let mut held: Option<FetchedFile> = None;
    // Each file comes with its share of the fetched-file budget, given back with the file.
    while let Some((fetched, permit)) = held.take().or_else(|| raw_rx.blocking_recv()) {
        let first = match fetched {
            Fetched::Stream(stream, kind) => {
                let Some(seconds) = parse_stream(stream, kind, &mut passing) else {
                    break;
                };
                busy += seconds;
                continue;
            }
            Fetched::File(raw) => (raw, permit),
        };
        let mut group_bytes = first.0.bytes.len();
        let mut group_read_bytes = read_bytes_of(&first.0);
        let mut group = vec![first];
        while group.len() < PARSE_GROUP_FILES
            && group_bytes < PARSE_GROUP_BYTES
            && group_read_bytes < PARSE_GROUP_READ_BYTES
        {
            match raw_rx.try_recv() {
                Ok((Fetched::File(raw), permit)) => {
                    group_bytes += raw.bytes.len();
                    group_read_bytes += read_bytes_of(&raw);
                    group.push((raw, permit));
                }
                Ok(stream) => {
                    held = Some(stream);
                    break;
                }
                Err(_) => break,
            }
        }
        let started = Instant::now();
        let results: Vec<(Vec<ChunkedDoc>, Vec<Failure>)> = group
            .par_iter()
            .map(|(raw, _)| parse_and_chunk(raw, &context.settings))
            .collect();
        let mut files_done = Vec::with_capacity(group.len());
        let mut documents = Vec::new();
        for ((raw, _), (docs, failures)) in group.iter().zip(results) {
            files_done.push((raw.uri.clone(), !failures.is_empty()));
            documents.extend(docs);
            failures.into_iter().for_each(|f| context.record(f));
        }
        let passed = passing.prepare(documents, &files_done);
        busy += started.elapsed().as_secs_f64();
        context.counters.parsed.fetch_add(group.len() as u64, Ordering::Relaxed);
        drop(group);
        if !passing.send(passed) {
            break;
        }
    }
    (busy, passing.reused, stored)
}

/// Batches of a stream read ahead of the one being chunked (their memory: a batch each).
const READ_AHEAD_BATCHES: usize = 1;

/// Parses and chunks a file read as a stream, a batch of its records at a time, the next
/// batch read while one is chunked; the file is reported done after its last batch. The
/// seconds spent working (the waits for the stages after it left out), or None once the
/// stages after it stopped listening.
fn parse_stream(stream: StreamedFile, kind: StreamKind, passing: &mut PassOn) -> Option<f64> {
    let context = passing.context;
    let uri = stream.file.uri.clone();
    let started = Instant::now();
    let mut held_back = std::time::Duration::ZERO;
    let mut failed = false;
    let mut fail = |failure: Failure| {
        failed = true;
        context.record(failure);
    };
    match RecordStream::open(stream, kind, &context.settings.parser) {
        Err(e) => fail(Failure::of(&uri, "parse", &e)),
        Ok(batches) => {
            let listening = std::thread::scope(|scope| {
                // The next batch is read (and inflated, and its records parsed) while this
                // one is chunked: reading is one thread's work, which would otherwise leave
                // the other cores idle between batches.
                let (read_tx, read_rx) = std::sync::mpsc::sync_channel(READ_AHEAD_BATCHES);
                scope.spawn(move || {
                    for batch in batches {
                        if read_tx.send(batch).is_err() {
                            break;
                        }
                    }
                });
                for batch in read_rx {
                    let (documents, failures) = match batch {
                        Ok(parsed) => chunk_parsed(parsed, &context.settings),
                        Err(e) => (Vec::new(), vec![Failure::of(&uri, "parse", &e)]),
                    };
                    failures.into_iter().for_each(&mut fail);
                    let passed = passing.prepare(documents, &[]);
                    let waiting = Instant::now();
                    if !passing.send(passed) {
                        return false;
                    }
                    held_back += waiting.elapsed();
                }
                true
            });
            if !listening {
                return None;
            }
        }
    }
    let passed = passing.prepare(Vec::new(), &[(uri, failed)]);
    context.counters.parsed.fetch_add(1, Ordering::Relaxed);
    passing
        .send(passed)
        .then(|| started.elapsed().saturating_sub(held_back).as_secs_f64())
}

/// What the parse stage does with a group's (or a streamed batch's) chunked documents: their
/// warnings reported, their layers added, the stored embeddings they can reuse found, the
/// files done with reported, and the documents sent on.
struct PassOn<'a> {
    outputs: &'a ParseOutputs,
    context: &'a StageContext,
    stored: &'a mut Option<StoredEmbeddings>,
    reused: ReusedCount,
}

/// What [`PassOn::prepare`] leaves to send: the unchanged documents' ids and the reused
/// documents (to the run), and the documents to embed.
type Passed = (Option<Arrival>, Vec<EmbeddedDoc>, Vec<ChunkedDoc>);

impl PassOn<'_> {
    /// Prepares `documents` to be sent on and reports `files_done` (URI, whether any of it
    /// failed) with every document sent on; the messages to send come back, for [`Self::send`].
    fn prepare(&mut self, mut documents: Vec<ChunkedDoc>, files_done: &[(String, bool)]) -> Passed {
        let (outputs, context) = (self.outputs, self.context);
        documents.iter().for_each(|d| context.report_warnings(d));
        let chunk_count: usize = documents.iter().map(|d| d.chunks.len()).sum();
        // Languages and layers only for the documents that go on: a delta leaves the ones
        // that did not change where they are, with theirs.
        let summarizer = context.settings.summarizer.as_ref();
        let stays = |d: &ChunkedDoc, stored: &Option<StoredEmbeddings>| {
            outputs.drop_unchanged && stored.as_ref().is_some_and(|s| s.holds_as_is(d))
        };
        let stored_now = &*self.stored;
        add_layers(documents.iter_mut().filter(|d| !stays(d, stored_now)), summarizer);
        let (mut found, mut unchanged) = (Vec::new(), Vec::new());
        if let Some(stored) = self.stored.as_mut() {
            found = stored.reuse(&mut documents);
            for document in &found {
                self.reused.documents += 1;
                self.reused.chunks += document.chunks.len();
                self.reused.tokens += document.tokens();
            }
            context
                .counters
                .embedded
                .fetch_add(found.iter().map(|d| d.chunks.len() as u64).sum(), Ordering::Relaxed);
            if outputs.drop_unchanged {
                let (same, changed): (Vec<EmbeddedDoc>, _) =
                    found.into_iter().partition(|d| stored.is_unchanged(&d.record.doc_id));
                unchanged = same.into_iter().map(|d| d.record.doc_id).collect();
                found = changed;
            }
            // One held as it was whose stored vectors could not be read goes on: its layers now.
            add_layers(&mut documents, summarizer);
        }
        if let Some(completion) = &outputs.completion {
            let sent = found
                .iter()
                .map(|d| &d.record)
                .chain(documents.iter().map(|d| &d.record));
            completion.report(
                files_done.iter().map(|(uri, failed)| (uri.as_str(), *failed)),
                sent.map(|record| record.uri.as_str()),
            );
        }
        context.counters.chunks.fetch_add(chunk_count as u64, Ordering::Relaxed);
        let unchanged = (!unchanged.is_empty()).then_some(Arrival::Unchanged(unchanged));
        (unchanged, found, documents)
    }

    /// Sends what [`Self::prepare`] left: false once the run stopped listening (its error is
    /// the run's). What was reused is sent before the rest is embedded, so a later copy of a
    /// document arrives after it.
    fn send(&self, (unchanged, found, documents): Passed) -> bool {
        let reused_messages = unchanged
            .into_iter()
            .chain(messages(found, |d| d.chunks.len(), MESSAGE_CHUNKS).map(Arrival::Documents));
        if reused_messages
            .into_iter()
            .try_for_each(|message| self.outputs.reused.blocking_send(message).map_err(drop))
            .is_err()
        {
            return false;
        }
        messages(documents, |d| d.chunks.len(), MESSAGE_CHUNKS)
            .try_for_each(|message| self.outputs.to_embed.send(message).map_err(drop))
            .is_ok()
    }
}

/// Embeds chunked documents as they arrive, in groups of at least `group` chunks, and sends
/// each group's documents with their vectors on to `embedded` (stopping quietly once nobody
/// listens: the receiver's error is the run's). Returns the seconds the model spent
/// (tokenization runs on a second thread, one group ahead) and the tokens of the documents sent.
pub(super) fn embed_stage(
    doc_rx: crossbeam_channel::Receiver<Vec<ChunkedDoc>>,
    embedder: &dyn Embedder,
    group: usize,
    context: &StageContext,
    embedded: tokio::sync::mpsc::Sender<Arrival>,
) -> Result<(f64, u64)> {
    let (mut busy, mut tokens) = (0.0, 0);
    let mut listening = true;
    // Each batch counts as it finishes; a group's chunks that took stored vectors, at its end.
    let batch_done = |rows: usize| {
        context.counters.embedded.fetch_add(rows as u64, Ordering::Relaxed);
    };
    embed_groups(
        grouped(doc_rx.into_iter(), group),
        embedder,
        &batch_done,
        |documents, embedded_rows, seconds| {
            let chunks: usize = documents.iter().map(|d| d.chunks.len()).sum();
            context
                .counters
                .embedded
                .fetch_add((chunks - embedded_rows) as u64, Ordering::Relaxed);
            busy += seconds;
            tokens += documents.iter().map(EmbeddedDoc::tokens).sum::<u64>();
            listening = listening && embedded.blocking_send(Arrival::Documents(documents)).is_ok();
            listening
        },
    )?;
    Ok((busy, tokens))
}

/// Embeds the chunks of `documents` in groups of about `group` chunks (whole documents);
/// `progress` hears how many chunks are done as each batch of the model finishes (and, at
/// the end of a group, its chunks that had stored vectors). Returns the documents with their
/// vectors, in order.
pub fn embed_documents(
    documents: Vec<ChunkedDoc>,
    embedder: &dyn Embedder,
    group: usize,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Vec<EmbeddedDoc>> {
    let mut done = Vec::with_capacity(documents.len());
    embed_groups(
        grouped(documents.into_iter().map(|d| vec![d]), group),
        embedder,
        progress,
        |embedded, embedded_rows, _| {
            let reused = embedded.iter().map(|d| d.chunks.len()).sum::<usize>() - embedded_rows;
            if reused > 0 {
                progress(reused);
            }
            done.extend(embedded);
            true
        },
    )?;
    Ok(done)
}

/// Chunks a run's embedding group holds by default, at least.
pub const DEFAULT_EMBED_GROUP: usize = 2_048;
/// Full batches (at the model's window) a run's embedding group holds by default, at least.
const GROUP_BATCHES: usize = 8;

/// Chunks a run embeds a group at a time by default: [`DEFAULT_EMBED_GROUP`], or enough
/// for [`GROUP_BATCHES`] batches of `embedder`'s at its window where that is more (a GPU's
/// budget of 349,525 tokens: 8 × 1,365 = 10,920 chunks of 256). A group is sorted by length and cut
/// into batches that end where the lengths fall by a fifth; in a small group the shorter
/// lengths' batches come out small. For 100,000 chunks of 36 to 256 tokens in an even spread
/// (as gen-corpus's) at a GPU's budget, groups of 2,048 make 441 batches padded by 10.9%,
/// groups of 10,920 make 99 padded by 8.8% (the test below). On an H200 a 1M-document run's
/// embed stage ran at 9.4 M tokens/s in groups of 2,048 against 12.3 M for full batches
/// (bench/RESULTS.md, 2026-11-28); these groups are not yet timed on a GPU.
pub fn embed_group_for(embedder: &dyn Embedder) -> usize {
    let window = embedder.info().max_tokens.max(1);
    let full_batches = embedder
        .batch_tokens()
        .map_or(0, |tokens| tokens / window * GROUP_BATCHES);
    DEFAULT_EMBED_GROUP.max(full_batches)
}

/// Gathers arriving lists of documents into groups of at least `group` chunks (the last
/// group takes what is left).
fn grouped(arrivals: impl Iterator<Item = Vec<ChunkedDoc>>, group: usize) -> impl Iterator<Item = Vec<ChunkedDoc>> {
    let mut arrivals = arrivals.fuse();
    let mut pending: Vec<ChunkedDoc> = Vec::new();
    let mut pending_chunks = 0;
    std::iter::from_fn(move || {
        for documents in arrivals.by_ref() {
            pending_chunks += documents.iter().map(ChunkedDoc::chunks_to_embed).sum::<usize>();
            pending.extend(documents);
            if pending_chunks >= group.max(1) {
                pending_chunks = 0;
                return Some(std::mem::take(&mut pending));
            }
        }
        (!pending.is_empty()).then(|| std::mem::take(&mut pending))
    })
}

/// Embeds each group of documents: a second thread gathers the next group's model ids
/// (tokenizing the chunks that came without) while the model embeds the current one, and the
/// groups go to the model as one stream of calls ([`Embedder::embed_token_calls`]: on a GPU a
/// batch of the next group is queued before the last of the current one is read back).
/// `batch_done` hears how many chunks each of the model's batches embedded, as they finish;
/// `on_group` gets each group's documents with their vectors, in order, how many of their
/// chunks the model embedded (the others had stored vectors) and the seconds the model side
/// spent on it (not counting its waits for the next group's ids), and says whether to go on.
fn embed_groups(
    groups: impl Iterator<Item = Vec<ChunkedDoc>> + Send,
    embedder: &dyn Embedder,
    batch_done: &(dyn Fn(usize) + Sync),
    mut on_group: impl FnMut(Vec<EmbeddedDoc>, usize, f64) -> bool,
) -> Result<()> {
    let dim = embedder.info().dim;
    std::thread::scope(|scope| {
        let (tokenized_tx, tokenized_rx) = crossbeam_channel::bounded::<Result<(Vec<ChunkedDoc>, Vec<Vec<u32>>)>>(1);
        scope.spawn(move || {
            for mut documents in groups {
                let ids = model_input_ids(&mut documents, embedder);
                if tokenized_tx.send(ids.map(|ids| (documents, ids))).is_err() {
                    break; // the model side stopped
                }
            }
        });
        // The groups whose ids went to the model and whose vectors have not come back, in
        // order, with how many chunks it embeds of each; and the seconds spent waiting for ids.
        let sent: RefCell<VecDeque<(Vec<ChunkedDoc>, usize)>> = RefCell::new(VecDeque::new());
        let waited = Cell::new(0.0f64);
        let mut calls = std::iter::from_fn(|| {
            let asked = Instant::now();
            let tokenized = tokenized_rx.recv().ok();
            waited.set(waited.get() + asked.elapsed().as_secs_f64());
            Some(tokenized?.map(|(documents, ids)| {
                sent.borrow_mut().push_back((documents, ids.len()));
                ids
            }))
        });
        let (mut since, mut waited_before) = (Instant::now(), 0.0);
        let mut sink = |embeddings: Embeddings| {
            let (documents, embedded) = sent
                .borrow_mut()
                .pop_front()
                .expect("the model hands back one result for each group it took");
            let busy = since.elapsed().as_secs_f64() - (waited.get() - waited_before);
            let go_on = on_group(
                attach_vectors(documents, &embeddings.data, dim),
                embedded,
                busy.max(0.0),
            );
            (since, waited_before) = (Instant::now(), waited.get());
            go_on
        };
        embedder.embed_token_calls(&mut calls, batch_done, &mut sink)
    })
}

/// The model's input ids of every chunk of `documents` to embed (those without a stored
/// vector), in order: those the chunker measured (moved out of the documents) where its
/// tokenizer is the embedder's, the rest tokenized now.
fn model_input_ids(documents: &mut [ChunkedDoc], embedder: &dyn Embedder) -> Result<Vec<Vec<u32>>> {
    let mut ids: Vec<Option<Vec<u32>>> = Vec::with_capacity(documents.iter().map(ChunkedDoc::chunks_to_embed).sum());
    for document in documents.iter_mut() {
        let mut measured = std::mem::take(&mut document.model_ids);
        if !Arc::ptr_eq(&document.tokenized_by, embedder.tokenizer()) || measured.len() != document.chunks.len() {
            measured = vec![None; document.chunks.len()];
        }
        ids.extend(
            measured
                .into_iter()
                .enumerate()
                .filter(|(index, _)| !document.has_stored_vector(*index))
                .map(|(_, ids)| ids),
        );
    }
    let to_embed = documents.iter().flat_map(|d| {
        d.chunks
            .iter()
            .enumerate()
            .filter(|(index, _)| !d.has_stored_vector(*index))
            .map(|(_, chunk)| chunk)
    });
    let texts: Vec<&str> = to_embed
        .zip(&ids)
        .filter(|(_, ids)| ids.is_none())
        .map(|(chunk, _)| chunk.text.as_str())
        .collect();
    let mut tokenized = if texts.is_empty() {
        Vec::new()
    } else {
        embedder.tokenize(&texts)?
    }
    .into_iter();
    Ok(ids
        .into_iter()
        .map(|ids| {
            ids.or_else(|| tokenized.next())
                .expect("one tokenization per chunk without ids")
        })
        .collect())
}

/// Hands each document its vectors, in chunk order: its stored ones, and the next rows of
/// `data` (what the model embedded) for the others.
fn attach_vectors(documents: Vec<ChunkedDoc>, data: &[f32], dim: usize) -> Vec<EmbeddedDoc> {
    let mut embedded = data.chunks_exact(dim.max(1));
    documents
        .into_iter()
        .map(
            |ChunkedDoc {
                 record,
                 chunks,
                 stored_vectors,
                 languages,
                 ..
             }| {
                let mut vectors = Vec::with_capacity(chunks.len() * dim);
                for index in 0..chunks.len() {
                    match stored_vectors.get(index).and_then(Option::as_ref) {
                        Some(stored) => vectors.extend_from_slice(stored),
                        None => vectors.extend_from_slice(
                            embedded
                                .next()
                                .expect("one embedded row per chunk without a stored vector"),
                        ),
                    }
                }
                EmbeddedDoc {
                    record,
                    chunks,
                    vectors,
                    languages,
                }
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GPU's token budget for a batch (as the H200 and H100 size theirs).
    const GPU_BUDGET: usize = 349_525;

    /// Batches, real tokens and padded tokens of `lengths` cut into groups of `group`, each
    /// planned as the embed stage plans them (a GPU's token budget).
    fn planned(lengths: &[usize], group: usize) -> (usize, usize, usize) {
        let (mut batches, mut real, mut padded) = (0, 0, 0);
        for part in lengths.chunks(group) {
            for batch in
                crate::embed::plan_batches(part, crate::embed::BatchPolicy::TokenBudget { max_tokens: GPU_BUDGET })
            {
                let longest = batch.iter().map(|&i| part[i]).max().unwrap_or(0);
                batches += 1;
                real += batch.iter().map(|&i| part[i]).sum::<usize>();
                padded += longest * batch.len();
            }
        }
        (batches, real, padded)
    }

    #[test]
    fn groups_of_eight_full_batches_make_fewer_fuller_batches_than_groups_of_2048() {
        // 100,000 chunks of 36 to 256 tokens in an even spread (as gen-corpus's), in a mixed
        // order.
        let lengths: Vec<usize> = (0..100_000usize).map(|i| 36 + (i * 7_919) % 221).collect();
        let (small, real, small_padded) = planned(&lengths, DEFAULT_EMBED_GROUP);
        let (large, _, large_padded) = planned(&lengths, GROUP_BATCHES * (GPU_BUDGET / 256));
        println!(
            "groups of {DEFAULT_EMBED_GROUP}: {small} batches, padded {:.3}x; of {}: {large} batches, padded {:.3}x",
            small_padded as f64 / real as f64,
            GROUP_BATCHES * (GPU_BUDGET / 256),
            large_padded as f64 / real as f64
        );
        assert!(large * 3 < small, "{large} batches against {small}");
        assert!(large_padded <= small_padded);
    }

    #[test]
    fn messages_keep_documents_whole_in_order_and_under_the_bound() {
        // Documents given by their chunk counts.
        let sizes = vec![1, 1023, 1, 2000, 5, 5, 1024, 0, 3];
        let sent: Vec<Vec<usize>> = messages(sizes.clone(), |&n| n, 1024).collect();
        assert_eq!(
            sent,
            [vec![1, 1023], vec![1], vec![2000], vec![5, 5], vec![1024, 0], vec![3]]
        );
        assert_eq!(sent.concat(), sizes);
        assert_eq!(messages(Vec::<usize>::new(), |&n| n, 1024).count(), 0);
    }
}
