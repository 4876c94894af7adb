//! [`Embedder`] for BERT-family sentence-transformers models, with candle.

use std::sync::Arc;

use candle_core::{DType, Device, Tensor, D};
use candle_nn::VarBuilder;

use super::batching::{bytes_per_token, gpu_token_budget, plan_batches, BatchPolicy};
use super::bert_encoder::{BertEncoder, TokenStates};
use super::device::{device_name, DeviceSpec};
use super::encoder_ops;
use super::encoder_steps::EncoderTuning;
use super::head_attention::score_dtype;
use super::model_dir::{ModelDir, Pooling};
use super::shared_batches::{gather, scatter_rows, Finished, SharedBatches};
use super::{Embedder, Embeddings, ModelInfo, ModelTokenizer};
use crate::error::{IndexerError, Result};

/// Floating-point precision of the model weights and activations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// The fastest precision that meets f32's bar on the golden embeddings (cosine >= 0.9999):
    /// bf16 on a CPU with AVX512-BF16, f32 elsewhere (a GPU's f16 and bf16 meet 0.999 only).
    #[default]
    Auto,
    F32,
    /// Half precision: CUDA only.
    F16,
    /// bfloat16. On the CPU: the dense layers' products in bf16 with f32 sums where the CPU
    /// has AVX512-BF16, everything else in f32 (f32 throughout on a CPU without it).
    Bf16,
}

impl std::str::FromStr for Precision {
    type Err = IndexerError;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "f32" | "fp32" => Ok(Self::F32),
            "f16" | "fp16" => Ok(Self::F16),
            "bf16" => Ok(Self::Bf16),
            other => Err(IndexerError::Config(format!(
                "unknown precision `{other}` (auto, f32, f16, bf16)"
            ))),
        }
    }
}

impl Precision {
    /// The precision that runs on a CPU (`on_cpu`) or a GPU: `Auto` decided, and bf16 on a CPU
    /// without AVX512-BF16 f32 (the portable bf16 product is slower than f32); the others as
    /// they are.
    pub fn resolved(self, on_cpu: bool) -> Self {
        let cpu_bf16 = on_cpu && quarry_kernels::bf16_products_native();
        match self {
            Self::Auto | Self::Bf16 if cpu_bf16 => Self::Bf16,
            Self::Auto => Self::F32,
            Self::Bf16 if on_cpu => Self::F32,
            chosen => chosen,
        }
    }

    /// How vectors computed at this (resolved) precision are recorded in a snapshot
    /// ([`ModelInfo::precisions`]): the device kind, then the precision.
    pub fn label(self, on_cpu: bool) -> String {
        match (self, on_cpu) {
            (Self::Bf16, true) => "cpu bf16 products".into(),
            (precision, true) => format!("cpu {}", precision.name()),
            (precision, false) => format!("cuda {}", precision.name()),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::F32 => "f32",
            Self::F16 => "f16",
            Self::Bf16 => "bf16",
        }
    }

    fn dtype(self) -> DType {
        match self {
            Self::Auto | Self::F32 => DType::F32,
            Self::F16 => DType::F16,
            Self::Bf16 => DType::BF16,
        }
    }
}

/// Options for loading an embedder.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmbedOptions {
    pub device: DeviceSpec,
    /// How texts are grouped into batches; None: the device's default (on the CPU
    /// [`CPU_TOKEN_BUDGET`](super::CPU_TOKEN_BUDGET) tokens, on a GPU a budget sized from its
    /// free memory).
    pub batch: Option<BatchPolicy>,
    pub precision: Precision,
    /// On the CPU, how many batches of one call run at once on the thread pool; None: one
    /// per pool thread, at most [`MAX_AUTO_CPU_LANES`]. 1 runs one batch at a time, its
    /// steps split over the pool (what a call of a single batch, a search's query, does
    /// anyway). Ignored on a GPU.
    pub cpu_lanes: Option<usize>,
    /// Which fused encoder steps run (default: the device's best).
    pub tuning: EncoderTuning,
}

/// The most batches a CPU call runs at once by default: each holds its own activations
/// (about 120 MB at the CPU's 4,096-token budget of full 256-token windows: `bench-embed`'s
/// peak went from 271 to 387 MB with a second lane), so a many-core host adds at most about
/// 2 GB.
pub const MAX_AUTO_CPU_LANES: usize = 16;

/// A sentence-transformers BERT model on a candle device.
pub struct BertEmbedder {
    model: BertEncoder,
    device: Device,
    tokenizer: Arc<ModelTokenizer>,
    info: ModelInfo,
    batch: BatchPolicy,
    pad_id: u32,
    /// On the CPU, batches run at once (None: one per pool thread, capped); 1 on a GPU.
    cpu_lanes: Option<usize>,
    /// Whether a GPU's states are mean-pooled by quarry's kernel.
    fused_pooling: bool,
}

