//! Splits one section's text into pieces of at most `budget` model tokens.
//!
//! Cut points are preferred paragraph > sentence > line > word; among the candidates in
//! the second half of the window the highest level wins, the latest position breaking
//! ties. A run with no boundary at all (long CJK text, a giant token string) is cut at a
//! token boundary. Every cut is a token boundary, so every cut is a UTF-8 char boundary.
//! The next piece starts up to `overlap` tokens before the cut, at a word boundary.
//!
//! A token longer than [`MAX_TOKEN_BYTES`] (a word the model reads as one unknown token: a
//! run of letters with no space, such as Thai read by an English vocabulary, or a hex dump)
//! counts as one token per [`MAX_TOKEN_BYTES`] and may be cut between those, so a piece never
//! holds more than `budget` times that many bytes, whatever the text.

use crate::embed::{ModelIds, ModelTokenizer};
use crate::error::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Word = 1,
    Line = 2,
    Sentence = 3,
    Paragraph = 4,
}

/// Boundary candidates: byte positions where a piece may start, with their level.
fn boundaries(text: &str) -> Vec<(usize, Level)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut prev: Option<char> = None;
    let mut newlines = 0usize;
    let mut whitespace_run = false;
    let mut before_run: Option<char> = None;
    for (pos, ch) in text.char_indices() {
        if ch.is_whitespace() {
            if !whitespace_run {
                before_run = prev;
                newlines = 0;
            }
            whitespace_run = true;
            if ch == '\n' {
                newlines += 1;
            }
        } else {
            if whitespace_run && pos > 0 {
                let level = if newlines >= 2 {
                    Level::Paragraph
                } else if matches!(before_run, Some('.' | '!' | '?' | '。' | '！' | '？' | '…')) {
                    Level::Sentence
                } else if newlines == 1 {
                    Level::Line
                } else {
                    Level::Word
                };
                out.push((pos, level));
            } else if matches!(prev, Some('。' | '！' | '？')) {
                // CJK sentences end without a space.
                out.push((pos, Level::Sentence));
            }
            whitespace_run = false;
        }
        prev = Some(ch);
    }
    debug_assert!(out.iter().all(|(p, _)| text.is_char_boundary(*p) && *p < bytes.len()));
    out
}

/// The most bytes one token counts for: longer tokens count as one per this many bytes.
/// Longer than any piece of a vocabulary (their longest are about 20 characters), so only
/// unknown tokens are weighed so.
pub const MAX_TOKEN_BYTES: usize = 32;

/// `spans` with each token longer than [`MAX_TOKEN_BYTES`] cut into spans of at most that
/// many bytes, at character boundaries.
pub(super) fn bounded_spans(text: &str, spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    if spans.iter().all(|(start, end)| end - start <= MAX_TOKEN_BYTES) {
        return spans;
    }
    let mut out = Vec::with_capacity(spans.len());
    for (mut start, end) in spans {
        while end - start > MAX_TOKEN_BYTES {
            let mut cut = start + MAX_TOKEN_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            out.push((start, cut));
            start = cut;
        }
        out.push((start, end));
    }
    out
}

/// Index of the first token that starts at or after `pos`.
fn token_at(spans: &[(usize, usize)], pos: usize) -> usize {
    spans.partition_point(|s| s.0 < pos)
}

/// A piece of a text: where in the text it starts (its first byte, trimmed), the piece, and its
/// model ids.
pub(super) struct Piece {
    pub at: usize,
    pub text: String,
    pub ids: ModelIds,
}

/// `text[start..end]` trimmed, and where it starts in `text`.
fn trimmed(text: &str, start: usize, end: usize) -> (usize, &str) {
    let part = &text[start..end];
    let after_start = part.trim_start();
    (start + part.len() - after_start.len(), after_start.trim_end())
}

