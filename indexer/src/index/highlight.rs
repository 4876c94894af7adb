//! Where a query's words occur in a text: the spans of the text's tokens that the keyword
//! analyzer turns into one of the query's terms, so "thermometers" matches "thermometer"
//! and stop words never match, exactly as the keyword lane counts a match.

use std::collections::HashSet;
use std::ops::Range;

use tantivy::tokenizer::TextAnalyzer;

use super::keyword::analyzer;

/// The analyzed terms of a query (lowercased, ASCII-folded, stemmed; stop words left out),
/// with the analyzer that read them, which then reads every text they are looked for in (one
/// analyzer, and its stem cache, for all of a search's results).
pub struct QueryTerms {
    terms: HashSet<String>,
    analyzer: TextAnalyzer,
}

impl QueryTerms {
    pub fn of(query: &str) -> Self {
        let mut analyzer = analyzer();
        let mut terms = HashSet::new();
        let mut stream = analyzer.token_stream(query);
        while stream.advance() {
            terms.insert(stream.token().text.clone());
        }
        drop(stream);
        Self { terms, analyzer }
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The byte ranges of `text`'s words that match a query term, in order.
    pub fn spans_in(&mut self, text: &str) -> Vec<Range<usize>> {
        if self.terms.is_empty() {
            return Vec::new();
        }
        let mut stream = self.analyzer.token_stream(text);
        let mut spans = Vec::new();
        while stream.advance() {
            let token = stream.token();
            if self.terms.contains(&token.text) {
                spans.push(token.offset_from..token.offset_to);
            }
        }
        spans
    }
}

/// Byte ranges of `text` (on character boundaries, in order) as character ranges.
pub fn char_ranges(text: &str, spans: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out = Vec::with_capacity(spans.len());
    let (mut byte, mut chars) = (0, 0);
    let mut advance_to = |target: usize| {
        chars += text[byte..target].chars().count();
        byte = target;
        chars
    };
    for span in spans {
        let start = advance_to(span.start);
        let end = advance_to(span.end);
        out.push(start..end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words<'a>(text: &'a str, spans: &[Range<usize>]) -> Vec<&'a str> {
        spans.iter().map(|s| &text[s.clone()]).collect()
    }

    #[test]
    fn matches_words_as_the_keyword_lane_does() {
        let mut terms = QueryTerms::of("Who invented the mercury thermometers?");
        let text = "Fahrenheit invented a Mercury thermometer; the thermometer's scale is his. Inventions differ.";
        // Case, plural and stem match ("Inventions" and "invented" are both "invent"); the stop word "the" never does.
        assert_eq!(words(text, &terms.spans_in(text)), ["invented", "Mercury", "thermometer", "thermometer", "Inventions"]);
        assert!(QueryTerms::of("the of and").is_empty());
        assert!(QueryTerms::of("the of and").spans_in(text).is_empty());
        // Accents fold as in the index.
        let text = "Le café crème";
        assert_eq!(words(text, &QueryTerms::of("cafe").spans_in(text)), ["café"]);
    }

    #[test]
    fn byte_ranges_to_character_ranges() {
        let text = "naïve café, plain cafe";
        let spans = QueryTerms::of("cafe").spans_in(text);
        let chars: Vec<char> = text.chars().collect();
        let ranges = char_ranges(text, &spans);
        let found: Vec<String> = ranges.iter().map(|r| chars[r.clone()].iter().collect()).collect();
        assert_eq!(found, ["café", "cafe"]);
        assert_eq!(ranges[0], 6..10);
    }
}
