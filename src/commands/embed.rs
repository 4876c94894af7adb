//! `quarry embed < texts.jsonl > vectors.jsonl`: one {"embedding": [...]} line per
//! {"text": ...} line, in order, streamed in groups so large inputs never sit in memory.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use anyhow::Context;
use quarry_indexer::embed::{load_embedder, ModelDir};

use super::{at_least_one, ModelArgs};

#[derive(clap::Args, Debug)]
pub struct EmbedArgs {
    /// Lines embedded per group.
    #[arg(long, env = "QUARRY_EMBED_GROUP", default_value_t = 512, value_parser = at_least_one::<usize>)]
    pub group: usize,
    #[command(flatten)]
    pub model: ModelArgs,
}

fn text_of(line: &str, line_no: usize) -> anyhow::Result<String> {
    let value: serde_json::Value =
        serde_json::from_str(line).with_context(|| format!("stdin line {line_no}: invalid JSON"))?;
    value
        .get("text")
        .and_then(|t| t.as_str())
        .map(str::to_string)
        .with_context(|| format!("stdin line {line_no}: expected an object with a string field \"text\""))
}

pub fn run(args: EmbedArgs) -> anyhow::Result<ExitCode> {
    let embedder = load_embedder(&ModelDir::open(&args.model.model_dir()?)?, args.model.embed_options())?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut texts = Vec::new();
    let flush = |texts: &mut Vec<String>, out: &mut dyn Write| -> anyhow::Result<()> {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let embeddings = embedder.embed(&refs)?;
        for i in 0..embeddings.rows() {
            serde_json::to_writer(&mut *out, &serde_json::json!({ "embedding": embeddings.row(i) }))?;
            out.write_all(b"\n")?;
        }
        texts.clear();
        Ok(())
    };
    for (index, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.with_context(|| format!("stdin line {}", index + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        texts.push(text_of(&line, index + 1)?);
        if texts.len() >= args.group.max(1) {
            flush(&mut texts, &mut out)?;
        }
    }
    flush(&mut texts, &mut out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
