//! A query's prefixes (`hydro*`, [`crate::search::query_syntax`]) made into what the keyword
//! lane looks up: each prefix's completions in every segment of every searched part, their
//! row counts summed, the [`MAX_PREFIX_COMPLETIONS`] most frequent kept, as one group of a
//! [`KeywordQuery`]: a row holding any of them scores by the best, as one word of the query
//! (the word itself, as typed, is a word of the ranking text too). The same completions go
//! to every part and segment, so scores compare across them.

use std::collections::HashMap;

use quarry_indexer::index::{most_frequent, KeywordIndex, KeywordQuery, MAX_PREFIX_COMPLETIONS};

use crate::error::ServerError;
use crate::search::placed::PlacedPart;
use crate::search::query_syntax::ParsedQuery;

/// What the keyword lane looks up for `query` over `parts`: its ranking text and a group of
/// completions for each prefix that has any.
pub fn keyword_query(parts: &[PlacedPart<'_>], query: &ParsedQuery) -> Result<KeywordQuery, ServerError> {
    let mut keyword = KeywordQuery::text(&query.ranking_text);
    for prefix in &query.prefixes {
        let mut counts: HashMap<String, u64> = HashMap::new();
        for at in parts {
            for segment in &at.part.searcher.snapshot().segments {
                let Some(completions) = segment
                    .data
                    .keyword
                    .prefix_completions(prefix, MAX_PREFIX_COMPLETIONS)?
                else {
                    continue;
                };
                for (term, rows) in completions {
                    *counts.entry(term).or_default() += rows;
                }
            }
        }
        let mut completions: Vec<(String, u64)> = counts.into_iter().collect();
        most_frequent(&mut completions, MAX_PREFIX_COMPLETIONS);
        if !completions.is_empty() {
            keyword
                .any_of
                .push(completions.into_iter().map(|(term, _)| term).collect());
        }
    }
    Ok(keyword)
}
