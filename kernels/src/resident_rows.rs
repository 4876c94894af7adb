//! [`ResidentRows`]: a matrix kept where the kernels run (on a GPU: uploaded once) and
//! searched a chosen set of rows at a time, each row against the others of its set. The
//! graph build's k-means lists are such sets: on a GPU each list's rows are gathered there
//! (`gather_rows` in kernels/cuda/gather.cu) instead of on the host and uploaded twice, as
//! base and as queries.

use crate::error::{rows_of, KernelError, Result};
use crate::{topk, Scored};

/// Rows kept where the kernels run, searched among chosen rows.
pub trait ResidentRows: Send + Sync {
    /// For each of `rows` (row numbers of the matrix, each below its row count), the top-`k`
    /// of `rows` by inner product with it, best first (higher score, then the lower
    /// position), as positions in `rows`: the exact top-k of the gathered rows against
    /// themselves.
    fn top_k_among(&self, rows: &[u32], k: usize) -> Result<Vec<Vec<Scored>>>;
}

/// Rows `rows` of `data` (`dim` columns, each row below its row count), in the order given,
/// as one matrix.
pub fn gather_rows(data: &[f32], dim: usize, rows: impl IntoIterator<Item = usize>) -> Vec<f32> {
    let rows = rows.into_iter();
    let mut gathered = Vec::with_capacity(rows.size_hint().0 * dim);
    for row in rows {
        gathered.extend_from_slice(&data[row * dim..(row + 1) * dim]);
    }
    gathered
}

/// [`gather_rows`] that first checks every row is in `data`: the CPU twin of `gather_rows`
/// in kernels/cuda/gather.cu.
pub fn gather_listed_rows(data: &[f32], dim: usize, rows: &[u32]) -> Result<Vec<f32>> {
    let count = rows_of(data, dim, "matrix")?;
    if let Some(&row) = rows.iter().find(|&&row| row as usize >= count) {
        return Err(KernelError::Input(format!(
            "row {row} gathered from a matrix of {count} rows"
        )));
    }
    Ok(gather_rows(data, dim, rows.iter().map(|&row| row as usize)))
}

/// The CPU twin: the rows stay where they are and are gathered for each search.
pub(crate) struct CpuRows<'a> {
    pub(crate) data: &'a [f32],
    pub(crate) dim: usize,
}

impl ResidentRows for CpuRows<'_> {
    fn top_k_among(&self, rows: &[u32], k: usize) -> Result<Vec<Vec<Scored>>> {
        let gathered = gather_listed_rows(self.data, self.dim, rows)?;
        Ok(topk::exact_top_k(&gathered, &gathered, self.dim, k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_rows_are_searched_among_themselves() {
        // Five rows of 2 columns; the list takes rows 4, 0, 2 (in that order).
        let data = [1.0, 0.0, 0.0, 1.0, 0.8, 0.6, -1.0, 0.0, 0.6, 0.8];
        let resident = CpuRows { data: &data, dim: 2 };
        let hits = resident.top_k_among(&[4, 0, 2], 2).unwrap();
        let positions: Vec<Vec<u64>> = hits.iter().map(|h| h.iter().map(|s| s.row).collect()).collect();
        // Row 4 (0.6, 0.8) is nearest itself (position 0), then row 2 (position 2).
        assert_eq!(positions, [vec![0, 2], vec![1, 2], vec![2, 0]]);
        assert!((hits[0][1].score - 0.96).abs() < 1e-6);
        let error = resident.top_k_among(&[1, 5], 2).unwrap_err().to_string();
        assert!(error.contains("row 5 gathered from a matrix of 5 rows"), "{error}");
    }
}
