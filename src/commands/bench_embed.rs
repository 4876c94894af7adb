//! `quarry bench-embed`: embedding tokens/s at full 256-token windows (or lengths spread as a
//! run's chunks are) on the chosen device and precision, as a fraction of a roof.

use std::path::PathBuf;
use std::process::ExitCode;

use quarry_bench::embed_throughput::{markdown, measure, window_filling_texts};
use quarry_indexer::embed::{load_embedder, ModelDir};

use super::ModelArgs;

#[derive(clap::Args, Debug)]
pub struct BenchEmbedArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Texts to embed, each cut to the model window.
    #[arg(long, default_value_t = 2_000)]
    pub chunks: usize,
    #[arg(long, default_value_t = 3)]
    pub repetitions: usize,
    /// Roof in tokens per second for the fraction (default: the H100 figure, 23.6 MFLOP/token at 800 TFLOP/s).
    #[arg(long, default_value_t = 34.0e6)]
    pub roof: f64,
    /// Also time the texts as calls of this many chunks (a run's groups: 2,048), one call
    /// after another and as one stream of calls (on a GPU a batch stays queued across them).
    #[arg(long)]
    pub calls: Option<usize>,
    /// Cut the chunks to lengths spread evenly from 36 tokens to the window (as a run's are)
    /// instead of full windows: the length-sorted batches then carry padding. Real tokens are
    /// what tokens/s counts either way.
    #[arg(long)]
    pub spread_lengths: bool,
    /// Also write the measurement as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(args: BenchEmbedArgs) -> anyhow::Result<ExitCode> {
    let embedder = load_embedder(&ModelDir::open(&args.model.model_dir()?)?, args.model.embed_options())?;
    let texts = window_filling_texts(args.chunks, 0x5eed);
    let result = measure(
        embedder.as_ref(),
        &texts,
        args.repetitions,
        args.roof,
        args.calls,
        args.spread_lengths,
    )?;
    let result = quarry_bench::embed_throughput::EmbedThroughput {
        cpu_lanes: args.model.cpu_lanes,
        ..result
    };
    if embedder.device_name().starts_with("cpu") {
        let lanes = args.model.cpu_lanes.map_or_else(
            || format!("one per thread, at most {}", quarry_indexer::embed::MAX_AUTO_CPU_LANES),
            |lanes| lanes.to_string(),
        );
        println!("CPU lanes (batches at once): {lanes}");
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&result)?)?;
    }
    let precision = args.model.precision.resolved(embedder.device_name().starts_with("cpu"));
    print!("{}", markdown(&result, &format!("{precision:?}").to_lowercase()));
    Ok(ExitCode::SUCCESS)
}