fn candle_err(e: candle_core::Error) -> IndexerError {
    IndexerError::Embed(e.to_string())
}

impl BertEmbedder {
    /// Loads a model folder onto the chosen device.
    pub fn load(dir: &ModelDir, options: EmbedOptions) -> Result<Self> {
        let device = options.device.resolve()?;
        let batch = options.batch;
        let precision = options.precision.resolved(device.is_cpu());
        log_precision(options.precision, precision, device.is_cpu());
        let cpu_bf16 = device.is_cpu() && precision == Precision::Bf16;
        if device.is_cpu() && precision == Precision::F16 {
            return Err(IndexerError::Config(
                "f16 precision needs a CUDA device; the CPU runs f32 or bf16".into(),
            ));
        }
        // The CPU keeps its weights and activations in f32, bf16 or not.
        let dtype = if device.is_cpu() { DType::F32 } else { precision.dtype() };
        let weights = dir.weights();
        // SAFETY: the weights file is memory-mapped read-only and not modified while loaded.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], dtype, &device) }.map_err(|e| {
            IndexerError::Model {
                path: weights.clone(),
                reason: e.to_string(),
            }
        })?;
        let model = BertEncoder::load(vb, &dir.bert_config)
            .map(|model| model.with_tuning(options.tuning))
            .and_then(|model| {
                if cpu_bf16 {
                    model.with_bf16_products()
                } else {
                    Ok(model)
                }
            })
            .map_err(|e| IndexerError::Model {
                path: weights.clone(),
                reason: format!("not a BERT model: {e}"),
            })?;
        let tokenizer = Arc::new(ModelTokenizer::from_file(&dir.tokenizer_file(), dir.max_tokens)?);
        let info = ModelInfo {
            precisions: vec![precision.label(device.is_cpu())],
            ..dir.info()?
        };
        let pad_id = dir.bert_config.pad_token_id as u32;
        let batch = size_batches_for_gpu(&device, dir, precision, batch);
        let cpu_lanes = if device.is_cpu() {
            options.cpu_lanes.map(|lanes| lanes.max(1))
        } else {
            Some(1)
        };
        Ok(Self {
            model,
            device,
            tokenizer,
            info,
            batch,
            pad_id,
            cpu_lanes,
            fused_pooling: options.tuning.fused_pooling,
        })
    }

    /// Queues one padded batch on the device; the result is `[batch, dim]` normalized f32
    /// rows, still on the device (on a GPU the work runs while the host goes on).
    pub(super) fn enqueue(&self, ids: &[&Vec<u32>]) -> Result<Tensor> {
        let longest = ids.iter().map(|i| i.len()).max().unwrap_or(1).max(1);
        let mut flat_ids = Vec::with_capacity(ids.len() * longest);
        for row in ids {
            flat_ids.extend_from_slice(row);
            flat_ids.extend(std::iter::repeat_n(self.pad_id, longest - row.len()));
        }
        let shape = (ids.len(), longest);
        let input = Tensor::from_vec(flat_ids, shape, &self.device).map_err(candle_err)?;
        let lengths: Vec<usize> = ids.iter().map(|row| row.len()).collect();
        // Pool and normalize in f32 whatever the model's precision.
        let states = match self.model.encode(&input, &lengths).map_err(candle_err)? {
            // A GPU's real rows (`EncoderTuning::gpu_unpadded_rows`) laid out padded again for
            // its pooling kernel.
            TokenStates::Real(states) if !states.device().is_cpu() => TokenStates::Padded(
                TokenStates::Real(states)
                    .padded(&lengths, longest)
                    .map_err(candle_err)?,
            ),
            states => states,
        };
        if self.info.pooling == Pooling::Mean {
            match &states {
                // The CPU's real rows, pooled as they are (no padded copy, no mask).
                TokenStates::Real(states) => {
                    return states
                        .to_dtype(DType::F32)
                        .and_then(|states| encoder_ops::mean_pool_normalize_sequences(&states, &lengths))
                        .map_err(candle_err);
                }
                // A GPU's padded states, pooled in one pass in their own precision.
                TokenStates::Padded(states) if self.fused_pooling && fused_pooling_runs(states) => {
                    let lengths: Vec<u32> = lengths.iter().map(|&length| length as u32).collect();
                    let lengths = Tensor::from_vec(lengths, ids.len(), &self.device).map_err(candle_err)?;
                    return encoder_ops::mean_pool_normalize_padded(states, &lengths).map_err(candle_err);
                }
                TokenStates::Padded(_) => {}
            }
        }
        let mut flat_mask = Vec::with_capacity(ids.len() * longest);
        for row in ids {
            flat_mask.extend(std::iter::repeat_n(1u32, row.len()));
            flat_mask.extend(std::iter::repeat_n(0u32, longest - row.len()));
        }
        let mask = Tensor::from_vec(flat_mask, shape, &self.device).map_err(candle_err)?;
        let hidden = states
            .padded(&lengths, longest)
            .and_then(|h| h.to_dtype(DType::F32))
            .map_err(candle_err)?;
        let pooled = pool(&hidden, &mask, self.info.pooling).map_err(candle_err)?;
        let norm = pooled
            .sqr()
            .and_then(|s| s.sum_keepdim(1))
            .and_then(|s| s.sqrt())
            .and_then(|n| n.clamp(1e-12, f64::MAX))
            .map_err(candle_err)?;
        pooled.broadcast_div(&norm).map_err(candle_err)
    }

    /// Copies a queued batch's rows to the host (waits for the device).
    pub(super) fn collect(rows: Tensor) -> Result<Vec<f32>> {
        rows.flatten_all().and_then(|t| t.to_vec1::<f32>()).map_err(candle_err)
    }

    /// Runs `batches` (lists of indices into `ids`) and hands each batch's rows to `sink`.
    /// One batch stays in flight: the next one is padded, copied and queued before the
    /// previous one's rows are read back, so a GPU never waits on the host between batches.
    pub fn run_batches<'a>(
        &self,
        ids: &[Vec<u32>],
        batches: impl Iterator<Item = &'a Vec<usize>>,
        mut sink: impl FnMut(&'a [usize], Vec<f32>),
    ) -> Result<()> {
        let mut in_flight: Option<(&'a Vec<usize>, Tensor)> = None;
        for batch in batches {
            let rows: Vec<&Vec<u32>> = batch.iter().map(|&i| &ids[i]).collect();
            let queued = self.enqueue(&rows)?;
            if let Some((previous, tensor)) = in_flight.replace((batch, queued)) {
                sink(previous, Self::collect(tensor)?);
            }
        }
        if let Some((previous, tensor)) = in_flight {
            sink(previous, Self::collect(tensor)?);
        }
        Ok(())
    }

    /// How many of `batches` batches run at once: on the CPU one per thread of the pool
    /// (capped) unless set, never more than there are batches.
    fn lanes(&self, batches: usize) -> usize {
        self.cpu_lanes
            .unwrap_or_else(|| rayon::current_num_threads().min(MAX_AUTO_CPU_LANES))
            .min(batches)
            .max(1)
    }

    /// Runs `batches` as `lanes` tasks on the thread pool, each claiming the next batch when
    /// its last one is done. The steps inside a batch still split over the pool, so threads
    /// with no batch left help the lanes still running; but while every lane is busy each
    /// thread mostly runs one batch through, with no wait at every step for the slowest part
    /// and candle's single-threaded steps (copies, casts, adds) run beside other lanes' work.
    fn run_lanes(
        &self,
        ids: &[Vec<u32>],
        batches: &[Vec<usize>],
        lanes: usize,
        done: &(dyn Fn(usize) + Sync),
    ) -> Result<Embeddings> {
        use rayon::prelude::*;
        let shared = SharedBatches::new(batches);
        let parts: Vec<Result<Finished>> = (0..lanes)
            .into_par_iter()
            .with_max_len(1)
            .map(|_| shared.run(self, ids, done))
            .collect();
        gather(parts, ids.len(), self.info.dim)
    }

    /// The batch policy in force (after GPU sizing).
    pub fn batch_policy(&self) -> BatchPolicy {
        self.batch
    }
}

