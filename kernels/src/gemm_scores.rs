//! Inner products of many rows against many others through a blocked matrix product (the
//! `gemm` crate, which candle's CPU matmuls use): the CPU twins' scoring where many queries,
//! or many rows to assign, meet the same base. A dot product per pair reads every base row
//! once per query from memory; the product reads a block of the base once per block of
//! queries, from cache, with the arithmetic kept in registers.

/// `out[i * n + j]` = row `i` of `a` · row `j` of `b`, both row-major with `dim` columns
/// (`n` rows in `b`), computed on the calling thread: callers run blocks in parallel. The
/// same block shapes give the same bits whatever the thread count.
pub fn block_scores(a: &[f32], b: &[f32], dim: usize, out: &mut Vec<f32>) {
    let (m, n) = (a.len() / dim.max(1), b.len() / dim.max(1));
    out.clear();
    out.resize(m * n, 0.0);
    if m == 0 || n == 0 || dim == 0 {
        return;
    }
    // SAFETY: `out` holds m × n floats (row stride n, column stride 1); `a` is m × dim (row
    // stride dim); `b` is n × dim, read as its transpose (dim × n: row stride 1, column
    // stride dim). Every index stays inside its slice, and `out` is only written (`read_dst`
    // false: dst = 1.0 × a × bᵀ).
    unsafe {
        gemm::gemm(
            m,
            n,
            dim,
            out.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            1,
            dim as isize,
            b.as_ptr(),
            dim as isize,
            1,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dot::dot;

    #[test]
    fn every_pair_is_the_dot_product_at_odd_sizes() {
        let mut lcg = crate::test_lcg::Lcg(0x1234_5678);
        let mut value = || lcg.centred();
        for (m, n, dim) in [(1, 1, 1), (3, 7, 5), (17, 33, 384), (64, 257, 31)] {
            let a: Vec<f32> = (0..m * dim).map(|_| value()).collect();
            let b: Vec<f32> = (0..n * dim).map(|_| value()).collect();
            let mut out = vec![f32::NAN; 3];
            block_scores(&a, &b, dim, &mut out);
            assert_eq!(out.len(), m * n);
            for i in 0..m {
                for j in 0..n {
                    let expected = dot(&a[i * dim..(i + 1) * dim], &b[j * dim..(j + 1) * dim]);
                    assert!(
                        (out[i * n + j] - expected).abs() <= 1e-5 * (1.0 + expected.abs()),
                        "{m}×{n}×{dim} at ({i}, {j}): {} vs {expected}",
                        out[i * n + j]
                    );
                }
            }
        }
        let mut out = Vec::new();
        block_scores(&[], &[1.0, 2.0], 2, &mut out);
        assert!(out.is_empty());
    }
}
