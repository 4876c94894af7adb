//! The embedding model's tokenizer: token spans for the chunker, ids for the model.
//! Padding and truncation in tokenizer.json are replaced by quarry's own settings.

use std::path::Path;

use rayon::prelude::*;
use tokenizers::{Encoding, Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use super::wordpiece::{BertWordPiece, TextTokens};
use crate::error::{IndexerError, Result};

/// The byte spans of a text's tokens and their ids, in order.
pub type SpansAndIds = (Vec<(usize, usize)>, Vec<u32>);

/// Whether BERT's WordPiece tokenizers take the fast path for runs of printable ASCII
/// (see `wordpiece.rs`); `Off` keeps the general tokenizer for everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenizerPath {
    Fast,
    Off,
}

/// Texts the fast path must tokenize as the general tokenizer does before it is used.
const SELF_CHECK_TEXTS: &[&str] = &[
    "Hello, World! It's 3.14159 o'clock -- e.g. U.S.A.; (x+y)^2 = z_1 [citation] {ok} <b>#tag</b> ~user@example.com",
    "Supercalifragilisticexpialidocious qzxqvbnmwq unaffable tokenization\tseparated\nlines\r\nMiXeD CaSe",
    "naïve café — “quoted” 東京 x\u{b}y a\u{0}b",
];

/// Batches of at least this many texts are tokenized on the thread pool.
const PARALLEL_TEXTS: usize = 64;

/// A loaded tokenizer.json: `plain` never truncates (for measuring), `windowed`
/// truncates to the model window with specials kept (for the model). BERT's WordPiece
/// tokenizers also get a fast path for printable ASCII, with the same answers.
pub struct ModelTokenizer {
    plain: Tokenizer,
    windowed: Tokenizer,
    fast: Option<BertWordPiece>,
    /// Special ids the model puts before and after a text's tokens ([CLS], [SEP]).
    prefix: Vec<u32>,
    suffix: Vec<u32>,
    max_tokens: usize,
}

impl ModelTokenizer {
    /// Loads tokenizer.json for a model whose window is `max_tokens` (specials included).
    pub fn from_file(path: &Path, max_tokens: usize) -> Result<Self> {
        Self::from_file_with(path, max_tokens, TokenizerPath::Fast)
    }

    /// [`ModelTokenizer::from_file`] choosing whether the fast path may be used.
    pub fn from_file_with(path: &Path, max_tokens: usize, path_wanted: TokenizerPath) -> Result<Self> {
        let model_err = |reason: String| IndexerError::Model {
            path: path.to_path_buf(),
            reason,
        };
        let bytes = std::fs::read(path).map_err(|e| model_err(format!("cannot load tokenizer: {e}")))?;
        let mut plain = Tokenizer::from_bytes(&bytes).map_err(|e| model_err(format!("cannot load tokenizer: {e}")))?;
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
        let (prefix, suffix) =
            special_ids(&plain).map_err(|e| model_err(format!("cannot find the special tokens: {e}")))?;
        let mut tokenizer = Self {
            plain,
            windowed,
            fast: None,
            prefix,
            suffix,
            max_tokens,
        };
        if path_wanted == TokenizerPath::Fast {
            let json: serde_json::Value =
                serde_json::from_slice(&bytes).map_err(|e| model_err(format!("cannot read tokenizer: {e}")))?;
            tokenizer.fast = BertWordPiece::from_json(&json);
            if tokenizer.fast.is_some() && !tokenizer.fast_path_agrees()? {
                tracing::warn!(path = %path.display(), "the fast WordPiece path disagrees with the general tokenizer on its self-check; using the general one");
                tokenizer.fast = None;
            }
        }
        Ok(tokenizer)
    }

