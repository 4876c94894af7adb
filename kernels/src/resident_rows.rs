//! [`ResidentRows`]: a matrix kept where the kernels run (on a GPU: uploaded once) and
//! searched a chosen set of rows at a time, each row against the others of its set. The
//! graph build's k-means lists are such sets: on a GPU a batch of lists is gathered there
//! (`gather_rows` in kernels/cuda/gather.cu) and searched in one round trip (products per
//! list, one sorting launch and one merging launch for all their rows, one copy back), instead
//! of one list at a time.

use crate::error::{rows_of, KernelError, Result};
use crate::{topk, Scored};

/// An empty place in a row's hits (its list has fewer rows than `k`).
pub const NO_POSITION: u32 = u32::MAX;

/// Rows kept where the kernels run, searched among chosen rows.
pub trait ResidentRows: Send + Sync {
    /// For each row of each list of `lists` (row numbers of the matrix, each below its row
    /// count), the top-`k` of its own list by inner product with it, best first (higher
    /// score, then the lower position), as positions in that list: for each list, the exact
    /// top-k of its gathered rows against themselves. The rows' hits follow one another in
    /// the order of the lists and of their rows.
    fn top_k_among(&self, lists: &[&[u32]], k: usize) -> Result<ListHits>;

    /// Every row's `each` nearest `centroids` (at most [`crate::MAX_NEAREST_CENTROIDS`]), as
    /// [`crate::nearest_centroids`] gives them: the lists a row joins, found where the rows
    /// already are.
    fn nearest_centroids(&self, centroids: &[f32], each: usize) -> Result<Vec<u32>>;
}

/// The answers of [`ResidentRows::top_k_among`]: `k` places for each row of each list, the
/// rows one after another, each place a position in the row's own list and its score, best
/// first; [`NO_POSITION`] pads a row with fewer hits.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListHits {
    pub k: usize,
    pub positions: Vec<u32>,
    pub scores: Vec<f32>,
}

impl ListHits {
    pub fn new(k: usize) -> Self {
        Self { k, ..Self::default() }
    }

    /// Rows answered.
    pub fn rows(&self) -> usize {
        self.positions.len() / self.k.max(1)
    }

    /// Row `row`'s hits (its number among all the lists' rows), best first, without the
    /// padding, as (score, position).
    pub fn of(&self, row: usize) -> impl ExactSizeIterator<Item = (f32, u32)> + Clone + '_ {
        let places = row * self.k..(row + 1) * self.k;
        let positions = &self.positions[places.clone()];
        let found = positions.iter().position(|&p| p == NO_POSITION).unwrap_or(self.k);
        self.scores[places]
            .iter()
            .zip(&positions[..found])
            .map(|(&score, &position)| (score, position))
    }

    /// One row's hits (at most `k`, positions below [`NO_POSITION`]) after the others, padded.
    pub fn push(&mut self, hits: &[Scored]) {
        let kept = hits.len().min(self.k);
        self.positions.extend(hits[..kept].iter().map(|hit| hit.row as u32));
        self.scores.extend(hits[..kept].iter().map(|hit| hit.score));
        self.positions.resize(self.positions.len() + self.k - kept, NO_POSITION);
        self.scores.resize(self.scores.len() + self.k - kept, f32::NEG_INFINITY);
    }

    /// `other`'s rows after these (both of the same `k`).
    pub fn append(&mut self, mut other: ListHits) {
        self.positions.append(&mut other.positions);
        self.scores.append(&mut other.scores);
    }
}

/// Each list's top-`k` searched one list at a time by `top_k_of_list` (its hits as
/// positions in it), collected as [`ListHits`].
pub(crate) fn list_by_list(
    lists: &[&[u32]],
    k: usize,
    mut top_k_of_list: impl FnMut(&[u32], usize) -> Result<Vec<Vec<Scored>>>,
) -> Result<ListHits> {
    let mut hits = ListHits::new(k);
    for list in lists {
        if list.len() > NO_POSITION as usize {
            return Err(KernelError::Input(format!(
                "{} rows in one list: at most {NO_POSITION}",
                list.len()
            )));
        }
        for row in top_k_of_list(list, k)? {
            hits.push(&row);
        }
    }
    Ok(hits)
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
    fn top_k_among(&self, lists: &[&[u32]], k: usize) -> Result<ListHits> {
        list_by_list(lists, k, |rows, k| {
            let gathered = gather_listed_rows(self.data, self.dim, rows)?;
            Ok(topk::exact_top_k(&gathered, &gathered, self.dim, k))
        })
    }

    fn nearest_centroids(&self, centroids: &[f32], each: usize) -> Result<Vec<u32>> {
        crate::nearest_centroids(self.data, centroids, self.dim, each)
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
        // Two lists: rows 4, 0, 2 (in that order), then rows 1 and 3.
        let hits = resident.top_k_among(&[&[4, 0, 2], &[1, 3]], 2).unwrap();
        assert_eq!(hits.rows(), 5);
        let positions: Vec<Vec<u32>> = (0..5).map(|row| hits.of(row).map(|(_, p)| p).collect()).collect();
        // Row 4 (0.6, 0.8) is nearest itself (position 0), then row 2 (position 2); row 1
        // (0, 1) is nearest itself, then row 3 (-1, 0) at 0, and the other way round.
        assert_eq!(positions, [vec![0, 2], vec![1, 2], vec![2, 0], vec![0, 1], vec![1, 0]]);
        assert!((hits.of(0).nth(1).unwrap().0 - 0.96).abs() < 1e-6);
        // A list of one row: itself, then padding.
        let one = resident.top_k_among(&[&[3]], 2).unwrap();
        assert_eq!(one.positions, [0, NO_POSITION]);
        assert_eq!(one.of(0).len(), 1);
        let error = resident.top_k_among(&[&[0], &[1, 5]], 2).unwrap_err().to_string();
        assert!(error.contains("row 5 gathered from a matrix of 5 rows"), "{error}");
    }
}
