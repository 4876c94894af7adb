//! Chunking: documents into token-bounded, overlapping chunks, measured in the embedding
//! model's own tokens. Deterministic and UTF-8 safe; see [`splitter`] for the boundary rules.

mod splitter;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::embed::ModelTokenizer;
use crate::error::{IndexerError, Result};
use crate::parse::{Block, ContentType, Document};

pub use splitter::MAX_TOKEN_BYTES;

/// How many tokens `text` counts for as the chunker counts them: a token longer than
/// [`MAX_TOKEN_BYTES`] as one per that many bytes (a document's size, against its limit).
/// Counted a piece of [`COUNTED_PIECE_BYTES`] at a time, cut at white space, so that the
/// tokenizer's working memory stays bounded however long the text: whole, a 170 MB text of
/// XML took it past 17 GiB.
pub fn weighed_token_count(tokenizer: &ModelTokenizer, text: &str) -> Result<usize> {
    pieces_at_white_space(text, COUNTED_PIECE_BYTES)
        .map(|piece| {
            let (spans, _) = tokenizer.tokens_of(piece)?;
            Ok(splitter::bounded_spans(piece, spans).len())
        })
        .sum()
}

/// Bytes of text tokenized at once when a text is counted.
const COUNTED_PIECE_BYTES: usize = 64 << 10;

/// `text` in pieces of at most `most` bytes (one character more where a character is longer),
/// each cut before the last white space in its reach, else at a character's boundary.
fn pieces_at_white_space(text: &str, most: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if rest.len() <= most {
            return Some(std::mem::take(&mut rest));
        }
        let mut reach = most;
        while !rest.is_char_boundary(reach) {
            reach -= 1;
        }
        let cut = match rest[..reach].rfind(char::is_whitespace) {
            Some(space) if space > 0 => space,
            _ if reach > 0 => reach,
            _ => rest.char_indices().nth(1).map_or(rest.len(), |(i, _)| i),
        };
        let (piece, after) = rest.split_at(cut);
        rest = after;
        Some(piece)
    })
}

/// Bumped whenever the chunking rules change, so signatures change with them.
pub const CHUNKER_VERSION: u32 = 1;

/// A piece of a document, the unit that is embedded and searched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// `<doc_id>-<index>`.
    pub chunk_id: String,
    pub doc_id: String,
    pub index: u32,
    pub text: String,
    pub page: Option<u32>,
    pub heading_path: Vec<String>,
    pub content_type: ContentType,
    /// Model tokens of `text`, special tokens not counted.
    pub token_count: u32,
    /// Where in a recording the chunk's first words are said (a transcript's chunks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_seconds: Option<u32>,
}

/// Chunk sizes, in model tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkerConfig {
    /// Window per chunk, special tokens included (the model's window by default).
    pub max_tokens: usize,
    /// Tokens repeated from the end of one chunk at the start of the next.
    pub overlap_tokens: usize,
}

impl Default for ChunkerConfig {
    fn default() -> Self {
        Self {
            max_tokens: 256,
            overlap_tokens: 32,
        }
    }
}

/// A document's chunks, and for each the model's input ids of its text (specials added)
/// where the chunker tokenized exactly that text and the ids fit the model window: the
/// embed stage then uses them instead of tokenizing the text a second time.
#[derive(Debug, Clone, Default)]
pub struct DocumentChunks {
    pub chunks: Vec<Chunk>,
    /// One entry per chunk.
    pub model_ids: Vec<Option<Vec<u32>>>,
}

/// Splits documents into chunks.
pub trait Chunker: Send + Sync {
    /// The chunks of `document`, with the model ids the chunker measured them by.
    fn chunk_for_model(&self, document: &Document) -> Result<DocumentChunks>;
    /// The chunks of `document`.
    fn chunk(&self, document: &Document) -> Result<Vec<Chunk>> {
        Ok(self.chunk_for_model(document)?.chunks)
    }
    /// A stable signature of the rules and settings; equal signatures mean equal chunks.
    fn signature(&self) -> String;
    fn config(&self) -> ChunkerConfig;
}

/// The token-measured chunker.
pub struct TokenChunker {
    config: ChunkerConfig,
    tokenizer: Arc<ModelTokenizer>,
    tokenizer_id: String,
}

impl TokenChunker {
    /// `tokenizer_id` identifies the tokenizer (the model hash) in the signature.
    pub fn new(config: ChunkerConfig, tokenizer: Arc<ModelTokenizer>, tokenizer_id: &str) -> Result<Self> {
        let specials = tokenizer.special_tokens();
        let smallest = specials + 9;
        if config.max_tokens < smallest {
            return Err(IndexerError::Config(format!(
                "chunk window of {} tokens is too small: the smallest is {smallest} (the model's {specials} special tokens and 9 of text)",
                config.max_tokens
            )));
        }
        if config.max_tokens > tokenizer.max_tokens() {
            return Err(IndexerError::Config(format!(
                "chunk window of {} tokens exceeds the model window of {}",
                config.max_tokens,
                tokenizer.max_tokens()
            )));
        }
        if config.overlap_tokens * 2 > config.max_tokens - specials {
            return Err(IndexerError::Config(format!(
                "chunk overlap of {} tokens must be at most half the window",
                config.overlap_tokens
            )));
        }
        Ok(Self {
            config,
            tokenizer,
            tokenizer_id: tokenizer_id.to_string(),
        })
    }

    /// The tokenizer chunks are measured with, whose ids [`Chunker::chunk_for_model`] returns.
    pub fn tokenizer(&self) -> &Arc<ModelTokenizer> {
        &self.tokenizer
    }
}

