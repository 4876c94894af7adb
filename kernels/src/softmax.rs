//! Attention softmax for the CPU: each row over its first `valid` columns (the sequence's
//! real tokens), the padding columns set to 0, with an exp the compiler turns into SIMD code.
//! One pass per row replaces adding a mask, then candle's softmax with a scalar exp per
//! element (together about a tenth of CPU embedding once the GELU was vectorized).

use rayon::prelude::*;

/// Rows per parallel task (a row is a few hundred values).
const ROWS_PER_TASK: usize = 256;

/// Softmax of every `columns`-wide row of `values`, in place, over the row's first
/// `valid(row)` columns (at least 1, at most `columns`); the other columns become 0.
pub fn masked_softmax_rows(values: &mut [f32], columns: usize, valid: impl Fn(usize) -> usize + Sync) {
    assert!(
        columns > 0 && values.len().is_multiple_of(columns),
        "{} values are not rows of {columns}",
        values.len()
    );
    values
        .par_chunks_mut(columns * ROWS_PER_TASK)
        .enumerate()
        .for_each(|(task, rows)| {
            for (i, row) in rows.chunks_exact_mut(columns).enumerate() {
                let valid = valid(task * ROWS_PER_TASK + i).clamp(1, columns);
                softmax_row(row, valid);
            }
        });
}

/// Softmax of `row` over its first `valid` values, in place; the rest become 0.
pub(crate) fn softmax_row(row: &mut [f32], valid: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has the features the function is compiled for (checked above).
        return unsafe { softmax_row_avx512(row, valid) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the features the function is compiled for (checked above).
        return unsafe { softmax_row_avx2_fma(row, valid) };
    }
    softmax_row_portable(row, valid);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn softmax_row_avx2_fma(row: &mut [f32], valid: usize) {
    softmax_row_portable(row, valid);
}

/// The same loops compiled for 16-lane vectors.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn softmax_row_avx512(row: &mut [f32], valid: usize) {
    softmax_row_portable(row, valid);
}

#[inline(always)]
fn softmax_row_portable(row: &mut [f32], valid: usize) {
    let (kept, padding) = row.split_at_mut(valid);
    let max = reduce_in_lanes(kept, f32::NEG_INFINITY, |m, v| if v > m { v } else { m });
    kept.iter_mut().for_each(|v| *v = exp(*v - max));
    let scale = 1.0 / reduce_in_lanes(kept, 0.0, |sum, v| sum + v);
    kept.iter_mut().for_each(|v| *v *= scale);
    padding.fill(0.0);
}

/// Folds `values` in eight lanes, then the lanes: a single float accumulator does not
/// vectorize (the compiler may not reorder float operations). `fold` must also combine two
/// partial results (a sum or a maximum; see [`reduce_in_lanes_by`] otherwise).
#[inline(always)]
pub(crate) fn reduce_in_lanes(values: &[f32], start: f32, fold: impl Fn(f32, f32) -> f32) -> f32 {
    reduce_in_lanes_by(values, start, &fold, &fold)
}

/// [`reduce_in_lanes`] with the lanes' partial results combined by `combine` (a sum of
/// squares folds `sum + v * v` but combines `a + b`).
#[inline(always)]
pub(crate) fn reduce_in_lanes_by(
    values: &[f32],
    start: f32,
    fold: impl Fn(f32, f32) -> f32,
    combine: impl Fn(f32, f32) -> f32,
) -> f32 {
    let mut lanes = [start; 8];
    let mut blocks = values.chunks_exact(8);
    for block in &mut blocks {
        lanes
            .iter_mut()
            .zip(block)
            .for_each(|(lane, &v)| *lane = fold(*lane, v));
    }
    let partial = blocks.remainder().iter().fold(start, |acc, &v| fold(acc, v));
    lanes.into_iter().fold(partial, combine)
}

/// e^x in single precision (Cephes' expf: x = n ln 2 + r, a degree-6 polynomial in r, then
/// 2^n put into the exponent bits), with no branches, so loops over it vectorize. Relative
/// error under 3e-7 (tested); below e^-87.3 it returns about 1.2e-38, not 0, and above e^88
/// it returns e^88.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // Adding 1.5 * 2^23 rounds to an integer n, which then sits in the low mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.3, 88.0);
    let shifted = x * std::f32::consts::LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = x - n * 0.693_359_4 - n * -2.121_944_4e-4;
    let p = 1.987_569_1e-4;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 0.166_666_65;
    let p = p * r + 0.5;
    let e_r = p * r * r + r + 1.0;
    // 2^n from n's bits (no float-to-int conversion, which would not vectorize).
    let biased_n = shifted.to_bits().wrapping_sub(ROUND.to_bits()).wrapping_add(127);
    e_r * f32::from_bits(biased_n << 23)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_within_3e_7_relative_of_the_f64_exp() {
        let mut worst = 0f64;
        for i in -87_000..=88_000 {
            let x = i as f32 / 1000.0;
            let want = (x as f64).exp();
            worst = worst.max(((exp(x) as f64) - want).abs() / want);
        }
        assert!(worst < 3e-7, "worst relative error {worst}");
        assert_eq!(exp(0.0), 1.0);
        assert!(exp(-1000.0) < 1.3e-38 && exp(f32::NEG_INFINITY) < 1.3e-38);
    }

    fn softmax_f64(row: &[f32]) -> Vec<f64> {
        let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
        let e: Vec<f64> = row.iter().map(|&v| (v as f64 - max).exp()).collect();
        let sum: f64 = e.iter().sum();
        e.iter().map(|v| v / sum).collect()
    }

    #[test]
    fn rows_match_the_f64_softmax_over_their_valid_columns() {
        // Odd widths and valid counts, more rows than one task, large and negative scores.
        let columns = 37;
        let rows = 3 * ROWS_PER_TASK + 7;
        let valid = |row: usize| 1 + row * 7 % columns;
        let mut values: Vec<f32> = (0..rows * columns)
            .map(|i| ((i * 7919) % 1000) as f32 / 37.0 - 13.0)
            .collect();
        let original = values.clone();
        masked_softmax_rows(&mut values, columns, valid);
        for row in 0..rows {
            let (got, input) = (
                &values[row * columns..(row + 1) * columns],
                &original[row * columns..(row + 1) * columns],
            );
            let want = softmax_f64(&input[..valid(row)]);
            for (column, value) in got.iter().enumerate() {
                let expected = want.get(column).copied().unwrap_or(0.0);
                assert!(
                    (*value as f64 - expected).abs() <= 1e-6 * expected + 1e-9,
                    "row {row} column {column}: {value} vs {expected}"
                );
            }
        }
    }
}
