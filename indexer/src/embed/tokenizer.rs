//! The embedding model's tokenizer: token spans for the chunker, ids for the model.
//! Padding and truncation in tokenizer.json are replaced by quarry's own settings.

use std::path::Path;

use tokenizers::{Encoding, PostProcessor, Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use crate::error::{IndexerError, Result};

/// A loaded tokenizer.json: `plain` never truncates (for measuring), `windowed`
/// truncates to the model window with specials kept (for the model).
pub struct ModelTokenizer {
    plain: Tokenizer,
    windowed: Tokenizer,
    specials: usize,
    max_tokens: usize,
}

impl ModelTokenizer {
    /// Loads tokenizer.json for a model whose window is `max_tokens` (specials included).
    pub fn from_file(path: &Path, max_tokens: usize) -> Result<Self> {
        let model_err = |reason: String| IndexerError::Model { path: path.to_path_buf(), reason };
        let mut plain = Tokenizer::from_file(path).map_err(|e| model_err(format!("cannot load tokenizer: {e}")))?;
        plain.with_padding(None);
        plain.with_truncation(None).map_err(|e| model_err(e.to_string()))?;
        let mut windowed = plain.clone();
        windowed
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| model_err(e.to_string()))?;
        let specials = plain.get_post_processor().map(|p| p.added_tokens(false)).unwrap_or(0);
        Ok(Self { plain, windowed, specials, max_tokens })
    }

    /// How many special tokens ([CLS], [SEP]) the model adds to every text.
    pub fn special_tokens(&self) -> usize {
        self.specials
    }

    /// The model window, specials included.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Byte spans of the tokens of `text` (specials excluded), and the model's input ids
    /// for the whole of `text`: see [`ModelTokenizer::model_ids`].
    pub fn spans_and_ids(&self, text: &str) -> Result<(Vec<(usize, usize)>, ModelIds)> {
        let encoding = self.encode(text, true)?;
        // Tokens the post-processor added ([CLS], [SEP]) belong to no sequence; a literal
        // "[SEP]" in the text is a token of sequence 0 like any other.
        let spans = encoding
            .get_sequence_ids()
            .into_iter()
            .zip(encoding.get_offsets())
            .filter_map(|(sequence, span)| sequence.map(|_| *span))
            .collect();
        Ok((spans, ModelIds::new(encoding.get_ids().to_vec(), self.specials)))
    }

    /// The model's input ids for `text`: specials added, not truncated. Where they fit the
    /// window they equal [`ModelTokenizer::encode_for_model`]'s, so a chunker that measured
    /// a chunk this way hands the embed stage its ids instead of a second tokenization.
    pub fn model_ids(&self, text: &str) -> Result<ModelIds> {
        Ok(ModelIds::new(self.encode(text, true)?.get_ids().to_vec(), self.specials))
    }

    /// Number of tokens of `text`, specials excluded, without truncation.
    pub fn count(&self, text: &str) -> Result<usize> {
        Ok(self.encode(text, false)?.len())
    }

    /// `text` through the tokenizer that never truncates, with or without the specials.
    fn encode(&self, text: &str, with_specials: bool) -> Result<Encoding> {
        self.plain.encode(text, with_specials).map_err(|e| IndexerError::Embed(format!("tokenize: {e}")))
    }

    /// Ids for the model, specials included, truncated to the window.
    pub fn encode_for_model(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        let encodings = self
            .windowed
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| IndexerError::Embed(format!("tokenize: {e}")))?;
        Ok(encodings.into_iter().map(|e| e.get_ids().to_vec()).collect())
    }
}

/// A text's model input ids, specials added and not truncated, as one tokenizer made them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelIds {
    ids: Vec<u32>,
    specials: usize,
}

impl ModelIds {
    fn new(ids: Vec<u32>, specials: usize) -> Self {
        Self { ids, specials }
    }

    /// Tokens of the text, specials excluded.
    pub fn text_tokens(&self) -> usize {
        self.ids.len().saturating_sub(self.specials)
    }

    /// The ids, when they fit a `window`-token model window (specials included); `None`
    /// when the model would truncate them.
    pub fn into_window(self, window: usize) -> Option<Vec<u32>> {
        (self.ids.len() <= window).then_some(self.ids)
    }
}
