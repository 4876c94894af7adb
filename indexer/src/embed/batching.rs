//! Batch planning. Padding makes every text in a batch cost as much as the longest, so
//! quarry sorts texts by length and fills each batch up to a token budget
//! (`batch size × longest length`), instead of a fixed count in input order; a batch also
//! ends where the next text would be padded by more than a fifth of the batch's longest.

use serde::{Deserialize, Serialize};

/// How texts are grouped into forward passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum BatchPolicy {
    /// Length-sorted batches of at most `max_tokens` padded tokens.
    TokenBudget { max_tokens: usize },
    /// `size` texts per batch in input order, padded to the longest (the naive baseline).
    Fixed { size: usize },
}

/// The CPU default token budget per batch (a GPU sizes its own from its free memory). On the
/// 2-core AMD EPYC box 4,096 embedded msmarco-5k 5% faster than 16,384 at half the peak memory
/// (390 instead of 800 MiB): a batch's activations stay nearer the caches and fewer fresh
/// pages are touched (bench/RESULTS.md). Smaller budgets leave a many-core CPU's threads too
/// few rows.
pub const CPU_TOKEN_BUDGET: usize = 4_096;

impl Default for BatchPolicy {
    fn default() -> Self {
        Self::TokenBudget {
            max_tokens: CPU_TOKEN_BUDGET,
        }
    }
}

/// Activation bytes one padded token costs in a BERT forward pass at the widest point:
/// hidden states and their residual copies and the feed-forward block (`value_bytes` each),
/// and one row of attention scores and one of their softmax per head over a `window`-token
/// sequence (`score_bytes` each: bf16 models score in f32).
pub fn bytes_per_token(
    hidden: usize,
    intermediate: usize,
    heads: usize,
    window: usize,
    value_bytes: usize,
    score_bytes: usize,
) -> usize {
    (6 * hidden + 2 * intermediate) * value_bytes + 2 * heads * window * score_bytes
}

/// The most elements one tensor of a forward pass may hold. candle's CUDA kernels index
/// with 32-bit integers: a batch of 914,638 tokens (attention scores of 2.8 billion
/// elements, f32 on an 80 GB H100) failed with an illegal memory access. Half of 2^31
/// leaves a margin; batches that large are far past what fills a GPU anyway.
pub const MAX_TENSOR_ELEMENTS: usize = 1 << 30;

/// A token budget that uses `fraction` of `free_bytes` of GPU memory, with the attention
/// scores (`heads × window` per token) kept under [`MAX_TENSOR_ELEMENTS`].
pub fn gpu_token_budget(free_bytes: usize, per_token: usize, fraction: f64, heads: usize, window: usize) -> usize {
    let by_memory = (free_bytes as f64 * fraction) as usize / per_token.max(1);
    let by_indexing = MAX_TENSOR_ELEMENTS / (heads * window).max(1);
    by_memory.min(by_indexing).max(CPU_TOKEN_BUDGET)
}

/// A batch of at least [`MIN_ROWS_PER_LENGTH_BAND`] texts ends before a text shorter than
/// this fraction of its longest: short texts span many lengths, and a 16k-token batch of
/// them would otherwise pad most rows to several times their length.
pub const LENGTH_BAND: f64 = 0.8;
/// Texts a batch holds before [`LENGTH_BAND`] may end it (no batches of one or two).
pub const MIN_ROWS_PER_LENGTH_BAND: usize = 8;

