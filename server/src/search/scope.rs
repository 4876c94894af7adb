//! What a search runs over, validated once: one collection's snapshot or several
//! collections' together, as if one snapshot held them all (each part's rows numbered after
//! the previous parts'). [`SearchScope::search`] validates the request, embeds the query
//! once (or finds its example's vector, [`crate::search::similar_to`]; under typo tolerance
//! the query with its corrected words too, [`crate::search::readings`]), places the parts
//! (the rows each one's filters allow), ranks them with the mode's
//! [`Lane`](crate::search::lanes::Lane), cuts the window once ([`fill_window`]), and builds
//! the seed-000 results (with neighbours, highlights, facets and a "did you mean" when asked).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quarry_indexer::index::{KeywordQuery, QueryTerms};

use crate::error::ServerError;
use crate::search::context_chunks::add_context;
use crate::search::facets::{FacetCounter, Facets};
use crate::search::lanes::lane_for;
use crate::search::placed::{locate, PlacedPart, SearchPart};
use crate::search::query_syntax::{both, ParsedQuery};
use crate::search::readings::QueryReadings;
use crate::search::result::{add_highlights, chunk_result, ChunkResult, RetrievalResult};
use crate::search::result_window::{fill_window, Window};
use crate::search::searcher::{Mode, SearchOutcome, SearchRequest, SearchTimings, Searcher};
use crate::search::similar_to::Example;
use crate::search::spelling::{corrected_text, corrections, suggestion};
use crate::search::term_groups::keyword_query;

/// The query's embedding as typed, for a search that ranks by one.
enum Typed {
    /// The mode ranks by words alone.
    Needless,
    /// Embedded already (or an example's vector).
    Given(Vec<f32>),
    /// To embed, with the query's other reading when it has one.
    ToEmbed,
}

/// The snapshots one search runs over.
pub struct SearchScope<'a> {
    parts: Vec<SearchPart<'a>>,
}

impl<'a> SearchScope<'a> {
    /// One collection's snapshot; its results name no collection.
    pub fn one(searcher: &'a Searcher) -> Self {
        Self {
            parts: vec![SearchPart { name: None, searcher }],
        }
    }

    /// Several collections as one, each result naming its collection. Their query is embedded
    /// once, with the model every loaded collection shares (a Searcher refuses any other).
    /// No parts (every collection empty) answers no chunks.
    pub fn collections(named: &'a [(String, Arc<Searcher>)]) -> Self {
        Self {
            parts: named
                .iter()
                .map(|(name, searcher)| SearchPart {
                    name: Some(name),
                    searcher,
                })
                .collect(),
        }
    }

