//! BERT's encoder for inference, on candle: the weights and config that candle-transformers'
//! `BertModel` reads, the same arithmetic (tested against it), laid out for throughput:
//! - query, key and value are one matrix product, the attention scale folded into the query
//!   weights;
//! - on the CPU every row-wise step (the embeddings' layer norm, the dense layers, the
//!   sub-layer ends) runs over the batch's real tokens only (`RealRows`;
//!   [`EncoderSteps::unpadded_rows`]), and so does the packed attention; candle's attention
//!   gets the padded layout; on a GPU the same where `EncoderTuning::gpu_unpadded_rows` asks
//!   (the packed attention then in the register kernel's ragged layout);
//! - two fused steps (`encoder_ops`, chosen by [`EncoderSteps`]): the packed attention reads
//!   that product as it is, each sequence over its real tokens only, and writes the context in
//!   the layout the next product reads; the fused end does each sub-layer's bias + residual +
//!   layer norm in one pass. By default the CPU (f32) runs the fused ends, and the packed
//!   attention where it runs on AVX-512 tiles (heads of 32 or 64); a CUDA GPU runs both
//!   (checked and timed on an H100; [`EncoderTuning`] turns them off);
//! - without the packed attention one copy lays query, key and value out by head, candle's batched products
//!   compute scores and context, and the softmax runs over each row's real tokens in quarry's
//!   CUDA kernel (`cuda_encoder_ops`), or after an additive mask (half precision on the CPU);
//! - on a CUDA GPU each dense layer's bias add is one fused pass after cuBLAS's product, with
//!   the erf GELU for the feed-forward layer (candle's broadcast add is several times slower),
//!   and with the fused steps the embeddings' row gather, position add and layer norm are one
//!   kernel too (`token_embedding`), and in f16/bf16 the query-key-value layer's bias is added
//!   in its product's epilogue by cuBLASLt, with no pass of its own (`cuda_bias_gemm`);
//! - bf16 models compute attention scores and their softmax in f32 (see [`score_dtype`]; the
//!   fused attention always does);
//! - on the CPU (f32) each dense layer's bias add, with the erf GELU for the feed-forward
//!   layer, is one vectorized pass in place after the product
//!   (`quarry_kernels::bias_activation_in_place`; candle's broadcast add and `gelu_erf` in half
//!   precision); on a CUDA GPU the same step is a kernel (above).
//!
//! Token type ids are always 0 (one-segment inputs), so the token-type row is added to the
//! position table once at load.

use super::{BertConfig as Config, HiddenAct};
use candle_core::{Module, Tensor};
use candle_nn::{layer_norm, LayerNorm, Linear, VarBuilder};

use super::dense_layer::{
    bias_in_product_forward, dense, dense_forward, dense_product, intermediate_forward, on_cpu_f32, Dense,
};
use super::encoder_ops;
use super::encoder_steps::{EncoderSteps, EncoderTuning, GpuGelu};
use super::head_attention::{attention_by_head, attention_mask, score_dtype, AttentionShape, Padding};
use super::token_embedding::TokenEmbedding;

/// The encoder: embeddings, then `num_hidden_layers` transformer layers.
pub struct BertEncoder {
    /// Word and position embeddings (position ids from the model's first on, the
    /// token-type-0 row added) and their layer norm.
    embedding: TokenEmbedding,
    layers: Vec<EncoderLayer>,
    heads: usize,
    activation: HiddenAct,
    tuning: EncoderTuning,
}

struct EncoderLayer {
    /// `[3 * hidden, hidden]`: query (pre-scaled by 1/sqrt(head size)), key, value.
    query_key_value: Dense,
    attention_output: Dense,
    attention_norm: LayerNorm,
    intermediate: Dense,
    output: Dense,
    output_norm: LayerNorm,
    /// `[3, hidden]`: the attention output's bias, then its layer norm's weight and shift, for
    /// the fused sub-layer end (`encoder_ops::bias_residual_layer_norm`).
    attention_end: Tensor,
    /// The same for the feed-forward output.
    output_end: Tensor,
    epsilon: f32,
}

