//! `bench-embed-batching [--short N] [--long N] [--reps N]`: CPU embedding throughput of
//! token-budget batching against fixed-size padded batching over a mixed-length corpus
//! (msmarco-5k passages with a few 256-token texts shuffled in), printed as JSON and Markdown.

use anyhow::Context;
use quarry_indexer::embed::BatchPolicy;

/// The allocator `quarry` runs with (see src/main.rs), so the figures are quarry's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> anyhow::Result<()> {
    let (short, long, reps) = (arg("--short", 480), arg("--long", 32), arg("--reps", 3));
    let corpus_path =
        std::env::var("QUARRY_BENCH_CORPUS").unwrap_or_else(|_| "../shared/datasets/msmarco-5k/corpus.jsonl".into());
    let corpus = std::fs::read_to_string(&corpus_path).with_context(|| format!("reading {corpus_path}"))?;
    let passages: Vec<String> = corpus
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["text"].as_str().map(str::to_string))
        .collect();
    anyhow::ensure!(passages.len() >= short + long * 8, "corpus too small");
    let mut texts: Vec<String> = passages[..short].to_vec();
    // Long texts: eight passages joined, which the model window cuts at 256 tokens.
    texts.extend((0..long).map(|i| passages[short + i * 8..short + i * 8 + 8].join(" ")));
    // A fixed, seeded shuffle so long texts are spread through the input.
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for i in (1..texts.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        texts.swap(i, (state % (i as u64 + 1)) as usize);
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let model = quarry_bench::model_dir()?;
    let policies = [
        BatchPolicy::TokenBudget { max_tokens: 16_384 },
        BatchPolicy::Fixed { size: 32 },
    ];
    let results = quarry_bench::embed_batching::measure(&model, &refs, &policies, reps)?;
    println!("{}", serde_json::to_string_pretty(&results)?);
    println!(
        "\n| policy | texts | real tokens | padded tokens | median s | tokens/s |\n|---|---:|---:|---:|---:|---:|"
    );
    for r in &results {
        let mut s = r.seconds.clone();
        s.sort_by(f64::total_cmp);
        println!(
            "| {} | {} | {} | {} | {:.2} | {:.0} |",
            r.policy,
            r.texts,
            r.real_tokens,
            r.padded_tokens,
            s[s.len() / 2],
            r.tokens_per_sec
        );
    }
    println!(
        "\nratio token-budget / fixed: {:.2}x",
        results[0].tokens_per_sec / results[1].tokens_per_sec
    );
    Ok(())
}
