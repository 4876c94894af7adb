//! Two fused steps of the encoder as candle ops, on the CPU (f32, quarry-kernels' twins) and
//! on a CUDA GPU (kernels/cuda/attention.cu and encoder.cu, launched by `cuda_attention` and
//! `cuda_encoder_ops`):
//! - attention read straight from the packed query-key-value product, each sequence over its
//!   real tokens, written in the layout the next dense layer reads (no copies by head);
//! - a dense product's bias + the residual + layer norm, in place, one pass per row.

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp1, CustomOp2, CustomOp3, DType, InplaceOp3, Layout, Shape, Tensor};
use quarry_kernels::{Bf16Weights, NormParameters, PackedHeads};

/// Attention of `qkv` `[batch * tokens, 3 * heads * head_size]` (each row the token's query,
/// pre-scaled, key and value) over each sequence's first `lengths[b]` tokens (`lengths`: u32
/// `[batch]`, on `qkv`'s device): the context `[batch * tokens, heads * head_size]`.
pub fn packed_attention(qkv: &Tensor, lengths: &Tensor, heads: usize) -> candle_core::Result<Tensor> {
    packed_attention_by(qkv, lengths, heads, AttentionKernel::Auto)
}

/// Which GPU kernel runs the packed attention (the CPU has one: the twin).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttentionKernel {
    /// Tensor cores in registers (`TensorCoreRegisters`) for f16/bf16 (16-byte aligned), CUDA
    /// cores for f32.
    Auto,
    /// One query per thread, in f32 (kernels/cuda/attention.cu `packed_attention`).
    CudaCores,
    /// f16/bf16 products on tensor cores through WMMA, 16 queries per warp, the scores and
    /// weights through shared memory (`tensor_core_attention`).
    TensorCores,
    /// f16/bf16 products on tensor cores through mma.sync, 16 queries per warp, the scores,
    /// weights and output in registers (`register_attention`).
    TensorCoreRegisters,
}

impl std::str::FromStr for AttentionKernel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Self::Auto),
            "cuda-cores" => Ok(Self::CudaCores),
            "tensor-cores" => Ok(Self::TensorCores),
            "tensor-core-registers" => Ok(Self::TensorCoreRegisters),
            other => Err(format!(
                "unknown attention kernel `{other}` (auto, cuda-cores, tensor-cores, tensor-core-registers)"
            )),
        }
    }
}

/// [`packed_attention`] by the GPU kernel `kernel` (ignored on the CPU).
pub fn packed_attention_by(
    qkv: &Tensor,
    lengths: &Tensor,
    heads: usize,
    kernel: AttentionKernel,
) -> candle_core::Result<Tensor> {
    let (rows, width) = qkv.dims2()?;
    let batch = lengths.dims1()?;
    if batch == 0 || rows % batch != 0 || width % (3 * heads) != 0 {
        candle_core::bail!("packed attention: {rows} rows of {width} are not {batch} sequences of {heads} heads x 3");
    }
    let shape = PackedHeads {
        tokens: rows / batch,
        heads,
        head_size: width / (3 * heads),
    };
    qkv.apply_op2_no_bwd(lengths, &PackedAttention { shape, kernel })
}

/// [`packed_attention`] over real tokens only: `qkv` `[sum(lengths), 3 * heads * head_size]`
/// holds the sequences back to back, each as its real rows, and so does the context. `starts`
/// (u32 `[batch]`) is each sequence's first row and `longest` the longest length: a GPU's
/// register kernel reads them (`cuda_attention::ragged_attention`, f16 or bf16), the CPU
/// (`quarry_kernels::ragged_attention`) takes the lengths alone. No padded copy is made or
/// dropped.
pub fn ragged_attention(
    qkv: &Tensor,
    lengths: &Tensor,
    starts: &Tensor,
    longest: usize,
    heads: usize,
) -> candle_core::Result<Tensor> {
    let (rows, width) = qkv.dims2()?;
    if heads == 0 || width % (3 * heads) != 0 {
        candle_core::bail!("ragged attention: rows of {width} values are not {heads} heads x 3");
    }
    if starts.dims1()? != lengths.dims1()? {
        candle_core::bail!(
            "ragged attention: {} sequence starts for {} lengths",
            starts.dims1()?,
            lengths.dims1()?
        );
    }
    let shape = PackedHeads {
        tokens: rows,
        heads,
        head_size: width / (3 * heads),
    };
    qkv.apply_op3_no_bwd(lengths, starts, &RaggedAttention { shape, longest })
}