impl BertEncoder {
    /// Loads from the tensor names of a BERT checkpoint, at the root or under the
    /// model type's prefix (`bert.`), as candle-transformers does.
    pub fn load(vb: VarBuilder, config: &Config) -> candle_core::Result<Self> {
        match Self::load_at(vb.clone(), config) {
            Ok(encoder) => Ok(encoder),
            Err(error) => match &config.model_type {
                Some(prefix) => Self::load_at(vb.pp(prefix), config).map_err(|_| error),
                None => Err(error),
            },
        }
    }

    fn load_at(vb: VarBuilder, config: &Config) -> candle_core::Result<Self> {
        let hidden = config.hidden_size;
        let embeddings = vb.pp("embeddings");
        let word_embeddings = embeddings
            .pp("word_embeddings")
            .get((config.vocab_size, hidden), "weight")?;
        let position_table = embeddings
            .pp("position_embeddings")
            .get((config.max_position_embeddings, hidden), "weight")?;
        // A text's first token takes the position after the padding index in RoBERTa-style models.
        let offset = super::model_dir::position_offset(config).min(config.max_position_embeddings);
        let position_table = position_table.narrow(0, offset, config.max_position_embeddings - offset)?;
        let token_types = embeddings
            .pp("token_type_embeddings")
            .get((config.type_vocab_size, hidden), "weight")?;
        let positions = position_table.broadcast_add(&token_types.narrow(0, 0, 1)?)?;
        let embedding_norm = layer_norm(hidden, config.layer_norm_eps, embeddings.pp("LayerNorm"))?;
        let embedding = TokenEmbedding::new(word_embeddings, positions, embedding_norm, config.layer_norm_eps)?;
        let layers = (0..config.num_hidden_layers)
            .map(|i| EncoderLayer::load(vb.pp(format!("encoder.layer.{i}")), config))
            .collect::<candle_core::Result<_>>()?;
        Ok(Self {
            embedding,
            layers,
            heads: config.num_attention_heads,
            activation: config.hidden_act,
            tuning: EncoderTuning::default(),
        })
    }

