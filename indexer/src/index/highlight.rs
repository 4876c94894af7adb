//! Where a query's words occur in a text: the spans of the text's tokens that the keyword
//! analyzer turns into one of the query's terms, so "thermometers" matches "thermometer"
//! and stop words never match, exactly as the keyword lane counts a match.

use std::collections::HashSet;
use std::ops::Range;

use super::analysis::{KeywordAnalyzer, TextReader};

/// The analyzed terms of a query (normalized, stemmed; stop words left out), with a reader
/// of the same analyzer for every text they are looked for in (one reader, and its caches,
/// for all of a search's results).
pub struct QueryTerms {
    terms: HashSet<String>,
    reader: TextReader,
}

impl QueryTerms {
    /// The terms of `query` as an index read by `analyzer` looks it up.
    pub fn of(analyzer: &KeywordAnalyzer, query: &str) -> Self {
        Self {
            terms: analyzer.query_terms(query).into_iter().collect(),
            reader: analyzer.text_reader(),
        }
    }

    /// The terms of `query` (as [`Self::of`]) and the index terms `also`: a prefix's
    /// completions and a misspelt word's near terms, which the keyword lane looks up beside
    /// the query's words.
    pub fn with_terms(analyzer: &KeywordAnalyzer, query: &str, also: impl IntoIterator<Item = String>) -> Self {
        let mut terms = Self::of(analyzer, query);
        terms.terms.extend(also);
        terms
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The byte ranges of `text`'s words that match a query term, in order.
    pub fn spans_in(&mut self, text: &str) -> Vec<Range<usize>> {
        if self.terms.is_empty() {
            return Vec::new();
        }
        let mut spans: Vec<Range<usize>> = Vec::new();
        let terms = &self.terms;
        self.reader.for_each_term(text, |term, span| {
            if terms.contains(term) {
                // Overlapping character pairs that both match are one span.
                match spans.last_mut() {
                    Some(last) if span.start < last.end => last.end = last.end.max(span.end),
                    _ => spans.push(span),
                }
            }
        });
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

    fn english(query: &str) -> QueryTerms {
        QueryTerms::of(&KeywordAnalyzer::English, query)
    }

    fn words<'a>(text: &'a str, spans: &[Range<usize>]) -> Vec<&'a str> {
        spans.iter().map(|s| &text[s.clone()]).collect()
    }

    #[test]
    fn matches_words_as_the_keyword_lane_does() {
        let mut terms = english("Who invented the mercury thermometers?");
        let text = "Fahrenheit invented a Mercury thermometer; the thermometer's scale is his. Inventions differ.";
        // Case, plural and stem match ("Inventions" and "invented" are both "invent"); the stop word "the" never does.
        assert_eq!(
            words(text, &terms.spans_in(text)),
            ["invented", "Mercury", "thermometer", "thermometer", "Inventions"]
        );
        assert!(english("the of and").is_empty());
        assert!(english("the of and").spans_in(text).is_empty());
        // Accents fold as in the index.
        let text = "Le café crème";
        assert_eq!(words(text, &english("cafe").spans_in(text)), ["café"]);
    }

    #[test]
    fn byte_ranges_to_character_ranges() {
        let text = "naïve café, plain cafe";
        let spans = english("cafe").spans_in(text);
        let chars: Vec<char> = text.chars().collect();
        let ranges = char_ranges(text, &spans);
        let found: Vec<String> = ranges.iter().map(|r| chars[r.clone()].iter().collect()).collect();
        assert_eq!(found, ["café", "cafe"]);
        assert_eq!(ranges[0], 6..10);
    }

    #[test]
    fn multilingual_matches_cover_pairs_and_stems() {
        use super::super::analysis::LanguageProfile;
        let texts = [
            "東京タワーは東京の観光名所です。",
            "Die alten Häuser der Stadt stehen am Ufer des Flusses, und viele Besucher kommen jedes Jahr.",
        ];
        let analyzer = KeywordAnalyzer::Multilingual(std::sync::Arc::new(LanguageProfile::of_texts(&texts).0));
        // Overlapping character pairs that match make one span: 東京タワー, then 東京.
        let mut terms = QueryTerms::of(&analyzer, "東京タワー");
        assert_eq!(words(texts[0], &terms.spans_in(texts[0])), ["東京タワー", "東京"]);
        let mut terms = QueryTerms::of(&analyzer, "Haus");
        assert_eq!(words(texts[1], &terms.spans_in(texts[1])), ["Häuser"]);
    }
}
