//! BERT's encoder for inference, on candle: the weights and config that candle-transformers'
//! `BertModel` reads, the same arithmetic (tested against it), laid out for throughput:
//! - query, key and value are one matrix product, the attention scale folded into the query
//!   weights;
//! - on the CPU every row-wise step (the embeddings' layer norm, the dense layers, the
//!   sub-layer ends) runs over the batch's real tokens only (`RealRows`;
//!   [`EncoderSteps::unpadded_rows`]), and so does the packed attention; candle's attention
//!   gets the padded layout;
//! - two fused steps (`encoder_ops`, chosen by [`EncoderSteps`]): the packed attention reads
//!   that product as it is, each sequence over its real tokens only, and writes the context in
//!   the layout the next product reads; the fused end does each sub-layer's bias + residual +
//!   layer norm in one pass. By default the CPU (f32) runs the fused ends, and the packed
//!   attention where it runs on AVX-512 tiles (heads of 32 or 64); a CUDA GPU runs both
//!   (checked and timed on an H100; `QUARRY_FUSED_STEPS=0` turns them off);
//! - without the packed attention one copy lays query, key and value out by head, candle's batched products
//!   compute scores and context, and the softmax runs over each row's real tokens in quarry's
//!   CUDA kernel (`cuda_encoder_ops`), or after an additive mask (half precision on the CPU);
//! - on a CUDA GPU each dense layer's bias add is one fused pass after cuBLAS's product, with
//!   the erf GELU for the feed-forward layer (candle's broadcast add is several times slower);
//! - bf16 models compute attention scores and their softmax in f32 (see [`score_dtype`]; the
//!   fused attention always does);
//! - on the CPU (f32) each dense layer's bias add, with the erf GELU for the feed-forward
//!   layer, is one vectorized pass in place after the product
//!   (`quarry_kernels::bias_activation_in_place`; candle's broadcast add and `gelu_erf` in half
//!   precision); on a CUDA GPU the same step is a kernel (above).
//!
//! Token type ids are always 0 (one-segment inputs), so the token-type row is added to the
//! position table once at load.

use candle_core::{CpuStorage, DType, InplaceOp1, InplaceOp2, Layout, Module, Tensor};
use candle_nn::{layer_norm, LayerNorm, Linear, VarBuilder};
use candle_transformers::models::bert::{Config, HiddenAct};
use quarry_kernels::Bf16Weights;

use super::encoder_ops;

/// The encoder: embeddings, then `num_hidden_layers` transformer layers.
pub struct BertEncoder {
    word_embeddings: Tensor,
    /// Position embeddings from the model's first position id on, with the token-type-0 row
    /// added: `[max_positions - offset, hidden]`.
    positions: Tensor,
    embedding_norm: LayerNorm,
    layers: Vec<EncoderLayer>,
    heads: usize,
    activation: HiddenAct,
}

/// A dense layer: candle's `Linear`, and its weights packed for bf16 products where the CPU
/// runs them (bf16, or the default auto, on a CPU with AVX512-BF16:
/// [`BertEncoder::with_bf16_products`]; `linear` then keeps its bias only).
struct Dense {
    linear: Linear,
    bf16: Option<Bf16Weights>,
}

impl Dense {
    fn new(linear: Linear) -> Self {
        Self { linear, bf16: None }
    }

