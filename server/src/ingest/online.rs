//! Online ingestion through the indexer pipeline: parse, chunk (with the collection's own
//! chunker settings) and embed files, then publish them as the collection's next version
//! and swap the Searcher to it.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use quarry_indexer::chunk::{Chunker, TokenChunker};
use quarry_indexer::index::IndexOptions;
use quarry_indexer::parse::ParseError;
use quarry_indexer::pipeline::{
    add_layers, compact, embed_documents, log_read_in_part, parse_and_chunk_observed, publish_next_version,
    segments_to_merge, ChunkSettings, ChunkedDoc, EmbeddedDoc, Failure, VersionChange,
};
use quarry_indexer::snapshot::{
    collect_garbage, ChunkerManifest, DocumentRecord, GcOptions, Manifest, SnapshotReader, SnapshotWriter,
};
use quarry_indexer::source::RawDocument;

use super::Ingestion;
use crate::collection::Collection;
use crate::events::StageProgress;
use crate::search::loaded::LoadedSnapshot;

/// Documents larger than this fail with the seed-004 message.
pub const MAX_DOCUMENT_TOKENS: usize = 500_000;

/// The chunker a collection's new segments use: the one its snapshot was built with.
pub fn chunker_for(state: &Ingestion, manifest: Option<&Manifest>) -> Result<Arc<TokenChunker>, String> {
    let config = manifest.map(|m| m.chunker.config).unwrap_or_default();
    TokenChunker::new(
        config,
        state.collections.embedder().tokenizer().clone(),
        &state.collections.embedder().info().sha256,
    )
    .map(Arc::new)
    .map_err(|e| e.to_string())
}

/// Where an upload's chunks find vectors they need not embed again (same model, same text).
pub enum StoredVectors {
    None,
    /// The live chunks of the copy an update replaces, by text.
    ByText(HashMap<String, Vec<f32>>),
    /// Any live row of a loaded version of the collection.
    Collection(Arc<LoadedSnapshot>),
}

impl StoredVectors {
    /// The stored vectors of the chunks of `documents` (from `uri`) held here, by text. A
    /// failed read of the collection's vectors is logged, and the chunks are embedded.
    fn of_chunks(&self, documents: &[ChunkedDoc], uri: &str) -> Cow<'_, HashMap<String, Vec<f32>>> {
        match self {
            StoredVectors::None => Cow::Owned(HashMap::new()),
            StoredVectors::ByText(by_text) => Cow::Borrowed(by_text),
            StoredVectors::Collection(snapshot) => {
                let texts: HashSet<&str> = documents
                    .iter()
                    .flat_map(|d| d.chunks.iter().map(|c| c.text.as_str()))
                    .collect();
                Cow::Owned(snapshot.live_vectors_of_texts(&texts).unwrap_or_else(|e| {
                    tracing::warn!(
                        "{uri}: the collection's stored vectors could not be read, every chunk is embedded: {e}"
                    );
                    HashMap::new()
                }))
            }
        }
    }
}

/// A file's documents, ready to publish.
pub struct ProcessedFile {
    pub documents: Vec<EmbeddedDoc>,
    /// Chunks embedded here; the others took a stored vector.
    pub embedded_chunks: usize,
    /// What the file was read without, though it was indexed ([`file_warnings`]).
    pub warnings: Vec<String>,
}

/// The document metadata key a document's owner is kept under (seed 001's `user_id`).
pub const USER_ID_KEY: &str = "user_id";

/// Makes `user_id` the owner of `record` (its `metadata.user_id`).
fn set_owner(record: &mut DocumentRecord, user_id: &str) {
    let mut metadata: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&record.metadata).unwrap_or_default();
    metadata.insert(USER_ID_KEY.into(), user_id.into());
    record.metadata = serde_json::Value::Object(metadata).to_string();
}

/// How one file is processed, besides its bytes.
pub struct FileSettings<'a> {
    /// The collection's chunker.
    pub chunker: Arc<TokenChunker>,
    /// Where chunks find vectors they need not embed again.
    pub stored: &'a StoredVectors,
    /// Tags every document of the file gets besides its own.
    pub tags: &'a [String],
    /// The user every document of the file belongs to: its `metadata.user_id` ([`USER_ID_KEY`]),
    /// over any the file itself gives.
    pub user_id: Option<&'a str>,
    /// Hears the file's progress as it is parsed, chunked, and embedded batch by batch.
    pub progress: &'a (dyn Fn(StageProgress) + Sync),
}

