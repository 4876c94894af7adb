//! Online ingestion through the indexer pipeline: parse, chunk (with the collection's own
//! chunker settings) and embed files, then publish them as the collection's next version
//! and swap the Searcher to it.

use std::sync::Arc;

use quarry_indexer::chunk::{Chunker, ChunkerConfig, TokenChunker};
use quarry_indexer::index::IndexOptions;
use quarry_indexer::parse::AutoParser;
use quarry_indexer::pipeline::{embed_documents, parse_and_chunk, publish_next_version, ChunkSettings, EmbeddedDoc, VersionChange};
use quarry_indexer::snapshot::{ChunkerManifest, Manifest, SnapshotWriter};
use quarry_indexer::source::RawDocument;

use crate::app::AppState;
use crate::collection::Collection;

/// Documents larger than this fail with the seed-004 message.
pub const MAX_DOCUMENT_TOKENS: usize = 500_000;

/// The chunker a collection's new segments use: the one its snapshot was built with.
pub fn chunker_for(state: &AppState, manifest: Option<&Manifest>) -> Result<Arc<TokenChunker>, String> {
    let config = manifest.map(|m| m.chunker.config).unwrap_or_else(ChunkerConfig::default);
    TokenChunker::new(config, state.embedder.tokenizer().clone(), &state.embedder.info().sha256).map(Arc::new).map_err(|e| e.to_string())
}

/// Parses, chunks and embeds one file (blocking). A file fails with the reason of its
/// first failure; a JSONL file with some good lines succeeds with those.
pub fn process_file(state: &AppState, chunker: Arc<TokenChunker>, raw: &RawDocument) -> Result<Vec<EmbeddedDoc>, String> {
    let settings = ChunkSettings { parser: AutoParser, chunker, tags: Vec::new(), max_document_tokens: MAX_DOCUMENT_TOKENS, ingested_at: chrono::Utc::now() };
    let (documents, failures) = parse_and_chunk(raw, &settings);
    if documents.is_empty() {
        return Err(failures.into_iter().next().map(|f| f.reason).unwrap_or_else(|| "no text content found".into()));
    }
    embed_documents(documents, state.embedder.as_ref(), 256, |_| {}).map_err(|e| format!("Embedding failed: {e}"))
}

/// Publishes `change` as the collection's next version and serves it before returning.
/// The caller holds the collection's publish lock.
pub async fn publish(state: &AppState, collection: &Collection, change: VersionChange) -> Result<Manifest, String> {
    let base = collection.manifest();
    let chunker = chunker_for(state, base.as_ref())?;
    let writer = SnapshotWriter::open(&collection.record.uri, &state.options.store).map_err(|e| e.to_string())?;
    let chunker_manifest = ChunkerManifest { config: chunker.config(), sig: chunker.signature() };
    let manifest = publish_next_version(&writer, base.as_ref(), change, state.embedder.as_ref(), chunker_manifest, &IndexOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    collection.reload(&state.load, &state.embedder).await?;
    state.refresh_snapshot_metric();
    Ok(manifest)
}
