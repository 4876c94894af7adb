//! Mean pooling over the attention mask and L2 normalization: the CPU twins of the fused
//! CUDA step that turns token vectors into sentence embeddings.

/// Mean of the token vectors whose mask is 1, per row: `hidden` is `[rows, tokens, dim]`,
/// `mask` is `[rows, tokens]`.
pub fn mean_pool(hidden: &[f32], mask: &[u32], rows: usize, tokens: usize, dim: usize) -> Vec<f32> {
    let mut out = vec![0f32; rows * dim];
    for r in 0..rows {
        let count = mask[r * tokens..(r + 1) * tokens].iter().filter(|m| **m != 0).count().max(1) as f32;
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
}
