//! The encoder's dense layers: `x · Wᵀ + b` on the device's fastest path — quarry's own
//! product for a few rows on the CPU (a query), bf16 products over weights packed at load on
//! a CPU with AVX512-BF16, the bias (+ erf GELU) in place in one pass after the product on
//! the CPU and, as a kernel, on a CUDA GPU, or in cuBLASLt's epilogue there (f16 and bf16,
//! the fused steps).

use super::HiddenAct;
use candle_core::{CpuStorage, DType, InplaceOp1, InplaceOp2, Layout, Module, Tensor};
use candle_nn::{Linear, VarBuilder};
use quarry_kernels::Bf16Weights;

use super::encoder_ops;

/// A dense layer: candle's `Linear`, and its weights packed for bf16 products where the CPU
/// runs them (bf16, or the default auto, on a CPU with AVX512-BF16:
/// [`BertEncoder::with_bf16_products`]; `linear` then keeps its bias only).
pub(super) struct Dense {
    pub(super) linear: Linear,
    pub(super) bf16: Option<Bf16Weights>,
}

impl Dense {
    pub(super) fn new(linear: Linear) -> Self {
        Self { linear, bf16: None }
    }

    pub(super) fn pack_bf16(&mut self) -> candle_core::Result<()> {
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

/// Below this many rows a dense layer on the CPU computes `W · xᵀ` (see [`dense_forward`]).
pub(super) const FEW_ROWS: usize = 64;

/// `x · Wᵀ + b` for `x` `[rows, inputs]`. On the CPU, few rows (a query's tokens) go through
/// [`dense_product`] instead: the CPU matmul kernels tile the output's rows (24 at a time with
/// AVX2, 64 with AVX-512), so ten tokens would fill a fraction of each tile, and they pack
/// the weights into tiles first, which for ten rows costs as much as the product.
pub(super) fn dense_forward(layer: &Dense, x: &Tensor) -> candle_core::Result<Tensor> {
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

/// The query-key-value layer's `x · Wᵀ + b`: with `fused` (the fused steps) on a CUDA GPU in
/// f16 or bf16 by cuBLASLt with the bias in the product's epilogue (`cuda_bias_gemm`), else
/// (or where cuBLASLt refuses the shapes: logged once) [`dense_forward`].
pub(super) fn bias_in_product_forward(layer: &Dense, x: &Tensor, fused: bool) -> candle_core::Result<Tensor> {
    #[cfg(feature = "cuda")]
    if let Some(product) = in_epilogue(layer, x, fused, false) {
        return Ok(product);
    }
    let _ = fused;
    dense_forward(layer, x)
}

/// With `fused` on a CUDA GPU in f16 or bf16, the layer's product by cuBLASLt with its bias
/// (and the tanh-form GELU with `gelu`) in the epilogue; None elsewhere, without a bias, or
/// where cuBLASLt refuses (logged once: the caller falls back to the product and a pass).
#[cfg(feature = "cuda")]
fn in_epilogue(layer: &Dense, x: &Tensor, fused: bool, gelu: bool) -> Option<Tensor> {
    if !(fused && x.device().is_cuda() && matches!(x.dtype(), DType::F16 | DType::BF16)) {
        return None;
    }
    let bias = layer.linear.bias()?;
    let product = x.contiguous().and_then(|x| {
        if gelu {
            super::cuda_bias_gemm::dense_with_bias_gelu(&x, layer.linear.weight(), bias)
        } else {
            super::cuda_bias_gemm::dense_with_bias(&x, layer.linear.weight(), bias)
        }
    });
    match product {
        Ok(product) => Some(product),
        Err(error) => {
            static LOGGED: std::sync::Once = std::sync::Once::new();
            let fallback = if gelu {
                "the bias and GELU pass"
            } else {
                "the bias pass"
            };
            LOGGED.call_once(|| {
                tracing::warn!("the bias in cuBLASLt's epilogue failed ({error}); the product, then {fallback}")
            });
            None
        }
    }
}

/// `x · Wᵀ` without the bias, a fresh contiguous tensor. Few f32 rows on the CPU (a query's
/// tokens) go through quarry's own product, which reads each weight row once without packing
/// it; other few rows through `W · xᵀ` (see [`dense_forward`]). Where the layer has weights
/// packed for bf16 products, f32 rows on the CPU, few or many, go through those instead.
pub(super) fn dense_product(dense: &Dense, x: &Tensor) -> candle_core::Result<Tensor> {
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

/// The feed-forward layer's product and activation. On a GPU the bias add and the erf GELU
/// are one fused pass over the product; with `gelu_in_epilogue` (the fused steps, f16 or
/// bf16) both go in cuBLASLt's epilogue, the GELU in its tanh form (`cuda_bias_gemm`).
pub(super) fn intermediate_forward(
    layer: &Dense,
    x: &Tensor,
    activation: HiddenAct,
    gelu_in_epilogue: bool,
) -> candle_core::Result<Tensor> {
    #[cfg(feature = "cuda")]
    if x.device().is_cuda() && matches!(activation, HiddenAct::Gelu) {
        if let Some(product) = in_epilogue(layer, x, gelu_in_epilogue, true) {
            return Ok(product);
        }
        return cuda_dense(layer, x, true);
    }
    let _ = gelu_in_epilogue;
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
pub(super) fn cpu_dense(layer: &Dense, x: &Tensor, gelu: bool) -> Option<candle_core::Result<Tensor>> {
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
pub(super) fn cuda_dense(layer: &Dense, x: &Tensor, gelu: bool) -> candle_core::Result<Tensor> {
    let product = dense_product(layer, x)?;
    match layer.linear.bias() {
        // `product` is fresh: nothing else holds it.
        Some(bias) => super::cuda_encoder_ops::bias_activation(&product, bias, gelu)?,
        None if gelu => return product.gelu_erf(),
        None => {}
    }
    Ok(product)
}

pub(super) fn dense(vb: VarBuilder, inputs: usize, outputs: usize) -> candle_core::Result<Linear> {
    Ok(Linear::new(
        vb.get((outputs, inputs), "weight")?,
        Some(vb.get(outputs, "bias")?),
    ))
}

pub(super) fn activate(xs: Tensor, activation: HiddenAct) -> candle_core::Result<Tensor> {
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

pub(super) fn on_cpu_f32(xs: &Tensor) -> bool {
    xs.device().is_cpu() && xs.dtype() == DType::F32
}

/// `x [rows, cols] += bias [cols]` in place on contiguous f32 CPU tensors, then the erf GELU
/// when `gelu`.
pub(super) struct CpuBiasActivation {
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
pub(super) struct CpuGeluErf;

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
