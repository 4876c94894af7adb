//! Each document's layers beside its chunks (seed 003): L0, a one-sentence abstract, and
//! L1, an overview of a few sentences; the chunks are L2. The chunker keeps a document's
//! sentences; once the run knows the document goes on (a delta leaves an unchanged one where
//! it is, layers and all) its language is told and its layers are made from them, stored in
//! documents.parquet with its record, and returned by a search that asks for a layer and by
//! the collection's summaries.
//!
//! [`Summarizer`] is the swappable part: [`ExtractiveSummarizer`] (the default) picks the
//! document's own sentences and needs no model; [`NoSummaries`] leaves the layers empty; an
//! LLM's (`--summaries llm`) is quarry-server's `llm_summaries`, where the LLM client is.
//!
//! A collection has layers of its own too, made from its documents' abstracts
//! ([`Summarizer::collection_layers`], `collection.rs`), by the server for the snapshot it
//! serves.

mod ascii_sentences;
mod collection;
mod extractive;
mod sentences;

pub use collection::{extractive_collection_layers, representative, sampled, NamedAbstract, COLLECTION_SAMPLE};
pub use extractive::{Budget, ExtractiveSummarizer};
pub use sentences::{sentences_of, Sentence};

use std::sync::Arc;

use rayon::prelude::*;

use crate::index::analysis::StemLanguage;

/// A document's L0 and L1 (empty when none were made) and what made them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct DocumentLayers {
    /// L0: one sentence.
    pub abstract_text: String,
    /// L1: a few sentences, in the document's order.
    pub overview: String,
    /// The [`Summarizer::name`] of the summarizer the record was made under (empty in records
    /// written before layers): a later run under another one writes the record again.
    pub made_by: String,
}

/// Makes a document's layers.
pub trait Summarizer: Send + Sync {
    /// Names the method and its version; part of the parse signature and of every record.
    fn name(&self) -> &str;
    /// Whether it reads the document's sentences (the chunker keeps them only then).
    fn reads_sentences(&self) -> bool {
        true
    }
    /// The layers of a document of these sentences, in this stemming language (None: none
    /// told). `made_by` is left empty for the caller to fill with [`Self::name`], or names
    /// what made them instead (a summarizer that fell back to another for this document: a
    /// later run under this one makes them again).
    fn layers(&self, sentences: &[Sentence], language: Option<StemLanguage>) -> DocumentLayers;
    /// The layers of several documents, each as [`Self::layers`] makes it, in order: on the
    /// current rayon pool by default. A summarizer that waits on a service overrides it to
    /// keep its own number of requests in flight, whatever the parse threads.
    fn layers_of_all(&self, documents: &[DocumentSentences<'_>]) -> Vec<DocumentLayers> {
        documents
            .par_iter()
            .map(|document| self.layers(document.sentences, document.language))
            .collect()
    }
    /// The collection's own layers from its documents' abstracts, in the collection's order
    /// (seed 003's GenerateDatasetContext), `made_by` filled: the extractive ones by default
    /// ([`extractive_collection_layers`]); empty when no document has an abstract. Blocks
    /// while a summarizer that waits on a service is asked.
    fn collection_layers(&self, documents: &[NamedAbstract<'_>]) -> DocumentLayers {
        extractive_collection_layers(documents)
    }
}

/// What a summarizer reads of one document: its sentences, and the language to stem them in.
#[derive(Debug, Clone, Copy)]
pub struct DocumentSentences<'a> {
    pub sentences: &'a [Sentence],
    pub language: Option<StemLanguage>,
}

impl std::fmt::Debug for dyn Summarizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Summarizer").field(&self.name()).finish()
    }
}

/// Makes no layers.
pub struct NoSummaries;

impl Summarizer for NoSummaries {
    fn name(&self) -> &str {
        "none"
    }
    fn reads_sentences(&self) -> bool {
        false
    }
    fn layers(&self, _sentences: &[Sentence], _language: Option<StemLanguage>) -> DocumentLayers {
        DocumentLayers::default()
    }
}

/// `--summaries`: which summarizer a run uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Summaries {
    #[default]
    Extractive,
    Off,
    /// Written by an LLM endpoint (quarry-server's `llm_summaries`).
    Llm,
}

impl Summaries {
    /// The built-in summarizer chosen; None for [`Self::Llm`], which needs an endpoint.
    pub fn summarizer(self) -> Option<Arc<dyn Summarizer>> {
        match self {
            Self::Extractive => Some(default_summarizer()),
            Self::Off => Some(Arc::new(NoSummaries)),
            Self::Llm => None,
        }
    }
}

/// The default summarizer, [`ExtractiveSummarizer`].
pub fn default_summarizer() -> Arc<dyn Summarizer> {
    Arc::new(ExtractiveSummarizer)
}

impl std::str::FromStr for Summaries {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "extractive" => Ok(Self::Extractive),
            "off" | "none" => Ok(Self::Off),
            "llm" => Ok(Self::Llm),
            other => Err(format!("unknown summaries `{other}` (extractive, off, llm)")),
        }
    }
}
