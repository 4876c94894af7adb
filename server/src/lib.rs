//! The quarry search side: a snapshot loaded for search ([`loaded`]), filters
//! ([`filter`]), the vector / keyword / hybrid lanes ([`searcher`], [`fusion`]) and the
//! seed-000 result records ([`result`]). The HTTP server builds on these.

pub mod error;
pub mod eval;
pub mod filter;
pub mod fusion;
pub mod loaded;
pub mod result;
pub mod searcher;

pub use error::ServerError;
pub use filter::Filters;
pub use loaded::{LoadOptions, LoadedSnapshot};
pub use result::{ChunkResult, RetrievalResult};
pub use searcher::{Mode, SearchRequest, Searcher};
