//! Where a query's words occur in a text: the spans of the text's tokens that the keyword
//! analyzer turns into one of the query's terms, so "thermometers" matches "thermometer"
//! and stop words never match, exactly as the keyword lane counts a match. A quoted phrase's
//! words are marked where they stand as the phrase (one span from its first word to its
//! last), as the phrase matched, not wherever one of them occurs alone.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use super::analysis::{lone_pair_characters, KeywordAnalyzer, TextReader};

/// The analyzed terms of a query (normalized, stemmed; stop words left out), with a reader
/// of the same analyzer for every text they are looked for in (one reader, and its caches,
/// for all of a search's results).
pub struct QueryTerms {
    terms: HashSet<String>,
    /// Each phrase's readings ([`KeywordAnalyzer::phrase_readings`]): its terms, as numbers
    /// in `phrase_terms`, with their positions from the phrase's first.
    phrases: Vec<Vec<(usize, usize)>>,
    phrase_terms: HashMap<String, usize>,
    /// The query's characters that stand alone in a script read as pairs (`寺`): a pair of
    /// `also` holding one (`大寺`, looked up for it) is marked at that character alone.
    lone: Vec<char>,
    /// The terms of the query's own words (not `also`'s), marked whole.
    own: HashSet<String>,
    reader: TextReader,
}

