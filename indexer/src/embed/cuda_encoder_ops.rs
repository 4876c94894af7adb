//! The encoder's fused GPU steps (kernels/cuda/encoder.cu) on candle's CUDA tensors: a dense
//! layer's bias add (with the erf GELU for the feed-forward layer) and the attention softmax
//! over each sequence's real tokens, in place; and the launches behind `encoder_ops`' bias +
//! residual + layer norm and `token_embedding`'s fused first step (the packed attention's are
//! `cuda_attention`'s). candle's own
//! broadcast add and its mask add + softmax were two thirds of the encoder's GPU time
//! (bench/RESULTS.md).

use candle_core::backend::BackendStorage;
use candle_core::cuda::cudarc::driver::{DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use candle_core::cuda::{CudaDType, WrapErr};
use candle_core::{CpuStorage, CudaStorage, DType, InplaceOp2, Layout, Tensor};

use super::encoder_ops::contiguous;

/// Name under which candle's device caches the module.
const MODULE: &str = "quarry_encoder";
const THREADS: u32 = 256;
/// CUDA's limit on a grid's second dimension.
const MAX_GRID_Y: usize = 65_535;
/// Warps of a mean-pooling block: `WARPS` of `mean_pool_normalize_padded` in encoder.cu.
const POOL_WARPS: u32 = 8;
/// What the vectorized bias kernel moves per load and store (encoder.cu's Bits128).
const VECTOR_BYTES: usize = 16;

/// `x [rows, cols] += bias [cols]` in place, then GELU (erf) when `gelu`.
pub fn bias_activation(x: &Tensor, bias: &Tensor, gelu: bool) -> candle_core::Result<()> {
    x.inplace_op2(bias, &BiasActivation { gelu })
}

/// Softmax in place of `scores [batch, heads, tokens, tokens]` (contiguous), each row over
/// the first `lengths[b]` columns of its sequence `b`, zeros after; `lengths` is `[batch]` u32.
pub fn masked_softmax(scores: &Tensor, lengths: &Tensor) -> candle_core::Result<()> {
    let (_, heads, tokens, _) = scores.dims4()?;
    scores.inplace_op2(
        lengths,
        &MaskedSoftmax {
            rows_per_sequence: heads * tokens,
        },
    )
}

pub(super) fn suffix(dtype: DType) -> candle_core::Result<&'static str> {
    Ok(match dtype {
        DType::F32 => "f32",
        DType::F16 => "f16",
        DType::BF16 => "bf16",
        other => candle_core::bail!("no fused encoder kernel for {other:?}"),
    })
}

pub(super) fn as_u32(value: usize, what: &str) -> candle_core::Result<u32> {
    u32::try_from(value)
        .map_err(|_| candle_core::Error::Msg(format!("{what} {value} is over u32 for the fused encoder kernels")))
}

struct BiasActivation {
    gelu: bool,
}