    /// Chooses the fused steps and the attention kernel as `tuning` says instead of by the
    /// device's defaults.
    pub fn with_tuning(mut self, tuning: EncoderTuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// Packs every dense layer's weights for bf16 products: on the CPU (f32 tensors), each
    /// product then rounds both sides to bf16 and sums in f32
    /// (`quarry_kernels::Bf16Weights`, AVX512-BF16); everything else stays f32. Callers check
    /// `quarry_kernels::bf16_products_native` first: the portable path is slower than f32.
    pub fn with_bf16_products(mut self) -> candle_core::Result<Self> {
        for layer in &mut self.layers {
            for dense in [
                &mut layer.query_key_value,
                &mut layer.attention_output,
                &mut layer.intermediate,
                &mut layer.output,
            ] {
                dense.pack_bf16()?;
            }
        }
        Ok(self)
    }

    /// Token vectors `[batch, tokens, hidden]` for `ids` `[batch, tokens]`; `lengths` are the
    /// rows' real token counts (the rest is padding, masked out of attention).
    pub fn forward(&self, ids: &Tensor, lengths: &[usize]) -> candle_core::Result<Tensor> {
        self.forward_with(ids, lengths, None)
    }

    /// [`forward`](Self::forward) with the fused steps chosen by `steps` (where they can run on
    /// the device and dtype) instead of by the encoder's tuning.
    pub fn forward_with(
        &self,
        ids: &Tensor,
        lengths: &[usize],
        steps: Option<EncoderSteps>,
    ) -> candle_core::Result<Tensor> {
        self.encode_with(ids, lengths, steps)?.padded(lengths, ids.dim(1)?)
    }

    /// The token vectors of [`forward`](Self::forward) in the layout the encoder ends in: on
    /// the CPU its real tokens only.
    pub fn encode(&self, ids: &Tensor, lengths: &[usize]) -> candle_core::Result<TokenStates> {
        self.encode_with(ids, lengths, None)
    }

    fn encode_with(
        &self,
        ids: &Tensor,
        lengths: &[usize],
        steps: Option<EncoderSteps>,
    ) -> candle_core::Result<TokenStates> {
        let (batch, tokens) = ids.dims2()?;
        let hidden = self.embedding.words().dim(1)?;
        let head_size = hidden / self.heads;
        let steps = EncoderSteps::for_run(self.embedding.words(), head_size, steps, &self.tuning);
        // Every row-wise step (all but attention) skips the padding where the steps say so.
        let real_rows = if steps.unpadded_rows {
            RealRows::of(lengths, tokens, ids.device())?
        } else {
            None
        };
        // The first step in one kernel where it runs (a GPU, with the fused steps), over the
        // padded rows (it reads each row's position from its place in them), the real rows
        // gathered after it where the steps skip the padding.
        let fused = if steps.fused_ends {
            self.embedding.fused(ids)?
        } else {
            None
        };
        let mut states = match (fused, &real_rows) {
            (Some(states), Some(real_rows)) => real_rows.gather(&states)?,
            (Some(states), None) => states,
            (None, _) => {
                let embedded = self.embedding.unnormalized(ids)?;
                let embedded = match &real_rows {
                    Some(real_rows) => real_rows.gather(&embedded)?,
                    None => embedded,
                };
                self.embedding.normalize(&embedded)?
            }
        };
        let padding = if steps.packed_attention {
            let lengths: Vec<u32> = lengths.iter().map(|&length| length.min(tokens) as u32).collect();
            Padding::Packed(Tensor::from_vec(lengths, batch, ids.device())?)
        } else if on_cpu_f32(&states) {
            Padding::Lengths(lengths)
        } else if ids.device().is_cuda() {
            let lengths: Vec<u32> = lengths.iter().map(|&length| length.min(tokens) as u32).collect();
            Padding::DeviceLengths(Tensor::from_vec(lengths, batch, ids.device())?)
        } else {
            Padding::Mask(attention_mask(
                lengths,
                tokens,
                score_dtype(states.dtype()),
                ids.device(),
            )?)
        };
        let shape = AttentionShape {
            batch,
            tokens,
            heads: self.heads,
            head_size,
            kernel: self.tuning.attention_kernel,
        };
        let activation = FeedForwardActivation {
            function: self.activation,
            in_epilogue: steps.fused_ends && self.tuning.gpu_gelu == GpuGelu::Epilogue,
        };
        for layer in &self.layers {
            states = layer.forward(&states, &padding, shape, steps, real_rows.as_ref(), activation)?;
        }
        // Without padding (`real_rows` None) the rows are the real tokens already.
        if steps.unpadded_rows {
            Ok(TokenStates::Real(states))
        } else {
            Ok(TokenStates::Padded(states.reshape((batch, tokens, hidden))?))
        }
    }
}

/// The encoder's token vectors.
pub enum TokenStates {
    /// `[batch, tokens, hidden]`, padding rows included.
    Padded(Tensor),
    /// `[sum(lengths), hidden]`: each sequence's real tokens, back to back (the layout the
    /// CPU's row-wise steps end in).
    Real(Tensor),
}

impl TokenStates {
    /// `[batch, tokens, hidden]` for sequences of `lengths` in a batch `tokens` wide, zeros
    /// on the padding.
    pub fn padded(self, lengths: &[usize], tokens: usize) -> candle_core::Result<Tensor> {
        match self {
            Self::Padded(states) => Ok(states),
            Self::Real(states) => {
                let hidden = states.dim(1)?;
                let states = match RealRows::of(lengths, tokens, states.device())? {
                    Some(real_rows) => real_rows.pad(&states)?,
                    None => states,
                };
                states.reshape((lengths.len(), tokens, hidden))
            }
        }
    }
}

/// Where a batch's real tokens sit among its `batch × tokens` padded rows, so that the
/// row-wise steps (embeddings' layer norm, every dense layer, the sub-layer ends: nearly all
/// of the arithmetic) and the packed attention run on the real tokens only; candle's
/// attention gets a padded copy.
/// A batch of texts of mixed lengths (a request's ten msmarco-5k passages: 30% of the rows
/// of their batches are padding) then costs its real tokens, not its size times its longest.
struct RealRows {
    /// `[real]` u32: the padded row of each real token.
    gather: Tensor,
    /// `[batch × tokens]` u32: each padded row's real token, or `real` (a zero row) for padding.
    scatter: Tensor,
    /// `[batch]` u32: each sequence's first real row (what a GPU's ragged attention reads).
    starts: Tensor,
    /// The longest sequence's real tokens.
    longest: usize,
}

impl RealRows {
    /// `None` when no row is padded (nothing to skip).
    fn of(lengths: &[usize], tokens: usize, device: &candle_core::Device) -> candle_core::Result<Option<Self>> {
        let real: usize = lengths.iter().map(|&length| length.min(tokens)).sum();
        if real == lengths.len() * tokens {
            return Ok(None);
        }
        let mut gather = Vec::with_capacity(real);
        let mut scatter = Vec::with_capacity(lengths.len() * tokens);
        let mut starts = Vec::with_capacity(lengths.len());
        for (sequence, &length) in lengths.iter().enumerate() {
            let length = length.min(tokens);
            starts.push(gather.len() as u32);
            gather.extend((0..length).map(|t| (sequence * tokens + t) as u32));
            scatter.extend((0..tokens).map(|t| {
                if t < length {
                    (gather.len() - length + t) as u32
                } else {
                    real as u32
                }
            }));
        }
        Ok(Some(Self {
            gather: Tensor::from_vec(gather, real, device)?,
            scatter: Tensor::from_vec(scatter, lengths.len() * tokens, device)?,
            starts: Tensor::from_vec(starts, lengths.len(), device)?,
            longest: lengths.iter().map(|&length| length.min(tokens)).max().unwrap_or(0),
        }))
    }

