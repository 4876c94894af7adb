//! Embedding: texts to L2-normalized vectors. [`Embedder`] is the swappable part;
//! [`BertEmbedder`] runs any sentence-transformers BERT folder with candle on the CPU,
//! or on CUDA when built with the `cuda` feature.

mod batching;
mod bert;
mod device;
mod model_dir;
mod tokenizer;

pub use batching::{plan_batches, BatchPolicy};
pub use bert::{BertEmbedder, EmbedOptions, Precision};
pub use device::DeviceSpec;
pub use model_dir::{default_model_dir, ModelDir, Pooling};
pub use tokenizer::ModelTokenizer;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::Result;

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
    /// Embeds `texts`, returning rows in input order.
    fn embed(&self, texts: &[&str]) -> Result<Embeddings>;
    /// The device the model runs on, for logs (`cpu`, `cuda:0`).
    fn device_name(&self) -> String;
}