/// Consecutive blocks that share heading path, page, kind and header form one section;
/// chunks never cross a section boundary.
struct Section<'a> {
    first: &'a Block,
    text: String,
    /// The blocks' time marks (a transcript's), each at its byte of `text`, in order.
    times: Vec<(usize, u32)>,
}

impl Section<'_> {
    /// Where in the recording the words from byte `at` on are said: the last time mark at or
    /// before it.
    fn seconds_at(&self, at: usize) -> Option<u32> {
        let marks_before = self.times.partition_point(|(mark, _)| *mark <= at);
        marks_before.checked_sub(1).map(|last| self.times[last].1)
    }
}

fn sections(blocks: &[Block]) -> Vec<Section<'_>> {
    let mut out: Vec<Section> = Vec::new();
    for block in blocks.iter().filter(|b| !b.text.trim().is_empty()) {
        let same_section = out.last().is_some_and(|section| {
            let first = section.first;
            first.heading_path == block.heading_path
                && first.page == block.page
                && first.kind == block.kind
                && first.header == block.header
        });
        if same_section {
            let section = out.last_mut().expect("a section");
            section
                .text
                .push_str(if block.kind == ContentType::Table { "\n" } else { "\n\n" });
        } else {
            out.push(Section {
                first: block,
                text: String::new(),
                times: Vec::new(),
            });
        }
        let section = out.last_mut().expect("a section");
        let trimmed = block.text.trim();
        let (base, lead) = (section.text.len(), block.text.len() - block.text.trim_start().len());
        section.times.extend(block.times.iter().map(|mark| {
            let at = (mark.at as usize).saturating_sub(lead).min(trimmed.len());
            (base + at, mark.seconds)
        }));
        section.text.push_str(trimmed);
    }
    out
}

impl Chunker for TokenChunker {
    fn chunk_for_model(&self, document: &Document) -> Result<DocumentChunks> {
        let specials = self.tokenizer.special_tokens();
        let window = self.tokenizer.max_tokens();
        let mut out = DocumentChunks::default();
        for mut section in sections(&document.blocks) {
            let first = section.first;
            let room = self.config.max_tokens.saturating_sub(specials);
            let mut header = first.header.as_deref().map(str::trim).filter(|h| !h.is_empty());
            let mut header_tokens = match header {
                Some(h) => self.tokenizer.count(h)?,
                None => 0,
            };
            // A header that would take over half of every chunk (a table of thousands of
            // columns) is not repeated: it is read once, as the section's first line.
            // Where the section's text starts in the text split (after a header read as its
            // first line).
            let (text, text_at) = match header {
                Some(h) if header_tokens * 2 > room => {
                    (header, header_tokens) = (None, 0);
                    (format!("{h}\n{}", section.text), h.len() + 1)
                }
                _ => (std::mem::take(&mut section.text), 0),
            };
            let budget = room.saturating_sub(header_tokens);
            if budget < 8 {
                return Err(IndexerError::Config(format!(
                    "a {}-token chunk leaves no room for text",
                    self.config.max_tokens
                )));
            }
            let overlap = self.config.overlap_tokens.min(budget / 2);
            for piece in splitter::split(&text, budget, overlap, &self.tokenizer)? {
                let start_seconds = section.seconds_at(piece.at.saturating_sub(text_at));
                let (text, ids) = match header {
                    Some(h) => {
                        let text = format!("{h}\n{}", piece.text);
                        let ids = self.tokenizer.model_ids(&text)?;
                        (text, ids)
                    }
                    None => (piece.text, piece.ids),
                };
                let token_count = ids.text_tokens() as u32;
                let index = out.chunks.len() as u32;
                out.model_ids.push(ids.into_window(window));
                out.chunks.push(Chunk {
                    chunk_id: format!("{}-{index}", document.doc_id),
                    doc_id: document.doc_id.clone(),
                    index,
                    text,
                    page: first.page,
                    heading_path: first.heading_path.clone(),
                    content_type: first.kind,
                    token_count,
                    start_seconds,
                });
            }
        }
        // A run keeps every document's chunks until it publishes: no spare capacity (a
        // one-chunk document's list would hold room for four).
        out.chunks.shrink_to_fit();
        Ok(out)
    }

    fn signature(&self) -> String {
        let described = format!(
            "quarry-chunker v{CHUNKER_VERSION} max_tokens={} overlap={} tokenizer={}",
            self.config.max_tokens, self.config.overlap_tokens, self.tokenizer_id
        );
        format!(
            "v{CHUNKER_VERSION}-{}",
            &hex::encode(Sha256::digest(described.as_bytes()))[..16]
        )
    }

    fn config(&self) -> ChunkerConfig {
        self.config
    }
}

#[cfg(test)]
mod tests {
    use super::pieces_at_white_space;

    #[test]
    fn pieces_are_cut_before_white_space_and_hold_the_whole_text() {
        let text = "ab cd ef\u{00e9}gh ij";
        let pieces: Vec<&str> = pieces_at_white_space(text, 5).collect();
        assert_eq!(pieces, ["ab", " cd", " ef\u{00e9}", "gh ij"]);
        assert_eq!(pieces.concat(), text);
        // No white space: cut at characters' boundaries; a character longer than the reach alone.
        let word = "\u{0e20}".repeat(10);
        let pieces: Vec<&str> = pieces_at_white_space(&word, 7).collect();
        assert!(pieces.iter().all(|p| p.len() == 6), "{pieces:?}");
        assert_eq!(pieces.concat(), word);
        assert_eq!(pieces_at_white_space("\u{0e20}\u{0e20}", 2).count(), 2);
        assert_eq!(pieces_at_white_space("", 4).count(), 0);
    }
}
