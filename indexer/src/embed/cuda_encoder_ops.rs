//! The encoder's fused GPU steps (kernels/cuda/encoder.cu), applied in place to candle's CUDA
//! tensors: a dense layer's bias add (with the erf GELU for the feed-forward layer) and the
//! attention softmax over each sequence's real tokens. candle's own broadcast add and its
//! mask add + softmax were two thirds of the encoder's GPU time (bench/RESULTS.md).

use candle_core::cuda::cudarc::driver::{DeviceRepr, LaunchConfig, PushKernelArg};
use candle_core::cuda::{CudaDType, WrapErr};
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CudaStorage, DType, InplaceOp2, Layout, Tensor};

/// Name under which candle's device caches the module.
const MODULE: &str = "quarry_encoder";
const THREADS: u32 = 256;
/// CUDA's limit on a grid's second dimension.
const MAX_GRID_Y: usize = 65_535;

/// `x [rows, cols] += bias [cols]` in place, then GELU (erf) when `gelu`.
pub fn bias_activation(x: &Tensor, bias: &Tensor, gelu: bool) -> candle_core::Result<()> {
    x.inplace_op2(bias, &BiasActivation { gelu })
}

/// Softmax in place of `scores [batch, heads, tokens, tokens]` (contiguous), each row over
/// the first `lengths[b]` columns of its sequence `b`, zeros after; `lengths` is `[batch]` u32.
pub fn masked_softmax(scores: &Tensor, lengths: &Tensor) -> candle_core::Result<()> {
    let (_, heads, tokens, _) = scores.dims4()?;
    scores.inplace_op2(lengths, &MaskedSoftmax { rows_per_sequence: heads * tokens })
}

fn suffix(dtype: DType) -> candle_core::Result<&'static str> {
    Ok(match dtype {
        DType::F32 => "f32",
        DType::F16 => "f16",
        DType::BF16 => "bf16",
        other => candle_core::bail!("no fused encoder kernel for {other:?}"),
    })
}

fn contiguous(layout: &Layout, what: &str) -> candle_core::Result<std::ops::Range<usize>> {
    match layout.contiguous_offsets() {
        Some((start, end)) => Ok(start..end),
        None => candle_core::bail!("{what} must be contiguous for the fused encoder kernels"),
    }
}

fn as_u32(value: usize, what: &str) -> candle_core::Result<u32> {
    u32::try_from(value).map_err(|_| candle_core::Error::Msg(format!("{what} {value} is over u32 for the fused encoder kernels")))
}

struct BiasActivation {
    gelu: bool,
}