impl QueryTerms {
    /// The terms of `query` as an index read by `analyzer` looks it up.
    pub fn of(analyzer: &KeywordAnalyzer, query: &str) -> Self {
        let own: HashSet<String> = analyzer.query_terms(query).into_iter().collect();
        Self {
            terms: own.clone(),
            own,
            phrases: Vec::new(),
            phrase_terms: HashMap::new(),
            lone: lone_pair_characters(query)
                .iter()
                .filter_map(|character| character.chars().next())
                .collect(),
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

    /// [`Self::with_terms`] for a query's words outside its quoted `phrases`, and the phrases,
    /// each marked only where a text holds it.
    pub fn with_phrases(
        analyzer: &KeywordAnalyzer,
        words: &str,
        phrases: &[String],
        also: impl IntoIterator<Item = String>,
    ) -> Self {
        let mut terms = Self::with_terms(analyzer, words, also);
        for phrase in phrases {
            let lone = lone_pair_characters(phrase);
            terms
                .lone
                .extend(lone.iter().filter_map(|character| character.chars().next()));
            for reading in analyzer.phrase_readings(phrase) {
                let numbered = reading
                    .into_iter()
                    .map(|(at, term)| {
                        let next = terms.phrase_terms.len();
                        (at, *terms.phrase_terms.entry(term).or_insert(next))
                    })
                    .collect();
                terms.phrases.push(numbered);
            }
        }
        terms
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty() && self.phrases.is_empty()
    }

    /// The byte ranges of `text`'s words that match a query term, and of its phrases, in
    /// order; overlapping matches (character pairs, a word inside a phrase) are one range.
    pub fn spans_in(&mut self, text: &str) -> Vec<Range<usize>> {
        if self.is_empty() {
            return Vec::new();
        }
        let mut spans: Vec<Range<usize>> = Vec::new();
        // The text's terms that some phrase holds: (position, the term's number, span).
        let mut placed: Vec<(usize, usize, Range<usize>)> = Vec::new();
        let (terms, phrase_terms, lone, own) = (&self.terms, &self.phrase_terms, &self.lone, &self.own);
        self.reader.for_each_positioned_term(text, |term, span, position| {
            if terms.contains(term) {
                match lone_in_pair(term, lone).filter(|_| !own.contains(term)) {
                    Some(ends) => spans.extend(ends.into_iter().flat_map(|end| end_of(text, span.clone(), end))),
                    None => spans.push(span.clone()),
                }
            }
            if let Some(&number) = phrase_terms.get(term) {
                placed.push((position, number, span));
            }
        });
        for reading in &self.phrases {
            spans.extend(phrase_spans(&placed, reading));
        }
        spans.sort_by_key(|span| span.start);
        let mut merged: Vec<Range<usize>> = Vec::with_capacity(spans.len());
        for span in spans {
            match merged.last_mut() {
                Some(last) if span.start < last.end => last.end = last.end.max(span.end),
                _ => merged.push(span),
            }
        }
        merged
    }
}

/// Which ends of a pair `term` (0: its first character, 1: its last) are one of the query's
/// `lone` characters; None when it is no pair holding one.
fn lone_in_pair(term: &str, lone: &[char]) -> Option<Vec<usize>> {
    let mut chars = term.chars();
    let (Some(first), Some(last), None) = (chars.next(), chars.next(), chars.next()) else {
        return None;
    };
    let ends: Vec<usize> = [first, last]
        .iter()
        .enumerate()
        .filter(|(_, c)| lone.contains(c))
        .map(|(end, _)| end)
        .collect();
    (!ends.is_empty()).then_some(ends)
}

/// The byte range of the first (`end` 0) or last character of `text[span]`.
fn end_of(text: &str, span: Range<usize>, end: usize) -> Option<Range<usize>> {
    let (at, c) = match end {
        0 => text[span.clone()].char_indices().next()?,
        _ => text[span.clone()].char_indices().next_back()?,
    };
    Some(span.start + at..span.start + at + c.len_utf8())
}

/// Where `reading` (terms by number, with positions from its first) stands in a text whose
/// phrase terms are `placed` (by position, in order): from its first term's span to its last's.
fn phrase_spans<'a>(
    placed: &'a [(usize, usize, Range<usize>)],
    reading: &'a [(usize, usize)],
) -> impl Iterator<Item = Range<usize>> + 'a {
    let (first, rest) = reading.split_first().map_or((None, &[][..]), |(f, r)| (Some(*f), r));
    placed.iter().enumerate().filter_map(move |(i, (start, number, span))| {
        let (first_at, first_number) = first?;
        if *number != first_number {
            return None;
        }
        let mut end = span.end;
        for &(at, wanted) in rest {
            let position = start + at - first_at;
            let found = placed[i..].binary_search_by_key(&position, |p| p.0).ok()?;
            let (_, number, span) = &placed[i + found];
            if *number != wanted {
                return None;
            }
            end = end.max(span.end);
        }
        Some(span.start..end)
    })
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
    fn a_phrase_is_marked_where_it_stands_as_the_phrase() {
        use super::super::analysis::LanguageProfile;
        let phrase = |analyzer: &KeywordAnalyzer, words: &str, phrases: &[&str]| {
            let phrases: Vec<String> = phrases.iter().map(|p| p.to_string()).collect();
            QueryTerms::with_phrases(analyzer, words, &phrases, Vec::new())
        };
        let text = "New York has new towers; York Minster is old. The state of the art in new-york style.";
        let english = KeywordAnalyzer::English;
        // The phrase's words alone are not marked; the phrase is one span, a word of the query
        // outside it is marked wherever it stands.
        assert_eq!(
            words(text, &phrase(&english, "", &["new york"]).spans_in(text)),
            ["New York", "new-york"]
        );
        assert_eq!(
            words(text, &phrase(&english, "minster", &["new york"]).spans_in(text)),
            ["New York", "Minster", "new-york"]
        );
        // The same word in the phrase and outside it is marked everywhere, the phrase as one span.
        assert_eq!(
            words(text, &phrase(&english, "towers york", &["new york"]).spans_in(text)),
            ["New York", "towers", "York", "new-york"]
        );
        // Stop words inside a phrase keep their places (the English analyzer leaves gaps).
        assert_eq!(
            words(text, &phrase(&english, "", &["state of the art"]).spans_in(text)),
            ["state of the art"]
        );
        assert!(phrase(&english, "", &["art state"]).spans_in(text).is_empty());
        let texts = ["東京タワーは東京の観光名所です。", "The state of the art in New York."];
        let multilingual = KeywordAnalyzer::Multilingual(std::sync::Arc::new(LanguageProfile::of_texts(&texts).0));
        // A CJK phrase is its pairs in a row: 東京 alone is not marked.
        assert_eq!(
            words(texts[0], &phrase(&multilingual, "", &["東京タワー"]).spans_in(texts[0])),
            ["東京タワー"]
        );
        assert_eq!(
            words(texts[1], &phrase(&multilingual, "", &["new york"]).spans_in(texts[1])),
            ["New York"]
        );
        assert_eq!(
            words(
                texts[1],
                &phrase(&multilingual, "", &["state of the art"]).spans_in(texts[1])
            ),
            ["state of the art"]
        );
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
        // A character alone in the query, looked up by the pairs holding it, is marked alone.
        let pairs = || ["京タ", "京の"].map(String::from);
        let mut terms = QueryTerms::with_terms(&analyzer, "京", pairs());
        assert_eq!(words(texts[0], &terms.spans_in(texts[0])), ["京", "京"]);
        let mut terms = QueryTerms::with_phrases(&analyzer, "", &["京".to_string()], pairs());
        assert_eq!(words(texts[0], &terms.spans_in(texts[0])), ["京", "京"]);
        // A pair the query holds itself is marked whole.
        let mut terms = QueryTerms::with_terms(&analyzer, "京 東京", pairs());
        assert_eq!(words(texts[0], &terms.spans_in(texts[0])), ["東京", "東京"]);
    }
}
