#![no_main]
//! Any bytes as a text the keyword analyzer reads: every revision of the multilingual
//! analyzer reads it as a row of each language it stems (each word through that language's
//! Snowball stemmer, whatever its letters), as a query and as a phrase. A stemmer that panics
//! on some word would stop a whole index build, so none may; no term is empty (from the
//! third revision on) or holds a default-ignorable character (from the fourth on).

mod every_language;

use quarry_indexer::index::analysis::{is_default_ignorable, Revision};

use every_language::EVERY_LANGUAGE;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for (revision, languages, analyzer) in EVERY_LANGUAGE.iter() {
        let revision = *revision;
        let mut reader = analyzer.text_reader();
        for language in languages.iter().copied().map(Some).chain([None]) {
            reader.for_each_term_as(&text, language, |term, span| {
                // The earlier revisions index a word of Arabic marks alone as the empty term.
                assert!(!term.is_empty() || revision < Revision::V3, "an empty term");
                assert!(text.get(span).is_some(), "a term's span is not inside the text");
                // The fourth revision leaves soft hyphens, joiners and the like out of terms.
                assert!(
                    revision < Revision::V4 || !term.chars().any(is_default_ignorable),
                    "a default-ignorable character in a term"
                );
            });
        }
        let _ = analyzer.weighted_query_terms(&text);
        let _ = analyzer.phrase_readings(&text);
    }
});
