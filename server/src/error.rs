//! The server crate's error type.

use quarry_indexer::IndexerError;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(transparent)]
    Indexer(#[from] IndexerError),

    #[error("model mismatch: the snapshot was embedded with {snapshot_model} (sha256 {snapshot_sha}), the loaded model is {loaded_model} (sha256 {loaded_sha}); load the snapshot's model with --model")]
    ModelMismatch {
        snapshot_model: String,
        snapshot_sha: String,
        loaded_model: String,
        loaded_sha: String,
    },

    #[error("snapshot {uri} failed verification: {problems}")]
    Corrupt { uri: String, problems: String },

    #[error("invalid request: {0}")]
    InvalidRequest(String),

    /// A search by example names a chunk or document that no collection searched serves.
    #[error("{0}")]
    UnknownExample(String),

    /// Settings that do not go together (found at start-up).
    #[error("{0}")]
    Settings(String),

    #[error("the LLM at {url} did not answer within {secs} s")]
    LlmTimeout { url: String, secs: u64 },

    #[error("the LLM at {url} could not be reached: {reason}")]
    LlmUnreachable { url: String, reason: String },

    #[error("the LLM at {url} answered {status}: {body}")]
    LlmStatus { url: String, status: u16, body: String },

    #[error("the LLM at {url} sent an answer quarry cannot read: {reason}")]
    LlmAnswer { url: String, reason: String },
}
