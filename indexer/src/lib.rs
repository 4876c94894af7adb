//! quarry-indexer: builds and reads quarry snapshots.
//!
//! The data path, one module per stage:
//! [`source`] (object store listing and fetch) -> [`parse`] (bytes to [`parse::Document`]) ->
//! [`chunk`] (token-bounded chunks) -> [`embed`] (L2-normalized vectors) ->
//! [`index`] (FAISS + tantivy BM25) -> [`snapshot`] (Parquet + index files + manifest),
//! orchestrated by [`pipeline`].

pub mod chunk;
pub mod embed;
pub mod error;
pub mod index;
pub mod parse;
pub mod pipeline;
pub mod process_memory;
pub mod snapshot;
pub mod source;
pub mod store;
pub mod summary;

pub use error::{IndexerError, Result};
