//! A query's prefixes (`hydro*`) and misspelt words (`hydorgen~`,
//! [`crate::search::query_syntax`]) made into what the keyword lane looks up: each one's
//! index terms (a prefix's completions, the terms a few typing errors from a word) in every
//! segment of every searched part, their row counts summed, the [`MAX_GROUP_TERMS`] most
//! frequent kept, as one group of a [`KeywordQuery`]: a row holding any of them scores by the
//! best, as one word of the query (the word itself, as typed, is a word of the ranking text
//! too). The same terms go to every part and segment, so scores compare across them. Under
//! typo tolerance each word no live row holds adds its correction's term as a group of one
//! ([`crate::search::spelling::corrections`]). The lane counts each group's terms as held by
//! as many rows as its most frequent ([`quarry_indexer::index::KeywordStats::blended`]).

use std::collections::HashMap;

use quarry_indexer::index::{most_frequent, KeywordIndex, KeywordQuery, TantivyKeywordIndex, MAX_GROUP_TERMS};

use crate::error::ServerError;
use crate::search::placed::PlacedPart;
use crate::search::query_syntax::ParsedQuery;
use crate::search::spelling::Corrected;

/// What the keyword lane looks up for `query` over `parts`: its ranking text, a group for
/// each prefix and misspelt word that has terms in them, and the term of each `corrected`
/// word (typo tolerance: a word no live row holds read as the index's nearest word).
pub fn keyword_query(
    parts: &[PlacedPart<'_>],
    query: &ParsedQuery,
    corrected: &[Corrected],
) -> Result<KeywordQuery, ServerError> {
    let mut keyword = KeywordQuery::text(&query.ranking_text);
    keyword.any_of.extend(corrected.iter().map(|c| vec![c.term.clone()]));
    for prefix in &query.prefixes {
        keyword
            .any_of
            .extend(group(parts, |index| index.prefix_completions(prefix, MAX_GROUP_TERMS))?);
    }
    for near in &query.near {
        keyword.any_of.extend(group(parts, |index| {
            index.near_terms(&near.word, near.edits, MAX_GROUP_TERMS)
        })?);
    }
    Ok(keyword)
}

type Terms = quarry_indexer::error::Result<Option<Vec<(String, u64)>>>;

/// The most frequent of the terms `terms_in` finds in every segment of `parts` (None: none).
fn group(
    parts: &[PlacedPart<'_>],
    terms_in: impl Fn(&TantivyKeywordIndex) -> Terms,
) -> Result<Option<Vec<String>>, ServerError> {
    let mut counts: HashMap<String, u64> = HashMap::new();
    for at in parts {
        for segment in &at.part.searcher.snapshot().segments {
            for (term, rows) in terms_in(&segment.data.keyword)?.unwrap_or_default() {
                *counts.entry(term).or_default() += rows;
            }
        }
    }
    let terms = most_frequent(counts, MAX_GROUP_TERMS);
    Ok((!terms.is_empty()).then(|| terms.into_iter().map(|(term, _)| term).collect()))
}