/// `x` `[rows, hidden]` (a dense layer's product, fresh: nothing else holds it) becomes, in
/// place, LayerNorm(x + bias + residual) with `parameters` `[3, hidden]` = bias, weight, shift.
pub fn bias_residual_layer_norm(
    x: &Tensor,
    residual: &Tensor,
    parameters: &Tensor,
    epsilon: f32,
) -> candle_core::Result<()> {
    if x.dims() != residual.dims() || parameters.dims() != [3, x.dim(1)?] {
        candle_core::bail!(
            "layer norm of {:?} with a residual of {:?} and parameters of {:?}",
            x.dims(),
            residual.dims(),
            parameters.dims()
        );
    }
    x.inplace_op3(residual, parameters, &BiasResidualLayerNorm { epsilon })
}

pub(super) fn contiguous(layout: &Layout, what: &str) -> candle_core::Result<std::ops::Range<usize>> {
    match layout.contiguous_offsets() {
        Some((start, end)) => Ok(start..end),
        None => candle_core::bail!("{what} must be contiguous for the fused encoder steps"),
    }
}

fn cpu_f32<'a>(storage: &'a CpuStorage, layout: &Layout, what: &str) -> candle_core::Result<&'a [f32]> {
    match storage {
        CpuStorage::F32(values) => Ok(&values[contiguous(layout, what)?]),
        other => candle_core::bail!(
            "{what}: the fused encoder steps take f32 on the CPU, not {:?}",
            other.dtype()
        ),
    }
}

/// The u32 sequence lengths the attention ops take, as `usize`.
fn sequence_lengths(lengths: &CpuStorage, layout: &Layout) -> candle_core::Result<Vec<usize>> {
    let CpuStorage::U32(lengths) = lengths else {
        candle_core::bail!("sequence lengths must be u32")
    };
    Ok(lengths[contiguous(layout, "the sequence lengths")?]
        .iter()
        .map(|&l| l as usize)
        .collect())
}

struct PackedAttention {
    shape: PackedHeads,
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    kernel: AttentionKernel,
}

impl CustomOp2 for PackedAttention {
    fn name(&self) -> &'static str {
        "quarry-packed-attention"
    }

    fn cpu_fwd(
        &self,
        qkv: &CpuStorage,
        qkv_layout: &Layout,
        lengths: &CpuStorage,
        lengths_layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let values = cpu_f32(qkv, qkv_layout, "the query-key-value product")?;
        let lengths = sequence_lengths(lengths, lengths_layout)?;
        let context = quarry_kernels::packed_attention(values, &lengths, self.shape);
        Ok((
            CpuStorage::F32(context),
            Shape::from((lengths.len() * self.shape.tokens, self.shape.hidden())),
        ))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        qkv: &candle_core::CudaStorage,
        qkv_layout: &Layout,
        lengths: &candle_core::CudaStorage,
        lengths_layout: &Layout,
    ) -> candle_core::Result<(candle_core::CudaStorage, Shape)> {
        let (qkv_range, lengths_range) = (
            contiguous(qkv_layout, "the query-key-value product")?,
            contiguous(lengths_layout, "the sequence lengths")?,
        );
        let context =
            super::cuda_attention::packed_attention(qkv, qkv_range, lengths, lengths_range, self.shape, self.kernel)?;
        Ok((
            context,
            Shape::from((
                lengths_layout.shape().elem_count() * self.shape.tokens,
                self.shape.hidden(),
            )),
        ))
    }
}

/// [`ragged_attention`].
struct RaggedAttention {
    /// `tokens`: every sequence's rows together.
    shape: PackedHeads,
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    longest: usize,
}