/// Groups text indices into batches; `lengths[i]` is text i's token count.
pub fn plan_batches(lengths: &[usize], policy: BatchPolicy) -> Vec<Vec<usize>> {
    match policy {
        BatchPolicy::Fixed { size } => {
            let size = size.max(1);
            (0..lengths.len())
                .collect::<Vec<_>>()
                .chunks(size)
                .map(<[usize]>::to_vec)
                .collect()
        }
        BatchPolicy::TokenBudget { max_tokens } => {
            let mut order: Vec<usize> = (0..lengths.len()).collect();
            order.sort_by_key(|&i| (std::cmp::Reverse(lengths[i]), i));
            let mut batches: Vec<Vec<usize>> = Vec::new();
            let mut current: Vec<usize> = Vec::new();
            let mut longest = 0;
            for i in order {
                let len = lengths[i].max(1);
                let new_longest = longest.max(len);
                let over_budget = new_longest * (current.len() + 1) > max_tokens;
                let out_of_band =
                    current.len() >= MIN_ROWS_PER_LENGTH_BAND && (len as f64) < longest as f64 * LENGTH_BAND;
                if !current.is_empty() && (over_budget || out_of_band) {
                    batches.push(std::mem::take(&mut current));
                    longest = 0;
                }
                longest = longest.max(len);
                current.push(i);
            }
            if !current.is_empty() {
                batches.push(current);
            }
            batches
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_budget_groups_similar_lengths_and_respects_budget() {
        let lengths = [5, 200, 7, 6, 190, 5];
        let batches = plan_batches(&lengths, BatchPolicy::TokenBudget { max_tokens: 400 });
        let mut seen: Vec<usize> = batches.iter().flatten().copied().collect();
        seen.sort();
        assert_eq!(seen, [0, 1, 2, 3, 4, 5]);
        for batch in &batches {
            let longest = batch.iter().map(|&i| lengths[i]).max().unwrap();
            assert!(longest * batch.len() <= 400 || batch.len() == 1, "{batch:?}");
        }
        assert_eq!(batches[0], [1, 4]);
        assert_eq!(batches[1], [2, 3, 0, 5]);
    }

    #[test]
    fn short_texts_of_many_lengths_are_not_padded_to_the_longest() {
        // 400 texts of 10..=209 tokens fit one 84k-token budget, but a single batch would pad
        // them by about half; length bands keep the padding under a fifth.
        let lengths: Vec<usize> = (0..400).map(|i| 10 + i % 200).collect();
        let batches = plan_batches(&lengths, BatchPolicy::TokenBudget { max_tokens: 84_000 });
        let real: usize = lengths.iter().sum();
        let padded: usize = batches
            .iter()
            .map(|b| b.iter().map(|&i| lengths[i]).max().unwrap() * b.len())
            .sum();
        assert!(
            padded as f64 <= real as f64 * 1.2,
            "padded {padded} for {real} real tokens in {} batches",
            batches.len()
        );
        let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
        assert!(
            sizes[..sizes.len() - 1].iter().all(|&n| n >= MIN_ROWS_PER_LENGTH_BAND),
            "no tiny batches but the last: {sizes:?}"
        );
    }

    #[test]
    fn a_text_longer_than_the_budget_gets_its_own_batch() {
        let batches = plan_batches(&[10, 500, 10], BatchPolicy::TokenBudget { max_tokens: 100 });
        assert_eq!(batches, [vec![1], vec![0, 2]]);
    }

    #[test]
    fn gpu_budget_from_free_memory() {
        // all-MiniLM-L6-v2 in f16 at a 256-token window: (6*384 + 2*1536 + 2*12*256) * 2 bytes;
        // in bf16 the scores take 4 bytes.
        let per_token = bytes_per_token(384, 1536, 12, 256, 2, 2);
        assert_eq!(per_token, 23_040);
        assert_eq!(bytes_per_token(384, 1536, 12, 256, 2, 4), 35_328);
        assert_eq!(gpu_token_budget(80 << 30, per_token, 0.5, 1, 1), 1_864_135);
        assert_eq!(
            gpu_token_budget(80 << 30, per_token, 0.5, 12, 256),
            349_525,
            "scores under 2^30 elements"
        );
        assert_eq!(
            gpu_token_budget(1 << 20, per_token, 0.5, 12, 256),
            CPU_TOKEN_BUDGET,
            "never below the CPU budget"
        );
    }

    #[test]
    fn fixed_keeps_input_order() {
        assert_eq!(
            plan_batches(&[1, 2, 3], BatchPolicy::Fixed { size: 2 }),
            [vec![0, 1], vec![2]]
        );
    }
}
