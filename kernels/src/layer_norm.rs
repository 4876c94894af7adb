//! The end of each BERT sub-layer in one pass per row, for the CPU: a dense layer's product
//! plus its bias plus the residual input, then layer normalization. It is the twin of
//! kernels/cuda/encoder.cu `bias_residual_layer_norm`, and on the CPU replaces the bias add,
//! the residual add and the layer norm, three passes and two allocations.

use rayon::prelude::*;

use crate::softmax::{reduce_in_lanes, reduce_in_lanes_by};

/// Rows per parallel task (a row is a few hundred values).
const ROWS_PER_TASK: usize = 64;

/// The per-column parameters of [`bias_residual_layer_norm_rows`], each one row wide.
#[derive(Clone, Copy)]
pub struct NormParameters<'a> {
    /// The dense layer's bias.
    pub bias: &'a [f32],
    /// The layer norm's scale (gamma).
    pub weight: &'a [f32],
    /// The layer norm's shift (beta).
    pub shift: &'a [f32],
    pub epsilon: f32,
}

/// Every row `x` of `values` (rows as wide as the parameters) becomes, in place,
/// `(v - mean(v)) / sqrt(var(v) + epsilon) * weight + shift` with `v = x + bias + residual`
/// (the residual row at the same index), the variance the biased one, as BERT's LayerNorm.
pub fn bias_residual_layer_norm_rows(values: &mut [f32], residual: &[f32], parameters: NormParameters) {
    let columns = parameters.bias.len();
    assert!(
        columns > 0 && parameters.weight.len() == columns && parameters.shift.len() == columns,
        "layer norm parameters of unequal widths"
    );
    assert!(
        values.len().is_multiple_of(columns) && residual.len() == values.len(),
        "{} values and {} residual values are not rows of {columns}",
        values.len(),
        residual.len()
    );
    values
        .par_chunks_mut(columns * ROWS_PER_TASK)
        .zip(residual.par_chunks(columns * ROWS_PER_TASK))
        .for_each(|(rows, residual)| {
            for (row, residual) in rows.chunks_exact_mut(columns).zip(residual.chunks_exact(columns)) {
                normalize_row(row, residual, parameters);
            }
        });
}

fn normalize_row(row: &mut [f32], residual: &[f32], parameters: NormParameters) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the features the function is compiled for (checked above).
        return unsafe { normalize_row_avx2_fma(row, residual, parameters) };
    }
    normalize_row_portable(row, residual, parameters);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn normalize_row_avx2_fma(row: &mut [f32], residual: &[f32], parameters: NormParameters) {
    normalize_row_portable(row, residual, parameters);
}

#[inline(always)]
fn normalize_row_portable(row: &mut [f32], residual: &[f32], parameters: NormParameters) {
    let count = row.len() as f32;
    row.iter_mut()
        .zip(residual.iter().zip(parameters.bias))
        .for_each(|(x, (r, b))| *x += b + r);
    let mean = reduce_in_lanes(row, 0.0, |sum, v| sum + v) / count;
    row.iter_mut().for_each(|x| *x -= mean);
    let variance = reduce_in_lanes_by(row, 0.0, |sum, v| sum + v * v, |a, b| a + b) / count;
    let inverse = 1.0 / (variance + parameters.epsilon).sqrt();
    row.iter_mut()
        .zip(parameters.weight.iter().zip(parameters.shift))
        .for_each(|(x, (w, s))| *x = *x * inverse * w + s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_f64_layer_norm_of_the_sum() {
        // Odd widths, more rows than one task, an offset mean that a one-pass variance would
        // lose precision on.
        for (rows, columns) in [(1, 1), (3, 7), (2 * ROWS_PER_TASK + 5, 384)] {
            let draw = |seed: usize, i: usize| ((i * 7919 + seed * 104_729) % 1013) as f32 / 97.0 - 4.0;
            let x: Vec<f32> = (0..rows * columns).map(|i| draw(1, i) + 30.0).collect();
            let residual: Vec<f32> = (0..rows * columns).map(|i| draw(2, i)).collect();
            let (bias, weight, shift): (Vec<f32>, Vec<f32>, Vec<f32>) = (0..columns)
                .map(|c| (draw(3, c), draw(4, c), draw(5, c)))
                .fold((vec![], vec![], vec![]), |(mut b, mut w, mut s), (x, y, z)| {
                    b.push(x);
                    w.push(y);
                    s.push(z);
                    (b, w, s)
                });
            let epsilon = 1e-12;
            let mut got = x.clone();
            bias_residual_layer_norm_rows(
                &mut got,
                &residual,
                NormParameters {
                    bias: &bias,
                    weight: &weight,
                    shift: &shift,
                    epsilon,
                },
            );
            for row in 0..rows {
                let v: Vec<f64> = (0..columns)
                    .map(|c| x[row * columns + c] as f64 + bias[c] as f64 + residual[row * columns + c] as f64)
                    .collect();
                let mean = v.iter().sum::<f64>() / columns as f64;
                let variance = v.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / columns as f64;
                for c in 0..columns {
                    let want = (v[c] - mean) / (variance + epsilon as f64).sqrt() * weight[c] as f64 + shift[c] as f64;
                    let value = got[row * columns + c] as f64;
                    assert!(
                        (value - want).abs() <= 1e-4 * (1.0 + want.abs()),
                        "{rows}x{columns} row {row} column {c}: {value} vs {want}"
                    );
                }
            }
        }
    }
}