impl CustomOp3 for RaggedAttention {
    fn name(&self) -> &'static str {
        "quarry-ragged-attention"
    }

    fn cpu_fwd(
        &self,
        qkv: &CpuStorage,
        qkv_layout: &Layout,
        lengths: &CpuStorage,
        lengths_layout: &Layout,
        _starts: &CpuStorage,
        _starts_layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let values = cpu_f32(qkv, qkv_layout, "the query-key-value product")?;
        let lengths = sequence_lengths(lengths, lengths_layout)?;
        let real: usize = lengths.iter().sum();
        if real != self.shape.tokens {
            candle_core::bail!(
                "ragged attention: {} rows, but the sequence lengths sum to {real}",
                self.shape.tokens
            );
        }
        let context = quarry_kernels::ragged_attention(values, &lengths, self.shape);
        Ok((CpuStorage::F32(context), Shape::from((real, self.shape.hidden()))))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        qkv: &candle_core::CudaStorage,
        qkv_layout: &Layout,
        lengths: &candle_core::CudaStorage,
        lengths_layout: &Layout,
        starts: &candle_core::CudaStorage,
        starts_layout: &Layout,
    ) -> candle_core::Result<(candle_core::CudaStorage, Shape)> {
        let ranges = super::cuda_attention::RaggedRanges {
            qkv: contiguous(qkv_layout, "the query-key-value product")?,
            lengths: contiguous(lengths_layout, "the sequence lengths")?,
            starts: contiguous(starts_layout, "the sequence starts")?,
        };
        let context = super::cuda_attention::ragged_attention(qkv, lengths, starts, ranges, self.shape, self.longest)?;
        Ok((context, Shape::from((self.shape.tokens, self.shape.hidden()))))
    }
}

struct BiasResidualLayerNorm {
    epsilon: f32,
}

impl InplaceOp3 for BiasResidualLayerNorm {
    fn name(&self) -> &'static str {
        "quarry-bias-residual-layer-norm"
    }

    fn cpu_fwd(
        &self,
        x: &mut CpuStorage,
        x_layout: &Layout,
        residual: &CpuStorage,
        residual_layout: &Layout,
        parameters: &CpuStorage,
        parameters_layout: &Layout,
    ) -> candle_core::Result<()> {
        let residual = cpu_f32(residual, residual_layout, "the residual")?;
        let parameters = cpu_f32(parameters, parameters_layout, "the layer norm parameters")?;
        let x_range = contiguous(x_layout, "the layer output")?;
        let CpuStorage::F32(values) = x else {
            candle_core::bail!("the fused encoder steps take f32 on the CPU, not {:?}", x.dtype())
        };
        let hidden = parameters.len() / 3;
        let (bias, rest) = parameters.split_at(hidden);
        let (weight, shift) = rest.split_at(hidden);
        quarry_kernels::bias_residual_layer_norm_rows(
            &mut values[x_range],
            residual,
            NormParameters {
                bias,
                weight,
                shift,
                epsilon: self.epsilon,
            },
        );
        Ok(())
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        x: &mut candle_core::CudaStorage,
        x_layout: &Layout,
        residual: &candle_core::CudaStorage,
        residual_layout: &Layout,
        parameters: &candle_core::CudaStorage,
        parameters_layout: &Layout,
    ) -> candle_core::Result<()> {
        let ranges = [
            contiguous(x_layout, "the layer output")?,
            contiguous(residual_layout, "the residual")?,
            contiguous(parameters_layout, "the layer norm parameters")?,
        ];
        super::cuda_encoder_ops::bias_residual_layer_norm(x, residual, parameters, ranges, self.epsilon)
    }
}

/// `x · weightᵀ` for `x` `[rows, inputs]` of a few rows (a query's tokens) on the CPU, f32:
/// each weight row read once, no packing (see `quarry_kernels::few_rows_product`).
pub fn few_rows_product(x: &Tensor, weight: &Tensor) -> candle_core::Result<Tensor> {
    let ((_, inputs), (_, weight_inputs)) = (x.dims2()?, weight.dims2()?);
    if inputs != weight_inputs {
        candle_core::bail!("a product of {:?} with the transpose of {:?}", x.dims(), weight.dims());
    }
    x.contiguous()?.apply_op2_no_bwd(&weight.contiguous()?, &FewRowsProduct)
}

