//! One module per subcommand, plus the options they share.

pub mod bench;
pub mod bench_cpu_stages;
pub mod bench_embed;
pub mod bench_hnsw_build;
pub mod bench_kernels;
pub mod bench_pipeline;
pub mod compact;
pub mod completions;
pub mod config;
pub mod embed;
pub mod eval;
pub mod gc;
pub mod gen_corpus;
pub mod index;
pub mod inspect;
pub mod parse_worker;
pub mod publish;
pub mod rollback;
pub mod search;
pub mod serve;
pub mod shard_args;
pub mod versions;

use std::path::PathBuf;

use quarry_indexer::embed::{default_model_dir, DeviceSpec};

/// Model and device options shared by every command that embeds.
#[derive(clap::Args, Debug, Clone)]
pub struct ModelArgs {
    /// Sentence-transformers model folder (default: models/all-MiniLM-L6-v2, fetched by scripts/fetch-model.sh).
    #[arg(long, env = "QUARRY_MODEL")]
    pub model: Option<PathBuf>,
    /// auto | cpu | cuda | cuda:N | cuda:N,M,... (one model replica per GPU)
    #[arg(long, env = "QUARRY_DEVICE", default_value = "auto")]
    pub device: DeviceSpec,
    /// Padded tokens per embedding batch (batches are length-sorted). Default: 4096 on the
    /// CPU; on a GPU sized from its free memory.
    #[arg(long, env = "QUARRY_BATCH_TOKENS", value_parser = at_least_one::<usize>)]
    pub batch_tokens: Option<usize>,
    /// auto | f32 | f16 | bf16. bf16 on a CPU with AVX512-BF16 computes the dense layers'
    /// products in bf16 with f32 sums (f32 on a CPU without it); f16 needs a CUDA device; auto
    /// is bf16 on a CPU with AVX512-BF16 (it meets f32's golden bar), f32 elsewhere.
    #[arg(long, env = "QUARRY_PRECISION", default_value = "auto")]
    pub precision: quarry_indexer::embed::Precision,
    /// On the CPU, how many batches of a bulk embedding run at once on the thread pool
    /// (default: one per thread, at most 16); 1 runs them one after another, each split over
    /// every thread. Ignored on a GPU.
    #[arg(long, env = "QUARRY_CPU_LANES", value_parser = at_least_one::<usize>)]
    pub cpu_lanes: Option<usize>,
    /// The encoder's fused steps (the packed attention and each sub-layer's bias + residual +
    /// layer norm in one pass): auto (the device's default), on or off (also 1, 0).
    #[arg(long, env = "QUARRY_FUSED_STEPS", default_value = "auto", value_parser = parse_auto_switch)]
    pub fused_steps: AutoSwitch,
    /// The packed attention's GPU kernel: auto (tensor-core-registers for f16/bf16, cuda-cores
    /// for f32), cuda-cores, tensor-cores (WMMA, scores through shared memory),
    /// tensor-core-registers (mma.sync, scores and weights in registers). A tensor-core kernel
    /// named for f32 is refused.
    #[arg(long, env = "QUARRY_ATTENTION_KERNEL", default_value = "auto")]
    pub attention_kernel: quarry_indexer::embed::encoder_ops::AttentionKernel,
    /// On a GPU, mean pooling in one kernel: on (default) or off (candle's ops; also 1, 0).
    #[arg(long, env = "QUARRY_FUSED_POOLING", default_value = "on", value_parser = parse_switch, action = clap::ArgAction::Set)]
    pub fused_pooling: bool,
    /// On a GPU in f16 or bf16 with the fused steps, the feed-forward layer's GELU: epilogue
    /// (default: with the bias in cuBLASLt's product, in the tanh form, within 4.8e-4 of the
    /// erf form) or erf (the model's own form, in a pass of its own after the product).
    #[arg(long, env = "QUARRY_GPU_GELU", default_value = "epilogue")]
    pub gpu_gelu: quarry_indexer::embed::GpuGelu,
    /// On a GPU in f16 or bf16 with the fused steps, the encoder's row-wise steps over each
    /// batch's real tokens only, the attention over sequences back to back (as on the CPU):
    /// on, or off (default: the padded layout; also 1, 0).
    #[arg(long, env = "QUARRY_GPU_UNPADDED_ROWS", default_value = "off", value_parser = parse_switch, action = clap::ArgAction::Set)]
    pub gpu_unpadded_rows: bool,
}

/// on | off (also 1 | 0, true | false).
fn parse_switch(value: &str) -> Result<bool, String> {
    match value {
        "on" | "1" | "true" => Ok(true),
        "off" | "0" | "false" => Ok(false),
        other => Err(format!("`{other}`: expected on or off")),
    }
}

/// auto | on | off: `AutoSwitch(None)` for auto.
#[derive(Debug, Clone, Copy)]
pub struct AutoSwitch(pub Option<bool>);

fn parse_auto_switch(value: &str) -> Result<AutoSwitch, String> {
    match value {
        "auto" | "" => Ok(AutoSwitch(None)),
        other => parse_switch(other).map(|on| AutoSwitch(Some(on))),
    }
}

impl ModelArgs {
    pub fn embed_options(&self) -> quarry_indexer::embed::EmbedOptions {
        quarry_indexer::embed::EmbedOptions {
            device: self.device,
            batch: self
                .batch_tokens
                .map(|max_tokens| quarry_indexer::embed::BatchPolicy::TokenBudget { max_tokens }),
            precision: self.precision,
            cpu_lanes: self.cpu_lanes,
            tuning: quarry_indexer::embed::EncoderTuning {
                fused_steps: self.fused_steps.0,
                attention_kernel: self.attention_kernel,
                fused_pooling: self.fused_pooling,
                gpu_gelu: self.gpu_gelu,
                gpu_unpadded_rows: self.gpu_unpadded_rows,
            },
        }
    }

