//! The search engine: a snapshot version loaded for search ([`loaded`], its tombstoned rows
//! [`hidden_rows`], its per-field orders [`field_index`], its metadata and facet columns
//! [`metadata_columns`], [`facet_columns`], kept by [`kept_columns`]), filters ([`filter`],
//! [`metadata_condition`]), a request's scope — one collection or several as one —
//! validated once and placed ([`scope`], [`placed`]), the query's phrases and excluded words
//! ([`query_syntax`]), the vectors it is read as ([`readings`]) and its prefixes' completions and misspelt words' near terms ([`term_groups`]), a search by example ([`similar_to`]), the lanes that rank it ([`lanes`]:
//! vector and keyword over each snapshot's indexes, [`searcher`], and their fusions,
//! [`fusion`], [`auto_fusion`]; each row a [`hit`]), the window cut once ([`result_window`]), neighbouring chunks
//! ([`context_chunks`]), facet counts ([`facets`]), the seed-000 result records ([`result`]),
//! "did you mean" for words no row holds ([`spelling`]),
//! query embeddings shared between concurrent searches ([`query_batcher`]) and cached
//! ([`query_cache`]), and retrieval quality on a judged set ([`eval`]). Nothing here knows
//! HTTP.

pub mod auto_fusion;
pub mod context_chunks;
pub mod eval;
pub mod facet_columns;
pub mod facets;
pub mod field_index;
pub mod filter;
pub mod fusion;
pub mod hidden_rows;
pub mod hit;
pub mod kept_columns;
pub mod lanes;
pub mod layer;
mod live_documents;
pub mod loaded;
pub mod metadata_columns;
pub mod metadata_condition;
pub mod placed;
pub mod query_batcher;
pub mod query_cache;
pub mod query_syntax;
pub mod readings;
pub mod result;
pub mod result_window;
pub mod scope;
pub mod searcher;
pub mod similar_to;
pub mod spelling;
pub mod term_groups;