    fn pack_bf16(&mut self) -> candle_core::Result<()> {
        let weight = self.linear.weight();
        let inputs = weight.dims2()?.1;
        self.bf16 = Some(Bf16Weights::pack(
            &weight.to_dtype(DType::F32)?.flatten_all()?.to_vec1::<f32>()?,
            inputs,
        ));
        // The f32 weights are not read again (on the CPU every product of f32 rows takes the
        // packed ones: `dense_product`); an empty stand-in frees them (42 MB for MiniLM). A
        // product through it would fail on its shape, not compute wrong values.
        let stand_in = Tensor::zeros((0, inputs), DType::F32, weight.device())?;
        self.linear = Linear::new(stand_in, self.linear.bias().cloned());
        Ok(())
    }
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
        let layers = (0..config.num_hidden_layers)
            .map(|i| EncoderLayer::load(vb.pp(format!("encoder.layer.{i}")), config))
            .collect::<candle_core::Result<_>>()?;
        Ok(Self {
            word_embeddings,
            positions,
            embedding_norm,
            layers,
            heads: config.num_attention_heads,
            activation: config.hidden_act,
        })
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
    /// the device and dtype) instead of by the default (`QUARRY_FUSED_STEPS`, else per device).
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
        let hidden = self.word_embeddings.dim(1)?;
        let words = self
            .word_embeddings
            .index_select(&ids.flatten_all()?, 0)?
            .reshape((batch, tokens, hidden))?;
        let embedded = words
            .broadcast_add(&self.positions.narrow(0, 0, tokens)?)?
            .reshape((batch * tokens, hidden))?;
        let head_size = hidden / self.heads;
        let steps = EncoderSteps::for_run(&embedded, head_size, steps);
        // Every row-wise step (all but attention) skips the padding where the steps say so.
        let real_rows = if steps.unpadded_rows {
            RealRows::of(lengths, tokens, ids.device())?
        } else {
            None
        };
        let embedded = match &real_rows {
            Some(real_rows) => real_rows.gather(&embedded)?,
            None => embedded,
        };
        let mut states = self.embedding_norm.forward(&embedded)?;
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
        };
        for layer in &self.layers {
            states = layer.forward(&states, &padding, shape, steps, real_rows.as_ref(), self.activation)?;
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
        for (sequence, &length) in lengths.iter().enumerate() {
            let length = length.min(tokens);
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

/// How attention leaves out the padding.
enum Padding<'a> {
    /// For the packed attention (`encoder_ops`): each sequence's real token count as a u32
    /// tensor `[batch]` on the model's device.
    Packed(Tensor),
    /// Each sequence's real token count (the CPU softmax kernel reads only those columns).
    Lengths(&'a [usize]),
    /// The same counts as a u32 tensor `[batch]` on the GPU, for quarry's CUDA softmax.
    DeviceLengths(Tensor),
    /// An additive mask for the device's softmax; `None` when no row is padded.
    Mask(Option<Tensor>),
}

#[derive(Clone, Copy)]
struct AttentionShape {
    batch: usize,
    tokens: usize,
    heads: usize,
    head_size: usize,
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
        activation: HiddenAct,
    ) -> candle_core::Result<Tensor> {
        let qkv = dense_forward(&self.query_key_value, states)?;
        let context = match (padding, real_rows) {
            // The real rows' product as it is, the context in the same rows.
            (Padding::Packed(lengths), Some(_)) => encoder_ops::ragged_attention(&qkv, lengths, shape.heads)?,
            // Straight from the packed product, in the layout the next product reads.
            (Padding::Packed(lengths), None) => encoder_ops::packed_attention(&qkv, lengths, shape.heads)?,
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
        let inner = intermediate_forward(&self.intermediate, &attended, activation)?;
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

/// Attention by candle's batched products: one copy lays the packed `qkv` `[rows, 3 * hidden]`
/// out by head `[3, batch, heads, tokens, head_size]`, the softmax leaves out the padding as
/// `padding` says, and the context is copied back to `[rows, hidden]`.
fn attention_by_head(qkv: &Tensor, padding: &Padding, shape: AttentionShape) -> candle_core::Result<Tensor> {
    let AttentionShape {
        batch,
        tokens,
        heads,
        head_size,
    } = shape;
    let by_head = qkv
        .reshape((batch, tokens, 3, heads, head_size))?
        .permute((2, 0, 3, 1, 4))?
        .contiguous()?;
    let (query, key, value) = (by_head.get(0)?, by_head.get(1)?, by_head.get(2)?);
    let scores = attention_scores(&query, &key)?;
    let weights = match padding {
        Padding::Lengths(lengths) => {
            // `scores` is the fresh output of the product: nothing else holds it.
            scores.inplace_op1(&CpuMaskedSoftmax {
                lengths,
                rows_per_sequence: heads * tokens,
            })?;
            scores
        }
        Padding::DeviceLengths(lengths) => {
            // `scores` is the fresh output of the product: nothing else holds it.
            masked_softmax_on_gpu(&scores, lengths)?;
            scores
        }
        Padding::Packed(_) => candle_core::bail!("packed lengths are for the packed attention"),
        Padding::Mask(Some(mask)) => candle_nn::ops::softmax_last_dim(&scores.broadcast_add(mask)?)?,
        Padding::Mask(None) => candle_nn::ops::softmax_last_dim(&scores)?,
    };
    weights
        .to_dtype(value.dtype())?
        .matmul(&value)?
        .transpose(1, 2)?
        .reshape((batch * tokens, heads * head_size))
}

/// The dtype attention scores and their softmax are computed in: bf16's 8-bit mantissa
/// rounds a logit of 20 by up to 0.06, which moves the softmax by several percent (golden
/// embeddings at cosine 0.9938 with bf16 scores, 0.99985 with f32 ones, measured on the CPU),
/// so bf16 models take their scores in f32; f16 (0.99998) and f32 keep their own.
pub(super) fn score_dtype(dtype: DType) -> DType {
    match dtype {
        DType::BF16 => DType::F32,
        other => other,
    }
}

/// `query · keyᵀ` `[batch, heads, tokens, tokens]` in [`score_dtype`] (the scale is folded
/// into the query weights).
fn attention_scores(query: &Tensor, key: &Tensor) -> candle_core::Result<Tensor> {
    let dtype = score_dtype(query.dtype());
    query.to_dtype(dtype)?.matmul(&key.to_dtype(dtype)?.t()?)
}

/// Below this many rows a dense layer on the CPU computes `W · xᵀ` (see [`dense_forward`]).
const FEW_ROWS: usize = 64;

/// `x · Wᵀ + b` for `x` `[rows, inputs]`. On the CPU, few rows (a query's tokens) go through
/// [`dense_product`] instead: the CPU matmul kernels tile the output's rows (24 at a time with
/// AVX2, 64 with AVX-512), so ten tokens would fill a fraction of each tile, and they pack
/// the weights into tiles first, which for ten rows costs as much as the product.
fn dense_forward(layer: &Dense, x: &Tensor) -> candle_core::Result<Tensor> {
    #[cfg(feature = "cuda")]
    if x.device().is_cuda() {
        return cuda_dense(layer, x, false);
    }
    if let Some(dense) = cpu_dense(layer, x, false) {
        return dense;
    }
    let rows = x.dim(0)?;
    if !x.device().is_cpu() || rows >= FEW_ROWS {
        return layer.linear.forward(x);
    }
    let product = dense_product(layer, x)?;
    match layer.linear.bias() {
        Some(bias) => product.broadcast_add(bias),
        None => Ok(product),
    }
}

/// `x · Wᵀ` without the bias, a fresh contiguous tensor. Few f32 rows on the CPU (a query's
/// tokens) go through quarry's own product, which reads each weight row once without packing
/// it; other few rows through `W · xᵀ` (see [`dense_forward`]). Where the layer has weights
/// packed for bf16 products, f32 rows on the CPU, few or many, go through those instead.
fn dense_product(dense: &Dense, x: &Tensor) -> candle_core::Result<Tensor> {
    let layer = &dense.linear;
    if let Some(packed) = dense.bf16.as_ref().filter(|_| on_cpu_f32(x)) {
        return encoder_ops::bf16_product(x, packed);
    }
    if x.device().is_cpu() && x.dim(0)? < FEW_ROWS {
        if x.dtype() == DType::F32 && layer.weight().dtype() == DType::F32 {
            return super::encoder_ops::few_rows_product(x, layer.weight());
        }
        return layer.weight().matmul(&x.t()?)?.t()?.contiguous();
    }
    x.matmul(&layer.weight().t()?)
}

/// `[3, hidden]`: the dense layer's bias, then the layer norm's weight and shift.
fn sub_layer_end(dense: &Linear, norm: &LayerNorm) -> candle_core::Result<Tensor> {
    match (dense.bias(), norm.bias()) {
        (Some(bias), Some(shift)) => Tensor::stack(&[bias, norm.weight(), shift], 0),
        _ => candle_core::bail!("a BERT sub-layer without its dense bias or layer norm shift"),
    }
}

/// Which of the fused steps (`encoder_ops`) the layers run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncoderSteps {
    /// Attention straight from the packed query-key-value product.
    pub packed_attention: bool,
    /// Each sub-layer's bias + residual + layer norm in one pass.
    pub fused_ends: bool,
    /// Row-wise steps over the real tokens only, not the padding (see `RealRows`).
    pub unpadded_rows: bool,
}

impl EncoderSteps {
    /// `QUARRY_FUSED_STEPS=1` or `=0` turns both on or off where they can run. By default, on
    /// the CPU (f32) the fused sub-layer ends run, and the packed attention where it runs on
    /// AVX-512 tiles (`quarry_kernels::packed_attention_tiled`; elsewhere candle's batched
    /// products are faster, bench/RESULTS.md); on a CUDA GPU both run (attention on tensor
    /// cores in f16/bf16, CUDA cores in f32; indexer/tests/cuda_encoder_parity.rs checks the
    /// kernels on a GPU, kernels/tests/cuda_source_emulated.rs their source on the CPU). The
    /// row-wise steps skip the padding on the CPU whatever `QUARRY_FUSED_STEPS` says, and
    /// never on a GPU yet. `wanted` (or the default above) narrowed to what runs on `states`'
    /// device and dtype.
    fn for_run(states: &Tensor, head_size: usize, wanted: Option<Self>) -> Self {
        let requested = fused_steps_requested();
        let (attention_supported, ends_supported) = Self::supported(states, head_size);
        let cpu = states.device().is_cpu();
        let wanted = wanted.unwrap_or(match (requested, cpu) {
            (Some(on), _) => Self {
                packed_attention: on,
                fused_ends: on,
                unpadded_rows: cpu,
            },
            (None, true) => Self {
                packed_attention: quarry_kernels::packed_attention_tiled(head_size),
                fused_ends: true,
                unpadded_rows: true,
            },
            // Checked and timed on an H100 on 2026-11-25 (bench/RESULTS.md): golden
            // embeddings pass at every precision, 1.9x (f16) to 2.7x (bf16) the tokens/s.
            (None, false) => Self {
                packed_attention: true,
                fused_ends: true,
                unpadded_rows: false,
            },
        });
        let steps = Self {
            packed_attention: wanted.packed_attention && attention_supported,
            fused_ends: wanted.fused_ends && ends_supported,
            // On the CPU only until a GPU run measures it (a GPU's batches are length-sorted
            // and large; its fused kernels are checked on the padded layout).
            unpadded_rows: wanted.unpadded_rows && cpu,
        };
        static LOGGED: std::sync::Once = std::sync::Once::new();
        LOGGED.call_once(|| {
            tracing::info!(
                "encoder steps ({:?}, {:?}): packed attention {}, fused sub-layer ends {}, unpadded rows {}",
                states.device().location(),
                states.dtype(),
                steps.packed_attention,
                steps.fused_ends,
                steps.unpadded_rows
            )
        });
        steps
    }

    /// Whether the packed attention and the fused ends can run on `states`' device and dtype.
    fn supported(states: &Tensor, head_size: usize) -> (bool, bool) {
        if states.device().is_cpu() {
            let supported = encoder_ops::cpu_supports(states.dtype());
            return (supported, supported);
        }
        #[cfg(feature = "cuda")]
        if states.device().is_cuda() {
            use super::cuda_attention::PACKED_HEAD_SIZES;
            use super::cuda_encoder_ops::MAX_NORM_COLUMNS;
            let width = states.dim(1).unwrap_or(usize::MAX);
            return (PACKED_HEAD_SIZES.contains(&head_size), width <= MAX_NORM_COLUMNS);
        }
        let _ = head_size;
        (false, false)
    }
}

/// `QUARRY_FUSED_STEPS`: `Some(true)` for 1, `Some(false)` for 0, else `None` (the default).
fn fused_steps_requested() -> Option<bool> {
    static REQUESTED: std::sync::OnceLock<Option<bool>> = std::sync::OnceLock::new();
    *REQUESTED.get_or_init(|| match std::env::var("QUARRY_FUSED_STEPS").as_deref() {
        Ok("1") => Some(true),
        Ok("0") => Some(false),
        _ => None,
    })
}

/// The feed-forward layer's product and activation; on a GPU the bias add and the erf GELU
/// are one fused pass over the product.
fn intermediate_forward(layer: &Dense, x: &Tensor, activation: HiddenAct) -> candle_core::Result<Tensor> {
    #[cfg(feature = "cuda")]
    if x.device().is_cuda() && matches!(activation, HiddenAct::Gelu) {
        return cuda_dense(layer, x, true);
    }
    if matches!(activation, HiddenAct::Gelu) {
        if let Some(dense) = cpu_dense(layer, x, true) {
            return dense;
        }
    }
    activate(dense_forward(layer, x)?, activation)
}

/// On the CPU in f32, `x · Wᵀ` ([`dense_product`]), then the bias (and the erf GELU with
/// `gelu`) in place in one pass (`quarry_kernels::bias_activation_in_place`), where candle's
/// broadcast add would make a second copy; None elsewhere (or without a bias).
fn cpu_dense(layer: &Dense, x: &Tensor, gelu: bool) -> Option<candle_core::Result<Tensor>> {
    let bias = layer
        .linear
        .bias()
        .filter(|bias| on_cpu_f32(x) && on_cpu_f32(bias) && layer.linear.weight().dtype() == DType::F32)?;
    Some(dense_product(layer, x).and_then(|product| {
        // `product` is fresh: nothing else holds it.
        product.inplace_op2(bias, &CpuBiasActivation { gelu })?;
        Ok(product)
    }))
}

/// `x · Wᵀ` by cuBLAS, then the bias (and the erf GELU with `gelu`) in place, one pass.
#[cfg(feature = "cuda")]
fn cuda_dense(layer: &Dense, x: &Tensor, gelu: bool) -> candle_core::Result<Tensor> {
    let product = dense_product(layer, x)?;
    match layer.linear.bias() {
        // `product` is fresh: nothing else holds it.
        Some(bias) => super::cuda_encoder_ops::bias_activation(&product, bias, gelu)?,
        None if gelu => return product.gelu_erf(),
        None => {}
    }
    Ok(product)
}

#[cfg(feature = "cuda")]
fn masked_softmax_on_gpu(scores: &Tensor, lengths: &Tensor) -> candle_core::Result<()> {
    super::cuda_encoder_ops::masked_softmax(scores, lengths)
}

/// Without the `cuda` feature no tensor is on a CUDA device, so this is never reached.
#[cfg(not(feature = "cuda"))]
fn masked_softmax_on_gpu(_: &Tensor, _: &Tensor) -> candle_core::Result<()> {
    candle_core::bail!("a CUDA tensor in a build without the cuda feature")
}

fn dense(vb: VarBuilder, inputs: usize, outputs: usize) -> candle_core::Result<Linear> {
    Ok(Linear::new(
        vb.get((outputs, inputs), "weight")?,
        Some(vb.get(outputs, "bias")?),
    ))
}

/// The additive attention mask `[batch, 1, 1, tokens]`: 0 on real tokens, the dtype's lowest
/// value on padding; `None` when no row is padded.
fn attention_mask(
    lengths: &[usize],
    tokens: usize,
    dtype: DType,
    device: &candle_core::Device,
) -> candle_core::Result<Option<Tensor>> {
    if lengths.iter().all(|&length| length >= tokens) {
        return Ok(None);
    }
    let values: Vec<f32> = lengths
        .iter()
        .flat_map(|&length| (0..tokens).map(move |t| if t < length { 0.0 } else { f32::MIN }))
        .collect();
    Tensor::from_vec(values, (lengths.len(), 1, 1, tokens), device)?
        .to_dtype(dtype)
        .map(Some)
}

fn activate(xs: Tensor, activation: HiddenAct) -> candle_core::Result<Tensor> {
    match activation {
        HiddenAct::Gelu if on_cpu_f32(&xs) && xs.is_contiguous() => {
            // `xs` is the fresh output of the layer's matrix product: nothing else holds it.
            xs.inplace_op1(&CpuGeluErf)?;
            Ok(xs)
        }
        HiddenAct::Gelu => xs.gelu_erf(),
        HiddenAct::GeluApproximate => xs.gelu(),
        HiddenAct::Relu => xs.relu(),
    }
}

fn on_cpu_f32(xs: &Tensor) -> bool {
    xs.device().is_cpu() && xs.dtype() == DType::F32
}

/// Softmax of attention scores `[batch, heads, tokens, tokens]` in place, each row over its
/// sequence's real tokens.
struct CpuMaskedSoftmax<'a> {
    lengths: &'a [usize],
    rows_per_sequence: usize,
}

impl InplaceOp1 for CpuMaskedSoftmax<'_> {
    fn name(&self) -> &'static str {
        "cpu-masked-softmax"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> candle_core::Result<()> {
        let (CpuStorage::F32(values), Some((start, end))) = (storage, layout.contiguous_offsets()) else {
            candle_core::bail!("cpu-masked-softmax needs a contiguous f32 tensor");
        };
        let columns = layout.dims().last().copied().unwrap_or(1);
        quarry_kernels::masked_softmax_rows(&mut values[start..end], columns, |row| {
            self.lengths[row / self.rows_per_sequence]
        });
        Ok(())
    }
}

/// `x [rows, cols] += bias [cols]` in place on contiguous f32 CPU tensors, then the erf GELU
/// when `gelu`.
struct CpuBiasActivation {
    gelu: bool,
}

impl InplaceOp2 for CpuBiasActivation {
    fn name(&self) -> &'static str {
        "cpu-bias-activation"
    }

    fn cpu_fwd(
        &self,
        storage: &mut CpuStorage,
        layout: &Layout,
        bias: &CpuStorage,
        bias_layout: &Layout,
    ) -> candle_core::Result<()> {
        let (CpuStorage::F32(values), Some((start, end))) = (storage, layout.contiguous_offsets()) else {
            candle_core::bail!("cpu-bias-activation needs a contiguous f32 tensor");
        };
        let (CpuStorage::F32(bias), Some((bias_start, bias_end))) = (bias, bias_layout.contiguous_offsets()) else {
            candle_core::bail!("cpu-bias-activation needs a contiguous f32 bias");
        };
        if layout.dims().last() != Some(&(bias_end - bias_start)) {
            candle_core::bail!(
                "cpu-bias-activation: a bias of {} for rows of {:?}",
                bias_end - bias_start,
                layout.dims()
            );
        }
        quarry_kernels::bias_activation_in_place(&mut values[start..end], &bias[bias_start..bias_end], self.gelu);
        Ok(())
    }
}

/// The erf GELU in place on a contiguous f32 CPU tensor.
struct CpuGeluErf;

impl InplaceOp1 for CpuGeluErf {
    fn name(&self) -> &'static str {
        "cpu-gelu-erf"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> candle_core::Result<()> {
        let (CpuStorage::F32(values), Some((start, end))) = (storage, layout.contiguous_offsets()) else {
            candle_core::bail!("cpu-gelu-erf needs a contiguous f32 tensor");
        };
        quarry_kernels::gelu_erf_in_place(&mut values[start..end]);
        Ok(())
    }
}