    pub fn model_dir(&self) -> anyhow::Result<PathBuf> {
        Ok(match &self.model {
            Some(dir) => dir.clone(),
            None => default_model_dir()?,
        })
    }
}

/// Object-store options shared by every command that reads or writes snapshots.
#[derive(clap::Args, Debug, Clone)]
pub struct StoreArgs {
    /// S3-compatible endpoint, e.g. http://127.0.0.1:5000 (AWS_* variables give credentials and region).
    #[arg(long, env = "QUARRY_S3_ENDPOINT")]
    pub endpoint: Option<String>,
}

impl StoreArgs {
    pub fn options(&self) -> quarry_indexer::store::StoreOptions {
        quarry_indexer::store::StoreOptions {
            s3_endpoint: self.endpoint.clone(),
        }
    }
}

/// Parses a count, size or duration for which 0 means nothing (no workers, no time, nothing
/// per batch), so that 0 is refused with the argument's name rather than quietly taken as 1
/// or as a request that always times out.
pub fn at_least_one<T: std::str::FromStr + PartialOrd + From<u8>>(value: &str) -> Result<T, String> {
    let parsed: T = value
        .trim()
        .parse()
        .map_err(|_| format!("`{value}` is not a whole number"))?;
    if parsed < T::from(1) {
        return Err("must be at least 1".into());
    }
    Ok(parsed)
}

/// A multi-threaded runtime for the async parts (object store I/O).
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

/// The optional LLM endpoint: `quarry serve`'s /api/chat and LLM stages, and `--summaries llm`.
#[derive(clap::Args, Debug, Clone)]
pub struct LlmArgs {
    /// An OpenAI-compatible chat-completions API (vLLM, llama.cpp's server, Ollama, a hosted
    /// API): its base URL, such as http://127.0.0.1:8000/v1. For `quarry serve`, POST /api/chat
    /// answers 503 without one and everything else works; `--summaries llm` needs one.
    #[arg(long, env = "QUARRY_LLM_URL", requires = "llm_model")]
    pub llm_url: Option<String>,
    /// The model asked for when a request names none.
    #[arg(long, env = "QUARRY_LLM_MODEL", requires = "llm_url")]
    pub llm_model: Option<String>,
    /// The LLM API's key (sent as a bearer token); set it in the environment, not on the command line.
    #[arg(long, env = "QUARRY_LLM_API_KEY", hide_env_values = true)]
    pub llm_api_key: Option<String>,
    /// Seconds one LLM call may take (a streamed answer: between two of its pieces).
    #[arg(long, env = "QUARRY_LLM_TIMEOUT", default_value_t = 60, value_parser = at_least_one::<u64>)]
    pub llm_timeout: u64,
    /// Attempts after the first when the LLM endpoint refuses a connection, is busy (429) or fails (5xx).
    #[arg(long, env = "QUARRY_LLM_RETRIES", default_value_t = 2)]
    pub llm_retries: u32,
    /// With `--summaries llm`: LLM requests in flight at most (a document's L0 and L1 go out
    /// together), whatever the number of parse threads; raise it for an endpoint that batches
    /// requests (vLLM, TGI), lower it for one that serves a few at a time.
    #[arg(long, env = "QUARRY_LLM_CONCURRENCY", default_value_t = 8, value_parser = at_least_one::<usize>)]
    pub llm_concurrency: usize,
}

impl LlmArgs {
    /// The endpoint's settings, when one is set.
    pub fn settings(&self) -> Option<quarry_server::llm::LlmSettings> {
        self.llm_url.as_ref().map(|url| quarry_server::llm::LlmSettings {
            url: url.clone(),
            model: self.llm_model.clone().unwrap_or_default(),
            api_key: self.llm_api_key.clone(),
            timeout: std::time::Duration::from_secs(self.llm_timeout),
            retries: self.llm_retries,
            concurrency: self.llm_concurrency,
        })
    }
}

/// Options for loading a snapshot to search it.
#[derive(clap::Args, Debug, Clone)]
pub struct LoadArgs {
    /// Where remote snapshots are cached, one folder per version.
    #[arg(long, env = "QUARRY_CACHE_DIR", default_value = ".quarry-cache")]
    pub cache_dir: PathBuf,
    /// Skip checking every file's sha256 on load.
    #[arg(long)]
    pub no_verify: bool,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub model: ModelArgs,
}

impl LoadArgs {
    /// Loads the snapshot and the model, and checks they belong together.
    pub async fn searcher(&self, snapshot: &str) -> anyhow::Result<quarry_server::Searcher> {
        use std::sync::Arc;
        let options = quarry_server::LoadOptions {
            store: self.store.options(),
            cache_dir: self.cache_dir.clone(),
            verify: !self.no_verify,
            version: None,
        };
        let loaded = quarry_server::LoadedSnapshot::load(snapshot, &options).await?;
        let embed_options = self.model.embed_options();
        let model_dir = quarry_indexer::embed::ModelDir::open(&self.model.model_dir()?)?;
        let embedder = quarry_indexer::embed::load_embedder(&model_dir, embed_options)?;
        Ok(quarry_server::Searcher::new(Arc::new(loaded), embedder)?)
    }
}
