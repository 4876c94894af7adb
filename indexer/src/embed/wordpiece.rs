//! BERT's WordPiece tokenization of printable ASCII, without the general tokenizer's
//! machinery (Unicode tables, normalization with alignments, an allocation per piece).
//!
//! A tokenizer.json whose normalizer is `BertNormalizer`, pre-tokenizer `BertPreTokenizer`
//! and model `WordPiece` treats every run of text between spaces, tabs and line breaks on
//! its own: the normalizer works char by char (its accent stripping only reorders
//! combining marks, which never cross a space), and the pre-tokenizer splits at those
//! characters. So a run of printable ASCII (0x21–0x7E) is tokenized here — lowercased when
//! the normalizer says so, split at ASCII punctuation, each word matched greedily against
//! the vocabulary — and any other run (an accent, a curly quote, a control character, CJK)
//! is handed to the general tokenizer alone, its offsets moved to the run's place. Texts
//! holding an added token ("[SEP]"), which the general tokenizer matches before
//! normalizing, go to it whole. The answer is the general tokenizer's, token for token and
//! offset for offset (`indexer/tests/tokenizer_fast_path.rs` compares them).

use rustc_hash::FxHashMap;
use serde_json::Value;

/// Token spans (byte offsets into the text) and ids, specials excluded.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TextTokens {
    pub spans: Vec<(usize, usize)>,
    pub ids: Vec<u32>,
}

/// The vocabulary and settings of a BERT WordPiece tokenizer.json.
pub(super) struct BertWordPiece {
    /// Pieces that may start a word.
    word_starts: FxHashMap<Box<[u8]>, u32>,
    /// Pieces that continue a word, keyed without their prefix ("##").
    continuations: FxHashMap<Box<[u8]>, u32>,
    longest_start: usize,
    longest_continuation: usize,
    unknown: u32,
    max_chars_per_word: usize,
    lowercase: bool,
    /// Added tokens' contents, lowercased, for [`BertWordPiece::holds_added_token`].
    added_tokens: Vec<Vec<u8>>,
    /// The bytes an added token starts with, in either case.
    added_starts: [bool; 256],
}

