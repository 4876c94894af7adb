//! Rows picked out of a row-major matrix of vectors: gathered by number, or a seeded sample
//! (training sets, recall queries, the graph build's k-means sample).

use std::borrow::Cow;

use rand::rngs::StdRng;
use rand::seq::index::sample;
use rand::SeedableRng;

// Gathered by number: the kernels' own CPU gather, the one their device twins check against.
pub use quarry_kernels::gather_rows;

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
