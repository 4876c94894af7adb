//! The types the run's stages pass on, in the order they appear: a parsed and chunked
//! [`ChunkedDoc`] (parse + chunk -> embed), an [`EmbeddedDoc`] with one vector per chunk (embed
//! -> segments), and the [`Arrival`]s the segmenter takes (embedded documents, or the ids of
//! documents a delta leaves where they are). Before them: a `RawDocument` (fetch -> parse,
//! `crate::source`); after them: `SegmentRows` (segment.rs) and a `WrittenSegment`
//! (`crate::snapshot`), then the version's `Manifest`.

use std::sync::Arc;

use crate::chunk::Chunk;
use crate::embed::ModelTokenizer;
use crate::index::analysis::Detected;
use crate::snapshot::DocumentRecord;
use crate::summary::Sentence;

/// A document ready to embed.
pub struct ChunkedDoc {
    pub record: DocumentRecord,
    pub chunks: Vec<Chunk>,
    /// Per chunk, the model's input ids the chunker measured it by (see [`DocumentChunks`]).
    pub model_ids: Vec<Option<Vec<u32>>>,
    /// The tokenizer that made `model_ids`: an embedder with another one tokenizes anew.
    pub tokenized_by: Arc<ModelTokenizer>,
    /// Per chunk, the vector a previous version stored for the same text, which the embed
    /// stage takes instead of embedding the chunk; empty when there is none (see
    /// [`StoredEmbeddings::reuse`]).
    pub stored_vectors: Vec<Option<Vec<f32>>>,
    /// Per chunk, the language of its text: told by the parse stage for the documents it
    /// sends on (not for those a delta leaves where they are), in parallel with the model,
    /// for the keyword index and the model's reading of the segment; empty when not told
    /// (the segment's build tells it then).
    pub languages: Vec<Detected>,
    /// The document's sentences, kept by the chunker for its layers until they are made
    /// ([`super::stages::add_layers`]); empty after, or when the summarizer reads none.
    pub sentences: Vec<Sentence>,
}

impl ChunkedDoc {
    /// Whether chunk `index` comes with a stored vector.
    pub(super) fn has_stored_vector(&self, index: usize) -> bool {
        self.stored_vectors.get(index).is_some_and(Option::is_some)
    }

    /// Chunks the model has to embed (those without a stored vector).
    pub(super) fn chunks_to_embed(&self) -> usize {
        (0..self.chunks.len()).filter(|&i| !self.has_stored_vector(i)).count()
    }
}

/// A document with one embedding row per chunk.
pub struct EmbeddedDoc {
    pub record: DocumentRecord,
    pub chunks: Vec<Chunk>,
    pub vectors: Vec<f32>,
    /// Per chunk, its text's language; empty when not told yet (chunks read back from a
    /// stored segment), and then told when the segment's indexes are built.
    pub languages: Vec<Detected>,
}

impl EmbeddedDoc {
    /// Model tokens of its chunks.
    pub fn tokens(&self) -> u64 {
        self.chunks.iter().map(|c| c.token_count as u64).sum()
    }
}

/// What reaches the run's segments, from the embed stage or (documents with stored
/// embeddings) straight from the parse stage.
pub(super) enum Arrival {
    Documents(Vec<EmbeddedDoc>),
    /// Ids of documents that did not change at all, which a delta leaves where they are
    /// (taken all the same: a later document with one of these ids is a duplicate).
    Unchanged(Vec<String>),
}

/// Documents for the pipeline's unit tests.
#[cfg(test)]
pub(super) mod test_documents {
    use super::EmbeddedDoc;
    use crate::chunk::Chunk;
    use crate::index::analysis::detect;
    use crate::parse::ContentType;
    use crate::snapshot::DocumentRecord;
    use crate::summary::DocumentLayers;

    /// Document `n` of `chunks` chunks; chunk `c`'s vector is `[n, c, n, c]`.
    pub fn embedded(n: u32, chunks: u32, told: bool) -> EmbeddedDoc {
        let doc_id = format!("d{n}");
        EmbeddedDoc {
            record: DocumentRecord {
                doc_id: doc_id.clone(),
                uri: format!("file:///c/{n:04}.txt"),
                file_name: format!("{n:04}.txt"),
                title: String::new(),
                source: String::new(),
                tags: Vec::new(),
                content_hash: String::new(),
                size: 0,
                etag: None,
                chunk_count: chunks,
                metadata: "{}".into(),
                ingested_at: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
                layers: DocumentLayers::default(),
                warnings: Vec::new(),
            },
            chunks: (0..chunks)
                .map(|c| Chunk {
                    chunk_id: format!("{doc_id}-{c}"),
                    doc_id: doc_id.clone(),
                    index: c,
                    text: format!("text {n} {c}"),
                    page: None,
                    heading_path: Vec::new(),
                    content_type: ContentType::Text,
                    token_count: 3,
                    start_seconds: None,
                })
                .collect(),
            vectors: (0..chunks)
                .flat_map(|c| [n as f32, c as f32, n as f32, c as f32])
                .collect(),
            languages: match told {
                true => (0..chunks).map(|_| detect("the harbour report of the city")).collect(),
                false => Vec::new(),
            },
        }
    }
}
