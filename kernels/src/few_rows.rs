//! `x · Wᵀ` for a few rows of `x` (a query's tokens) against a dense layer's weights, for the
//! CPU. A general matrix product packs the weights into tiles first, which for ten rows costs
//! as much as the product: here each weight row is read once, straight from memory, and
//! multiplied with up to four rows of `x` at a time in registers.

use rayon::prelude::*;

use crate::dot::dot;

/// Weight rows per parallel task.
const OUTPUTS_PER_TASK: usize = 32;
/// Rows of `x` sharing one read of a weight row.
const ROWS_PER_PASS: usize = 4;

/// `out[r * outputs + o]` = row `r` of `x` · row `o` of `weights` (both row-major with
/// `inputs` columns; `outputs` = weight rows): a dense layer's product without its bias.
pub fn few_rows_product(x: &[f32], weights: &[f32], inputs: usize) -> Vec<f32> {
    assert!(
        inputs > 0 && x.len().is_multiple_of(inputs) && weights.len().is_multiple_of(inputs),
        "{} and {} values are not rows of {inputs}",
        x.len(),
        weights.len()
    );
    let (rows, outputs) = (x.len() / inputs, weights.len() / inputs);
    // Each task fills its weight rows' columns of the product, transposed: `[outputs, rows]`.
    let mut transposed = vec![0f32; outputs * rows];
    if rows == 0 {
        return transposed;
    }
    transposed
        .par_chunks_mut(OUTPUTS_PER_TASK * rows)
        .zip(weights.par_chunks(OUTPUTS_PER_TASK * inputs))
        .for_each(|(columns, weights)| {
            for (column, weight_row) in columns.chunks_exact_mut(rows).zip(weights.chunks_exact(inputs)) {
                weight_row_times_rows(weight_row, x, column);
            }
        });
    let mut out = vec![0f32; rows * outputs];
    for (o, column) in transposed.chunks_exact(rows).enumerate() {
        for (r, value) in column.iter().enumerate() {
            out[r * outputs + o] = *value;
        }
    }
    out
}

/// `out[r]` = `weight_row` · row `r` of `x`.
fn weight_row_times_rows(weight_row: &[f32], x: &[f32], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the features the function is compiled for (checked above).
        return unsafe { weight_row_times_rows_avx2_fma(weight_row, x, out) };
    }
    for (value, row) in out.iter_mut().zip(x.chunks_exact(weight_row.len())) {
        *value = dot(weight_row, row);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn weight_row_times_rows_avx2_fma(weight_row: &[f32], x: &[f32], out: &mut [f32]) {
    use std::arch::x86_64::*;
    let inputs = weight_row.len();
    let vectorized = inputs - inputs % 8;
    let sum_lanes = |sum: __m256| {
        let mut lanes = [0f32; 8];
        _mm256_storeu_ps(lanes.as_mut_ptr(), sum);
        lanes.iter().sum::<f32>()
    };
    for (pass, out) in out.chunks_mut(ROWS_PER_PASS).enumerate() {
        // Four rows of x in four named accumulators (an array of them would live on the
        // stack); a last pass of fewer rows repeats its first row and keeps what it needs.
        let first = pass * ROWS_PER_PASS;
        let row = |k: usize| &x[(first + k.min(out.len() - 1)) * inputs..][..inputs];
        let rows = [row(0), row(1), row(2), row(3)];
        let (mut s0, mut s1, mut s2, mut s3) = (
            _mm256_setzero_ps(),
            _mm256_setzero_ps(),
            _mm256_setzero_ps(),
            _mm256_setzero_ps(),
        );
        let mut i = 0;
        while i < vectorized {
            // SAFETY: i + 8 <= inputs, the length of the weight row and of every row.
            let w = _mm256_loadu_ps(weight_row.as_ptr().add(i));
            s0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(rows[0].as_ptr().add(i)), s0);
            s1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(rows[1].as_ptr().add(i)), s1);
            s2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(rows[2].as_ptr().add(i)), s2);
            s3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(rows[3].as_ptr().add(i)), s3);
            i += 8;
        }
        for ((value, sum), row) in out.iter_mut().zip([s0, s1, s2, s3]).zip(rows) {
            let tail: f32 = weight_row[vectorized..]
                .iter()
                .zip(&row[vectorized..])
                .map(|(w, x)| w * x)
                .sum();
            *value = sum_lanes(sum) + tail;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_the_f64_inner_product_at_odd_sizes() {
        let draw = |seed: usize, i: usize| ((i * 7919 + seed * 104_729) % 1013) as f32 / 507.0 - 1.0;
        // Row counts around the four-row passes, weight rows around the tasks, widths with
        // and without a tail past the eight-lane blocks.
        for (rows, outputs, inputs) in [
            (1, 1, 1),
            (3, 5, 7),
            (4, 33, 8),
            (5, 64, 384),
            (10, 70, 385),
            (63, 3, 1536),
        ] {
            let x: Vec<f32> = (0..rows * inputs).map(|i| draw(1, i)).collect();
            let weights: Vec<f32> = (0..outputs * inputs).map(|i| draw(2, i)).collect();
            let out = few_rows_product(&x, &weights, inputs);
            assert_eq!(out.len(), rows * outputs);
            for r in 0..rows {
                for o in 0..outputs {
                    let want: f64 = (0..inputs)
                        .map(|i| x[r * inputs + i] as f64 * weights[o * inputs + i] as f64)
                        .sum();
                    let got = out[r * outputs + o] as f64;
                    assert!(
                        (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                        "{rows}x{outputs}x{inputs} at ({r}, {o}): {got} vs {want}"
                    );
                }
            }
        }
        assert!(few_rows_product(&[], &[1.0, 2.0], 2).is_empty());
    }
}
