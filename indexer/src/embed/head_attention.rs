//! Attention by candle's batched products, the path without the packed attention: the padded
//! layout by head, scores in [`score_dtype`], and the softmax over each row's real tokens (an
//! in-place CPU op, quarry's CUDA kernel, or an additive mask).

use candle_core::{CpuStorage, DType, InplaceOp1, Layout, Tensor};

use super::encoder_ops::AttentionKernel;

/// How attention leaves out the padding.
pub(super) enum Padding<'a> {
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
pub(super) struct AttentionShape {
    pub(super) batch: usize,
    pub(super) tokens: usize,
    pub(super) heads: usize,
    pub(super) head_size: usize,
    /// The GPU kernel of the packed attention.
    pub(super) kernel: AttentionKernel,
}

/// Attention by candle's batched products: one copy lays the packed `qkv` `[rows, 3 * hidden]`
/// out by head `[3, batch, heads, tokens, head_size]`, the softmax leaves out the padding as
/// `padding` says, and the context is copied back to `[rows, hidden]`.
pub(super) fn attention_by_head(qkv: &Tensor, padding: &Padding, shape: AttentionShape) -> candle_core::Result<Tensor> {
    let AttentionShape {
        batch,
        tokens,
        heads,
        head_size,
        ..
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
pub(super) fn attention_scores(query: &Tensor, key: &Tensor) -> candle_core::Result<Tensor> {
    let dtype = score_dtype(query.dtype());
    query.to_dtype(dtype)?.matmul(&key.to_dtype(dtype)?.t()?)
}

#[cfg(feature = "cuda")]
pub(super) fn masked_softmax_on_gpu(scores: &Tensor, lengths: &Tensor) -> candle_core::Result<()> {
    super::cuda_encoder_ops::masked_softmax(scores, lengths)
}

/// Without the `cuda` feature no tensor is on a CUDA device, so this is never reached.
#[cfg(not(feature = "cuda"))]
pub(super) fn masked_softmax_on_gpu(_: &Tensor, _: &Tensor) -> candle_core::Result<()> {
    candle_core::bail!("a CUDA tensor in a build without the cuda feature")
}

/// The additive attention mask `[batch, 1, 1, tokens]`: 0 on real tokens, the dtype's lowest
/// value on padding; `None` when no row is padded.
pub(super) fn attention_mask(
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

/// Softmax of attention scores `[batch, heads, tokens, tokens]` in place, each row over its
/// sequence's real tokens.
pub(super) struct CpuMaskedSoftmax<'a> {
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
