//! A row's analyzed terms handed to tantivy as one string, each term followed by
//! [`TERM_END`], and the tokenizer that reads them back term by term.
//!
//! tantivy's `PreTokenizedString` would carry the same terms, but its documents store one as
//! JSON (every token's text, offsets and position), which the indexing thread parses back:
//! that round trip was about 40% of a keyword build's CPU time. The index written from a
//! term list is the one written from the pre-tokenized terms, byte for byte: the same terms
//! in the same order, so the same postings, term frequencies and field norms (positions and
//! offsets are not indexed).

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// Ends each term of a term list. Terms are made of letters, digits and combining marks
/// (NFKC-normalized, lower-cased, stemmed), none of which is U+0000.
pub const TERM_END: char = '\0';

/// Appends `term` to the term list `list`. A U+0000 inside a term (none of the analyzers
/// makes one) is written as U+FFFD, so that it cannot split the term in two.
pub fn push_term(list: &mut String, term: &str) {
    match term.contains(TERM_END) {
        false => list.push_str(term),
        true => list.extend(term.chars().map(|c| if c == TERM_END { '\u{FFFD}' } else { c })),
    }
    list.push(TERM_END);
}

/// Reads a term list back: one token per term, empty terms included, positions from 0.
#[derive(Clone, Default)]
pub struct TermListTokenizer {
    token: Token,
}

pub struct TermListStream<'a> {
    rest: &'a str,
    offset: usize,
    token: &'a mut Token,
}

impl Tokenizer for TermListTokenizer {
    type TokenStream<'a> = TermListStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> TermListStream<'a> {
        self.token.reset();
        TermListStream {
            rest: text,
            offset: 0,
            token: &mut self.token,
        }
    }
}

impl TokenStream for TermListStream<'_> {
    fn advance(&mut self) -> bool {
        if self.rest.is_empty() {
            return false;
        }
        // A list always ends with TERM_END; text that does not is read as if it did.
        let (term, rest) = self.rest.split_once(TERM_END).unwrap_or((self.rest, ""));
        self.token.text.clear();
        self.token.text.push_str(term);
        self.token.offset_from = self.offset;
        self.token.offset_to = self.offset + term.len();
        self.token.position = self.token.position.wrapping_add(1);
        self.offset += term.len() + TERM_END.len_utf8();
        self.rest = rest;
        true
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(list: &str) -> Vec<(String, usize)> {
        let mut tokenizer = TermListTokenizer::default();
        let mut stream = tokenizer.token_stream(list);
        let mut out = Vec::new();
        while stream.advance() {
            out.push((stream.token().text.clone(), stream.token().position));
        }
        out
    }

    #[test]
    fn terms_come_back_as_written_spaces_and_empty_terms_included() {
        let terms = ["صلى الله", "", "東京", "naïve", "a\0b"];
        let mut list = String::new();
        for term in terms {
            push_term(&mut list, term);
        }
        let read = read(&list);
        let texts: Vec<&str> = read.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["صلى الله", "", "東京", "naïve", "a\u{FFFD}b"]);
        let positions: Vec<usize> = read.iter().map(|(_, p)| *p).collect();
        assert_eq!(positions, [0, 1, 2, 3, 4]);
        assert!(super::tests::read("").is_empty());
        // A list cut short still gives its last term.
        assert_eq!(super::tests::read("x\0y"), [("x".to_string(), 0), ("y".to_string(), 1)]);
    }

    #[test]
    fn a_reused_tokenizer_starts_each_list_at_position_zero() {
        let mut tokenizer = TermListTokenizer::default();
        for list in ["one\0two\0", "three\0"] {
            let mut stream = tokenizer.token_stream(list);
            assert!(stream.advance());
            assert_eq!(stream.token().position, 0);
        }
    }
}
