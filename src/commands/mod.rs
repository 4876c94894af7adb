//! One module per subcommand, plus the options they share.

pub mod embed;
pub mod index;
pub mod inspect;

use std::path::PathBuf;

use quarry_indexer::embed::{default_model_dir, DeviceSpec};

/// Model and device options shared by every command that embeds.
#[derive(clap::Args, Debug, Clone)]
pub struct ModelArgs {
    /// Sentence-transformers model folder (default: models/all-MiniLM-L6-v2, fetched by scripts/fetch-model.sh).
    #[arg(long, env = "QUARRY_MODEL")]
    pub model: Option<PathBuf>,
    /// auto | cpu | cuda | cuda:N
    #[arg(long, env = "QUARRY_DEVICE", default_value = "auto")]
    pub device: DeviceSpec,
    /// Padded tokens per embedding batch (batches are length-sorted).
    #[arg(long, env = "QUARRY_BATCH_TOKENS", default_value_t = 16_384)]
    pub batch_tokens: usize,
}

impl ModelArgs {
    pub fn model_dir(&self) -> anyhow::Result<PathBuf> {
        Ok(match &self.model {
            Some(dir) => dir.clone(),
            None => default_model_dir()?,
        })
    }
}

/// Object-store options shared by every command that reads or writes snapshots.
#[derive(clap::Args, Debug, Clone)]
pub struct StoreArgs {
    /// S3-compatible endpoint, e.g. http://127.0.0.1:5000 (AWS_* variables give credentials and region).
    #[arg(long, env = "QUARRY_S3_ENDPOINT")]
    pub endpoint: Option<String>,
}

impl StoreArgs {
    pub fn options(&self) -> quarry_indexer::store::StoreOptions {
        quarry_indexer::store::StoreOptions { s3_endpoint: self.endpoint.clone() }
    }
}

/// A multi-threaded runtime for the async parts (object store I/O).
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}