struct FewRowsProduct;

impl CustomOp2 for FewRowsProduct {
    fn name(&self) -> &'static str {
        "quarry-few-rows-product"
    }

    fn cpu_fwd(
        &self,
        x: &CpuStorage,
        x_layout: &Layout,
        weight: &CpuStorage,
        weight_layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (rows, inputs) = x_layout.shape().dims2()?;
        let outputs = weight_layout.shape().dims2()?.0;
        let product = quarry_kernels::few_rows_product(
            cpu_f32(x, x_layout, "the dense layer's input")?,
            cpu_f32(weight, weight_layout, "the dense layer's weights")?,
            inputs,
        );
        Ok((CpuStorage::F32(product), Shape::from((rows, outputs))))
    }
}

/// `x · Wᵀ` for f32 `x` `[rows, inputs]` on the CPU with both sides rounded to bf16 and the
/// sums in f32, `W` packed at load (`quarry_kernels::Bf16Weights`): the CPU's `--precision bf16`.
pub fn bf16_product(x: &Tensor, weights: &Bf16Weights) -> candle_core::Result<Tensor> {
    let inputs = x.dims2()?.1;
    if inputs != weights.inputs() {
        candle_core::bail!(
            "a product of {:?} with packed weights of {} inputs",
            x.dims(),
            weights.inputs()
        );
    }
    x.contiguous()?.apply_op1_no_bwd(&Bf16Product(weights))
}

struct Bf16Product<'a>(&'a Bf16Weights);

impl CustomOp1 for Bf16Product<'_> {
    fn name(&self) -> &'static str {
        "quarry-bf16-product"
    }

    fn cpu_fwd(&self, x: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let rows = layout.shape().dims2()?.0;
        let product = self.0.product(cpu_f32(x, layout, "the dense layer's input")?);
        Ok((CpuStorage::F32(product), Shape::from((rows, self.0.outputs()))))
    }
}

/// Sentence embeddings `[lengths.len(), hidden]` from `states` `[sum(lengths), hidden]` (f32,
/// on the CPU), each sequence's real token vectors back to back: each sequence's mean, scaled
/// to unit length (`quarry_kernels::mean_pool_normalize_sequences`, sequences in parallel).
pub fn mean_pool_normalize_sequences(states: &Tensor, lengths: &[usize]) -> candle_core::Result<Tensor> {
    let (rows, real) = (states.dim(0)?, lengths.iter().sum::<usize>());
    if real != rows {
        candle_core::bail!("mean pooling: {rows} rows, but the sequence lengths sum to {real}");
    }
    states.contiguous()?.apply_op1_no_bwd(&MeanPoolSequences(lengths))
}

struct MeanPoolSequences<'a>(&'a [usize]);

impl CustomOp1 for MeanPoolSequences<'_> {
    fn name(&self) -> &'static str {
        "quarry-mean-pool-sequences"
    }

    fn cpu_fwd(&self, states: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let hidden = layout.shape().dims2()?.1;
        let pooled = quarry_kernels::mean_pool_normalize_sequences(
            cpu_f32(states, layout, "the token vectors")?,
            self.0,
            hidden,
        );
        Ok((CpuStorage::F32(pooled), Shape::from((self.0.len(), hidden))))
    }
}

/// Sentence embeddings `[batch, hidden]` (f32) from a padded batch's token vectors `states`
/// `[batch, tokens, hidden]` and `lengths` (u32 `[batch]`, on the same device): each
/// sequence's mean over its first `lengths[b]` tokens, scaled to unit length. On a GPU one
/// pass over the states in their own precision (encoder.cu `mean_pool_normalize_padded`), on
/// the CPU (f32) the twin, `quarry_kernels::mean_pool` + `l2_normalize`.
pub fn mean_pool_normalize_padded(states: &Tensor, lengths: &Tensor) -> candle_core::Result<Tensor> {
    let (batch, tokens, _) = states.dims3()?;
    if lengths.dims1()? != batch {
        candle_core::bail!("mean pooling: {batch} sequences, {} lengths", lengths.dims1()?);
    }
    states
        .contiguous()?
        .apply_op2_no_bwd(lengths, &MeanPoolPadded { tokens })
}