/// Parses, chunks and embeds one file (blocking). A chunk whose text `settings.stored` holds
/// takes that vector instead of being embedded again. A file fails with the reason of its
/// first failure; a JSONL file with some good lines succeeds with those.
pub fn process_file(
    state: &Ingestion,
    raw: &RawDocument,
    settings: FileSettings<'_>,
) -> Result<ProcessedFile, Failure> {
    let FileSettings {
        chunker,
        stored,
        tags,
        user_id,
        progress,
    } = settings;
    let chunk_settings = ChunkSettings {
        parser: state.parser.clone(),
        chunker,
        tags: tags.to_vec(),
        max_document_tokens: MAX_DOCUMENT_TOKENS,
        summarizer: state.summarizer.clone(),
        ingested_at: chrono::Utc::now(),
    };
    let (mut documents, failures) =
        parse_and_chunk_observed(raw, &chunk_settings, || progress(StageProgress::parsed()));
    if documents.is_empty() {
        return Err(failures
            .into_iter()
            .next()
            .unwrap_or_else(|| Failure::of(&raw.uri, "parse", &ParseError::NoText)));
    }
    let warnings = file_warnings(&documents);
    add_layers(&mut documents, chunk_settings.summarizer.as_ref());
    for document in &mut documents {
        if let Some(user_id) = user_id {
            set_owner(&mut document.record, user_id);
        }
    }
    let chunks: usize = documents.iter().map(|d| d.chunks.len()).sum();
    progress(StageProgress::chunked(chunks));
    let stored_by_text = stored.of_chunks(&documents, &raw.uri);
    if !stored_by_text.is_empty() {
        for document in &mut documents {
            document.stored_vectors = document
                .chunks
                .iter()
                .map(|chunk| stored_by_text.get(&chunk.text).cloned())
                .collect();
        }
    }
    let reused: usize = documents
        .iter()
        .map(|d| d.stored_vectors.iter().flatten().count())
        .sum();
    let done = AtomicUsize::new(0);
    let embedding = |finished: usize| {
        let done = done.fetch_add(finished, Ordering::Relaxed) + finished;
        progress(StageProgress::embedding(done, chunks));
    };
    let documents = embed_documents(documents, state.collections.embedder().as_ref(), 256, &embedding)
        .map_err(|e| Failure::new(&raw.uri, "embed", format!("Embedding failed: {e}")))?;
    state
        .metrics
        .ingested_chunks
        .with_label_values(&["reused"])
        .inc_by(reused as u64);
    state
        .metrics
        .ingested_chunks
        .with_label_values(&["embedded"])
        .inc_by((chunks - reused) as u64);
    Ok(ProcessedFile {
        documents,
        embedded_chunks: chunks - reused,
        warnings,
    })
}

/// What one file's `documents` were read without (their records keep it too): each warning
/// logged, and listed for the file's record ([`crate::records::file_warnings_of`]).
fn file_warnings(documents: &[ChunkedDoc]) -> Vec<String> {
    documents.iter().for_each(|d| log_read_in_part(&d.record));
    crate::records::file_warnings_of(documents.iter().map(|d| &d.record))
}

/// Loads LATEST if the collection serves another version, so that a change is worked out
/// against and published onto LATEST: a batch run or a rollback may have moved it since the
/// last poll, and publishing onto the version served would undo that. The caller holds the
/// collection's publish lock.
pub async fn serve_latest_before_change(state: &Ingestion, collection: &Collection) -> Result<(), String> {
    state
        .collections
        .reload(collection)
        .await
        .map(|_| ())
        .map_err(|e| format!("the collection's LATEST version does not load, so nothing is published onto it: {e}"))
}

/// Publishes `change` as the collection's next version (on LATEST, loaded first if the
/// collection serves another) and serves it before returning;
/// once small segments pile up, they are merged into one first, and a collection the server
/// created drops the versions before the last two (a failed merge is logged, and the change
/// stays published). The caller holds the collection's publish lock.
pub async fn publish(state: &Ingestion, collection: &Collection, change: VersionChange) -> Result<Manifest, String> {
    serve_latest_before_change(state, collection).await?;
    let base = collection.manifest();
    let chunker = chunker_for(state, base.as_ref())?;
    let writer = SnapshotWriter::open(&collection.record.uri, state.collections.store()).map_err(|e| e.to_string())?;
    let chunker_manifest = ChunkerManifest {
        config: chunker.config(),
        sig: chunker.signature(),
    };
    let mut manifest = publish_next_version(
        &writer,
        base.as_ref(),
        change,
        state.collections.embedder().as_ref(),
        chunker_manifest,
        &IndexOptions::default(),
    )
    .await
    .map_err(|e| e.to_string())?;
    let merge = segments_to_merge(&manifest, &state.compact);
    if !merge.is_empty() {
        match compact_latest(state, collection, &writer, &merge).await {
            Ok(compacted) => manifest = compacted,
            Err(e) => tracing::warn!(
                "{}: compaction of {} segments failed, they keep serving: {e}",
                collection.name(),
                merge.len()
            ),
        }
    }
    state.collections.reload(collection).await?;
    state.collections.refresh_snapshot_metric();
    Ok(manifest)
}

async fn compact_latest(
    state: &Ingestion,
    collection: &Collection,
    writer: &SnapshotWriter,
    merge: &[String],
) -> Result<Manifest, String> {
    let reader = SnapshotReader::open(&collection.record.uri, state.collections.store())
        .await
        .map_err(|e| e.to_string())?;
    let (report, manifest) = compact(&reader, writer, merge, &state.compact)
        .await
        .map_err(|e| e.to_string())?;
    tracing::info!(
        "{}: merged {} segments into {:?} ({} chunks kept, {} dropped)",
        collection.name(),
        report.merged_segments.len(),
        report.new_segments,
        report.chunks_kept,
        report.chunks_dropped
    );
    if collection.record.managed {
        // The server is the only writer and reader of a collection it created, and every
        // reload holds the publish lock this runs under: the merged segments can go now.
        let options = GcOptions {
            keep: 2,
            min_age: std::time::Duration::ZERO,
            dry_run: false,
        };
        match collect_garbage(&collection.record.uri, state.collections.store(), &options).await {
            Ok(gc) => tracing::info!(
                "{}: removed {} old versions, {} segments ({} bytes)",
                collection.name(),
                gc.versions_removed.len(),
                gc.segments_removed.len(),
                gc.bytes_removed
            ),
            Err(e) => tracing::warn!(
                "{}: removing old versions failed (they stay on disk): {e}",
                collection.name()
            ),
        }
    }
    Ok(manifest)
}
