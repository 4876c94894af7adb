//! `quarry bench-embed`: embedding throughput at full 256-token chunks on one device and
//! precision — tokenization and the model timed apart, real tokens per second, and the
//! fraction of a roof (the H100 figure: 23.6 MFLOP per token for all-MiniLM-L6-v2 at
//! 256 tokens, about 34 M tokens/s at 800 TFLOP/s bf16).

use std::time::Instant;

use quarry_datasets::synthetic::synthetic_documents;
use quarry_indexer::embed::Embedder;

/// The measurement.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EmbedThroughput {
    pub device: String,
    /// Threads of the pool the call ran on (the CPU's; a GPU's host side).
    pub threads: usize,
    /// On the CPU, the batches run at once as asked (`--cpu-lanes`; None: the default).
    pub cpu_lanes: Option<usize>,
    pub chunks: usize,
    /// The chunks cut to lengths spread as a run's are ([`spread_lengths`]), not full windows.
    pub spread_lengths: bool,
    pub real_tokens: usize,
    pub tokenize_secs: f64,
    /// Model seconds of each repetition (tokenized input, batches planned inside).
    pub model_secs: Vec<f64>,
    /// Real tokens per second of the median repetition, model only.
    pub tokens_per_sec: f64,
    /// Real tokens per second with tokenization on the same thread, for the median repetition.
    pub end_to_end_tokens_per_sec: f64,
    pub roof_tokens_per_sec: f64,
    pub fraction_of_roof: f64,
    /// With `--calls N`: the same texts as calls of N, one after another and as one stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<CallTimes>,
}

/// The texts embedded as calls of `chunks_per_call` (a run's groups), two ways, median seconds
/// of the repetitions: one call after another, and as one stream of calls
/// ([`Embedder::embed_token_calls`]: on one lane, a GPU's, a batch stays queued across calls).
#[derive(Debug, Clone, serde::Serialize)]
pub struct CallTimes {
    pub chunks_per_call: usize,
    pub calls: usize,
    pub one_by_one_secs: f64,
    pub streamed_secs: f64,
    pub one_by_one_tokens_per_sec: f64,
    pub streamed_tokens_per_sec: f64,
}

/// `count` seeded texts long enough that the model window (256 tokens) cuts every one.
pub fn window_filling_texts(count: usize, seed: u64) -> Vec<String> {
    let docs = synthetic_documents(count * 3, seed);
    docs.chunks(3)
        .map(|group| group.iter().map(|d| d.text.as_str()).collect::<Vec<_>>().join(" "))
        .collect()
}

/// The shortest chunk [`spread_lengths`] leaves: gen-corpus's chunks run from about 34
/// tokens to the window.
pub const SHORTEST_SPREAD_CHUNK: usize = 36;

/// Each of `ids` (window-filling chunks) cut to a length spread evenly, in an order fixed by
/// the chunks' places, from [`SHORTEST_SPREAD_CHUNK`] to its own length, keeping its last id (the closing
/// token): chunks as a run's are, so that the embedder's length-sorted batches carry padding.
pub fn spread_lengths(ids: Vec<Vec<u32>>) -> Vec<Vec<u32>> {
    ids.into_iter()
        .enumerate()
        .map(|(i, mut row)| {
            let longest = row.len();
            if longest > SHORTEST_SPREAD_CHUNK {
                let length = SHORTEST_SPREAD_CHUNK + i * 7_919 % (longest - SHORTEST_SPREAD_CHUNK + 1);
                let last = row[longest - 1];
                row.truncate(length);
                row[length - 1] = last;
            }
            row
        })
        .collect()
}

/// Embeds `texts` `repetitions` times after one warm-up batch (their ids cut by
/// [`spread_lengths`] when `spread` is set); with `chunks_per_call`, then also as calls of
/// that many ([`measure_calls`], over the same ids).
pub fn measure(
    embedder: &dyn Embedder,
    texts: &[String],
    repetitions: usize,
    roof_tokens_per_sec: f64,
    chunks_per_call: Option<usize>,
    spread: bool,
) -> anyhow::Result<EmbedThroughput> {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let started = Instant::now();
    let ids = embedder.tokenize(&refs)?;
    let tokenize_secs = started.elapsed().as_secs_f64();
    let ids = if spread { spread_lengths(ids) } else { ids };
    let real_tokens: usize = ids.iter().map(Vec::len).sum();
    embedder.embed_tokens(&ids[..ids.len().min(64)])?; // warm-up: kernels loaded, memory pools grown
    let mut model_secs = Vec::new();
    for _ in 0..repetitions.max(1) {
        let started = Instant::now();
        let embeddings = embedder.embed_tokens(&ids)?;
        model_secs.push(started.elapsed().as_secs_f64());
        anyhow::ensure!(
            embeddings.rows() == texts.len(),
            "embedder returned {} rows for {} texts",
            embeddings.rows(),
            texts.len()
        );
    }
    let median = median(&model_secs);
    let tokens_per_sec = real_tokens as f64 / median;
    let calls = match chunks_per_call {
        Some(chunks_per_call) => Some(measure_calls(embedder, &ids, chunks_per_call, repetitions)?),
        None => None,
    };
    Ok(EmbedThroughput {
        device: embedder.device_name(),
        threads: rayon::current_num_threads(),
        cpu_lanes: None,
        chunks: texts.len(),
        spread_lengths: spread,
        real_tokens,
        tokenize_secs,
        model_secs,
        tokens_per_sec,
        end_to_end_tokens_per_sec: real_tokens as f64 / (median + tokenize_secs),
        roof_tokens_per_sec,
        fraction_of_roof: tokens_per_sec / roof_tokens_per_sec,
        calls,
    })
}

