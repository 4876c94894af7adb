//! What the analysis fuzz targets read with: each revision of the multilingual analyzer, the
//! languages it stems, and its analyzer with a profile of one row in each of them (so a query
//! is read as every one), made once for all inputs.

use std::sync::{Arc, LazyLock};

use quarry_indexer::index::analysis::{KeywordAnalyzer, LanguageProfile, Revision, StemLanguage};

/// Per revision, in [`Revision::ALL`]'s order: the revision, the languages it stems, its analyzer.
pub static EVERY_LANGUAGE: LazyLock<Vec<(Revision, Vec<StemLanguage>, KeywordAnalyzer)>> = LazyLock::new(|| {
    Revision::ALL
        .into_iter()
        .map(|revision| {
            let languages: Vec<StemLanguage> = StemLanguage::ALL
                .into_iter()
                .filter(|language| language.first_read_in() <= revision)
                .collect();
            let profile = LanguageProfile {
                analyzed_as: languages
                    .iter()
                    .map(|language| (language.code().to_string(), 1))
                    .collect(),
                revision,
                ..LanguageProfile::default()
            };
            (revision, languages, KeywordAnalyzer::Multilingual(Arc::new(profile)))
        })
        .collect()
});
