//! Embedding throughput (real tokens per second) of batch policies over one corpus, in one
//! process, one after the other, each repeated; padding tokens are not counted as work.

use std::time::Instant;

use quarry_indexer::embed::{BatchPolicy, BertEmbedder, EmbedOptions, Embedder, ModelDir};

/// One policy's measurement.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PolicyResult {
    pub policy: String,
    pub texts: usize,
    pub real_tokens: usize,
    pub padded_tokens: usize,
    /// Seconds of each repetition.
    pub seconds: Vec<f64>,
    /// Real tokens per second of the median repetition.
    pub tokens_per_sec: f64,
}

/// Tokens the model sees per batch plan, padding included.
fn padded_tokens(lengths: &[usize], policy: BatchPolicy) -> usize {
    quarry_indexer::embed::plan_batches(lengths, policy)
        .iter()
        .map(|batch| batch.len() * batch.iter().map(|&i| lengths[i]).max().unwrap_or(0))
        .sum()
}

/// Measures each policy `repetitions` times over `texts`.
pub fn measure(
    model: &ModelDir,
    texts: &[&str],
    policies: &[BatchPolicy],
    repetitions: usize,
) -> anyhow::Result<Vec<PolicyResult>> {
    let mut results = Vec::new();
    for &policy in policies {
        let embedder = BertEmbedder::load(
            model,
            EmbedOptions {
                batch: Some(policy),
                ..Default::default()
            },
        )?;
        let lengths: Vec<usize> = embedder
            .tokenizer()
            .encode_for_model(texts)?
            .iter()
            .map(Vec::len)
            .collect();
        let mut seconds = Vec::new();
        for _ in 0..repetitions.max(1) {
            let started = Instant::now();
            let embeddings = embedder.embed(texts)?;
            seconds.push(started.elapsed().as_secs_f64());
            anyhow::ensure!(
                embeddings.rows() == texts.len(),
                "embedder returned {} rows for {} texts",
                embeddings.rows(),
                texts.len()
            );
        }
        let mut sorted = seconds.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        let real_tokens: usize = lengths.iter().sum();
        results.push(PolicyResult {
            policy: format!("{policy:?}"),
            texts: texts.len(),
            real_tokens,
            padded_tokens: padded_tokens(&lengths, policy),
            seconds,
            tokens_per_sec: real_tokens as f64 / median,
        });
    }
    Ok(results)
}
