//! Retrieval test data and how to score it: the BEIR folder layout ([`beir`]), IR metrics
//! as trec_eval computes them ([`metrics`]), and seeded synthetic corpora ([`synthetic`]).

pub mod beir;
pub mod metrics;
pub mod synthetic;

/// Errors of this crate: which file, which line, why.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}, line {line}: {reason}")]
    Line { path: String, line: usize, reason: String },
    #[error("{0}")]
    Invalid(String),
}