    /// The real rows of padded rows `x` `[batch × tokens, width]`.
    fn gather(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        x.index_select(&self.gather, 0)
    }

    /// Real rows `x` `[real, width]` laid out padded, zeros on the padding.
    fn pad(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let zero = Tensor::zeros((1, x.dim(1)?), x.dtype(), x.device())?;
        Tensor::cat(&[x, &zero], 0)?.index_select(&self.scatter, 0)
    }
}

/// The feed-forward layer's activation, and whether a GPU may apply it (with the bias) in the
/// product's epilogue (`GpuGelu::Epilogue` with the fused steps; f16 and bf16 only).
#[derive(Clone, Copy)]
struct FeedForwardActivation {
    function: HiddenAct,
    in_epilogue: bool,
}

impl EncoderLayer {
    fn load(vb: VarBuilder, config: &Config) -> candle_core::Result<Self> {
        let hidden = config.hidden_size;
        let scale = 1.0 / ((hidden / config.num_attention_heads) as f64).sqrt();
        let attention = vb.pp("attention.self");
        let part = |name: &str, factor: f64| -> candle_core::Result<(Tensor, Tensor)> {
            let vb = attention.pp(name);
            Ok((
                (vb.get((hidden, hidden), "weight")? * factor)?,
                (vb.get(hidden, "bias")? * factor)?,
            ))
        };
        let (query, key, value) = (part("query", scale)?, part("key", 1.0)?, part("value", 1.0)?);
        let query_key_value = Dense::new(Linear::new(
            Tensor::cat(&[&query.0, &key.0, &value.0], 0)?,
            Some(Tensor::cat(&[&query.1, &key.1, &value.1], 0)?),
        ));
        let attention_output = dense(vb.pp("attention.output.dense"), hidden, hidden)?;
        let attention_norm = layer_norm(hidden, config.layer_norm_eps, vb.pp("attention.output.LayerNorm"))?;
        let output = dense(vb.pp("output.dense"), config.intermediate_size, hidden)?;
        let output_norm = layer_norm(hidden, config.layer_norm_eps, vb.pp("output.LayerNorm"))?;
        Ok(Self {
            query_key_value,
            attention_end: sub_layer_end(&attention_output, &attention_norm)?,
            output_end: sub_layer_end(&output, &output_norm)?,
            attention_output: Dense::new(attention_output),
            attention_norm,
            intermediate: Dense::new(dense(vb.pp("intermediate.dense"), hidden, config.intermediate_size)?),
            output: Dense::new(output),
            output_norm,
            epsilon: config.layer_norm_eps as f32,
        })
    }

