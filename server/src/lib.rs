//! The quarry search side and the appliance. Search: a snapshot loaded for search
//! ([`loaded`]), filters ([`filter`]), the vector / keyword / hybrid lanes ([`searcher`],
//! [`fusion`]), several collections searched as one ([`scoped_search`]), the seed-000 result records ([`result`]), facet counts ([`facets`], over [`facet_columns`]), quality evaluation ([`eval`]).
//! Server ([`app`]): collections ([`collection`]) with hot-swapped snapshots, online
//! ingestion jobs ([`jobs`], [`ingest`]) and their events ([`events`], through [`event_hub`]), the HTTP routes ([`routes`]), errors mapped to
//! status codes in one place ([`api_error`]), API keys ([`auth`]), metrics ([`metrics`]); concurrent searches
//! embed their queries in shared passes ([`query_batcher`]), repeated ones from a cache
//! ([`query_cache`]).

pub mod api_error;
pub mod app;
pub mod auth;
pub mod auto_fusion;
pub mod collection;
pub mod context_chunks;
pub mod error;
pub mod eval;
pub mod event_hub;
pub mod events;
pub mod facet_columns;
pub mod facets;
pub mod field_index;
pub mod filter;
pub mod fusion;
pub mod hidden_rows;
pub mod ingest;
pub mod jobs;
pub mod kept_columns;
pub mod loaded;
pub mod metadata_columns;
pub mod metadata_condition;
pub mod metrics;
pub mod persist;
pub mod query_batcher;
pub mod query_cache;
pub mod records;
pub mod result;
pub mod result_window;
pub mod routes;
pub mod scoped_search;
pub mod search_queue;
pub mod searcher;

pub use error::ServerError;
pub use filter::Filters;
pub use loaded::{LoadOptions, LoadedSnapshot};
pub use result::{ChunkResult, RetrievalResult};
pub use searcher::{Mode, SearchRequest, Searcher};
