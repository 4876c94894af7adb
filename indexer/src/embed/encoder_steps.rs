//! Which of the encoder's fused steps (`encoder_ops`) run: [`EncoderSteps`] per batch, from
//! the device's defaults or an [`EncoderTuning`] (the CLI's `--fused-steps`,
//! `--attention-kernel`, `--fused-pooling`, `--gpu-gelu`, `--gpu-unpadded-rows`).

use candle_core::{DType, Tensor};

use super::encoder_ops::{self, AttentionKernel};

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
    /// `tuning.fused_steps` (the CLI's `--fused-steps on|off`) turns both on or off where they can run. By default, on
    /// the CPU (f32) the fused sub-layer ends run, and the packed attention where it runs on
    /// AVX-512 tiles (`quarry_kernels::packed_attention_tiled`; elsewhere candle's batched
    /// products are faster, bench/RESULTS.md); on a CUDA GPU both run (attention on tensor
    /// cores in f16/bf16, CUDA cores in f32; indexer/tests/cuda_encoder_parity.rs checks the
    /// kernels on a GPU, kernels/tests/cuda_source_emulated.rs their source on the CPU). The
    /// row-wise steps skip the padding on the CPU whatever `tuning.fused_steps` says, and on
    /// a GPU only where `tuning` asks for it ([`EncoderTuning::gpu_unpadded_rows`]). `wanted`
    /// (or the default above) narrowed to what runs on `states`' device and dtype.
    pub(super) fn for_run(states: &Tensor, head_size: usize, wanted: Option<Self>, tuning: &EncoderTuning) -> Self {
        let (attention_supported, ends_supported) = Self::supported(states, head_size);
        let cpu = states.device().is_cpu();
        let wanted = wanted.unwrap_or(match (tuning.fused_steps, cpu) {
            (Some(on), _) => Self {
                packed_attention: on,
                fused_ends: on,
                unpadded_rows: cpu || tuning.gpu_unpadded_rows,
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
                unpadded_rows: tuning.gpu_unpadded_rows,
            },
        });
        let packed_attention = wanted.packed_attention && attention_supported;
        let steps = Self {
            packed_attention,
            fused_ends: wanted.fused_ends && ends_supported,
            // On a GPU with the packed attention in f16 or bf16 only: the register kernel's
            // ragged layout (`cuda_attention::ragged_attention`).
            unpadded_rows: wanted.unpadded_rows && (cpu || (packed_attention && states.dtype() != DType::F32)),
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

/// How an encoder picks its fused steps: each left out takes the device's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncoderTuning {
    /// The packed attention and the fused sub-layer ends on (`Some(true)`) or off
    /// (`Some(false)`) where they can run; None: [`EncoderSteps`]' defaults per device.
    pub fused_steps: Option<bool>,
    /// The GPU kernel of the packed attention.
    pub attention_kernel: AttentionKernel,
    /// On a GPU, mean pooling in one kernel (false: candle's ops).
    pub fused_pooling: bool,
    /// On a GPU in f16 or bf16 with the fused steps, where the feed-forward layer's GELU runs.
    pub gpu_gelu: GpuGelu,
    /// On a GPU in f16 or bf16 with the packed attention, the row-wise steps over the batch's
    /// real tokens only, as on the CPU (the attention in the register kernel's ragged
    /// layout, whichever kernel `attention_kernel` names). Off by default until a GPU run
    /// times it: a run's length-sorted batches are about 9% padding.
    pub gpu_unpadded_rows: bool,
}

/// Where a GPU applies the feed-forward layer's GELU (f16 and bf16, the fused steps on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuGelu {
    /// With the bias in cuBLASLt's epilogue, in its tanh form (`cuda_bias_gemm`): no pass of
    /// its own.
    Epilogue,
    /// The model's erf form, with the bias, in a pass of its own after the product.
    Erf,
}

impl std::str::FromStr for GpuGelu {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "epilogue" => Ok(Self::Epilogue),
            "erf" => Ok(Self::Erf),
            other => Err(format!("unknown GPU GELU `{other}` (epilogue, erf)")),
        }
    }
}

impl Default for EncoderTuning {
    fn default() -> Self {
        Self {
            fused_steps: None,
            attention_kernel: AttentionKernel::Auto,
            fused_pooling: true,
            gpu_gelu: GpuGelu::Epilogue,
            gpu_unpadded_rows: false,
        }
    }
}