/// Logs once (the first load that has something to say) the precision that runs where it is
/// not plainly the one asked for (`asked`: auto decided, bf16 turned f32) or is bf16 on the CPU.
fn log_precision(asked: Precision, runs: Precision, on_cpu: bool) {
    static LOGGED: std::sync::Once = std::sync::Once::new();
    let log = || {
        match (asked, runs, on_cpu) {
        (_, Precision::Bf16, true) => tracing::info!("precision {} on the CPU: the dense layers' products in bf16 (AVX512-BF16), f32 sums and everything else f32", asked.name()),
        (Precision::Bf16, _, true) => tracing::warn!("bf16 precision asked for, but this CPU has no AVX512-BF16: the model runs in f32"),
        (Precision::Auto, _, true) => tracing::info!("precision auto: f32 (bf16 products need a CPU with AVX512-BF16)"),
        (Precision::Auto, _, false) => tracing::info!("precision auto: f32 on the GPU (--precision f16 or bf16 for half precision)"),
        _ => {}
    }
    };
    if asked != runs || on_cpu && runs == Precision::Bf16 {
        LOGGED.call_once(log);
    }
}

/// The batch policy: `batch` where given; else the CPU's default, or on a GPU a token budget
/// of half the free memory (estimated from the model's shape and logged) within what
/// candle's kernels can index. On a GPU an explicit budget is kept up to that size.
fn size_batches_for_gpu(
    device: &Device,
    dir: &ModelDir,
    precision: Precision,
    batch: Option<BatchPolicy>,
) -> BatchPolicy {
    let Some((free, total)) = super::device::gpu_memory(device) else {
        return batch.unwrap_or_default();
    };
    let dtype = precision.dtype();
    let per_token = bytes_per_token(
        dir.hidden_size,
        dir.intermediate_size,
        dir.attention_heads,
        dir.max_tokens,
        dtype.size_in_bytes(),
        score_dtype(dtype).size_in_bytes(),
    );
    let budget = gpu_token_budget(free, per_token, 0.5, dir.attention_heads, dir.max_tokens);
    tracing::info!(
        "{}: {:.1} GiB free of {:.1} GiB; about {per_token} activation bytes per token; token budget per batch {budget}",
        device_name(device),
        free as f64 / (1u64 << 30) as f64,
        total as f64 / (1u64 << 30) as f64
    );
    match batch {
        None => BatchPolicy::TokenBudget { max_tokens: budget },
        Some(BatchPolicy::TokenBudget { max_tokens }) if max_tokens > budget => {
            tracing::warn!(
                "a token budget of {max_tokens} per batch is more than the GPU takes (see above): {budget} used"
            );
            BatchPolicy::TokenBudget { max_tokens: budget }
        }
        Some(other) => other,
    }
}