/// The middle of `times` (the upper one of an even count).
fn median(times: &[f64]) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// Tokenized texts `ids` embedded as calls of `chunks_per_call`, one by one and streamed,
/// alternating, over `repetitions` rounds (see [`CallTimes`]); each round's rows are checked
/// to be the same both ways.
pub fn measure_calls(
    embedder: &dyn Embedder,
    ids: &[Vec<u32>],
    chunks_per_call: usize,
    repetitions: usize,
) -> anyhow::Result<CallTimes> {
    anyhow::ensure!(chunks_per_call > 0, "calls of no chunks");
    let real_tokens: usize = ids.iter().map(Vec::len).sum();
    let calls: Vec<&[Vec<u32>]> = ids.chunks(chunks_per_call).collect();
    let (mut one_by_one, mut streamed) = (Vec::new(), Vec::new());
    for _ in 0..repetitions.max(1) {
        let started = Instant::now();
        let mut alone = Vec::with_capacity(calls.len());
        for call in &calls {
            alone.push(embedder.embed_tokens(call)?);
        }
        one_by_one.push(started.elapsed().as_secs_f64());
        let started = Instant::now();
        let mut stream = calls.iter().map(|call| Ok(call.to_vec()));
        let mut together = Vec::with_capacity(calls.len());
        embedder.embed_token_calls(&mut stream, &|_| {}, &mut |rows| {
            together.push(rows);
            true
        })?;
        streamed.push(started.elapsed().as_secs_f64());
        anyhow::ensure!(
            together.len() == alone.len(),
            "{} results for {} calls",
            together.len(),
            alone.len()
        );
        for (call, (a, b)) in alone.iter().zip(&together).enumerate() {
            let worst = a
                .data
                .iter()
                .zip(&b.data)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0f32, f32::max);
            anyhow::ensure!(
                a.data.len() == b.data.len() && worst <= 1e-4,
                "call {call}: the stream's rows differ from the call's own (largest difference {worst})"
            );
        }
    }
    let (one_by_one_secs, streamed_secs) = (median(&one_by_one), median(&streamed));
    Ok(CallTimes {
        chunks_per_call,
        calls: calls.len(),
        one_by_one_secs,
        streamed_secs,
        one_by_one_tokens_per_sec: real_tokens as f64 / one_by_one_secs,
        streamed_tokens_per_sec: real_tokens as f64 / streamed_secs,
    })
}

/// The measurement as a Markdown table (and the calls' table, when measured).
pub fn markdown(result: &EmbedThroughput, precision: &str) -> String {
    let calls = result.calls.as_ref().map_or_else(String::new, |calls| {
        format!(
            "\n| calls of | calls | one by one s | tokens/s | streamed s | tokens/s | streamed / one by one |\n\
             |---:|---:|---:|---:|---:|---:|---:|\n\
             | {} | {} | {:.2} | {:.0} | {:.2} | {:.0} | {:.3} |\n",
            calls.chunks_per_call,
            calls.calls,
            calls.one_by_one_secs,
            calls.one_by_one_tokens_per_sec,
            calls.streamed_secs,
            calls.streamed_tokens_per_sec,
            calls.streamed_tokens_per_sec / calls.one_by_one_tokens_per_sec
        )
    });
    let table = format!(
        "| device | threads | precision | chunks | real tokens | tokenize s | model s (median) | tokens/s (model) | tokens/s (with tokenization) | fraction of {:.1} M roof |\n\
         |---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n\
         | {} | {} | {precision} | {} | {} | {:.2} | {:.2} | {:.0} | {:.0} | {:.4} |\n",
        result.roof_tokens_per_sec / 1e6,
        result.device,
        result.threads,
        if result.spread_lengths {
            format!("{} (lengths spread)", result.chunks)
        } else {
            result.chunks.to_string()
        },
        result.real_tokens,
        result.tokenize_secs,
        result.real_tokens as f64 / result.tokens_per_sec,
        result.tokens_per_sec,
        result.end_to_end_tokens_per_sec,
        result.fraction_of_roof
    );
    table + &calls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_lengths_cover_the_range_evenly_and_keep_each_chunks_last_id() {
        let window = 256;
        let ids: Vec<Vec<u32>> = (0..2_210u32)
            .map(|i| (0..window as u32).map(|t| i * 1_000 + t).collect())
            .chain([vec![7, 8, 9]])
            .collect();
        let cut = spread_lengths(ids.clone());
        let mut seen = vec![0usize; window + 1];
        for (row, (before, after)) in ids.iter().zip(&cut).enumerate().take(2_210) {
            let length = after.len();
            assert!(
                (SHORTEST_SPREAD_CHUNK..=window).contains(&length),
                "row {row}: {length}"
            );
            assert_eq!(after[..length - 1], before[..length - 1], "row {row}: its head kept");
            assert_eq!(after.last(), before.last(), "row {row}: its closing id kept");
            seen[length] += 1;
        }
        // 2,210 rows over 221 lengths: each length ten times.
        assert!(
            seen[SHORTEST_SPREAD_CHUNK..].iter().all(|&count| count == 10),
            "{seen:?}"
        );
        assert_eq!(
            cut.last().unwrap(),
            &vec![7, 8, 9],
            "a chunk shorter than the shortest stays"
        );
    }
}