    /// Whether the fast path answers [`SELF_CHECK_TEXTS`] as the general tokenizer does.
    fn fast_path_agrees(&self) -> Result<bool> {
        for text in SELF_CHECK_TEXTS {
            if self.text_tokens(text)? != self.general_tokens(text)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether BERT's WordPiece fast path is in use.
    pub fn uses_fast_path(&self) -> bool {
        self.fast.is_some()
    }

    /// How many special tokens ([CLS], [SEP]) the model adds to every text.
    pub fn special_tokens(&self) -> usize {
        self.prefix.len() + self.suffix.len()
    }

    /// The model window, specials included.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Byte spans of the tokens of `text` (specials excluded), and the model's input ids
    /// for the whole of `text`: see [`ModelTokenizer::model_ids`].
    pub fn spans_and_ids(&self, text: &str) -> Result<(Vec<(usize, usize)>, ModelIds)> {
        let tokens = self.text_tokens(text)?;
        Ok((tokens.spans, self.with_specials(&tokens.ids, usize::MAX)))
    }

    /// The model's input ids for `text`: specials added, not truncated. Where they fit the
    /// window they equal [`ModelTokenizer::encode_for_model`]'s, so a chunker that measured
    /// a chunk this way hands the embed stage its ids instead of a second tokenization.
    pub fn model_ids(&self, text: &str) -> Result<ModelIds> {
        Ok(self.with_specials(&self.text_tokens(text)?.ids, usize::MAX))
    }

    /// The byte spans and ids of the tokens of `text`, specials excluded, not truncated.
    pub fn tokens_of(&self, text: &str) -> Result<SpansAndIds> {
        let tokens = self.text_tokens(text)?;
        Ok((tokens.spans, tokens.ids))
    }

    /// The model's input ids for a text's token ids (`ids`, specials left out): specials
    /// added, and only its first tokens when `window` is set, as [`Self::encode_for_model`]
    /// keeps them.
    pub fn model_input(&self, ids: &[u32], window: bool) -> Vec<u32> {
        let keep = match window {
            true => self.max_tokens.saturating_sub(self.special_tokens()),
            false => usize::MAX,
        };
        self.with_specials(ids, keep).ids
    }

    /// How many ids the vocabulary has (added tokens included).
    pub fn vocabulary_size(&self) -> usize {
        self.plain.get_vocab_size(true)
    }

    /// The id of the vocabulary's unknown token, if it has one under a usual name.
    pub fn unknown_id(&self) -> Option<u32> {
        ["[UNK]", "<unk>", "<UNK>", "[unk]"]
            .iter()
            .find_map(|name| self.plain.token_to_id(name))
    }

    /// Number of tokens of `text`, specials excluded, without truncation.
    pub fn count(&self, text: &str) -> Result<usize> {
        Ok(self.text_tokens(text)?.ids.len())
    }

    /// Ids for the model, specials included, truncated to the window.
    pub fn encode_for_model(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        if self.fast.is_none() {
            let encodings = self
                .windowed
                .encode_batch(texts.to_vec(), true)
                .map_err(|e| IndexerError::Embed(format!("tokenize: {e}")))?;
            return Ok(encodings.into_iter().map(|e| e.get_ids().to_vec()).collect());
        }
        // Truncation keeps the first window-minus-specials tokens, then adds the specials,
        // as the general tokenizer's LongestFirst truncation of one sequence does.
        let room = self.max_tokens.saturating_sub(self.special_tokens());
        let encode = |text: &&str| Ok(self.with_specials(&self.text_tokens(text)?.ids, room).ids);
        // A few texts (a search's query) are done on the caller's thread, not handed to the pool.
        if texts.len() < PARALLEL_TEXTS {
            return texts.iter().map(encode).collect();
        }
        texts.par_iter().map(encode).collect()
    }

    /// The tokens of `text`, specials excluded: the fast path's where it applies.
    fn text_tokens(&self, text: &str) -> Result<TextTokens> {
        match &self.fast {
            Some(fast) if !fast.holds_added_token(text) => fast.tokenize(text, |run| self.general_tokens(run)),
            _ => self.general_tokens(text),
        }
    }

    /// The general tokenizer's tokens of `text`, specials excluded.
    fn general_tokens(&self, text: &str) -> Result<TextTokens> {
        let encoding = self
            .plain
            .encode(text, false)
            .map_err(|e| IndexerError::Embed(format!("tokenize: {e}")))?;
        Ok(TextTokens {
            spans: encoding.get_offsets().to_vec(),
            ids: encoding.get_ids().to_vec(),
        })
    }

    /// The first `keep` of `ids` between the model's special ids.
    fn with_specials(&self, ids: &[u32], keep: usize) -> ModelIds {
        let kept = &ids[..ids.len().min(keep)];
        let mut all = Vec::with_capacity(kept.len() + self.special_tokens());
        all.extend_from_slice(&self.prefix);
        all.extend_from_slice(kept);
        all.extend_from_slice(&self.suffix);
        ModelIds::new(all, self.special_tokens())
    }
}

/// The ids the post-processor puts before and after one text's tokens, read off its
/// encoding of a one-token text (tokens of no sequence are the specials).
fn special_ids(tokenizer: &Tokenizer) -> std::result::Result<(Vec<u32>, Vec<u32>), String> {
    let encoding: Encoding = tokenizer.encode("a", true).map_err(|e| e.to_string())?;
    let sequence = encoding.get_sequence_ids();
    let first = sequence
        .iter()
        .position(Option::is_some)
        .ok_or("a one-word text has no tokens")?;
    let last = sequence.iter().rposition(Option::is_some).unwrap_or(first);
    if sequence[first..=last].iter().any(Option::is_none) {
        return Err("the post-processor puts a special token inside the text".into());
    }
    let ids = encoding.get_ids();
    Ok((ids[..first].to_vec(), ids[last + 1..].to_vec()))
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