/// Space, tab, line feed, carriage return: the characters that end a run.
fn ends_run(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// Characters whose tokens this file computes: printable ASCII other than space.
fn is_plain(byte: u8) -> bool {
    (0x21..=0x7e).contains(&byte)
}

impl BertWordPiece {
    /// The fast path for a tokenizer.json, or `None` when it is not BERT's WordPiece
    /// pipeline exactly (then the general tokenizer does everything).
    pub(super) fn from_json(json: &Value) -> Option<Self> {
        let normalizer = json.get("normalizer")?;
        let pre_tokenizer = json.get("pre_tokenizer")?;
        let model = json.get("model")?;
        if normalizer.get("type")?.as_str()? != "BertNormalizer"
            || pre_tokenizer.get("type")?.as_str()? != "BertPreTokenizer"
            || model.get("type")?.as_str()? != "WordPiece"
        {
            return None;
        }
        let lowercase = normalizer.get("lowercase")?.as_bool()?;
        let prefix = model.get("continuing_subword_prefix")?.as_str()?;
        let max_chars_per_word = usize::try_from(model.get("max_input_chars_per_word")?.as_u64()?).ok()?;
        let vocab = model.get("vocab")?.as_object()?;
        let unknown = u32::try_from(vocab.get(model.get("unk_token")?.as_str()?)?.as_u64()?).ok()?;
        let (mut word_starts, mut continuations) = (FxHashMap::default(), FxHashMap::default());
        for (piece, id) in vocab {
            let id = u32::try_from(id.as_u64()?).ok()?;
            if let Some(rest) = piece.strip_prefix(prefix) {
                continuations.insert(rest.as_bytes().into(), id);
            }
            word_starts.insert(piece.as_bytes().into(), id);
        }
        let longest = |map: &FxHashMap<Box<[u8]>, u32>| map.keys().map(|k| k.len()).max().unwrap_or(0);
        let added_tokens = json
            .get("added_tokens")?
            .as_array()?
            .iter()
            .map(|token| Some(token.get("content")?.as_str()?.to_ascii_lowercase().into_bytes()))
            .collect::<Option<Vec<Vec<u8>>>>()?
            .into_iter()
            .filter(|token| !token.is_empty())
            .collect::<Vec<_>>();
        let mut added_starts = [false; 256];
        for token in &added_tokens {
            added_starts[usize::from(token[0])] = true;
            added_starts[usize::from(token[0].to_ascii_uppercase())] = true;
        }
        Some(Self {
            longest_start: longest(&word_starts),
            longest_continuation: longest(&continuations),
            word_starts,
            continuations,
            unknown,
            max_chars_per_word,
            lowercase,
            added_tokens,
            added_starts,
        })
    }

    /// Whether `text` holds an added token's content (any case, to be safe): one pass over
    /// the bytes, a token compared only where one could start.
    pub(super) fn holds_added_token(&self, text: &str) -> bool {
        let text = text.as_bytes();
        (0..text.len()).any(|at| {
            self.added_starts[usize::from(text[at])]
                && self.added_tokens.iter().any(|token| {
                    text.len() - at >= token.len() && text[at..at + token.len()].eq_ignore_ascii_case(token)
                })
        })
    }

    /// The tokens of `text` (which holds no added token): printable-ASCII runs here, every
    /// other run through `general` (the general tokenizer's tokens of one run, specials
    /// excluded, offsets within the run).
    pub(super) fn tokenize<E>(
        &self,
        text: &str,
        mut general: impl FnMut(&str) -> Result<TextTokens, E>,
    ) -> Result<TextTokens, E> {
        let bytes = text.as_bytes();
        let mut out = TextTokens {
            spans: Vec::with_capacity(bytes.len() / 4),
            ids: Vec::with_capacity(bytes.len() / 4),
        };
        let mut word = Vec::with_capacity(64);
        let mut start = 0;
        while start < bytes.len() {
            if ends_run(bytes[start]) {
                start += 1;
                continue;
            }
            let end = bytes[start..]
                .iter()
                .position(|&b| ends_run(b))
                .map_or(bytes.len(), |n| start + n);
            let run = &bytes[start..end];
            if run.iter().all(|&b| is_plain(b)) {
                self.plain_run(run, start, &mut word, &mut out);
            } else {
                // `start` and `end` sit next to ASCII bytes (or the text's ends): char boundaries.
                let tokens = general(&text[start..end])?;
                out.spans
                    .extend(tokens.spans.iter().map(|&(a, b)| (a + start, b + start)));
                out.ids.extend(tokens.ids);
            }
            start = end;
        }
        Ok(out)
    }

    /// A run of printable ASCII at `offset`: words split at punctuation (each punctuation
    /// mark a word of its own), each word's pieces.
    fn plain_run(&self, run: &[u8], offset: usize, word: &mut Vec<u8>, out: &mut TextTokens) {
        let mut start = 0;
        while start < run.len() {
            let end = if run[start].is_ascii_punctuation() {
                start + 1
            } else {
                run[start..]
                    .iter()
                    .position(u8::is_ascii_punctuation)
                    .map_or(run.len(), |n| start + n)
            };
            word.clear();
            word.extend(
                run[start..end]
                    .iter()
                    .map(|&b| if self.lowercase { b.to_ascii_lowercase() } else { b }),
            );
            self.word_pieces(word, offset + start, out);
            start = end;
        }
    }

    /// WordPiece's greedy longest-match of one word at `offset`: the whole word as one
    /// unknown token when it is too long or some part of it matches no piece.
    fn word_pieces(&self, word: &[u8], offset: usize, out: &mut TextTokens) {
        let first_piece = out.ids.len();
        if word.len() <= self.max_chars_per_word {
            let mut start = 0;
            while start < word.len() {
                let (map, longest) = if start == 0 {
                    (&self.word_starts, self.longest_start)
                } else {
                    (&self.continuations, self.longest_continuation)
                };
                let found = (start + 1..=word.len().min(start + longest))
                    .rev()
                    .find_map(|end| map.get(&word[start..end]).map(|&id| (end, id)));
                let Some((end, id)) = found else { break };
                out.spans.push((offset + start, offset + end));
                out.ids.push(id);
                start = end;
            }
            if start == word.len() {
                return;
            }
        }
        out.spans.truncate(first_piece);
        out.ids.truncate(first_piece);
        out.spans.push((offset, offset + word.len()));
        out.ids.push(self.unknown);
    }
}
