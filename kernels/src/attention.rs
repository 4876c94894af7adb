//! Self-attention read straight from the packed output of BERT's query-key-value product,
//! for the CPU: each query row attends over its sequence's real tokens only and the context
//! comes out in the `[tokens, heads * head_size]` layout the next dense layer reads. It is
//! the twin of both kernels of kernels/cuda/attention.cu (`packed_attention` on CUDA cores,
//! `tensor_core_attention`), and on the CPU replaces the copy
//! that lays query, key and value out by head, two batched products, the masked softmax and
//! the copy of the context back.

use rayon::prelude::*;

use crate::dot::dot;
use crate::sequences::sequence_starts;
use crate::softmax::{exp, reduce_in_lanes};

/// The shape of a packed query-key-value tensor `[batch * tokens, 3 * heads * head_size]`:
/// each row holds the token's query (already scaled by 1/sqrt(head_size)), key and value,
/// each `heads * head_size` wide, head `h` at columns `h * head_size..`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedHeads {
    pub tokens: usize,
    pub heads: usize,
    pub head_size: usize,
}

impl PackedHeads {
    pub fn hidden(&self) -> usize {
        self.heads * self.head_size
    }
}

/// Whether [`packed_attention`] runs on AVX-512 register tiles for heads of `head_size` here
/// (heads of 32 or 64 values, a CPU with AVX-512F); elsewhere it takes a dot product per query
/// and key, slower than a blocked matrix product.
pub fn packed_attention_tiled(head_size: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        tiled::runs(head_size)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = head_size;
        false
    }
}

/// Output rows per parallel task.
const ROWS_PER_TASK: usize = 8;

/// Where one sequence sits in a packed query-key-value tensor: `rows` query rows from row
/// `start`, attending over the sequence's first `keys` rows.
#[derive(Clone, Copy, Debug)]
struct SequenceRows {
    start: usize,
    rows: usize,
    keys: usize,
}

/// The attention context `[batch * tokens, heads * head_size]` of `qkv` (see [`PackedHeads`]):
/// row `t` of sequence `b`, head `h`, is the softmax over keys `0..lengths[b]` (clamped to
/// `1..=tokens`) of `query · key`, applied to the values. Padding rows (`t >= lengths[b]`)
/// attend the same way, as BERT's additive mask has them do.
pub fn packed_attention(qkv: &[f32], lengths: &[usize], shape: PackedHeads) -> Vec<f32> {
    let PackedHeads { tokens, .. } = shape;
    let hidden = shape.hidden();
    assert!(
        tokens > 0 && hidden > 0 && qkv.len() == lengths.len() * tokens * 3 * hidden,
        "qkv of {} values is not {} sequences of {tokens} tokens x 3 x {hidden}",
        qkv.len(),
        lengths.len()
    );
    let sequences: Vec<SequenceRows> = (0..lengths.len())
        .map(|b| SequenceRows {
            start: b * tokens,
            rows: tokens,
            keys: lengths[b].clamp(1, tokens),
        })
        .collect();
    attention_over(qkv, &sequences, shape)
}

/// [`packed_attention`] over real tokens only: `qkv` holds the sequences back to back,
/// sequence `b` as its `lengths[b]` rows (no padding), and so does the context
/// `[sum(lengths), heads * head_size]`. `shape.tokens` is ignored. The CPU encoder runs its
/// row-wise steps on the real tokens; this reads their product as it is, with no padded copy
/// to lay out and drop again, and computes no padding queries.
pub fn ragged_attention(qkv: &[f32], lengths: &[usize], shape: PackedHeads) -> Vec<f32> {
    let hidden = shape.hidden();
    let real: usize = lengths.iter().sum();
    assert!(
        hidden > 0 && qkv.len() == real * 3 * hidden,
        "qkv of {} values is not {real} real tokens x 3 x {hidden}",
        qkv.len()
    );
    let sequences: Vec<SequenceRows> = sequence_starts(lengths)
        .into_iter()
        .zip(lengths)
        .map(|(start, &length)| SequenceRows {
            start,
            rows: length,
            keys: length,
        })
        .collect();
    attention_over(qkv, &sequences, shape)
}

