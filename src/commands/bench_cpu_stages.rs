//! `quarry bench-cpu-stages`: parse + chunk, the model's tokenization, the keyword index and
//! the segment write over a folder of files, on rayon pools of the sizes asked for, in model
//! tokens per second (what the CPU can feed the embedding device).

use std::path::PathBuf;
use std::process::ExitCode;

use quarry_bench::cpu_stages::{default_settings, markdown, measure, read_folder};
use quarry_indexer::embed::ModelDir;

use super::ModelArgs;

#[derive(clap::Args, Debug)]
pub struct BenchCpuStagesArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Folder of files to parse (a `quarry gen-corpus` folder, a dataset, documents).
    #[arg(long)]
    pub corpus: PathBuf,
    /// Rayon pool sizes to measure, comma-separated (default: 1 and every core).
    #[arg(long, value_delimiter = ',')]
    pub threads: Vec<usize>,
    /// How the parse stage makes each document's layers: extractive | off (`quarry index --summaries`).
    #[arg(long, default_value = "extractive")]
    pub summaries: quarry_indexer::summary::Summaries,
    /// Also write the measurements as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(args: BenchCpuStagesArgs) -> anyhow::Result<ExitCode> {
    let model = ModelDir::open(&args.model.model_dir()?)?;
    let (mut settings, tokenizer) = default_settings(&model)?;
    settings.summarizer = args
        .summaries
        .summarizer()
        .ok_or_else(|| anyhow::anyhow!("bench-cpu-stages times the built-in summarizers: extractive or off"))?;
    let files = read_folder(&args.corpus)?;
    anyhow::ensure!(!files.is_empty(), "{}: no files to parse", args.corpus.display());
    let cores = std::thread::available_parallelism().map(usize::from).unwrap_or(1);
    let threads = if args.threads.is_empty() {
        vec![1, cores]
    } else {
        args.threads.clone()
    };
    let mut results = Vec::new();
    for &count in threads.iter().filter(|&&t| t > 0) {
        let result = measure(&files, &settings, &tokenizer, model.hidden_size, count)?;
        eprintln!(
            "{count} threads: parse+chunk {:.2} s, tokenize {:.2} s, keyword index {:.2} s (English analyzer {:.2} s), write segment {:.2} s",
            result.parse_chunk_secs, result.tokenize_secs, result.keyword_index_secs, result.keyword_index_english_secs, result.write_segment_secs
        );
        results.push(result);
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&results)?)?;
    }
    println!("{} on {cores} cores ({} files)", args.corpus.display(), files.len());
    print!("{}", markdown(&results));
    Ok(ExitCode::SUCCESS)
}