/// Splits `text` into trimmed, non-empty pieces of at most `budget` tokens each, each with
/// its model ids (the tokenizer's encoding of the piece, measured while cutting).
pub(super) fn split(text: &str, budget: usize, overlap: usize, tokenizer: &ModelTokenizer) -> Result<Vec<Piece>> {
    let (spans, ids) = tokenizer.spans_and_ids(text)?;
    let spans = bounded_spans(text, spans);
    if spans.is_empty() {
        return Ok(Vec::new());
    }
    if spans.len() <= budget {
        let (at, piece) = trimmed(text, 0, text.len());
        // The ids are those of `text`; a section's text is trimmed already.
        let ids = if piece.len() == text.len() {
            ids
        } else {
            tokenizer.model_ids(piece)?
        };
        return Ok(vec![Piece {
            at,
            text: piece.to_string(),
            ids,
        }]);
    }
    let cuts = boundaries(text);
    let mut pieces = Vec::new();
    let mut start = spans[0].0;
    let mut previous_cut = start;
    loop {
        let first = token_at(&spans, start);
        if spans.len() - first <= budget {
            let (at, piece) = trimmed(text, start, text.len());
            if !piece.is_empty() {
                pieces.push(Piece {
                    at,
                    text: piece.to_string(),
                    ids: tokenizer.model_ids(piece)?,
                });
            }
            break;
        }
        let limit = spans[first + budget].0; // start of the first token that no longer fits
        let cut = best_cut(&cuts, &spans, start.max(previous_cut), first, limit, budget);
        let (cut, ids) = shrink_to_fit(text, &spans, start, cut, budget, tokenizer)?;
        let (at, piece) = trimmed(text, start, cut);
        if !piece.is_empty() {
            pieces.push(Piece {
                at,
                text: piece.to_string(),
                ids,
            });
        }
        previous_cut = cut;
        start = next_start(&cuts, &spans, start, cut, overlap);
    }
    Ok(pieces)
}

/// The cut for a window starting at token `first` whose tokens must end before `limit`.
/// Only cuts after `floor` count: past the window's start, and past the previous cut, so
/// an overlapping window never ends where the one before it ended.
fn best_cut(
    cuts: &[(usize, Level)],
    spans: &[(usize, usize)],
    floor: usize,
    first: usize,
    limit: usize,
    budget: usize,
) -> usize {
    let lo = cuts.partition_point(|(p, _)| *p <= floor);
    let hi = cuts.partition_point(|(p, _)| *p <= limit);
    let window = &cuts[lo..hi];
    let half = spans[first + budget / 2].0;
    let pick = |candidates: &[(usize, Level)]| {
        candidates
            .iter()
            .copied()
            .max_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)))
            .map(|(p, _)| p)
    };
    let second_half = &window[window.partition_point(|(p, _)| *p < half)..];
    pick(second_half).or_else(|| pick(window)).unwrap_or(limit)
}

/// Re-tokenizing a piece cut inside a word can cost a token more than its span count;
/// move the cut back a token at a time until the piece really fits. Returns the cut and
/// the model ids of the (trimmed) piece before it.
fn shrink_to_fit(
    text: &str,
    spans: &[(usize, usize)],
    start: usize,
    mut cut: usize,
    budget: usize,
    tokenizer: &ModelTokenizer,
) -> Result<(usize, ModelIds)> {
    loop {
        let ids = tokenizer.model_ids(text[start..cut].trim())?;
        let index = token_at(spans, cut);
        if ids.text_tokens() <= budget || index == 0 || spans[index - 1].0 <= start {
            return Ok((cut, ids));
        }
        cut = spans[index - 1].0;
    }
}

/// Where the piece after a cut starts: at most `overlap` tokens back, at a word boundary
/// (a token boundary when there is none), always after `start`.
fn next_start(cuts: &[(usize, Level)], spans: &[(usize, usize)], start: usize, cut: usize, overlap: usize) -> usize {
    let cut_token = token_at(spans, cut);
    let floor = token_at(spans, start) + 1;
    let back = cut_token.saturating_sub(overlap).max(floor).min(cut_token);
    if back >= cut_token || back >= spans.len() {
        return spans.get(cut_token).map(|s| s.0).unwrap_or(cut).max(cut);
    }
    let earliest = spans[back].0;
    let word = cuts[cuts.partition_point(|(p, _)| *p < earliest)..]
        .iter()
        .find(|(p, level)| *p < cut && *level >= Level::Word)
        .map(|(p, _)| *p);
    word.unwrap_or(earliest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_levels() {
        let text = "One two. Three\nfour\n\nFive";
        let levels: Vec<_> = boundaries(text)
            .into_iter()
            .map(|(p, l)| (&text[p..p + 1], l))
            .collect();
        assert_eq!(
            levels,
            [
                ("t", Level::Word),
                ("T", Level::Sentence),
                ("f", Level::Line),
                ("F", Level::Paragraph)
            ]
        );
    }

    #[test]
    fn cjk_sentence_ends_are_boundaries() {
        let text = "天气很好。我们走吧";
        assert_eq!(boundaries(text), [("天气很好。".len(), Level::Sentence)]);
    }
}