impl BiasActivation {
    fn launch<T: CudaDType + DeviceRepr>(&self, x: &mut CudaStorage, x_range: std::ops::Range<usize>, bias: &CudaStorage, bias_range: std::ops::Range<usize>) -> candle_core::Result<()> {
        let cols = bias_range.len();
        if cols == 0 || x_range.len() % cols != 0 {
            candle_core::bail!("bias of {cols} values does not divide a tensor of {} values", x_range.len());
        }
        let rows = x_range.len() / cols;
        let function = x.device.get_or_load_custom_func(&format!("bias_activation_{}", suffix(x.dtype())?), MODULE, quarry_kernels::ENCODER_PTX)?;
        let config = LaunchConfig { grid_dim: (as_u32(cols, "columns")?.div_ceil(THREADS), rows.clamp(1, MAX_GRID_Y) as u32, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
        let (rows, cols, gelu) = (as_u32(rows, "rows")?, as_u32(cols, "columns")?, i32::from(self.gelu));
        let bias = bias.as_cuda_slice::<T>()?.slice(bias_range);
        let mut x = x.as_cuda_slice_mut::<T>()?.slice_mut(x_range);
        let mut launch = function.builder();
        launch.arg(&mut x).arg(&bias).arg(&rows).arg(&cols).arg(&gelu);
        // SAFETY: x holds rows·cols values and bias cols, of the kernel's element type.
        unsafe { launch.launch(config) }.w()?;
        Ok(())
    }
}

impl InplaceOp2 for BiasActivation {
    fn name(&self) -> &'static str {
        "quarry-bias-activation"
    }

    fn cpu_fwd(&self, _: &mut CpuStorage, _: &Layout, _: &CpuStorage, _: &Layout) -> candle_core::Result<()> {
        candle_core::bail!("quarry-bias-activation runs on CUDA only")
    }

    fn cuda_fwd(&self, x: &mut CudaStorage, x_layout: &Layout, bias: &CudaStorage, bias_layout: &Layout) -> candle_core::Result<()> {
        let (x_range, bias_range) = (contiguous(x_layout, "the layer output")?, contiguous(bias_layout, "the bias")?);
        match x.dtype() {
            DType::F32 => self.launch::<f32>(x, x_range, bias, bias_range),
            DType::F16 => self.launch::<half::f16>(x, x_range, bias, bias_range),
            DType::BF16 => self.launch::<half::bf16>(x, x_range, bias, bias_range),
            other => candle_core::bail!("no fused encoder kernel for {other:?}"),
        }
    }
}

struct MaskedSoftmax {
    rows_per_sequence: usize,
}

impl MaskedSoftmax {
    fn launch<T: CudaDType + DeviceRepr>(&self, scores: &mut CudaStorage, range: std::ops::Range<usize>, columns: usize, lengths: &CudaStorage, lengths_range: std::ops::Range<usize>) -> candle_core::Result<()> {
        let rows = range.len() / columns.max(1);
        if rows.div_ceil(self.rows_per_sequence.max(1)) > lengths_range.len() {
            candle_core::bail!("{rows} score rows need more than the {} sequence lengths given", lengths_range.len());
        }
        let function = scores.device.get_or_load_custom_func(&format!("masked_softmax_{}", suffix(scores.dtype())?), MODULE, quarry_kernels::ENCODER_PTX)?;
        let warps_per_block = THREADS / 32;
        let blocks = as_u32(rows.div_ceil(warps_per_block as usize).max(1), "blocks")?;
        let config = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
        let (rows, per_sequence, columns) = (as_u32(rows, "rows")?, as_u32(self.rows_per_sequence, "rows per sequence")?, as_u32(columns, "columns")?);
        let lengths = lengths.as_cuda_slice::<u32>()?.slice(lengths_range);
        let mut scores = scores.as_cuda_slice_mut::<T>()?.slice_mut(range);
        let mut launch = function.builder();
        launch.arg(&mut scores).arg(&lengths).arg(&rows).arg(&per_sequence).arg(&columns);
        // SAFETY: scores hold rows·columns values; lengths one per sequence, checked above.
        unsafe { launch.launch(config) }.w()?;
        Ok(())
    }
}

impl InplaceOp2 for MaskedSoftmax {
    fn name(&self) -> &'static str {
        "quarry-masked-softmax"
    }

    fn cpu_fwd(&self, _: &mut CpuStorage, _: &Layout, _: &CpuStorage, _: &Layout) -> candle_core::Result<()> {
        candle_core::bail!("quarry-masked-softmax runs on CUDA only")
    }

    fn cuda_fwd(&self, scores: &mut CudaStorage, layout: &Layout, lengths: &CudaStorage, lengths_layout: &Layout) -> candle_core::Result<()> {
        let (range, lengths_range) = (contiguous(layout, "the attention scores")?, contiguous(lengths_layout, "the sequence lengths")?);
        let columns = layout.dims().last().copied().unwrap_or(1);
        match scores.dtype() {
            DType::F32 => self.launch::<f32>(scores, range, columns, lengths, lengths_range),
            DType::F16 => self.launch::<half::f16>(scores, range, columns, lengths, lengths_range),
            DType::BF16 => self.launch::<half::bf16>(scores, range, columns, lengths, lengths_range),
            other => candle_core::bail!("no fused encoder kernel for {other:?}"),
        }
    }
}
