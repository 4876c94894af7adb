//! The inner product every CPU kernel scores with.

/// `a · b` (same length) in eight lanes: a single float accumulator does not vectorize.
#[inline(always)]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (blocks_a, blocks_b) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = blocks_a
        .remainder()
        .iter()
        .zip(blocks_b.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in blocks_a.zip(blocks_b) {
        lanes
            .iter_mut()
            .zip(x.iter().zip(y))
            .for_each(|(lane, (x, y))| *lane += x * y);
    }
    lanes.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_textbook_sum_at_every_length() {
        for len in [0, 1, 7, 8, 9, 15, 16, 17, 384, 385] {
            let a: Vec<f32> = (0..len).map(|i| ((i * 7 % 13) as f32 - 6.0) / 5.0).collect();
            let b: Vec<f32> = (0..len).map(|i| ((i * 5 % 11) as f32 - 5.0) / 3.0).collect();
            let expected: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
            assert!(
                (f64::from(dot(&a, &b)) - expected).abs() < 1e-4,
                "len {len}: {} vs {expected}",
                dot(&a, &b)
            );
        }
    }
}
