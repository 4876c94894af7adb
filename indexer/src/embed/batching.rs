//! Batch planning. Padding makes every text in a batch cost as much as the longest, so
//! quarry sorts texts by length and fills each batch up to a token budget
//! (`batch size × longest length`), instead of a fixed count in input order.

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

impl Default for BatchPolicy {
    fn default() -> Self {
        Self::TokenBudget { max_tokens: 16_384 }
    }
}

/// Groups text indices into batches; `lengths[i]` is text i's token count.
pub fn plan_batches(lengths: &[usize], policy: BatchPolicy) -> Vec<Vec<usize>> {
    match policy {
        BatchPolicy::Fixed { size } => {
            let size = size.max(1);
            (0..lengths.len()).collect::<Vec<_>>().chunks(size).map(<[usize]>::to_vec).collect()
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
                if !current.is_empty() && new_longest * (current.len() + 1) > max_tokens {
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
    fn a_text_longer_than_the_budget_gets_its_own_batch() {
        let batches = plan_batches(&[10, 500, 10], BatchPolicy::TokenBudget { max_tokens: 100 });
        assert_eq!(batches, [vec![1], vec![0, 2]]);
    }

    #[test]
    fn fixed_keeps_input_order() {
        assert_eq!(plan_batches(&[1, 2, 3], BatchPolicy::Fixed { size: 2 }), [vec![0, 1], vec![2]]);
    }
}