/// The context `[rows, hidden]` of every sequence in `sequences` (which cover `qkv`'s rows in
/// order).
fn attention_over(qkv: &[f32], sequences: &[SequenceRows], shape: PackedHeads) -> Vec<f32> {
    let PackedHeads { heads, head_size, .. } = shape;
    let hidden = shape.hidden();
    #[cfg(target_arch = "x86_64")]
    if tiled::runs(head_size) {
        return tiled::attention_over(qkv, sequences, shape);
    }
    let rows = qkv.len() / (3 * hidden);
    let longest = sequences.iter().map(|sequence| sequence.keys).max().unwrap_or(0);
    let mut context = vec![0f32; rows * hidden];
    context
        .par_chunks_mut(hidden * ROWS_PER_TASK)
        .enumerate()
        .for_each_init(
            || vec![0f32; longest],
            |scores, (task, rows)| {
                for (i, out) in rows.chunks_exact_mut(hidden).enumerate() {
                    let row = task * ROWS_PER_TASK + i;
                    let sequence =
                        sequences[sequences.partition_point(|sequence| sequence.start + sequence.rows <= row)];
                    let keys = &qkv[sequence.start * 3 * hidden..(sequence.start + sequence.keys) * 3 * hidden];
                    let query = &qkv[row * 3 * hidden..row * 3 * hidden + hidden];
                    for head in 0..heads {
                        let columns = head * head_size..(head + 1) * head_size;
                        attend(
                            &query[columns.clone()],
                            keys,
                            3 * hidden,
                            hidden + columns.start,
                            2 * hidden + columns.start,
                            &mut scores[..sequence.keys],
                            &mut out[columns],
                        );
                    }
                }
            },
        );
    context
}