impl BiasActivation {
    fn launch<T: CudaDType + DeviceRepr>(
        &self,
        x: &mut CudaStorage,
        x_range: std::ops::Range<usize>,
        bias: &CudaStorage,
        bias_range: std::ops::Range<usize>,
    ) -> candle_core::Result<()> {
        let cols = bias_range.len();
        if cols == 0 || !x_range.len().is_multiple_of(cols) {
            candle_core::bail!(
                "bias of {cols} values does not divide a tensor of {} values",
                x_range.len()
            );
        }
        let rows = x_range.len() / cols;
        let stream = x.device.cuda_stream();
        let device = x.device.clone();
        let dtype = x.dtype();
        let bias = bias.as_cuda_slice::<T>()?.slice(bias_range);
        let mut x = x.as_cuda_slice_mut::<T>()?.slice_mut(x_range);
        // 16 bytes per load where the rows and both pointers allow it (8 f16/bf16 values, 4 f32).
        let vector = VECTOR_BYTES / std::mem::size_of::<T>();
        let vectorized = cols.is_multiple_of(vector)
            && x.device_ptr(&stream).0 % VECTOR_BYTES as u64 == 0
            && bias.device_ptr(&stream).0 % VECTOR_BYTES as u64 == 0;
        let (name, threads_per_row) = if vectorized {
            ("bias_activation_vectorized", cols / vector)
        } else {
            ("bias_activation", cols)
        };
        let function = device.get_or_load_custom_func(
            &format!("{name}_{}", suffix(dtype)?),
            MODULE,
            quarry_kernels::ENCODER_PTX,
        )?;
        let config = LaunchConfig {
            grid_dim: (
                as_u32(threads_per_row, "columns")?.div_ceil(THREADS),
                rows.clamp(1, MAX_GRID_Y) as u32,
                1,
            ),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let (rows, cols, gelu) = (as_u32(rows, "rows")?, as_u32(cols, "columns")?, i32::from(self.gelu));
        let mut launch = function.builder();
        launch.arg(&mut x).arg(&bias).arg(&rows).arg(&cols).arg(&gelu);
        // SAFETY: x holds rows·cols values and bias cols, of the kernel's element type (for the
        // vectorized kernel: cols a multiple of its vector, both 16-byte aligned, checked above).
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

    fn cuda_fwd(
        &self,
        x: &mut CudaStorage,
        x_layout: &Layout,
        bias: &CudaStorage,
        bias_layout: &Layout,
    ) -> candle_core::Result<()> {
        let (x_range, bias_range) = (
            contiguous(x_layout, "the layer output")?,
            contiguous(bias_layout, "the bias")?,
        );
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
    fn launch<T: CudaDType + DeviceRepr>(
        &self,
        scores: &mut CudaStorage,
        range: std::ops::Range<usize>,
        columns: usize,
        lengths: &CudaStorage,
        lengths_range: std::ops::Range<usize>,
    ) -> candle_core::Result<()> {
        let rows = range.len() / columns.max(1);
        if rows.div_ceil(self.rows_per_sequence.max(1)) > lengths_range.len() {
            candle_core::bail!(
                "{rows} score rows need more than the {} sequence lengths given",
                lengths_range.len()
            );
        }
        let function = scores.device.get_or_load_custom_func(
            &format!("masked_softmax_{}", suffix(scores.dtype())?),
            MODULE,
            quarry_kernels::ENCODER_PTX,
        )?;
        let warps_per_block = THREADS / 32;
        let blocks = as_u32(rows.div_ceil(warps_per_block as usize).max(1), "blocks")?;
        let config = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let (rows, per_sequence, columns) = (
            as_u32(rows, "rows")?,
            as_u32(self.rows_per_sequence, "rows per sequence")?,
            as_u32(columns, "columns")?,
        );
        let lengths = lengths.as_cuda_slice::<u32>()?.slice(lengths_range);
        let mut scores = scores.as_cuda_slice_mut::<T>()?.slice_mut(range);
        let mut launch = function.builder();
        launch
            .arg(&mut scores)
            .arg(&lengths)
            .arg(&rows)
            .arg(&per_sequence)
            .arg(&columns);
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

    fn cuda_fwd(
        &self,
        scores: &mut CudaStorage,
        layout: &Layout,
        lengths: &CudaStorage,
        lengths_layout: &Layout,
    ) -> candle_core::Result<()> {
        let (range, lengths_range) = (
            contiguous(layout, "the attention scores")?,
            contiguous(lengths_layout, "the sequence lengths")?,
        );
        let columns = layout.dims().last().copied().unwrap_or(1);
        match scores.dtype() {
            DType::F32 => self.launch::<f32>(scores, range, columns, lengths, lengths_range),
            DType::F16 => self.launch::<half::f16>(scores, range, columns, lengths, lengths_range),
            DType::BF16 => self.launch::<half::bf16>(scores, range, columns, lengths, lengths_range),
            other => candle_core::bail!("no fused encoder kernel for {other:?}"),
        }
    }
}

/// The widest row the layer norm kernels hold in registers (32 values per lane).
pub const MAX_NORM_COLUMNS: usize = 1024;
/// Values per load and store of the vectorized layer norm (encoder.cu's `Four`).
const NORM_VECTOR: usize = 4;

/// Launches `bias_residual_layer_norm_{dtype}` (see `encoder_ops::bias_residual_layer_norm`);
/// `ranges`: x's, the residual's and the parameters'.
pub(super) fn bias_residual_layer_norm(
    x: &mut CudaStorage,
    residual: &CudaStorage,
    parameters: &CudaStorage,
    ranges: [std::ops::Range<usize>; 3],
    epsilon: f32,
) -> candle_core::Result<()> {
    match x.dtype() {
        DType::F32 => launch_bias_residual_layer_norm::<f32>(x, residual, parameters, ranges, epsilon),
        DType::F16 => launch_bias_residual_layer_norm::<half::f16>(x, residual, parameters, ranges, epsilon),
        DType::BF16 => launch_bias_residual_layer_norm::<half::bf16>(x, residual, parameters, ranges, epsilon),
        other => candle_core::bail!("no fused encoder kernel for {other:?}"),
    }
}

fn launch_bias_residual_layer_norm<T: CudaDType + DeviceRepr>(
    x: &mut CudaStorage,
    residual: &CudaStorage,
    parameters: &CudaStorage,
    [x_range, residual_range, parameters_range]: [std::ops::Range<usize>; 3],
    epsilon: f32,
) -> candle_core::Result<()> {
    let cols = parameters_range.len() / 3;
    if cols == 0
        || cols > MAX_NORM_COLUMNS
        || parameters_range.len() != 3 * cols
        || x_range.len() % cols != 0
        || residual_range.len() != x_range.len()
    {
        candle_core::bail!(
            "layer norm: {} values, {} residual values and {} parameters (rows of at most {MAX_NORM_COLUMNS})",
            x_range.len(),
            residual_range.len(),
            parameters_range.len()
        );
    }
    let rows = x_range.len() / cols;
    let stream = x.device.cuda_stream();
    let device = x.device.clone();
    let dtype = x.dtype();
    let residual = residual.as_cuda_slice::<T>()?.slice(residual_range);
    let parameters = parameters.as_cuda_slice::<T>()?.slice(parameters_range);
    let mut x = x.as_cuda_slice_mut::<T>()?.slice_mut(x_range);
    // Four values per load and store where the rows and the three pointers allow it.
    let four = (NORM_VECTOR * std::mem::size_of::<T>()) as u64;
    let vectorized = cols.is_multiple_of(NORM_VECTOR)
        && x.device_ptr(&stream).0 % four == 0
        && residual.device_ptr(&stream).0 % four == 0
        && parameters.device_ptr(&stream).0 % four == 0;
    let name = if vectorized {
        "bias_residual_layer_norm_vectorized"
    } else {
        "bias_residual_layer_norm"
    };
    let function = device.get_or_load_custom_func(
        &format!("{name}_{}", suffix(dtype)?),
        MODULE,
        quarry_kernels::ENCODER_PTX,
    )?;
    let config = warp_per_row(rows)?;
    let (rows, cols) = (as_u32(rows, "rows")?, as_u32(cols, "columns")?);
    let mut launch = function.builder();
    launch
        .arg(&mut x)
        .arg(&residual)
        .arg(&parameters)
        .arg(&rows)
        .arg(&cols)
        .arg(&epsilon);
    // SAFETY: x and the residual hold rows·cols values, the parameters 3·cols (checked
    // above), of the kernel's element type (for the vectorized kernel: cols a multiple of
    // four, all three aligned to four values, checked above).
    unsafe { launch.launch(config) }.w()?;
    Ok(())
}

/// A launch of one warp per row, THREADS a block.
fn warp_per_row(rows: usize) -> candle_core::Result<LaunchConfig> {
    let warps_per_block = (THREADS / 32) as usize;
    Ok(LaunchConfig {
        grid_dim: (as_u32(rows.div_ceil(warps_per_block).max(1), "blocks")?, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// The sizes of a batch's token embedding (`token_embedding::embed_tokens`).
pub(super) struct EmbeddingShape {
    /// batch × tokens.
    pub rows: usize,
    pub tokens: usize,
    /// Position rows of the prologue (its last two rows are the layer norm's).
    pub positions: usize,
    pub vocabulary: usize,
    pub hidden: usize,
}

/// The ids, the word table and the prologue of `token_embedding::embed_tokens`, each storage
/// with its contiguous range.
pub(super) type EmbeddingInputs<'a> = [(&'a CudaStorage, std::ops::Range<usize>); 3];

/// Launches `embed_tokens_{dtype}` into a fresh `[rows, hidden]` tensor.
pub(super) fn embed_tokens(
    inputs: EmbeddingInputs,
    shape: EmbeddingShape,
    epsilon: f32,
) -> candle_core::Result<CudaStorage> {
    match inputs[1].0.dtype() {
        DType::F32 => launch_embed_tokens::<f32>(inputs, shape, epsilon),
        DType::F16 => launch_embed_tokens::<half::f16>(inputs, shape, epsilon),
        DType::BF16 => launch_embed_tokens::<half::bf16>(inputs, shape, epsilon),
        other => candle_core::bail!("no fused encoder kernel for {other:?}"),
    }
}

fn launch_embed_tokens<T: CudaDType + DeviceRepr>(
    [(ids, ids_range), (words, words_range), (prologue, prologue_range)]: EmbeddingInputs,
    shape: EmbeddingShape,
    epsilon: f32,
) -> candle_core::Result<CudaStorage> {
    let EmbeddingShape {
        rows,
        tokens,
        positions,
        vocabulary,
        hidden,
    } = shape;
    let device = words.device.clone();
    let stream = device.cuda_stream();
    let dtype = words.dtype();
    let ids = ids.as_cuda_slice::<u32>()?.slice(ids_range);
    let words = words.as_cuda_slice::<T>()?.slice(words_range);
    let prologue = prologue.as_cuda_slice::<T>()?.slice(prologue_range);
    let four = (NORM_VECTOR * std::mem::size_of::<T>()) as u64;
    if hidden == 0
        || hidden > MAX_NORM_COLUMNS
        || !hidden.is_multiple_of(NORM_VECTOR)
        || tokens == 0
        || tokens > positions
        || vocabulary == 0
        || ids.len() != rows
        || words.len() != vocabulary * hidden
        || prologue.len() != (positions + 2) * hidden
        || words.device_ptr(&stream).0 % four != 0
        || prologue.device_ptr(&stream).0 % four != 0
    {
        candle_core::bail!(
            "token embedding: {} ids, tables of {} and {} values, rows {hidden} wide (a multiple of {NORM_VECTOR} \
             up to {MAX_NORM_COLUMNS}, aligned to {NORM_VECTOR} values), {tokens} tokens for {positions} positions",
            ids.len(),
            words.len(),
            prologue.len()
        );
    }
    let function = device.get_or_load_custom_func(
        &format!("embed_tokens_{}", suffix(dtype)?),
        MODULE,
        quarry_kernels::ENCODER_PTX,
    )?;
    let config = warp_per_row(rows)?;
    // SAFETY: the kernel writes every one of the rows·hidden values before anything reads them.
    let mut out = unsafe { device.alloc::<T>(rows * hidden) }?;
    let sizes = [
        as_u32(rows, "rows")?,
        as_u32(tokens, "tokens")?,
        as_u32(positions, "positions")?,
        as_u32(vocabulary, "vocabulary")?,
        as_u32(hidden, "columns")?,
    ];
    let mut launch = function.builder();
    launch.arg(&ids).arg(&words).arg(&prologue).arg(&mut out);
    for size in &sizes {
        launch.arg(size);
    }
    launch.arg(&epsilon);
    // SAFETY: ids hold rows u32 values, the word table vocabulary·hidden, the prologue
    // (positions + 2)·hidden, both tables aligned to four values with hidden a multiple of
    // four, tokens <= positions (all checked above); the kernel clamps each id to the table.
    unsafe { launch.launch(config) }.w()?;
    Ok(CudaStorage::wrap_cuda_slice(out, device))
}

/// Launches `mean_pool_normalize_padded_{dtype}` (see `encoder_ops::mean_pool_normalize_padded`):
/// `states` `[batch, tokens, cols]`, `lengths` `[batch]` u32; the result `[batch, cols]` f32.
pub(super) fn mean_pool_normalize_padded(
    states: &CudaStorage,
    states_range: std::ops::Range<usize>,
    lengths: &CudaStorage,
    lengths_range: std::ops::Range<usize>,
    tokens: usize,
) -> candle_core::Result<CudaStorage> {
    match states.dtype() {
        DType::F32 => launch_mean_pool::<f32>(states, states_range, lengths, lengths_range, tokens),
        DType::F16 => launch_mean_pool::<half::f16>(states, states_range, lengths, lengths_range, tokens),
        DType::BF16 => launch_mean_pool::<half::bf16>(states, states_range, lengths, lengths_range, tokens),
        other => candle_core::bail!("no fused encoder kernel for {other:?}"),
    }
}

fn launch_mean_pool<T: CudaDType + DeviceRepr>(
    states: &CudaStorage,
    states_range: std::ops::Range<usize>,
    lengths: &CudaStorage,
    lengths_range: std::ops::Range<usize>,
    tokens: usize,
) -> candle_core::Result<CudaStorage> {
    let batch = lengths_range.len();
    let cols = states_range.len().checked_div(batch * tokens).unwrap_or(0);
    if cols == 0 || cols > MAX_NORM_COLUMNS || states_range.len() != batch * tokens * cols {
        candle_core::bail!(
            "mean pooling: {} values are not {batch} sequences of {tokens} tokens (rows of 1 to {MAX_NORM_COLUMNS})",
            states_range.len()
        );
    }
    let device = states.device.clone();
    let function = device.get_or_load_custom_func(
        &format!("mean_pool_normalize_padded_{}", suffix(states.dtype())?),
        MODULE,
        quarry_kernels::ENCODER_PTX,
    )?;
    // One block of POOL_WARPS warps per sequence (the kernel's WARPS), striding past MAX_GRID_Y.
    let config = LaunchConfig {
        grid_dim: (batch.clamp(1, MAX_GRID_Y) as u32, 1, 1),
        block_dim: (POOL_WARPS * 32, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: every value is written by the kernel (one block per sequence, every column).
    let mut pooled = unsafe { device.alloc::<f32>(batch * cols) }?;
    let states = states.as_cuda_slice::<T>()?.slice(states_range);
    let lengths = lengths.as_cuda_slice::<u32>()?.slice(lengths_range);
    let (batch_arg, tokens_arg, cols_arg) = (
        as_u32(batch, "sequences")?,
        as_u32(tokens, "tokens")?,
        as_u32(cols, "columns")?,
    );
    let mut launch = function.builder();
    launch
        .arg(&states)
        .arg(&lengths)
        .arg(&batch_arg)
        .arg(&tokens_arg)
        .arg(&cols_arg)
        .arg(&mut pooled);
    // SAFETY: states hold batch·tokens·cols values of the kernel's element type, lengths one
    // per sequence, pooled batch·cols f32 (checked and allocated above).
    unsafe { launch.launch(config) }.w()?;
    Ok(CudaStorage::wrap_cuda_slice(pooled, device))
}