struct MeanPoolPadded {
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    tokens: usize,
}

impl CustomOp2 for MeanPoolPadded {
    fn name(&self) -> &'static str {
        "quarry-mean-pool-padded"
    }

    fn cpu_fwd(
        &self,
        states: &CpuStorage,
        layout: &Layout,
        lengths: &CpuStorage,
        lengths_layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (batch, tokens, hidden) = layout.shape().dims3()?;
        let mask: Vec<u32> = sequence_lengths(lengths, lengths_layout)?
            .iter()
            .flat_map(|&length| (0..tokens).map(move |t| u32::from(t < length)))
            .collect();
        let mut pooled = quarry_kernels::mean_pool(
            cpu_f32(states, layout, "the token vectors")?,
            &mask,
            batch,
            tokens,
            hidden,
        );
        quarry_kernels::l2_normalize(&mut pooled, hidden);
        Ok((CpuStorage::F32(pooled), Shape::from((batch, hidden))))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        states: &candle_core::CudaStorage,
        layout: &Layout,
        lengths: &candle_core::CudaStorage,
        lengths_layout: &Layout,
    ) -> candle_core::Result<(candle_core::CudaStorage, Shape)> {
        let (batch, _, hidden) = layout.shape().dims3()?;
        let (range, lengths_range) = (
            contiguous(layout, "the token vectors")?,
            contiguous(lengths_layout, "the sequence lengths")?,
        );
        let pooled =
            super::cuda_encoder_ops::mean_pool_normalize_padded(states, range, lengths, lengths_range, self.tokens)?;
        Ok((pooled, Shape::from((batch, hidden))))
    }
}