/// Whether quarry's pooling kernel can take a GPU's padded states (one pass, in the states'
/// precision; `encoder_ops::mean_pool_normalize_padded`) instead of candle's cast, mask
/// multiply, sum and division: on CUDA, for rows of at most 1,024 values.
fn fused_pooling_runs(states: &Tensor) -> bool {
    #[cfg(feature = "cuda")]
    if states.device().is_cuda() {
        return states
            .dim(2)
            .is_ok_and(|hidden| hidden <= super::cuda_encoder_ops::MAX_NORM_COLUMNS);
    }
    let _ = states;
    false
}

fn pool(hidden: &Tensor, mask: &Tensor, pooling: Pooling) -> candle_core::Result<Tensor> {
    match pooling {
        Pooling::Cls => hidden.narrow(1, 0, 1)?.squeeze(1),
        Pooling::Mean => {
            let mask = mask.to_dtype(hidden.dtype())?.unsqueeze(D::Minus1)?;
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
            summed.broadcast_div(&counts)
        }
        Pooling::Max => {
            let mask = mask.to_dtype(hidden.dtype())?.unsqueeze(D::Minus1)?;
            // Padded positions get a large negative value so they never win the max.
            let penalty = ((mask.ones_like()? - &mask)? * -1e9)?;
            hidden.broadcast_add(&penalty)?.max(1)
        }
    }
}

impl Embedder for BertEmbedder {
    fn info(&self) -> &ModelInfo {
        &self.info
    }

    fn tokenizer(&self) -> &Arc<ModelTokenizer> {
        &self.tokenizer
    }

    fn batch_tokens(&self) -> Option<usize> {
        Some(match self.batch {
            BatchPolicy::TokenBudget { max_tokens } => max_tokens,
            BatchPolicy::Fixed { size } => size.saturating_mul(self.info.max_tokens),
        })
    }

    fn embed_tokens(&self, ids: &[Vec<u32>]) -> Result<Embeddings> {
        self.embed_tokens_reporting(ids, &|_| {})
    }

    fn embed_tokens_reporting(&self, ids: &[Vec<u32>], done: &(dyn Fn(usize) + Sync)) -> Result<Embeddings> {
        let lengths: Vec<usize> = ids.iter().map(Vec::len).collect();
        let batches = plan_batches(&lengths, self.batch);
        let lanes = self.lanes(batches.len());
        if lanes > 1 {
            return self.run_lanes(ids, &batches, lanes, done);
        }
        let dim = self.info.dim;
        let mut data = vec![0f32; ids.len() * dim];
        self.run_batches(ids, batches.iter(), |batch, vectors| {
            scatter_rows(&mut data, dim, batch, &vectors);
            done(batch.len());
        })?;
        Ok(Embeddings { dim, data })
    }

    fn embed_token_calls(
        &self,
        calls: &mut dyn Iterator<Item = Result<Vec<Vec<u32>>>>,
        done: &(dyn Fn(usize) + Sync),
        sink: &mut dyn FnMut(Embeddings) -> bool,
    ) -> Result<()> {
        // One lane (always on a GPU): a batch stays queued across the calls. Several CPU
        // lanes share each call's batches instead, one call after another.
        if self.cpu_lanes == Some(1) {
            super::streamed_calls::run_streamed(self, calls, done, sink)
        } else {
            super::embed_calls_in_turn(self, calls, done, sink)
        }
    }

    fn device_name(&self) -> String {
        device_name(&self.device)
    }
}
