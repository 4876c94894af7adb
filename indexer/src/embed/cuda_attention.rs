//! The packed attention's launches on candle's CUDA tensors (kernels/cuda/attention.cu): the
//! CUDA-core kernel (one query per thread, any dtype) and the two tensor-core kernels (f16/bf16,
//! 16 queries per warp, on WMMA or on mma.sync with everything in registers).
//! [`AttentionKernel`] says which; `Auto` takes the register kernel where it can run. The
//! register kernel also runs over sequences back to back without padding ([`ragged_attention`]).

use candle_core::backend::BackendStorage;
use candle_core::cuda::cudarc::driver::{DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use candle_core::cuda::{CudaDType, WrapErr};
use candle_core::{CudaStorage, DType};
use quarry_kernels::PackedHeads;

use super::cuda_encoder_ops::{as_u32, suffix};
use super::encoder_ops::AttentionKernel;

/// Name under which candle's device caches the module.
const MODULE: &str = "quarry_attention";
/// Head sizes both kernels are compiled for.
pub const PACKED_HEAD_SIZES: [usize; 2] = [32, 64];
/// Queries (threads) per block of the CUDA-core kernel.
const CUDA_CORE_QUERIES: usize = 64;
/// Queries per warp of the tensor-core kernels, and warps per block at most of the WMMA one
/// (attention.cu's TENSOR_QUERIES and TENSOR_WARPS: its scratch is sized for them).
const TENSOR_QUERIES: usize = 16;
const TENSOR_WARPS: usize = 4;
/// CUDA's limit on a grid's second and third dimensions.
const MAX_GRID_YZ: usize = 65_535;
/// The register kernel's warps a block by default: on an H200 (2026-11-28, `bench-embed`
/// f16, 20,000 chunks, one run each) 4 warps gave 11.73 M tokens/s, 8 warps 12.28 M, 16 warps
/// 11.94 M (bench/RESULTS.md).
const REGISTER_WARPS: usize = 8;

/// Warps a block of the register kernel (16 queries each), at most: `QUARRY_ATTENTION_WARPS`
/// (1 to 16), else REGISTER_WARPS. A block stages each key and value tile once for all its
/// warps, so larger blocks read the sequence's keys and values fewer times (4 blocks of 4
/// warps each read a 256-token sequence's whole; 2 blocks of 8 twice), at the cost of fewer
/// blocks to schedule. Read once.
fn register_warps() -> usize {
    static WARPS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *WARPS.get_or_init(|| match std::env::var("QUARRY_ATTENTION_WARPS") {
        Err(_) => REGISTER_WARPS,
        Ok(value) => match value.parse::<usize>() {
            Ok(warps @ 1..=16) => {
                tracing::info!("register attention: up to {warps} warps a block (QUARRY_ATTENTION_WARPS)");
                warps
            }
            _ => {
                tracing::warn!("QUARRY_ATTENTION_WARPS={value} is not 1 to 16: {REGISTER_WARPS} warps a block");
                REGISTER_WARPS
            }
        },
    })
}

/// Launches the packed attention chosen by `kernel` into a fresh context tensor (see
/// `encoder_ops::packed_attention`); every element of it is written.
pub(super) fn packed_attention(
    qkv: &CudaStorage,
    qkv_range: std::ops::Range<usize>,
    lengths: &CudaStorage,
    lengths_range: std::ops::Range<usize>,
    shape: PackedHeads,
    kernel: AttentionKernel,
) -> candle_core::Result<CudaStorage> {
    match qkv.dtype() {
        DType::F32 => launch::<f32>(qkv, qkv_range, lengths, lengths_range, shape, kernel),
        DType::F16 => launch::<half::f16>(qkv, qkv_range, lengths, lengths_range, shape, kernel),
        DType::BF16 => launch::<half::bf16>(qkv, qkv_range, lengths, lengths_range, shape, kernel),
        other => candle_core::bail!("no fused encoder kernel for {other:?}"),
    }
}

/// Which kernel runs: `Auto` is tensor cores through mma.sync with everything in registers for
/// 16-bit types whose product is 16-byte aligned (2.5x the WMMA kernel's speed on an H200,
/// bench/RESULTS.md), else CUDA cores.
fn resolve(kernel: AttentionKernel, dtype: DType, aligned: bool) -> candle_core::Result<AttentionKernel> {
    let kernel = match kernel {
        AttentionKernel::Auto if dtype != DType::F32 && aligned => AttentionKernel::TensorCoreRegisters,
        AttentionKernel::Auto => AttentionKernel::CudaCores,
        chosen => chosen,
    };
    let tensor_cores = matches!(
        kernel,
        AttentionKernel::TensorCores | AttentionKernel::TensorCoreRegisters
    );
    if tensor_cores && (dtype == DType::F32 || !aligned) {
        candle_core::bail!("tensor-core attention takes f16 or bf16 with a 16-byte aligned query-key-value product, not {dtype:?} (aligned: {aligned})");
    }
    static LOGGED: std::sync::Once = std::sync::Once::new();
    LOGGED.call_once(|| tracing::info!("packed attention on {kernel:?} ({dtype:?})"));
    Ok(kernel)
}

fn launch<T: CudaDType + DeviceRepr>(
    qkv: &CudaStorage,
    qkv_range: std::ops::Range<usize>,
    lengths: &CudaStorage,
    lengths_range: std::ops::Range<usize>,
    shape: PackedHeads,
    kernel: AttentionKernel,
) -> candle_core::Result<CudaStorage> {
    let PackedHeads {
        tokens,
        heads,
        head_size,
    } = shape;
    let batch = lengths_range.len();
    compiled_for(head_size)?;
    if qkv_range.len() != batch * tokens * 3 * shape.hidden() || batch == 0 || tokens == 0 {
        candle_core::bail!(
            "packed attention: {} values are not {batch} sequences of {tokens} tokens x 3 x {}",
            qkv_range.len(),
            shape.hidden()
        );
    }
    let device = qkv.device.clone();
    let stream = device.cuda_stream();
    let qkv_slice = qkv.as_cuda_slice::<T>()?.slice(qkv_range);
    let aligned = qkv_slice.device_ptr(&stream).0 % 16 == 0;
    let (name, queries_per_block, threads) = match resolve(kernel, qkv.dtype(), aligned)? {
        tensor_cores @ (AttentionKernel::TensorCores | AttentionKernel::TensorCoreRegisters) => {
            // The WMMA kernel's scratch is sized for TENSOR_WARPS; the register kernel takes
            // any block size (its staging loops over the block's threads).
            let (name, most_warps) = if tensor_cores == AttentionKernel::TensorCores {
                ("tensor_core_attention", TENSOR_WARPS)
            } else {
                ("register_attention", register_warps())
            };
            let warps = tokens.div_ceil(TENSOR_QUERIES).min(most_warps);
            (name, warps * TENSOR_QUERIES, 32 * warps)
        }
        _ => {
            // A warp's worth of threads at least; fewer than 64 when the sequences are short.
            let threads = tokens.next_multiple_of(32).min(CUDA_CORE_QUERIES);
            ("packed_attention", threads, threads)
        }
    };
    let function = device.get_or_load_custom_func(
        &format!("{name}_{head_size}_{}", suffix(qkv.dtype())?),
        MODULE,
        quarry_kernels::ATTENTION_PTX,
    )?;
    let config = attention_grid(batch, heads, tokens, queries_per_block, threads)?;
    // SAFETY: the kernel writes every one of the context's values before anything reads them.
    let mut context = unsafe { device.alloc::<T>(batch * tokens * shape.hidden()) }?;
    let (tokens, heads) = (as_u32(tokens, "tokens")?, heads as u32);
    let lengths = lengths.as_cuda_slice::<u32>()?.slice(lengths_range);
    let mut launch = function.builder();
    launch
        .arg(&qkv_slice)
        .arg(&lengths)
        .arg(&mut context)
        .arg(&tokens)
        .arg(&heads);
    // SAFETY: qkv holds batch·tokens rows of 3·hidden values (16-byte aligned for the tensor
    // cores), lengths one per sequence, the context batch·tokens rows of hidden values (all
    // checked above), of the kernel's types.
    unsafe { launch.launch(config) }.w()?;
    Ok(CudaStorage::wrap_cuda_slice(context, device))
}

/// Refuses a head size the kernels are not compiled for.
fn compiled_for(head_size: usize) -> candle_core::Result<()> {
    if !PACKED_HEAD_SIZES.contains(&head_size) {
        candle_core::bail!("packed attention is compiled for head sizes {PACKED_HEAD_SIZES:?}, not {head_size}");
    }
    Ok(())
}

/// An attention kernel's grid: a block of `threads` per sequence, head and
/// `queries_per_block` of the sequence's `tokens` (at most) queries.
fn attention_grid(
    batch: usize,
    heads: usize,
    tokens: usize,
    queries_per_block: usize,
    threads: usize,
) -> candle_core::Result<LaunchConfig> {
    let query_blocks = tokens.div_ceil(queries_per_block);
    if heads > MAX_GRID_YZ || query_blocks > MAX_GRID_YZ {
        candle_core::bail!("attention: {heads} heads or {tokens} tokens are past the grid's limits");
    }
    Ok(LaunchConfig {
        grid_dim: (as_u32(batch, "sequences")?, heads as u32, query_blocks as u32),
        block_dim: (threads as u32, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// Where the ragged attention's three inputs lie in their storages.
pub(super) struct RaggedRanges {
    pub qkv: std::ops::Range<usize>,
    pub lengths: std::ops::Range<usize>,
    pub starts: std::ops::Range<usize>,
}

/// The register kernel over sequences back to back, no padding rows (see
/// `encoder_ops::ragged_attention`): `shape.tokens` rows in all, sequence b at rows
/// `starts[b]..` (`lengths[b]` of them, at most `longest`), in qkv and the context alike. f16
/// or bf16 only, whichever kernel `--attention-kernel` names.
pub(super) fn ragged_attention(
    qkv: &CudaStorage,
    lengths: &CudaStorage,
    starts: &CudaStorage,
    ranges: RaggedRanges,
    shape: PackedHeads,
    longest: usize,
) -> candle_core::Result<CudaStorage> {
    match qkv.dtype() {
        DType::F16 => launch_ragged::<half::f16>(qkv, lengths, starts, ranges, shape, longest),
        DType::BF16 => launch_ragged::<half::bf16>(qkv, lengths, starts, ranges, shape, longest),
        other => candle_core::bail!("the ragged attention runs on tensor cores: f16 or bf16, not {other:?}"),
    }
}

fn launch_ragged<T: CudaDType + DeviceRepr + candle_core::cuda::cudarc::driver::ValidAsZeroBits>(
    qkv: &CudaStorage,
    lengths: &CudaStorage,
    starts: &CudaStorage,
    ranges: RaggedRanges,
    shape: PackedHeads,
    longest: usize,
) -> candle_core::Result<CudaStorage> {
    let PackedHeads {
        tokens: rows,
        heads,
        head_size,
    } = shape;
    let batch = ranges.lengths.len();
    compiled_for(head_size)?;
    if ranges.qkv.len() != rows * 3 * shape.hidden() || ranges.starts.len() != batch || longest > rows {
        candle_core::bail!(
            "ragged attention: {} values are not {rows} rows x 3 x {}, or {} starts for {batch} sequences, or a sequence of {longest} rows",
            ranges.qkv.len(),
            shape.hidden(),
            ranges.starts.len()
        );
    }
    let device = qkv.device.clone();
    // Every row belongs to a sequence (the lengths sum to the rows: `RealRows`), so the kernel
    // writes each; zeros keep a mismatch from reading freed memory.
    let mut context = device.alloc_zeros::<T>(rows * shape.hidden())?;
    if batch == 0 || longest == 0 {
        return Ok(CudaStorage::wrap_cuda_slice(context, device));
    }
    let stream = device.cuda_stream();
    let qkv_slice = qkv.as_cuda_slice::<T>()?.slice(ranges.qkv);
    if qkv_slice.device_ptr(&stream).0 % 16 != 0 {
        candle_core::bail!("ragged attention: the query-key-value product is not 16-byte aligned");
    }
    let warps = longest.div_ceil(TENSOR_QUERIES).min(register_warps());
    let config = attention_grid(batch, heads, longest, warps * TENSOR_QUERIES, 32 * warps)?;
    let function = device.get_or_load_custom_func(
        &format!("register_attention_ragged_{head_size}_{}", suffix(qkv.dtype())?),
        MODULE,
        quarry_kernels::ATTENTION_PTX,
    )?;
    let (longest, heads) = (as_u32(longest, "tokens")?, heads as u32);
    let lengths = lengths.as_cuda_slice::<u32>()?.slice(ranges.lengths);
    let starts = starts.as_cuda_slice::<u32>()?.slice(ranges.starts);
    let mut launch = function.builder();
    launch
        .arg(&qkv_slice)
        .arg(&lengths)
        .arg(&starts)
        .arg(&mut context)
        .arg(&longest)
        .arg(&heads);
    // SAFETY: qkv holds `rows` rows of 3·hidden values (16-byte aligned), lengths and starts
    // one per sequence, the context `rows` rows of hidden values (checked above), of the
    // kernel's types; the sequences' rows lie within `rows` (`RealRows` builds both from the
    // same lengths).
    unsafe { launch.launch(config) }.w()?;
    Ok(CudaStorage::wrap_cuda_slice(context, device))
}
