//! The encoder's first step: each token's word row plus its position row (the token-type row
//! added), layer-normed. On a CUDA GPU with the fused steps one kernel does it in one pass
//! (kernels/cuda/encoder.cu `embed_tokens`, launched by `cuda_encoder_ops`); elsewhere candle's
//! row gather, broadcast add and layer norm.

use candle_core::{CpuStorage, CustomOp3, Layout, Module, Shape, Tensor};
use candle_nn::LayerNorm;

/// The embedding tables and their layer norm.
pub(super) struct TokenEmbedding {
    words: Tensor,
    /// `[positions + 2, hidden]`: the position rows (from the model's first position id on,
    /// the token-type-0 row added), then the layer norm's weight and shift (what the fused
    /// kernel reads).
    prologue: Tensor,
    /// The position rows: a view of the head of `prologue`.
    positions: Tensor,
    norm: LayerNorm,
    epsilon: f32,
}

impl TokenEmbedding {
    pub(super) fn new(words: Tensor, positions: Tensor, norm: LayerNorm, epsilon: f64) -> candle_core::Result<Self> {
        let Some(shift) = norm.bias() else {
            candle_core::bail!("the embeddings' layer norm has no shift (bias)");
        };
        let prologue = Tensor::cat(&[&positions, &norm.weight().unsqueeze(0)?, &shift.unsqueeze(0)?], 0)?;
        Ok(Self {
            words,
            positions: prologue.narrow(0, 0, positions.dim(0)?)?,
            prologue,
            norm,
            epsilon: epsilon as f32,
        })
    }

    /// The tables' element type and device (the encoder's).
    pub(super) fn words(&self) -> &Tensor {
        &self.words
    }

    /// `[batch * tokens, hidden]` for `ids` `[batch, tokens]`, before the layer norm (the CPU
    /// gathers the real rows first, then [`Self::normalize`]).
    pub(super) fn unnormalized(&self, ids: &Tensor) -> candle_core::Result<Tensor> {
        let (batch, tokens) = ids.dims2()?;
        let hidden = self.words.dim(1)?;
        self.words
            .index_select(&ids.flatten_all()?, 0)?
            .reshape((batch, tokens, hidden))?
            .broadcast_add(&self.positions.narrow(0, 0, tokens)?)?
            .reshape((batch * tokens, hidden))
    }

    pub(super) fn normalize(&self, rows: &Tensor) -> candle_core::Result<Tensor> {
        self.norm.forward(rows)
    }

    /// The whole step in one kernel where it runs: on a CUDA GPU, rows a multiple of 4 wide,
    /// no more tokens than positions. None elsewhere.
    pub(super) fn fused(&self, ids: &Tensor) -> candle_core::Result<Option<Tensor>> {
        let tokens = ids.dim(1)?;
        if !ids.device().is_cuda() || !self.words.dim(1)?.is_multiple_of(4) || tokens > self.positions.dim(0)? {
            return Ok(None);
        }
        embed_tokens(ids, &self.words, &self.prologue, self.epsilon).map(Some)
    }
}

/// `[batch * tokens, hidden]`: row `r` = LayerNorm(words[ids[r]] + prologue[r % tokens]) with
/// the weight and shift of `prologue`'s last two rows (`prologue` `[positions + 2, hidden]`;
/// `ids` u32 `[batch, tokens]`). One kernel on a CUDA GPU; no CPU implementation (the CPU
/// composes [`TokenEmbedding::unnormalized`] and [`TokenEmbedding::normalize`]).
pub fn embed_tokens(ids: &Tensor, words: &Tensor, prologue: &Tensor, epsilon: f32) -> candle_core::Result<Tensor> {
    let (_, hidden) = words.dims2()?;
    let (rows, width) = prologue.dims2()?;
    let tokens = ids.dims2()?.1;
    if width != hidden || rows < tokens + 2 {
        candle_core::bail!(
            "token embedding: a prologue of {:?} for tables {hidden} wide and {tokens} tokens",
            prologue.dims()
        );
    }
    ids.apply_op3_no_bwd(words, prologue, &EmbedTokens { epsilon })
}

struct EmbedTokens {
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    epsilon: f32,
}

impl CustomOp3 for EmbedTokens {
    fn name(&self) -> &'static str {
        "quarry-embed-tokens"
    }

    fn cpu_fwd(
        &self,
        _: &CpuStorage,
        _: &Layout,
        _: &CpuStorage,
        _: &Layout,
        _: &CpuStorage,
        _: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        candle_core::bail!("quarry-embed-tokens runs on CUDA only")
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        ids: &candle_core::CudaStorage,
        ids_layout: &Layout,
        words: &candle_core::CudaStorage,
        words_layout: &Layout,
        prologue: &candle_core::CudaStorage,
        prologue_layout: &Layout,
    ) -> candle_core::Result<(candle_core::CudaStorage, Shape)> {
        use super::encoder_ops::contiguous;
        let (batch, tokens) = ids_layout.shape().dims2()?;
        let (vocabulary, hidden) = words_layout.shape().dims2()?;
        let positions = prologue_layout.shape().dims2()?.0.saturating_sub(2);
        let out = super::cuda_encoder_ops::embed_tokens(
            [
                (ids, contiguous(ids_layout, "the token ids")?),
                (words, contiguous(words_layout, "the word embeddings")?),
                (prologue, contiguous(prologue_layout, "the position embeddings")?),
            ],
            super::cuda_encoder_ops::EmbeddingShape {
                rows: batch * tokens,
                tokens,
                positions,
                vocabulary,
                hidden,
            },
            self.epsilon,
        )?;
        Ok((out, Shape::from((batch * tokens, hidden))))
    }
}
