//! Each document's layers beside its chunks (seed 003): L0, a one-sentence abstract, and
//! L1, an overview of a few sentences; the chunks are L2. They are made when a document is
//! chunked, stored in documents.parquet with its record, kept wherever the record is kept
//! (a delta run leaves an unchanged document's record where it is), and returned by a search
//! that asks for a layer and by the collection's summaries.
//!
//! [`Summarizer`] is the swappable part: [`ExtractiveSummarizer`] (the default) picks the
//! document's own sentences and needs no model; [`NoSummaries`] leaves the layers empty.

mod extractive;
mod sentences;

pub use extractive::ExtractiveSummarizer;
pub use sentences::{sentences_of, Sentence};

use std::sync::Arc;

use crate::parse::Document;

/// A document's L0 and L1 (empty when none were made).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct DocumentLayers {
    /// L0: one sentence.
    pub abstract_text: String,
    /// L1: a few sentences, in the document's order.
    pub overview: String,
}

/// Makes a document's layers.
pub trait Summarizer: Send + Sync {
    /// Names the method and its version; part of the parse signature, so a run under another
    /// one rewrites every document's record.
    fn name(&self) -> &'static str;
    fn layers(&self, document: &Document) -> DocumentLayers;
}

/// Makes no layers.
pub struct NoSummaries;

impl Summarizer for NoSummaries {
    fn name(&self) -> &'static str {
        "none"
    }
    fn layers(&self, _document: &Document) -> DocumentLayers {
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
}

impl Summaries {
    pub fn summarizer(self) -> Arc<dyn Summarizer> {
        match self {
            Self::Extractive => Arc::new(ExtractiveSummarizer),
            Self::Off => Arc::new(NoSummaries),
        }
    }
}

impl std::str::FromStr for Summaries {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "extractive" => Ok(Self::Extractive),
            "off" | "none" => Ok(Self::Off),
            other => Err(format!("unknown summaries `{other}` (extractive, off)")),
        }
    }
}
