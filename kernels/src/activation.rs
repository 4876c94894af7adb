//! The exact (erf) GELU of BERT's feed-forward layers, for the CPU: a rational erf that the
//! compiler turns into SIMD code, where a libm `erff` per element is a branchy scalar call
//! (the profile of CPU embedding had it at about 15% of the model's time).

use rayon::prelude::*;

/// Elements per parallel task: large enough that splitting costs nothing next to the work.
const ELEMENTS_PER_TASK: usize = 1 << 15;

/// `x * (1 + erf(x / sqrt 2)) / 2` for every element, in place, on the rayon pool.
pub fn gelu_erf_in_place(values: &mut [f32]) {
    values.par_chunks_mut(ELEMENTS_PER_TASK).for_each(gelu_erf_chunk);
}

/// Each row `x` of `values` (rows as wide as `bias`) becomes `x + bias`, then its erf GELU
/// when `gelu`, in place, in one pass, rows split across the rayon pool: a dense layer's end on
/// the CPU, the twin of kernels/cuda/encoder.cu `bias_activation` (where candle's broadcast
/// add would allocate a second copy of the product and pass over it on its own).
pub fn bias_activation_in_place(values: &mut [f32], bias: &[f32], gelu: bool) {
    let columns = bias.len();
    assert!(
        columns > 0 && values.len().is_multiple_of(columns),
        "{} values are not rows of {columns}",
        values.len()
    );
    let rows_per_task = (ELEMENTS_PER_TASK / columns).max(1);
    values
        .par_chunks_mut(rows_per_task * columns)
        .for_each(|rows| bias_activation_rows(rows, bias, gelu));
}

fn bias_activation_rows(rows: &mut [f32], bias: &[f32], gelu: bool) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has the features the function is compiled for (checked above).
        return unsafe { bias_activation_avx512(rows, bias, gelu) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the features the function is compiled for (checked above).
        return unsafe { bias_activation_avx2_fma(rows, bias, gelu) };
    }
    bias_activation_portable(rows, bias, gelu);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn bias_activation_avx2_fma(rows: &mut [f32], bias: &[f32], gelu: bool) {
    bias_activation_portable(rows, bias, gelu);
}

/// The same loop compiled for 16-lane vectors.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn bias_activation_avx512(rows: &mut [f32], bias: &[f32], gelu: bool) {
    bias_activation_portable(rows, bias, gelu);
}

#[inline(always)]
fn bias_activation_portable(rows: &mut [f32], bias: &[f32], gelu: bool) {
    for row in rows.chunks_exact_mut(bias.len()) {
        if gelu {
            row.iter_mut()
                .zip(bias)
                .for_each(|(value, b)| *value = gelu_erf_of(*value + b));
        } else {
            row.iter_mut().zip(bias).for_each(|(value, b)| *value += b);
        }
    }
}

fn gelu_erf_chunk(values: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the features the function is compiled for (checked above).
        return unsafe { gelu_erf_avx2_fma(values) };
    }
    gelu_erf_portable(values);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn gelu_erf_avx2_fma(values: &mut [f32]) {
    gelu_erf_portable(values);
}

#[inline(always)]
fn gelu_erf_portable(values: &mut [f32]) {
    values.iter_mut().for_each(|value| *value = gelu_erf_of(*value));
}

