//! Mean pooling over the attention mask and L2 normalization: the CPU twins of the fused
//! CUDA step that turns token vectors into sentence embeddings.

use rayon::prelude::*;

use crate::sequences::sequence_starts;

/// Mean of the token vectors whose mask is 1, per row: `hidden` is `[rows, tokens, dim]`,
/// `mask` is `[rows, tokens]`.
pub fn mean_pool(hidden: &[f32], mask: &[u32], rows: usize, tokens: usize, dim: usize) -> Vec<f32> {
    let mut out = vec![0f32; rows * dim];
    for r in 0..rows {
        let count = mask[r * tokens..(r + 1) * tokens]
            .iter()
            .filter(|m| **m != 0)
            .count()
            .max(1) as f32;
        let target = &mut out[r * dim..(r + 1) * dim];
        for t in 0..tokens {
            if mask[r * tokens + t] != 0 {
                let vector = &hidden[(r * tokens + t) * dim..(r * tokens + t + 1) * dim];
                target.iter_mut().zip(vector).for_each(|(o, v)| *o += v);
            }
        }
        target.iter_mut().for_each(|o| *o /= count);
    }
    out
}

/// Scales every row to unit length (rows of zeros stay zero).
pub fn l2_normalize(data: &mut [f32], dim: usize) {
    for row in data.chunks_mut(dim) {
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 1e-12 {
            row.iter_mut().for_each(|x| *x /= norm);
        }
    }
}

/// Each sequence's sentence embedding from its real token vectors alone: `rows` holds the
/// sequences back to back, sequence `b` as `lengths[b]` rows of `dim` values; the mean of its
/// rows, scaled to unit length (a sequence of no rows gives zeros). The sequences run in
/// parallel. Equal to [`mean_pool`] over the padded layout, then [`l2_normalize`].
pub fn mean_pool_normalize_sequences(rows: &[f32], lengths: &[usize], dim: usize) -> Vec<f32> {
    let real: usize = lengths.iter().sum();
    assert!(
        dim > 0 && rows.len() == real * dim,
        "{} values are not {real} rows of {dim}",
        rows.len()
    );
    let starts = sequence_starts(lengths);
    let mut out = vec![0f32; lengths.len() * dim];
    out.par_chunks_mut(dim)
        .zip(starts.par_iter().zip(lengths))
        .for_each(|(target, (&start, &length))| {
            for vector in rows[start * dim..(start + length) * dim].chunks_exact(dim) {
                target.iter_mut().zip(vector).for_each(|(o, v)| *o += v);
            }
            let count = length.max(1) as f32;
            target.iter_mut().for_each(|o| *o /= count);
            l2_normalize(target, dim);
        });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_only_masked_tokens_then_normalizes() {
        // 1 row, 3 tokens, dim 2; the last token is padding.
        let hidden = [1.0, 0.0, 3.0, 4.0, 100.0, 100.0];
        let mut pooled = mean_pool(&hidden, &[1, 1, 0], 1, 3, 2);
        assert_eq!(pooled, [2.0, 2.0]);
        l2_normalize(&mut pooled, 2);
        assert!((pooled[0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        let mut zeros = [0.0, 0.0];
        l2_normalize(&mut zeros, 2);
        assert_eq!(zeros, [0.0, 0.0]);
    }

    #[test]
    fn pooling_the_real_rows_equals_pooling_the_padded_layout() {
        let (dim, tokens) = (5, 6);
        let lengths = [6, 1, 0, 4];
        let padded: Vec<f32> = (0..lengths.len() * tokens * dim)
            .map(|i| ((i * 7919 + 13) % 101) as f32 / 25.0 - 2.0)
            .collect();
        let mask: Vec<u32> = lengths
            .iter()
            .flat_map(|&length| (0..tokens).map(move |t| (t < length) as u32))
            .collect();
        let mut want = mean_pool(&padded, &mask, lengths.len(), tokens, dim);
        l2_normalize(&mut want, dim);
        let real: Vec<f32> = lengths
            .iter()
            .enumerate()
            .flat_map(|(b, &length)| padded[b * tokens * dim..][..length * dim].to_vec())
            .collect();
        let got = mean_pool_normalize_sequences(&real, &lengths, dim);
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-6, "value {i}: {g} vs {w}");
        }
        assert!(
            got[2 * dim..3 * dim].iter().all(|&v| v == 0.0),
            "a sequence of no rows pools to zeros"
        );
    }
}
