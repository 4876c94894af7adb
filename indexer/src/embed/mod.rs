//! Embedding: texts to L2-normalized vectors. [`Embedder`] is the swappable part;
//! [`BertEmbedder`] runs any sentence-transformers BERT folder with candle on the CPU,
//! or on CUDA when built with the `cuda` feature.

mod batching;
mod bert;
mod bert_encoder;
#[cfg(feature = "cuda")]
mod cuda_attention;
/// The encoder's fused CUDA steps (public for their parity test against the CPU twins).
#[cfg(feature = "cuda")]
pub mod cuda_encoder_ops;
mod device;
pub mod encoder_ops;
mod model_dir;
mod replicas;
mod tokenizer;
mod wordpiece;

pub use batching::{plan_batches, BatchPolicy};
pub use bert::{BertEmbedder, EmbedOptions, Precision};
pub use bert_encoder::{BertEncoder, EncoderSteps, TokenStates};
pub use device::DeviceSpec;
pub use model_dir::{default_model_dir, ModelDir, Pooling};
pub use replicas::ReplicatedEmbedder;
pub use tokenizer::{ModelIds, ModelTokenizer, TokenizerPath};

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::Result;

/// Loads a model folder on the device(s) of `options`: one replica per GPU of a set
/// (`cuda:0,1`), else one model.
pub fn load_embedder(dir: &ModelDir, options: EmbedOptions) -> Result<Arc<dyn Embedder>> {
    let devices = options.device.replicas();
    if devices.len() == 1 {
        return Ok(Arc::new(BertEmbedder::load(dir, options)?));
    }
    let replicas = devices.into_iter().map(|device| BertEmbedder::load(dir, EmbedOptions { device, ..options })).collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(ReplicatedEmbedder::new(replicas)?))
}

/// What a snapshot records about the model that embedded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub name: String,
    /// sha256 of model.safetensors, hex.
    pub sha256: String,
    pub dim: usize,
    /// Window in tokens, specials included.
    pub max_tokens: usize,
    pub pooling: Pooling,
}

/// Row-major embeddings: `data.len() == rows * dim`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Embeddings {
    pub dim: usize,
    pub data: Vec<f32>,
}

impl Embeddings {
    pub fn rows(&self) -> usize {
        if self.dim == 0 { 0 } else { self.data.len() / self.dim }
    }

    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }
}

/// Turns texts into unit-length vectors.
pub trait Embedder: Send + Sync {
    fn info(&self) -> &ModelInfo;
    fn tokenizer(&self) -> &Arc<ModelTokenizer>;
    /// Model input ids of `texts` (specials added, truncated to the window): the CPU half
    /// of [`Embedder::embed`], which callers may run ahead on other threads.
    fn tokenize(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        self.tokenizer().encode_for_model(texts)
    }
    /// Embeds tokenized texts, returning rows in input order.
    fn embed_tokens(&self, ids: &[Vec<u32>]) -> Result<Embeddings>;
    /// Embeds `texts`, returning rows in input order.
    fn embed(&self, texts: &[&str]) -> Result<Embeddings> {
        self.embed_tokens(&self.tokenize(texts)?)
    }
    /// The device the model runs on, for logs (`cpu`, `cuda:0`).
    fn device_name(&self) -> String;
}