    /// Validates `request`, embeds its query when its mode needs it (or finds its example's
    /// vector), and runs it.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchOutcome, ServerError> {
        let query = request.validated_query()?;
        let started = Instant::now();
        let example = self.example(request)?;
        let typed = match (&example, request.ranking_mode(&query)) {
            (Some(example), _) => Typed::Given(example.vector.clone()),
            (None, Mode::Keyword) => Typed::Needless,
            (None, _) => Typed::ToEmbed,
        };
        let found_example = started.elapsed();
        let (readings, embedding) = self.readings_of(request, &query, typed, example.is_some())?;
        // The example's lookup and the model's calls; looking up the query's words is search.
        let corrected = started.elapsed() - found_example - embedding;
        let mut outcome = self.ranked(request, &query, &readings, example.as_ref())?;
        outcome.timings.embed_secs = (found_example + embedding).as_secs_f64();
        outcome.timings.search_secs += corrected.as_secs_f64();
        Ok(outcome)
    }

    /// Validates `request` and runs it with an already embedded query (`None` for keyword
    /// mode): the embedding of its ranking text ([`SearchRequest::validated_query`]). A search
    /// by example ranks by its example's vector instead.
    pub fn search_with_vector(
        &self,
        request: &SearchRequest,
        query_vector: Option<&[f32]>,
    ) -> Result<SearchOutcome, ServerError> {
        let readings = self.readings(request, query_vector.map(<[f32]>::to_vec))?;
        self.search_with_readings(request, &readings)
    }

    /// How `request` reads its query, its embedding as typed given (`typed`; None for keyword
    /// mode): its words corrected, and the vectors the vector lane ranks by
    /// ([`QueryReadings`]). A search by example ranks by its example's vector instead.
    pub fn readings(&self, request: &SearchRequest, typed: Option<Vec<f32>>) -> Result<QueryReadings, ServerError> {
        let query = request.validated_query()?;
        let example = self.example(request)?;
        let typed = match example.as_ref().map(|e| e.vector.clone()).or(typed) {
            Some(vector) => Typed::Given(vector),
            None => Typed::Needless,
        };
        Ok(self.readings_of(request, &query, typed, example.is_some())?.0)
    }

    /// Validates `request` and runs it as `readings` read it ([`SearchScope::readings`] of
    /// the same request, or of one that differs in its mode alone).
    pub fn search_with_readings(
        &self,
        request: &SearchRequest,
        readings: &QueryReadings,
    ) -> Result<SearchOutcome, ServerError> {
        let query = request.validated_query()?;
        let example = self.example(request)?;
        self.ranked(request, &query, readings, example.as_ref())
    }

    /// The readings of `query` (`request`'s, parsed): its words no live row holds corrected
    /// when the request asks for suggestions or tolerates typos; its `typed` vector; and under
    /// typo tolerance, when words were corrected and the search ranks by the query's text
    /// (not by an example), its ranking text with them corrected, embedded (together with the
    /// typed one when that is to embed too). With the time the model's calls took.
    fn readings_of(
        &self,
        request: &SearchRequest,
        query: &ParsedQuery,
        typed: Typed,
        by_example: bool,
    ) -> Result<(QueryReadings, Duration), ServerError> {
        let corrected = match request.suggest || request.typo_tolerance {
            true => corrections(&self.parts, query)?,
            false => Vec::new(),
        };
        let mut readings = QueryReadings::new(corrected, request.typo_tolerance);
        let Some(part) = self.parts.first() else {
            return Ok((readings, Duration::ZERO));
        };
        let corrected_text = match by_example {
            true => None,
            false => corrected_text(&query.ranking_text, readings.tolerated()),
        };
        let embedding = Instant::now();
        readings.vectors = match typed {
            Typed::Needless => return Ok((readings, Duration::ZERO)),
            Typed::Given(vector) => {
                let mut vectors = vec![vector];
                if let Some(text) = &corrected_text {
                    vectors.push(part.searcher.embed_query(text)?);
                }
                vectors
            }
            Typed::ToEmbed => {
                let texts: Vec<&str> = std::iter::once(query.ranking_text.as_str())
                    .chain(corrected_text.as_deref())
                    .collect();
                part.searcher.embed_queries(&texts)?
            }
        };
        readings.corrected_text = corrected_text;
        Ok((readings, embedding.elapsed()))
    }

    /// The example a search by example ranks by, found in the scope's parts.
    fn example(&self, request: &SearchRequest) -> Result<Option<Example>, ServerError> {
        request
            .similar_to
            .as_ref()
            .map(|similar_to| similar_to.example(&self.parts))
            .transpose()
    }

    /// Ranks the parts with the request's lane as `readings` read the query, cuts the
    /// window and builds the results.
    fn ranked(
        &self,
        request: &SearchRequest,
        query: &ParsedQuery,
        readings: &QueryReadings,
        example: Option<&Example>,
    ) -> Result<SearchOutcome, ServerError> {
        let started = Instant::now();
        let mode = request.ranking_mode(query);
        // A search by example leaves its source document out as a filter would.
        let with_source_left_out = request
            .similar_to
            .as_ref()
            .zip(example)
            .and_then(|(similar_to, example)| similar_to.filters_for(&request.filters, example));
        let filters = with_source_left_out.as_ref().unwrap_or(&request.filters);
        let mut placed = Vec::with_capacity(self.parts.len());
        let mut offset = 0;
        for part in &self.parts {
            let snapshot = part.searcher.snapshot();
            placed.push(PlacedPart {
                part,
                offset,
                allowed: both(
                    filters.allowed_rows(snapshot),
                    query.constraints.allowed_rows(snapshot)?,
                ),
            });
            offset += snapshot.row_count();
        }
        let window = Window {
            len: request.offset + request.top_k,
            min_score: request.min_score.unwrap_or(0.0),
            max_per_document: match request.layer.per_document() {
                true => Some(1),
                false => request.max_chunks_per_document,
            },
        };
        // Under typo tolerance the keyword lane reads each corrected word as its correction too.
        let keyword = keyword_query(&placed, query, readings.tolerated())?;
        let lane = lane_for(request, mode, &keyword, readings)?;
        let rank = |depth: usize| lane.rank(&placed, depth);
        let document_of = |row: usize| {
            let (at, local) = locate(&placed, row);
            (
                at.offset,
                at.part.searcher.snapshot().document_of(local).doc_id.as_str(),
            )
        };
        let kept = fill_window(window, rank, document_of)?;
        // The query's terms as each segment's keyword analyzer reads it (by part and segment start).
        let mut highlight_terms: HashMap<(usize, usize), QueryTerms> = HashMap::new();
        let chunks: Vec<ChunkResult> = kept
            .into_iter()
            .skip(request.offset)
            .map(|scored| {
                let (at, local) = locate(&placed, scored.row);
                let mut chunk = result_in(at, local, scored.score, scored.lanes);
                if request.layer.per_document() {
                    let searcher = &at.part.searcher;
                    let document = searcher.snapshot().document_of(local);
                    request
                        .layer
                        .apply(&mut chunk, document, |text| searcher.count_tokens(text));
                }
                if request.context_chunks > 0 {
                    add_context(&mut chunk, at.part.searcher.snapshot(), local, request.context_chunks);
                }
                if request.highlight {
                    let segment = at.part.searcher.snapshot().segment_of(local);
                    let terms = highlight_terms.entry((at.offset, segment.offset)).or_insert_with(|| {
                        let completions = keyword.any_of.iter().flatten().map(|g| g.term.clone());
                        let analyzer = segment.data.keyword.analyzer();
                        QueryTerms::with_phrases(analyzer, &query.loose_text, &query.constraints.phrases, completions)
                    });
                    add_highlights(&mut chunk, terms);
                }
                chunk
            })
            .collect();
        let facets = if request.facets.is_empty() {
            None
        } else {
            Some(count_facets(&placed, request, mode, &keyword)?)
        };
        let total_tokens = chunks
            .iter()
            .map(|c| c.metadata["token_count"].as_u64().unwrap_or(0))
            .sum();
        let underfilled = chunks.len() < request.top_k;
        let suggestion = match request.suggest {
            true => suggestion(&request.query, &readings.corrected, request.query_syntax),
            false => None,
        };
        Ok(SearchOutcome {
            result: RetrievalResult {
                chunks,
                total_tokens,
                query: request.query.clone(),
                backend: "quarry".into(),
                success: true,
                error_message: None,
                mode: mode.as_str().into(),
                underfilled,
                facets,
                rewritten_query: None,
                suggestion,
            },
            timings: SearchTimings {
                embed_secs: 0.0,
                search_secs: started.elapsed().as_secs_f64(),
            },
        })
    }
}

/// The facets of the documents the search could return: those the filters allow, and in
/// keyword mode only those with a row holding a query word.
fn count_facets(
    placed: &[PlacedPart<'_>],
    request: &SearchRequest,
    mode: Mode,
    query: &KeywordQuery,
) -> Result<Facets, ServerError> {
    let mut counter = FacetCounter::new(&request.facets, request.facet_size)?;
    for at in placed {
        let matching = match mode {
            Mode::Keyword => Some(at.part.searcher.keyword_matching_rows(query)?),
            Mode::Vector | Mode::Hybrid | Mode::Auto => None,
        };
        counter.count(at.part.searcher.snapshot(), at.allowed.as_ref(), matching.as_deref());
    }
    Ok(counter.finish())
}

/// The golden record of row `local` of the part `at`.
fn result_in(
    at: &PlacedPart<'_>,
    local: usize,
    score: f32,
    lanes: serde_json::Map<String, serde_json::Value>,
) -> ChunkResult {
    let mut result = chunk_result(at.part.searcher.snapshot(), local, score, lanes);
    if let Some(name) = at.part.name {
        result.metadata.insert("collection".into(), name.into());
    }
    result
}
