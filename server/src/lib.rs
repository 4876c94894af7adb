//! quarry's search side and its HTTP appliance, in three rooms:
//! - [`search`]: the engine — loaded snapshots, filters, lanes, fusion, windows, facets, eval;
//!   no HTTP types;
//! - [`http`]: the routes of every surface, the error table, API keys, the search pool;
//! - [`ingest`]: upload jobs and online ingestion through the indexer pipeline.
//!
//! Between them: [`app`] assembles the server (options, start-up, the router, shutdown),
//! [`registry`] holds the served collections, [`collection`] one collection's current version
//! ([`collection_layers`] its own layers, made from its documents' abstracts), [`events`] and [`event_hub`] carry
//! ingestion and version events to the event streams, [`records`] are the seed-000 records,
//! [`persist`] writes small JSON records atomically, [`metrics`] counts for Prometheus, [`llm`]
//! talks to the optional OpenAI-compatible LLM endpoint, and [`llm_summaries`] has it write
//! document layers (`--summaries llm`).

pub mod app;
pub mod collection;
pub mod collection_layers;
pub mod error;
pub mod event_hub;
pub mod events;
pub mod http;
pub mod ingest;
pub mod llm;
pub mod llm_summaries;
pub mod metrics;
pub mod persist;
pub mod records;
pub mod registry;
pub mod search;

pub use error::ServerError;
pub use search::filter::Filters;
pub use search::loaded::{LoadOptions, LoadedSnapshot};
pub use search::result::{ChunkResult, RetrievalResult};
pub use search::searcher::{Mode, SearchRequest, Searcher};
