//! Rows picked out of a row-major matrix of vectors: gathered by number, or a seeded sample
//! (training sets, recall queries, the graph build's k-means sample).

use std::borrow::Cow;

use rand::rngs::StdRng;
use rand::seq::index::sample;
use rand::SeedableRng;

/// Rows `rows` of `data` (`dim` columns), in the order given, as one matrix.
pub fn gather_rows(data: &[f32], dim: usize, rows: impl IntoIterator<Item = usize>) -> Vec<f32> {
    let rows = rows.into_iter();
    let mut gathered = Vec::with_capacity(rows.size_hint().0 * dim);
    for row in rows {
        gathered.extend_from_slice(&data[row * dim..(row + 1) * dim]);
    }
    gathered
}

/// `count` rows of `data` drawn with `seed`, in row order; every row (no copy) when the
/// sample would take them all.
pub fn seeded_rows(data: &[f32], dim: usize, count: usize, seed: u64) -> Cow<'_, [f32]> {
    let rows = data.len() / dim.max(1);
    if count >= rows {
        return Cow::Borrowed(data);
    }
    let mut picked = sample(&mut StdRng::seed_from_u64(seed), rows, count).into_vec();
    picked.sort_unstable();
    Cow::Owned(gather_rows(data, dim, picked))
}

/// A seeded sample of up to `count` rows of `base`, as queries.
pub fn sample_rows(base: &[f32], dim: usize, count: usize) -> Vec<f32> {
    seeded_rows(base, dim, count, 0x5eed_2ec4).into_owned()
}