/// `x * (1 + erf(x / sqrt 2)) / 2`.
#[inline(always)]
fn gelu_erf_of(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// erf in single precision: a rational minimax approximation on [-4, 4] (the one XLA and
/// Eigen use for f32; beyond 3.9 erf rounds to +-1 in f32 and is returned as such). No
/// branches, only a select, so loops over it vectorize. Absolute error under 5e-7 against an f64 erf (tested); the GELU built
/// on it is within 2e-6 + 4e-7 |y| of the exact one (a few f32 ulps).
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    // Plain multiply-adds: `mul_add` without an FMA unit is a slow library call.
    let p = [
        -2.954_6e-3,
        -7.349_906_3e-4,
        -5.692_506_4e-5,
        -2.101_024e-6,
        2.770_681_4e-8,
        -2.726_142_3e-10,
    ];
    let q = [-7.373_329_3e-3, -1.682_827e-3, -2.133_740_6e-4, -1.456_607_2e-5];
    let numerator = -1.609_603_3e-2 + x2 * (p[0] + x2 * (p[1] + x2 * (p[2] + x2 * (p[3] + x2 * (p[4] + x2 * p[5])))));
    let denominator = -1.426_473_9e-2 + x2 * (q[0] + x2 * (q[1] + x2 * (q[2] + x2 * q[3])));
    let approximation = x * numerator / denominator;
    // Beyond 3.9 erf is +-1 in f32; the approximation's last ulp there would turn into a
    // GELU error growing with |x| (it multiplies 1 + erf by x).
    if x.abs() >= 3.9 {
        1f32.copysign(x)
    } else {
        approximation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gelu_f64(x: f64) -> f64 {
        0.5 * x * (1.0 + libm::erf(x / std::f64::consts::SQRT_2))
    }

    /// Within a few f32 ulps of the result (the libm erff formula is within about one).
    fn close(got: f32, want: f64) -> bool {
        (got as f64 - want).abs() <= 2e-6 + 4e-7 * want.abs()
    }

    /// Every 1/1000 from -10 to 10, plus the extremes.
    fn grid() -> Vec<f32> {
        let mut xs: Vec<f32> = (-10_000..=10_000).map(|i| i as f32 / 1000.0).collect();
        xs.extend([
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            1e-30,
            -1e-30,
            50.0,
            -50.0,
            1e6,
            -1e6,
        ]);
        xs
    }

    #[test]
    fn erf_is_within_5e_7_of_the_f64_erf() {
        let worst = grid()
            .into_iter()
            .map(|x| (erf(x) as f64 - libm::erf(x as f64)).abs())
            .fold(0f64, f64::max);
        assert!(worst < 5e-7, "worst absolute error {worst}");
        assert_eq!(erf(0.0), 0.0);
        assert_eq!((erf(-4.0), erf(4.0), erf(-1e6), erf(1e6)), (-1.0, 1.0, -1.0, 1.0));
    }

    #[test]
    fn bias_and_gelu_in_one_pass_match_the_f64_formula() {
        // Odd width, and more rows than one task holds, so several tasks split the rows.
        let columns = 37;
        let rows = 3 * ELEMENTS_PER_TASK / columns + 5;
        let bias: Vec<f32> = (0..columns).map(|c| c as f32 / 7.0 - 2.5).collect();
        let xs: Vec<f32> = (0..rows * columns).map(|i| (i % 2003) as f32 / 150.0 - 6.5).collect();
        for gelu in [false, true] {
            let mut ys = xs.clone();
            bias_activation_in_place(&mut ys, &bias, gelu);
            for (i, (x, y)) in xs.iter().zip(&ys).enumerate() {
                let v = (*x + bias[i % columns]) as f64;
                let want = if gelu { gelu_f64(v) } else { v };
                assert!(close(*y, want), "gelu {gelu}, element {i}: {y} vs {want}");
            }
        }
    }

    #[test]
    fn gelu_matches_the_f64_formula_on_an_odd_sized_slice() {
        let xs = grid();
        assert_eq!(xs.len() % 8, 1, "not a multiple of any SIMD width");
        let mut ys = xs.clone();
        gelu_erf_in_place(&mut ys);
        for (x, y) in xs.iter().zip(&ys) {
            let want = gelu_f64(*x as f64);
            assert!(close(*y, want), "gelu({x}) = {y}, want {want}");
        }
        // Larger than one task, so several tasks run and each writes its own part.
        let mut big: Vec<f32> = (0..3 * ELEMENTS_PER_TASK + 5)
            .map(|i| (i % 2001) as f32 / 100.0 - 10.0)
            .collect();
        let expected: Vec<f64> = big.iter().map(|x| gelu_f64(*x as f64)).collect();
        gelu_erf_in_place(&mut big);
        for (i, (y, want)) in big.iter().zip(&expected).enumerate() {
            assert!(close(*y, *want), "element {i}: {y} vs {want}");
        }
    }
}
