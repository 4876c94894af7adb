//! Each row's few nearest centroids (by inner product), as the graph build puts every row
//! in its nearest k-means lists: blocks of rows scored against every centroid by one matrix
//! product each, in parallel; the CPU twin of `nearest_centroids` in kernels/cuda/kmeans.cu.

use rayon::prelude::*;

use crate::error::{rows_of, KernelError, Result};
use crate::gemm_scores::block_scores;
use crate::kmeans::assign_block_rows;

/// The most centroids a row may be given (NEAREST_MAX in kmeans.cu: a GPU thread keeps
/// that many in registers).
pub const MAX_NEAREST_CENTROIDS: usize = 8;
/// An empty place in a row's centroids (fewer centroids than asked for).
pub const NO_CENTROID: u32 = u32::MAX;

/// For every row of `data` (row-major, `dim` columns), its `each` nearest `centroids`,
/// best first (higher inner product, then the lower centroid), as `each` centroid numbers a
/// row, row after row; [`NO_CENTROID`] pads a row when there are fewer centroids (a score
/// that is NaN is never taken).
pub fn nearest_centroids(data: &[f32], centroids: &[f32], dim: usize, each: usize) -> Result<Vec<u32>> {
    check_nearest(data, centroids, dim, each)?;
    let k = centroids.len() / dim.max(1);
    if each == 0 {
        return Ok(Vec::new());
    }
    let block_rows = assign_block_rows(k);
    let mut out = vec![NO_CENTROID; data.len() / dim.max(1) * each];
    if k == 0 || dim == 0 {
        return Ok(out);
    }
    data.par_chunks(block_rows * dim)
        .zip(out.par_chunks_mut(block_rows * each))
        .for_each(|(rows, places)| {
            let mut scores = Vec::new();
            block_scores(rows, centroids, dim, &mut scores);
            for (row_scores, row_places) in scores.chunks(k).zip(places.chunks_mut(each)) {
                best_of_row(row_scores, row_places);
            }
        });
    Ok(out)
}

/// The checks the GPU twin makes too: whole rows, and no more than it keeps a row.
pub fn check_nearest(data: &[f32], centroids: &[f32], dim: usize, each: usize) -> Result<()> {
    rows_of(data, dim, "rows")?;
    rows_of(centroids, dim, "centroids")?;
    if each > MAX_NEAREST_CENTROIDS {
        return Err(KernelError::Input(format!(
            "{each} nearest centroids a row asked for: at most {MAX_NEAREST_CENTROIDS}"
        )));
    }
    Ok(())
}

/// `places.len()` best centroids of one row's scores, best first, kept as the kernel keeps
/// them: an empty place is (-inf, [`NO_CENTROID`]), and a centroid goes ahead of a kept one
/// it is [`better`] than.
fn best_of_row(scores: &[f32], places: &mut [u32]) {
    let each = places.len();
    let mut kept = [(f32::NEG_INFINITY, NO_CENTROID); MAX_NEAREST_CENTROIDS];
    for (centroid, &score) in scores.iter().enumerate() {
        let candidate = (score, centroid as u32);
        if !better(candidate, kept[each - 1]) {
            continue;
        }
        let mut at = each - 1;
        while at > 0 && better(candidate, kept[at - 1]) {
            kept[at] = kept[at - 1];
            at -= 1;
        }
        kept[at] = candidate;
    }
    for (place, (_, centroid)) in places.iter_mut().zip(kept) {
        *place = centroid;
    }
}

/// A higher score, or the same score and a lower centroid (a NaN score is never better).
fn better((score, centroid): (f32, u32), (other_score, other): (f32, u32)) -> bool {
    score > other_score || (score == other_score && centroid < other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_lcg::Lcg;

    /// Every row's centroids by a full sort: higher score first, then the lower centroid.
    fn sorted_nearest(data: &[f32], centroids: &[f32], dim: usize, each: usize) -> Vec<u32> {
        let mut out = Vec::new();
        for row in data.chunks(dim) {
            let mut scored: Vec<(f32, u32)> = centroids
                .chunks(dim)
                .enumerate()
                .map(|(c, centroid)| (crate::dot(row, centroid), c as u32))
                .filter(|(score, _)| !score.is_nan())
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            scored.resize(each.max(scored.len()), (f32::NAN, NO_CENTROID));
            out.extend(scored[..each].iter().map(|&(_, c)| c));
        }
        out
    }

    fn lcg_rows(rows: usize, dim: usize, lcg: &mut Lcg) -> Vec<f32> {
        (0..rows * dim)
            // Few distinct values, so that scores tie often.
            .map(|_| ((lcg.step() >> 60) as f32 - 8.0) / 4.0)
            .collect()
    }

    #[test]
    fn keeps_what_a_sort_keeps_ties_to_the_lower_centroid() {
        let mut lcg = Lcg(7);
        for (rows, k, dim, each) in [
            (1, 1, 3, 1),
            (300, 45, 4, 2),
            (513, 7, 2, 3),
            (40, 9, 5, 8),
            (20, 600, 3, 4),
        ] {
            let data = lcg_rows(rows, dim, &mut lcg);
            let centroids = lcg_rows(k, dim, &mut lcg);
            let found = nearest_centroids(&data, &centroids, dim, each).unwrap();
            assert_eq!(
                found,
                sorted_nearest(&data, &centroids, dim, each),
                "{rows} rows, {k} centroids, {each} each"
            );
        }
    }

    #[test]
    fn pads_when_centroids_are_fewer_and_refuses_more_than_it_keeps() {
        let data = [1.0, 0.0, 0.0, 1.0];
        let centroids = [0.0, 1.0, 1.0, 0.0];
        let found = nearest_centroids(&data, &centroids, 2, 3).unwrap();
        assert_eq!(found, [1, 0, NO_CENTROID, 0, 1, NO_CENTROID]);
        assert!(nearest_centroids(&data, &centroids, 2, 0).unwrap().is_empty());
        let error = nearest_centroids(&data, &centroids, 2, MAX_NEAREST_CENTROIDS + 1)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("9 nearest centroids a row asked for: at most 8"),
            "{error}"
        );
        let error = nearest_centroids(&data[..3], &centroids, 2, 1).unwrap_err().to_string();
        assert!(error.contains("rows"), "{error}");
    }

    #[test]
    fn a_nan_score_is_never_taken() {
        let data = [f32::NAN, 0.0, 1.0, 0.0];
        let centroids = [1.0, 0.0, 0.5, 0.5];
        let found = nearest_centroids(&data, &centroids, 2, 2).unwrap();
        assert_eq!(found, [NO_CENTROID, NO_CENTROID, 0, 1]);
    }
}