/// One query row of one head: `keys` holds the sequence's packed rows (`stride` apart), the
/// head's key at column `key_at` and value at `value_at`; `scores` has one slot per real key.
fn attend(
    query: &[f32],
    keys: &[f32],
    stride: usize,
    key_at: usize,
    value_at: usize,
    scores: &mut [f32],
    out: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the features the function is compiled for (checked above).
        return unsafe { attend_avx2_fma(query, keys, stride, key_at, value_at, scores, out) };
    }
    attend_portable(query, keys, stride, key_at, value_at, scores, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn attend_avx2_fma(
    query: &[f32],
    keys: &[f32],
    stride: usize,
    key_at: usize,
    value_at: usize,
    scores: &mut [f32],
    out: &mut [f32],
) {
    attend_portable(query, keys, stride, key_at, value_at, scores, out);
}

#[inline(always)]
fn attend_portable(
    query: &[f32],
    keys: &[f32],
    stride: usize,
    key_at: usize,
    value_at: usize,
    scores: &mut [f32],
    out: &mut [f32],
) {
    let size = query.len();
    for (j, score) in scores.iter_mut().enumerate() {
        *score = dot(query, &keys[j * stride + key_at..j * stride + key_at + size]);
    }
    let max = reduce_in_lanes(scores, f32::NEG_INFINITY, |m, v| if v > m { v } else { m });
    scores.iter_mut().for_each(|s| *s = exp(*s - max));
    let scale = 1.0 / reduce_in_lanes(scores, 0.0, |sum, v| sum + v);
    out.fill(0.0);
    for (j, &weight) in scores.iter().enumerate() {
        let value = &keys[j * stride + value_at..j * stride + value_at + size];
        out.iter_mut().zip(value).for_each(|(o, v)| *o += weight * v);
    }
    out.iter_mut().for_each(|o| *o *= scale);
}

/// The same attention with AVX-512 for heads of 32 or 64 values: one task per sequence and
/// head computes every query's scores against the head's keys in register tiles (12 queries ×
/// 32 keys), the softmax of each row in place, then the context in tiles of queries × the
/// head's values, reading queries, keys and values where the product wrote them.
#[cfg(target_arch = "x86_64")]
mod tiled {
    use std::arch::x86_64::*;

    use rayon::prelude::*;

    use super::{PackedHeads, SequenceRows};
    use crate::softmax::softmax_row;

    /// Queries per score tile (12 × 2 vectors of keys: 24 of the 32 vector registers).
    const SCORE_ROWS: usize = 12;
    /// Keys per score tile.
    const KEYS: usize = 32;

    /// Whether this path runs for heads of `head_size` on this CPU.
    pub(crate) fn runs(head_size: usize) -> bool {
        matches!(head_size, 32 | 64) && std::is_x86_feature_detected!("avx512f")
    }

    /// Where a task writes: the context's first value (each task writes only its own
    /// sequence's rows and its head's columns).
    #[derive(Clone, Copy)]
    struct ContextPtr(*mut f32);
    // SAFETY: tasks write disjoint parts of one buffer that outlives them (see `packed_attention`).
    unsafe impl Send for ContextPtr {}
    unsafe impl Sync for ContextPtr {}

    impl ContextPtr {
        fn at(&self, offset: usize) -> *mut f32 {
            self.0.wrapping_add(offset)
        }
    }

    pub(super) fn attention_over(qkv: &[f32], sequences: &[SequenceRows], shape: PackedHeads) -> Vec<f32> {
        let PackedHeads { heads, head_size, .. } = shape;
        let hidden = shape.hidden();
        let stride = 3 * hidden;
        // Every value is stored once below: no zeros written first (on the calling thread,
        // while the pool's threads wait).
        let values = qkv.len() / 3;
        let mut context: Vec<f32> = Vec::with_capacity(values);
        let out = ContextPtr(context.as_mut_ptr());
        let longest = sequences.iter().map(|sequence| sequence.rows).max().unwrap_or(0);
        let padded_keys = sequences
            .iter()
            .map(|sequence| sequence.keys)
            .max()
            .unwrap_or(0)
            .next_multiple_of(KEYS);
        (0..sequences.len() * heads).into_par_iter().for_each_init(
            || (vec![0f32; head_size * padded_keys], vec![0f32; longest * padded_keys]),
            |(keys_by_dim, scores), task| {
                let (sequence, head) = (sequences[task / heads], task % heads);
                if sequence.rows == 0 {
                    return;
                }
                let rows = &qkv[sequence.start * stride..][..sequence.rows * stride];
                // SAFETY: the CPU has AVX-512F (`runs`); `rows` holds the sequence's packed rows,
                // `keys <= rows`; the task writes the sequence's rows of the context, columns
                // `head * head_size..` only, which no other task writes, and `context` lives
                // until every task has ended.
                unsafe {
                    let out = out.at(sequence.start * hidden + head * head_size);
                    match head_size {
                        32 => attend_head::<2, 12>(rows, hidden, head, sequence.keys, keys_by_dim, scores, out),
                        _ => attend_head::<4, 6>(rows, hidden, head, sequence.keys, keys_by_dim, scores, out),
                    }
                }
            },
        );
        // SAFETY: `sequences` cover every row of `qkv` (see `attention_over`), and each
        // sequence's tasks stored every column of its rows: all `values` values.
        unsafe { context.set_len(values) };
        context
    }

    /// One sequence and head: `rows` are the sequence's packed rows (`3 * hidden` wide), the
    /// head's `VECS * 16` values at `head * VECS * 16` of each part; `out` points at the
    /// head's columns of the sequence's first context row (rows `hidden` apart).
    #[target_feature(enable = "avx512f")]
    unsafe fn attend_head<const VECS: usize, const VALUE_ROWS: usize>(
        rows: &[f32],
        hidden: usize,
        head: usize,
        length: usize,
        keys_by_dim: &mut [f32],
        scores: &mut [f32],
        out: *mut f32,
    ) {
        let head_size = VECS * 16;
        let stride = 3 * hidden;
        let tokens = rows.len() / stride;
        let padded = length.next_multiple_of(KEYS);
        let (query_at, key_at, value_at) = (
            head * head_size,
            hidden + head * head_size,
            2 * hidden + head * head_size,
        );
        // The real keys by dimension, `padded` wide (zeros past the last key).
        for d in 0..head_size {
            let line = &mut keys_by_dim[d * padded..][..padded];
            for (k, value) in line.iter_mut().enumerate() {
                *value = if k < length { rows[k * stride + key_at + d] } else { 0.0 };
            }
        }
        // Scores: each query against every real key (the scale is in the query weights).
        let mut first = 0;
        while first < tokens {
            let count = (tokens - first).min(SCORE_ROWS);
            for panel in (0..padded).step_by(KEYS) {
                let mut low = [_mm512_setzero_ps(); SCORE_ROWS];
                let mut high = [_mm512_setzero_ps(); SCORE_ROWS];
                for d in 0..head_size {
                    let keys = keys_by_dim.as_ptr().add(d * padded + panel);
                    let (k_low, k_high) = (_mm512_loadu_ps(keys), _mm512_loadu_ps(keys.add(16)));
                    for r in 0..SCORE_ROWS {
                        // A short last tile repeats its last query; those sums are not stored.
                        let q = _mm512_set1_ps(*rows.get_unchecked((first + r.min(count - 1)) * stride + query_at + d));
                        low[r] = _mm512_fmadd_ps(q, k_low, low[r]);
                        high[r] = _mm512_fmadd_ps(q, k_high, high[r]);
                    }
                }
                for r in 0..count {
                    let line = scores.as_mut_ptr().add((first + r) * padded + panel);
                    _mm512_storeu_ps(line, low[r]);
                    _mm512_storeu_ps(line.add(16), high[r]);
                }
            }
            first += count;
        }
        for t in 0..tokens {
            softmax_row(&mut scores[t * padded..][..padded], length);
        }
        // Context: each query's weights times the real keys' values.
        let mut first = 0;
        while first < tokens {
            let count = (tokens - first).min(VALUE_ROWS);
            let mut sums = [[_mm512_setzero_ps(); VECS]; VALUE_ROWS];
            for k in 0..length {
                let value = rows.as_ptr().add(k * stride + value_at);
                let mut values = [_mm512_setzero_ps(); VECS];
                for (v, vector) in values.iter_mut().enumerate() {
                    *vector = _mm512_loadu_ps(value.add(v * 16));
                }
                for (r, row_sums) in sums.iter_mut().enumerate() {
                    let weight = _mm512_set1_ps(*scores.get_unchecked((first + r.min(count - 1)) * padded + k));
                    for (sum, vector) in row_sums.iter_mut().zip(&values) {
                        *sum = _mm512_fmadd_ps(weight, *vector, *sum);
                    }
                }
            }
            for (r, row_sums) in sums.iter().enumerate().take(count) {
                let line = out.add((first + r) * hidden);
                for (v, sum) in row_sums.iter().enumerate() {
                    _mm512_storeu_ps(line.add(v * 16), *sum);
                }
            }
            first += count;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook definition in f64: per sequence and head, gather the head's query, key and
    /// value matrices, then softmax(Q Kᵀ) V over the real keys.
    fn reference(qkv: &[f32], lengths: &[usize], shape: PackedHeads) -> Vec<f64> {
        let PackedHeads {
            tokens,
            heads,
            head_size,
        } = shape;
        let hidden = shape.hidden();
        let at = |b: usize, t: usize, part: usize, h: usize, d: usize| {
            qkv[(b * tokens + t) * 3 * hidden + part * hidden + h * head_size + d] as f64
        };
        let mut out = vec![0f64; lengths.len() * tokens * hidden];
        for (b, &length) in lengths.iter().enumerate() {
            let length = length.clamp(1, tokens);
            for h in 0..heads {
                for t in 0..tokens {
                    let scores: Vec<f64> = (0..length)
                        .map(|j| (0..head_size).map(|d| at(b, t, 0, h, d) * at(b, j, 1, h, d)).sum())
                        .collect();
                    let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
                    let total: f64 = weights.iter().sum();
                    for d in 0..head_size {
                        out[(b * tokens + t) * hidden + h * head_size + d] =
                            (0..length).map(|j| weights[j] * at(b, j, 2, h, d)).sum::<f64>() / total;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn matches_the_textbook_attention_over_the_real_keys() {
        // Odd head sizes (a tail past the 8 lanes), one-token and full-length sequences, more
        // rows than one task, logits up to about 50.
        for (shape, lengths) in [
            (
                PackedHeads {
                    tokens: 1,
                    heads: 1,
                    head_size: 1,
                },
                vec![1],
            ),
            (
                PackedHeads {
                    tokens: 7,
                    heads: 3,
                    head_size: 13,
                },
                vec![7, 1, 4, 0],
            ),
            (
                PackedHeads {
                    tokens: 37,
                    heads: 2,
                    head_size: 32,
                },
                vec![37, 20, 9],
            ),
            // Heads of 32 and 64 (the AVX-512 tiles where the CPU has them): sequences shorter
            // and longer than a tile of keys, lengths past the tokens, a short last tile.
            (
                PackedHeads {
                    tokens: 45,
                    heads: 3,
                    head_size: 32,
                },
                vec![45, 33, 1, 90],
            ),
            (
                PackedHeads {
                    tokens: 70,
                    heads: 2,
                    head_size: 64,
                },
                vec![70, 31, 64],
            ),
        ] {
            let count = lengths.len() * shape.tokens * 3 * shape.hidden();
            let qkv: Vec<f32> = (0..count)
                .map(|i| ((i * 7919 + 13) % 1009) as f32 / 404.0 - 1.25)
                .collect();
            let got = packed_attention(&qkv, &lengths, shape);
            let want = reference(&qkv, &lengths, shape);
            assert_eq!(got.len(), want.len());
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (*g as f64 - w).abs() <= 2e-5 * (1.0 + w.abs()),
                    "{shape:?} value {i}: {g} vs {w}"
                );
            }
            // The same sequences with their padding rows left out: the real rows' context.
            let hidden = shape.hidden();
            let real: Vec<usize> = lengths.iter().map(|&length| length.min(shape.tokens)).collect();
            let rows_of = |values: &[f32], width: usize| -> Vec<f32> {
                real.iter()
                    .enumerate()
                    .flat_map(|(b, &length)| values[b * shape.tokens * width..][..length * width].to_vec())
                    .collect()
            };
            let got = ragged_attention(&rows_of(&qkv, 3 * hidden), &real, shape);
            let want: Vec<f64> = real
                .iter()
                .enumerate()
                .flat_map(|(b, &length)| want[b * shape.tokens * hidden..][..length * hidden].to_vec())
                .collect();
            assert_eq!(got.len(), want.len(), "{shape:?} ragged");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (*g as f64 - w).abs() <= 2e-5 * (1.0 + w.abs()),
                    "{shape:?} ragged value {i}: {g} vs {w}"
                );
            }
        }
    }
}
