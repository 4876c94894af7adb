//! `quarry gen-corpus --documents N --out DIR`: a seeded synthetic corpus for scale runs
//! (`quarry index DIR ...`), split into JSONL files so parsing runs in parallel.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct GenCorpusArgs {
    /// Documents to write (each 40-200 words: one or two 256-token chunks).
    #[arg(long)]
    pub documents: usize,
    /// Documents per JSONL file.
    #[arg(long, default_value_t = 10_000)]
    pub per_file: usize,
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Folder to write (created).
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(args: GenCorpusArgs) -> anyhow::Result<ExitCode> {
    let files =
        quarry_datasets::synthetic::write_synthetic_corpus(&args.out, args.documents, args.per_file, args.seed)?;
    println!(
        "{} documents in {} files under {}",
        args.documents,
        files.len(),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