/// Whether the fused steps can run on tensors of `dtype` on the CPU (f32 only: the twins).
pub(super) fn cpu_supports(dtype: DType) -> bool {
    dtype == DType::F32
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Module};

    fn max_difference(a: &Tensor, b: &Tensor) -> f32 {
        (a - b)
            .unwrap()
            .abs()
            .unwrap()
            .flatten_all()
            .unwrap()
            .max(0)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap()
    }

    #[test]
    fn every_attention_kernel_is_named_and_an_unknown_name_lists_them() {
        for (name, kernel) in [
            ("auto", AttentionKernel::Auto),
            ("cuda-cores", AttentionKernel::CudaCores),
            ("tensor-cores", AttentionKernel::TensorCores),
            ("tensor-core-registers", AttentionKernel::TensorCoreRegisters),
        ] {
            assert_eq!(name.parse::<AttentionKernel>(), Ok(kernel));
        }
        let error = "wmma".parse::<AttentionKernel>().unwrap_err();
        assert!(
            error.contains("`wmma`") && error.contains("tensor-core-registers"),
            "{error}"
        );
    }

    #[test]
    fn ragged_attention_is_the_packed_attentions_real_rows_and_checks_its_starts() {
        // Three sequences padded to 6 tokens, one of them empty; the ragged input is their
        // real rows back to back.
        let (lengths, tokens, heads, head_size) = ([4u32, 0, 6], 6, 2, 32);
        let hidden = heads * head_size;
        let padded = Tensor::randn(0f32, 0.6, (lengths.len() * tokens, 3 * hidden), &Device::Cpu).unwrap();
        let real_rows: Vec<u32> = lengths
            .iter()
            .enumerate()
            .flat_map(|(b, &length)| (0..length).map(move |t| (b * tokens) as u32 + t))
            .collect();
        let gather = Tensor::new(real_rows.as_slice(), &Device::Cpu).unwrap();
        let want = packed_attention(&padded, &Tensor::new(&lengths, &Device::Cpu).unwrap(), heads)
            .unwrap()
            .index_select(&gather, 0)
            .unwrap();
        let ragged = padded.index_select(&gather, 0).unwrap();
        let (lengths, starts) = (
            Tensor::new(&lengths, &Device::Cpu).unwrap(),
            Tensor::new(&[0u32, 4, 4], &Device::Cpu).unwrap(),
        );
        let got = ragged_attention(&ragged, &lengths, &starts, 6, heads).unwrap();
        assert_eq!(got.dims(), [10, hidden]);
        assert!(max_difference(&got, &want) < 1e-5);
        let error = ragged_attention(&ragged, &lengths, &starts.narrow(0, 0, 2).unwrap(), 6, heads)
            .unwrap_err()
            .to_string();
        assert!(error.contains("2 sequence starts for 3 lengths"), "{error}");
    }

    #[test]
    fn the_few_rows_product_is_candles_matmul() {
        let device = Device::Cpu;
        for (rows, inputs, outputs) in [(1, 384, 1152), (10, 384, 1536), (63, 1536, 384), (3, 37, 5)] {
            let x = Tensor::randn(0f32, 1.0, (rows, inputs), &device).unwrap();
            let weight = Tensor::randn(0f32, 0.1, (outputs, inputs), &device).unwrap();
            let want = x.matmul(&weight.t().unwrap()).unwrap();
            let got = few_rows_product(&x, &weight).unwrap();
            assert_eq!(got.dims(), [rows, outputs]);
            assert!(
                max_difference(&got, &want) < 1e-4,
                "{rows}x{inputs}x{outputs}: {}",
                max_difference(&got, &want)
            );
        }
        // A transposed (strided) input is made contiguous first.
        let x = Tensor::randn(0f32, 1.0, (8, 2), &device).unwrap().t().unwrap();
        let weight = Tensor::randn(0f32, 1.0, (3, 8), &device).unwrap();
        assert!(
            max_difference(
                &few_rows_product(&x, &weight).unwrap(),
                &x.matmul(&weight.t().unwrap()).unwrap()
            ) < 1e-5
        );
        assert!(
            few_rows_product(&x, &Tensor::zeros((3, 7), DType::F32, &device).unwrap()).is_err(),
            "widths that do not match"
        );
    }

    #[test]
    fn the_fused_sub_layer_end_is_candles_adds_and_layer_norm() {
        let device = Device::Cpu;
        for (rows, hidden) in [(1, 1), (70, 384), (130, 37)] {
            let x = (Tensor::randn(0f32, 2.0, (rows, hidden), &device).unwrap() + 3.0).unwrap();
            let residual = Tensor::randn(0f32, 1.0, (rows, hidden), &device).unwrap();
            let parameters = Tensor::randn(0f32, 1.0, (3, hidden), &device).unwrap();
            let norm = candle_nn::LayerNorm::new(parameters.get(1).unwrap(), parameters.get(2).unwrap(), 1e-12);
            let want = norm
                .forward(
                    &x.broadcast_add(&parameters.get(0).unwrap())
                        .unwrap()
                        .add(&residual)
                        .unwrap(),
                )
                .unwrap();
            let got = x.copy().unwrap();
            bias_residual_layer_norm(&got, &residual, &parameters, 1e-12).unwrap();
            assert!(
                max_difference(&got, &want) < 1e-4,
                "{rows}x{hidden}: {}",
                max_difference(&got, &want)
            );
        }
    }

    #[test]
    fn padded_mean_pooling_is_the_real_rows_pooling() {
        let device = Device::Cpu;
        let (tokens, hidden, lengths) = (6, 37, [6usize, 1, 4]);
        let states = Tensor::randn(0f32, 1.0, (lengths.len(), tokens, hidden), &device).unwrap();
        let real: Vec<Tensor> = lengths
            .iter()
            .enumerate()
            .map(|(b, &length)| states.get(b).unwrap().narrow(0, 0, length).unwrap())
            .collect();
        let want = mean_pool_normalize_sequences(&Tensor::cat(&real, 0).unwrap(), &lengths).unwrap();
        let lengths_u32 = Tensor::new(lengths.map(|l| l as u32).as_slice(), &device).unwrap();
        let got = mean_pool_normalize_padded(&states, &lengths_u32).unwrap();
        assert_eq!(got.dims(), [3, hidden]);
        assert!(max_difference(&got, &want) < 1e-6, "{}", max_difference(&got, &want));
        assert!(
            mean_pool_normalize_padded(&states, &Tensor::new(&[1u32, 2], &device).unwrap()).is_err(),
            "two lengths for three sequences"
        );
    }
}
