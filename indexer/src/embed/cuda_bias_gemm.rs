//! A dense layer's `x · Wᵀ + b` by cuBLASLt with the bias (and, for the feed-forward layer,
//! the GELU) applied in the product's epilogue (f16 and bf16 on a CUDA GPU, the fused steps
//! on): the query-key-value layer then needs no bias pass of its own, and the feed-forward
//! layer no bias + GELU pass, a read and a write of their 1,152 and 1,536 values a token
//! (together the `bias_activation` kernel, 14% of the encoder's GPU time on an H200,
//! bench/RESULTS.md). The other two layers' biases are in their sub-layer ends.
//!
//! cuBLASLt's GELU is the tanh form, `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`, not BERT's
//! erf form: the two differ by at most 4.8e-4 (at x ≈ -2.7), below an f16 value's rounding
//! step at 1 (9.8e-4); `--gpu-gelu erf` keeps the erf pass. The sums are in f32 (cuBLASLt's
//! compute type for f16 and bf16, as candle's products), and the bias and the GELU are
//! applied to them before the one rounding to the output's type.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use candle_core::backend::BackendStorage;
use candle_core::cuda::cudarc::cublaslt::{Activation, CudaBlasLT, Matmul, MatmulConfig};
use candle_core::cuda::cudarc::driver::{CudaStream, DeviceRepr};
use candle_core::cuda::CudaDType;
use candle_core::{CpuStorage, CudaStorage, CustomOp3, DType, Layout, Shape, Tensor};

use super::encoder_ops::contiguous;

/// `x [rows, inputs] · weightᵀ + bias`, `weight` `[outputs, inputs]`, `bias` `[outputs]`, all
/// f16 or all bf16 on one CUDA GPU: a fresh `[rows, outputs]` tensor.
pub fn dense_with_bias(x: &Tensor, weight: &Tensor, bias: &Tensor) -> candle_core::Result<Tensor> {
    x.apply_op3_no_bwd(weight, bias, &BiasInEpilogue { gelu: false })
}

/// [`dense_with_bias`], then the tanh-form GELU, in the same epilogue.
pub fn dense_with_bias_gelu(x: &Tensor, weight: &Tensor, bias: &Tensor) -> candle_core::Result<Tensor> {
    x.apply_op3_no_bwd(weight, bias, &BiasInEpilogue { gelu: true })
}

/// One cuBLASLt handle (and its workspace: 32 MiB on a Hopper GPU) per stream, kept for the
/// process's life: candle runs each GPU's work on one stream, so this is one a GPU.
fn handle(stream: &Arc<CudaStream>) -> candle_core::Result<Arc<CudaBlasLT>> {
    static HANDLES: OnceLock<Mutex<HashMap<usize, Arc<CudaBlasLT>>>> = OnceLock::new();
    let mut handles = HANDLES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // The handle holds its stream, so the stream (and its address) lives while it is listed.
    let key = Arc::as_ptr(stream) as usize;
    if let Some(handle) = handles.get(&key) {
        return Ok(handle.clone());
    }
    let handle = Arc::new(
        CudaBlasLT::new(stream.clone()).map_err(|e| candle_core::Error::Msg(format!("cuBLASLt handle: {e:?}")))?,
    );
    handles.insert(key, handle.clone());
    Ok(handle)
}

struct BiasInEpilogue {
    /// The tanh-form GELU after the bias.
    gelu: bool,
}

impl BiasInEpilogue {
    /// `x`, `weight` and `bias`: each storage with the range of its values.
    fn launch<T: CudaDType + DeviceRepr>(
        &self,
        (x, x_range): (&CudaStorage, std::ops::Range<usize>),
        (weight, weight_range): (&CudaStorage, std::ops::Range<usize>),
        (bias, bias_range): (&CudaStorage, std::ops::Range<usize>),
        (rows, inputs, outputs): (usize, usize, usize),
    ) -> candle_core::Result<CudaStorage>
    where
        CudaBlasLT: Matmul<T>,
    {
        let device = x.device.clone();
        let stream = device.cuda_stream();
        let blas = handle(&stream)?;
        let x = x.as_cuda_slice::<T>()?.slice(x_range);
        let weight = weight.as_cuda_slice::<T>()?.slice(weight_range);
        let bias = bias.as_cuda_slice::<T>()?.slice(bias_range);
        // SAFETY: the product writes every one of the rows·outputs values (beta 0).
        let mut out = unsafe { device.alloc::<T>(rows * outputs) }?;
        // Column-major, as cuBLAS sees it: out (outputs × rows) = weightᵀ · x, the weight
        // stored as inputs × outputs and x as inputs × rows; the bias, one value a row of out
        // (an output), is added to every column (a token).
        let config = MatmulConfig {
            transa: true,
            transb: false,
            transc: false,
            m: outputs as u64,
            n: rows as u64,
            k: inputs as u64,
            alpha: 1.0,
            lda: inputs as i64,
            ldb: inputs as i64,
            beta: 0.0,
            ldc: outputs as i64,
            stride_a: None,
            stride_b: None,
            stride_c: None,
            stride_bias: None,
            batch_size: None,
        };
        // SAFETY: weight holds outputs·inputs values, x rows·inputs, bias outputs and out
        // rows·outputs (checked by the caller), all of T on the stream's device.
        let activation = self.gelu.then_some(Activation::Gelu);
        unsafe { blas.matmul(config, &weight, &x, &mut out, Some(&bias), activation.as_ref()) }
            .map_err(|e| candle_core::Error::Msg(format!("cuBLASLt product with its bias: {e:?}")))?;
        Ok(CudaStorage::wrap_cuda_slice(out, device))
    }
}

impl CustomOp3 for BiasInEpilogue {
    fn name(&self) -> &'static str {
        if self.gelu {
            "quarry-bias-gelu-in-epilogue"
        } else {
            "quarry-bias-in-epilogue"
        }
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
        candle_core::bail!("the bias in the product's epilogue runs on a CUDA GPU only")
    }

    fn cuda_fwd(
        &self,
        x: &CudaStorage,
        x_layout: &Layout,
        weight: &CudaStorage,
        weight_layout: &Layout,
        bias: &CudaStorage,
        bias_layout: &Layout,
    ) -> candle_core::Result<(CudaStorage, Shape)> {
        let (rows, inputs) = x_layout.shape().dims2()?;
        let (outputs, weight_inputs) = weight_layout.shape().dims2()?;
        if weight_inputs != inputs || bias_layout.shape().elem_count() != outputs {
            candle_core::bail!(
                "dense layer: x {:?}, weight {:?}, bias {:?}",
                x_layout.dims(),
                weight_layout.dims(),
                bias_layout.dims()
            );
        }
        let ranges = (
            contiguous(x_layout, "the dense layer's input")?,
            contiguous(weight_layout, "the dense layer's weight")?,
            contiguous(bias_layout, "the dense layer's bias")?,
        );
        let sizes = (rows, inputs, outputs);
        let out = match (x.dtype(), weight.dtype(), bias.dtype()) {
            (DType::F16, DType::F16, DType::F16) => {
                self.launch::<half::f16>((x, ranges.0), (weight, ranges.1), (bias, ranges.2), sizes)?
            }
            (DType::BF16, DType::BF16, DType::BF16) => {
                self.launch::<half::bf16>((x, ranges.0), (weight, ranges.1), (bias, ranges.2), sizes)?
            }
            other => candle_core::bail!("the bias in the product's epilogue takes f16 or bf16 alone, not {other:?}"),
        };
        Ok((out, Shape::from((rows, outputs))))
    }
}
