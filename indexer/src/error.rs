//! The indexer's error type: one enum, each variant carrying the context a user needs.

use std::path::PathBuf;

/// Result alias for the indexer crate.
pub type Result<T, E = IndexerError> = std::result::Result<T, E>;

/// Everything that can stop an indexer operation (per-document parse failures are
/// [`crate::parse::ParseError`] and never stop a run).
#[derive(Debug, thiserror::Error)]
pub enum IndexerError {
    #[error("invalid location `{uri}`: {reason}")]
    InvalidUri { uri: String, reason: String },

    // The cause is part of the message (not a `#[source]`), so a failure stored as text in
    // a run report is complete, and a printed error chain does not repeat it.
    #[error("object store error at `{uri}`: {cause}")]
    Store { uri: String, cause: object_store::Error },

    #[error("I/O error at {path}: {cause}")]
    Io { path: PathBuf, cause: std::io::Error },

    #[error("invalid option: {0}")]
    Config(String),

    #[error("file too large: {size} bytes exceeds the limit of {limit} bytes ({} MiB; --max-file-mb raises it)", limit / (1024 * 1024))]
    FileTooLarge { size: u64, limit: u64 },

    /// A listed source file that changed before it was read (replaced by a symlink out of the
    /// folder, or by something that is not a regular file).
    #[error("{uri}: {reason}")]
    SourceFileChanged { uri: String, reason: String },

    #[error("model at {path}: {reason}")]
    Model { path: PathBuf, reason: String },

    #[error("device: {0}")]
    Device(String),

    #[error("embedding failed: {0}")]
    Embed(String),

    #[error("vector kernel: {0}")]
    Kernel(#[from] quarry_kernels::KernelError),

    #[error("vector index ({stage}): {reason}")]
    VectorIndex { stage: &'static str, reason: String },

    #[error("keyword index ({stage}): {reason}")]
    KeywordIndex { stage: &'static str, reason: String },

    #[error("no published snapshot at {uri} (LATEST is missing)")]
    NoSnapshot { uri: String },

    #[error("snapshot {path}: {reason}")]
    Snapshot { path: String, reason: String },

    #[error("checksum mismatch for {path}: manifest says {expected}, file has {actual}")]
    Checksum {
        path: String,
        expected: String,
        actual: String,
    },

    #[error("ANN recall@10 of the {index} index is {recall:.4}, below --min-recall {min}; nothing was published (raise efSearch / nprobe, or use --index flat)")]
    RecallBelowMinimum { index: String, recall: f64, min: f64 },

    #[error("nothing to publish: {0}")]
    NothingToPublish(String),

    #[error("{uri} has no version `{version}` (`quarry versions {uri}` lists them)")]
    NoSuchVersion { uri: String, version: String },

    #[error("{uri} has no version before LATEST ({latest}) that no rollback abandoned and whose files are all there")]
    NoEarlierVersion { uri: String, latest: String },

    #[error("LATEST of {uri} moved from {expected} to {found} while this writer worked on it; nothing of its was published over it")]
    LatestMoved {
        uri: String,
        expected: String,
        found: String,
    },

    #[error("LATEST of {uri} moved from {base}, which this run built on, to {latest}, which does not build on it (a rollback, or a full version), while the run worked: nothing was published; run again to build on {latest} (this run's segments are left for gc)")]
    BaseReplaced { uri: String, base: String, latest: String },

    #[error("run {run_id} in {uri}: shard {missing} of {shards} has not finished (no record under runs/{run_id}/): nothing was published; run the missing shards, then publish again")]
    ShardsMissing {
        uri: String,
        run_id: String,
        /// The missing shards, `1, 4`.
        missing: String,
        shards: usize,
    },

    #[error("run {run_id}: the shards' parts cannot be merged: {reason}")]
    ShardsDisagree { run_id: String, reason: String },

    #[error("run {run_id} in {uri}: its shards read version {previous}, but LATEST is now {latest}, which does not build on it (a rollback, or a full version published meanwhile): nothing was published; run the shards again to build on {latest} (unchanged files are not fetched again)")]
    RunOutdated {
        uri: String,
        run_id: String,
        previous: String,
        latest: String,
    },
}

impl IndexerError {
    pub(crate) fn io(path: impl Into<PathBuf>, cause: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            cause,
        }
    }

    pub(crate) fn store(uri: impl Into<String>, cause: object_store::Error) -> Self {
        Self::Store { uri: uri.into(), cause }
    }

    pub(crate) fn snapshot(path: impl Into<String>, reason: impl ToString) -> Self {
        Self::Snapshot {
            path: path.into(),
            reason: reason.to_string(),
        }
    }
}
