#![no_main]
//! Any bytes as a search box's query, read as a search reads it: by the query syntax (quoted
//! phrases, `-` exclusions, `*` prefixes, `~` misspelt words) and as plain text, then each
//! part as the keyword lane looks it up under the English analyzer and every revision of the
//! multilingual one (weighted terms, phrase readings, a prefix's or misspelt word's form, the
//! lone characters looked up by the pairs holding them), and the highlights it gives a
//! result's text and the query itself. A search request is any user's to send, so no query
//! may panic; every highlight lies inside its text, in order, on character boundaries.

mod every_language;

use quarry_indexer::index::analysis::{lone_pair_characters, KeywordAnalyzer};
use quarry_indexer::index::{char_ranges, QueryTerms};
use quarry_server::search::query_syntax::{ParsedQuery, QuerySyntax};

use every_language::EVERY_LANGUAGE;

/// A result's text in several scripts, with marks, joiners and pairs to match against.
const TEXT: &str =
    "東大寺は奈良にある古い寺。The harbour's state of the art: Häuser, Müller, Donau\u{AD}dampf, m² H₂O; \
                    کتاب\u{200C}ها المدينة ٢٠٢٤; किताबें; ශ්\u{200D}රී; ｶﾞｽ ２０２４年; เมืองนี้; 葛\u{E0100}城";

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let query = String::from_utf8_lossy(data);
    let english = KeywordAnalyzer::English;
    let multilingual = EVERY_LANGUAGE.iter().map(|(_, _, analyzer)| analyzer);
    let analyzers: Vec<&KeywordAnalyzer> = std::iter::once(&english).chain(multilingual).collect();
    for syntax in [QuerySyntax::Simple, QuerySyntax::Plain] {
        let Ok(parsed) = ParsedQuery::read(&query, syntax) else {
            continue;
        };
        let _ = lone_pair_characters(&parsed.ranking_text);
        for &analyzer in &analyzers {
            let _ = analyzer.weighted_query_terms(&parsed.ranking_text);
            for phrase in parsed.constraints.phrases.iter().chain(&parsed.constraints.excluded) {
                let _ = analyzer.phrase_readings(phrase);
            }
            for word in parsed.prefixes.iter().chain(parsed.near.iter().map(|near| &near.word)) {
                let _ = analyzer.prefix_form(word);
            }
            let mut terms = QueryTerms::with_phrases(analyzer, &parsed.loose_text, &parsed.constraints.phrases, []);
            for text in [TEXT, query.as_ref()] {
                let spans = terms.spans_in(text);
                let mut end = 0;
                for span in &spans {
                    assert!(
                        span.start >= end && span.start < span.end,
                        "highlights out of order: {spans:?}"
                    );
                    assert!(
                        text.get(span.clone()).is_some(),
                        "a highlight off the text's characters: {span:?}"
                    );
                    end = span.end;
                }
                assert_eq!(char_ranges(text, &spans).len(), spans.len());
            }
        }
    }
});