    /// `states` is `[batch * tokens, hidden]`, or the real rows only (`real_rows`).
    fn forward(
        &self,
        states: &Tensor,
        padding: &Padding,
        shape: AttentionShape,
        steps: EncoderSteps,
        real_rows: Option<&RealRows>,
        activation: FeedForwardActivation,
    ) -> candle_core::Result<Tensor> {
        let qkv = bias_in_product_forward(&self.query_key_value, states, steps.fused_ends)?;
        let context = match (padding, real_rows) {
            // The real rows' product as it is, the context in the same rows.
            (Padding::Packed(lengths), Some(real_rows)) => {
                encoder_ops::ragged_attention(&qkv, lengths, &real_rows.starts, real_rows.longest, shape.heads)?
            }
            // Straight from the packed product, in the layout the next product reads.
            (Padding::Packed(lengths), None) => {
                encoder_ops::packed_attention_by(&qkv, lengths, shape.heads, shape.kernel)?
            }
            (_, Some(real_rows)) => real_rows.gather(&attention_by_head(&real_rows.pad(&qkv)?, padding, shape)?)?,
            (_, None) => attention_by_head(&qkv, padding, shape)?,
        };
        let attended = self.sub_layer_end(
            &self.attention_output,
            &self.attention_norm,
            &self.attention_end,
            &context,
            states,
            steps,
        )?;
        let inner = intermediate_forward(
            &self.intermediate,
            &attended,
            activation.function,
            activation.in_epilogue,
        )?;
        self.sub_layer_end(
            &self.output,
            &self.output_norm,
            &self.output_end,
            &inner,
            &attended,
            steps,
        )
    }

    /// LayerNorm(x · Wᵀ + bias + residual): with `steps.fused_ends` one pass after the product
    /// (`encoder_ops::bias_residual_layer_norm`), else candle's adds and layer norm.
    fn sub_layer_end(
        &self,
        dense: &Dense,
        norm: &LayerNorm,
        end: &Tensor,
        x: &Tensor,
        residual: &Tensor,
        steps: EncoderSteps,
    ) -> candle_core::Result<Tensor> {
        if !steps.fused_ends {
            return norm.forward(&(dense_forward(dense, x)? + residual)?);
        }
        let product = dense_product(dense, x)?;
        // `product` is fresh: nothing else holds it.
        encoder_ops::bias_residual_layer_norm(&product, residual, end, self.epsilon)?;
        Ok(product)
    }
}

/// `[3, hidden]`: the dense layer's bias, then the layer norm's weight and shift.
fn sub_layer_end(dense: &Linear, norm: &LayerNorm) -> candle_core::Result<Tensor> {
    match (dense.bias(), norm.bias()) {
        (Some(bias), Some(shift)) => Tensor::stack(&[bias, norm.weight(), shift], 0),
        _ => candle_core::bail!("a BERT sub-layer without its dense bias or layer norm shift"),
    }
}
