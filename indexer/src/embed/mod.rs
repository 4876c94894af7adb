//! Embedding: texts to L2-normalized vectors. [`Embedder`] is the swappable part;
//! [`BertEmbedder`] runs any sentence-transformers BERT folder with candle on the CPU,
//! or on CUDA when built with the `cuda` feature.

mod batching;
mod bert;
mod bert_config;
mod bert_encoder;
#[cfg(feature = "cuda")]
mod cuda_attention;
/// A dense layer's bias in cuBLASLt's epilogue (public for its parity test on a GPU).
#[cfg(feature = "cuda")]
pub mod cuda_bias_gemm;
/// The encoder's fused CUDA steps (public for their parity test against the CPU twins).
#[cfg(feature = "cuda")]
pub mod cuda_encoder_ops;
mod dense_layer;
mod device;
pub mod encoder_ops;
mod encoder_steps;
mod head_attention;
mod model_dir;
mod reading;
mod replicas;
mod shared_batches;
mod streamed_calls;
/// The encoder's first step (public for its parity test on a GPU).
pub mod token_embedding;
mod tokenizer;
mod wordpiece;

pub use batching::{plan_batches, BatchPolicy, CPU_TOKEN_BUDGET};
pub use bert::{BertEmbedder, EmbedOptions, Precision, MAX_AUTO_CPU_LANES};
pub use bert_config::{BertConfig, HiddenAct, PositionEmbeddingType};
pub use bert_encoder::{BertEncoder, TokenStates};
pub use device::DeviceSpec;
pub use encoder_steps::{EncoderSteps, EncoderTuning, GpuGelu};
pub use model_dir::{default_model_dir, position_offset, ModelDir, Pooling};
pub use reading::{read_words, WordReading};
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
    let replicas = devices
        .into_iter()
        .map(|device| BertEmbedder::load(dir, EmbedOptions { device, ..options }))
        .collect::<Result<Vec<_>>>()?;
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
    /// How the vectors were computed: device kind and precision (`cpu f32`, `cpu bf16
    /// products`, `cuda f16`, ...). An embedder lists its own; a version lists every one its
    /// vectors came from, more than one when a run kept vectors an earlier run computed
    /// otherwise (`unrecorded`: by a version written before quarry recorded this). All meet the
    /// golden bar (cosine >= 0.999 against f32), so runs reuse each other's vectors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub precisions: Vec<String>,
}

/// What a version records of precisions ([`ModelInfo::precisions`]) when a run carries over
/// vectors of `carried` (a version's list; `None` when it carries none) and adds its own
/// (`own`, when it computed any).
pub fn version_precisions(carried: Option<&[String]>, own: Option<&[String]>) -> Vec<String> {
    let mut precisions: Vec<String> = match carried {
        Some([]) => vec![UNRECORDED_PRECISION.to_string()],
        Some(carried) => carried.to_vec(),
        None => Vec::new(),
    };
    for precision in own.unwrap_or_default() {
        if !precisions.contains(precision) {
            precisions.push(precision.clone());
        }
    }
    precisions
}

/// The precision of vectors from a version that did not record it.
pub const UNRECORDED_PRECISION: &str = "unrecorded";

/// Row-major embeddings: `data.len() == rows * dim`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Embeddings {
    pub dim: usize,
    pub data: Vec<f32>,
}

impl Embeddings {
    pub fn rows(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
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
    /// [`Embedder::embed_tokens`], telling `done` how many of the texts each batch finished
    /// as it finishes (so a long call's progress shows). The default tells it once, at the end.
    fn embed_tokens_reporting(&self, ids: &[Vec<u32>], done: &(dyn Fn(usize) + Sync)) -> Result<Embeddings> {
        let embeddings = self.embed_tokens(ids)?;
        done(ids.len());
        Ok(embeddings)
    }
    /// Embeds a stream of calls (each item one call's tokenized texts), handing each call's
    /// rows to `sink` in order until it says to stop (returns false); `done` hears each batch's
    /// texts as it finishes. The default makes one [`Embedder::embed_tokens_reporting`] call
    /// after another; a model with one lane (a GPU) keeps a batch queued across the calls, so
    /// the device does not wait on the host between them.
    fn embed_token_calls(
        &self,
        calls: &mut dyn Iterator<Item = Result<Vec<Vec<u32>>>>,
        done: &(dyn Fn(usize) + Sync),
        sink: &mut dyn FnMut(Embeddings) -> bool,
    ) -> Result<()> {
        embed_calls_in_turn(self, calls, done, sink)
    }
    /// Embeds `texts`, returning rows in input order.
    fn embed(&self, texts: &[&str]) -> Result<Embeddings> {
        self.embed_tokens(&self.tokenize(texts)?)
    }
    /// Embeds a search's query texts (a query and another reading of it: a few short texts),
    /// rows in input order. The default is one [`Embedder::embed`] call; a server's embedders
    /// answer each from their recent queries and embed the rest with other searches' queries.
    fn embed_queries(&self, texts: &[&str]) -> Result<Embeddings> {
        self.embed(texts)
    }
    /// The device the model runs on, for logs (`cpu`, `cuda:0`).
    fn device_name(&self) -> String;
    /// The most padded tokens one of its forward passes holds, all its devices together (None:
    /// not known). A caller that gathers chunks into calls sizes them to several of these, so
    /// that the length-sorted batches of a call come out full.
    fn batch_tokens(&self) -> Option<usize> {
        None
    }
}

/// [`Embedder::embed_token_calls`] one call after another (a call without texts makes no
/// model call).
fn embed_calls_in_turn<E: Embedder + ?Sized>(
    embedder: &E,
    calls: &mut dyn Iterator<Item = Result<Vec<Vec<u32>>>>,
    done: &(dyn Fn(usize) + Sync),
    sink: &mut dyn FnMut(Embeddings) -> bool,
) -> Result<()> {
    for ids in calls {
        let ids = ids?;
        let embeddings = if ids.is_empty() {
            Embeddings {
                dim: embedder.info().dim,
                data: Vec::new(),
            }
        } else {
            embedder.embed_tokens_reporting(&ids, done)?
        };
        if !sink(embeddings) {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| name.to_string()).collect()
    }

    #[test]
    fn a_version_lists_the_precisions_of_the_vectors_it_serves() {
        let (f32, bf16) = (names(&["cpu f32"]), names(&["cpu bf16 products"]));
        assert_eq!(version_precisions(None, Some(&bf16)), bf16, "a first run: its own");
        assert_eq!(
            version_precisions(Some(&f32), Some(&bf16)),
            names(&["cpu f32", "cpu bf16 products"]),
            "carried, then its own"
        );
        assert_eq!(version_precisions(Some(&f32), Some(&f32)), f32, "listed once");
        assert_eq!(
            version_precisions(Some(&f32), None),
            f32,
            "a run that computed nothing adds nothing"
        );
        assert_eq!(
            version_precisions(Some(&[]), Some(&bf16)),
            names(&["unrecorded", "cpu bf16 products"]),
            "an older version's vectors"
        );
    }
}
