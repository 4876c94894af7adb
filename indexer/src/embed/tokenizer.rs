//! The embedding model's tokenizer: token spans for the chunker, ids for the model.
//! Padding and truncation in tokenizer.json are replaced by quarry's own settings.

use std::path::Path;

use tokenizers::{PostProcessor, Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

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

    /// Byte spans of the tokens of `text`, specials excluded.
    pub fn token_spans(&self, text: &str) -> Result<Vec<(usize, usize)>> {
        let encoding = self.plain.encode(text, false).map_err(|e| IndexerError::Embed(format!("tokenize: {e}")))?;
        Ok(encoding.get_offsets().to_vec())
    }

    /// Number of tokens of `text`, specials excluded, without truncation.
    pub fn count(&self, text: &str) -> Result<usize> {
        let encoding = self.plain.encode(text, false).map_err(|e| IndexerError::Embed(format!("tokenize: {e}")))?;
        Ok(encoding.len())
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
