//! The inner product every CPU kernel scores with.

/// `a · b` (same length): with AVX2 and FMA (checked once, at run time), four 8-lane
/// accumulators of fused multiply-adds; otherwise eight lanes of products and sums (a single
/// float accumulator does not vectorize). Either is far from the loop-carried latency of
/// one accumulator: one add's latency every eight values, where the FMA form keeps four
/// chains in flight.
#[inline(always)]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the features the function is compiled for (checked above).
        return unsafe { dot_avx2_fma(a, b) };
    }
    dot_portable(a, b)
}

#[inline(always)]
fn dot_portable(a: &[f32], b: &[f32]) -> f32 {
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

/// Four independent 8-lane FMA chains over 32 values a step, then 8 at a time, then the
/// last few one by one; the lanes summed at the end.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2_fma(a: &[f32], b: &[f32]) -> f32 {
    use std::arch::x86_64::*;
    let len = a.len().min(b.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let (mut s0, mut s1, mut s2, mut s3) = (
        _mm256_setzero_ps(),
        _mm256_setzero_ps(),
        _mm256_setzero_ps(),
        _mm256_setzero_ps(),
    );
    // SAFETY (the loads): each reads 8 values from `at` with `at + 8 <= len` (the loops'
    // bounds), inside both slices.
    let mut at = 0;
    while at + 32 <= len {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(at)), _mm256_loadu_ps(pb.add(at)), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(at + 8)), _mm256_loadu_ps(pb.add(at + 8)), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(at + 16)), _mm256_loadu_ps(pb.add(at + 16)), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(at + 24)), _mm256_loadu_ps(pb.add(at + 24)), s3);
        at += 32;
    }
    while at + 8 <= len {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(at)), _mm256_loadu_ps(pb.add(at)), s0);
        at += 8;
    }
    let sum = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    let half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
    let quarter = _mm_add_ps(half, _mm_movehl_ps(half, half));
    let mut total = _mm_cvtss_f32(_mm_add_ss(quarter, _mm_shuffle_ps(quarter, quarter, 1)));
    for (x, y) in a[at..len].iter().zip(&b[at..len]) {
        total += x * y;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_textbook_sum_at_every_length() {
        for len in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 384, 385] {
            let a: Vec<f32> = (0..len).map(|i| ((i * 7 % 13) as f32 - 6.0) / 5.0).collect();
            let b: Vec<f32> = (0..len).map(|i| ((i * 5 % 11) as f32 - 5.0) / 3.0).collect();
            let expected: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
            for (form, value) in [("dispatched", dot(&a, &b)), ("portable", dot_portable(&a, &b))] {
                assert!(
                    (f64::from(value) - expected).abs() < 1e-4,
                    "{form}, len {len}: {value} vs {expected}"
                );
            }
        }
    }
}
