//! [`HnswGraph`]: the links of an HNSW index built apart from FAISS, level by level, in the
//! shape FAISS's `HNSW` keeps them (2·M slots a row on the base level, M on each level
//! above), with FAISS's level distribution.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// An empty link slot (FAISS's `-1`): a row's links end at the first one.
pub const NO_LINK: i32 = -1;

/// One level above the base: the rows that reach it, ascending, and `m` link slots each.
#[derive(Debug, Clone, PartialEq)]
pub struct UpperLevel {
    pub rows: Vec<u32>,
    pub links: Vec<i32>,
}

/// Every row's links on every level it reaches.
#[derive(Debug, Clone, PartialEq)]
pub struct HnswGraph {
    /// FAISS's `M`: link slots a row has on each upper level; twice that on the base.
    pub m: usize,
    /// Each row's top level (0: the base only).
    pub top_levels: Vec<u8>,
    /// The base level: `2·m` slots a row.
    pub base: Vec<i32>,
    /// Levels 1, 2, … in order.
    pub upper: Vec<UpperLevel>,
    /// Where searches start: the lowest row on the top level.
    pub entry_point: i32,
}

impl HnswGraph {
    pub fn rows(&self) -> usize {
        self.top_levels.len()
    }

    /// The highest level any row reaches.
    pub fn max_level(&self) -> usize {
        self.upper.len()
    }

    /// How many rows a walk over the base level's links reaches from `start` (tests check
    /// that it is every row, from any row).
    #[cfg(test)]
    pub fn reached_on_the_base(&self, start: usize) -> usize {
        let degree = 2 * self.m;
        let mut seen = vec![false; self.rows()];
        let mut stack = vec![start];
        seen[start] = true;
        while let Some(row) = stack.pop() {
            for &link in self.base[row * degree..(row + 1) * degree]
                .iter()
                .take_while(|&&link| link != NO_LINK)
            {
                if !std::mem::replace(&mut seen[link as usize], true) {
                    stack.push(link as usize);
                }
            }
        }
        seen.iter().filter(|&&s| s).count()
    }
}

/// FAISS's `HNSW::set_default_probas(M, 1 / ln M)`: the chance of each top level (those
/// above 1e-9), in FAISS's arithmetic (its `levelMult` and each chance are `float`s), so
/// that a file quarry writes holds the very values FAISS's own holds.
pub fn level_probabilities(m: usize) -> Vec<f64> {
    let level_mult = (1.0 / (m.max(2) as f64).ln()) as f32;
    let first = 1.0 - f64::from(-1.0f32 / level_mult).exp();
    (0..)
        .map(|level: i32| (f64::from(-(level as f32) / level_mult).exp() * first) as f32)
        .take_while(|&p| p >= 1e-9)
        .map(f64::from)
        .collect()
}

/// Each of `rows` rows' top level, drawn with FAISS's probabilities from `seed`.
pub fn draw_top_levels(rows: usize, m: usize, seed: u64) -> Vec<u8> {
    let probabilities = level_probabilities(m);
    let mut rng = StdRng::seed_from_u64(seed);
    (0..rows)
        .map(|_| {
            let mut f: f64 = rng.random();
            for (level, &p) in probabilities.iter().enumerate() {
                if f < p {
                    return level as u8;
                }
                f -= p;
            }
            (probabilities.len() - 1) as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_faiss_distribution() {
        let p = level_probabilities(32);
        assert!((p[0] - (1.0 - 1.0 / 32.0)).abs() < 1e-7, "{p:?}");
        assert!((p[1] / p[0] - 1.0 / 32.0).abs() < 1e-7);
        let levels = draw_top_levels(200_000, 32, 1);
        let above = levels.iter().filter(|&&l| l >= 1).count() as f64 / 200_000.0;
        assert!((above - 1.0 / 32.0).abs() < 0.003, "{above}");
        assert_eq!(levels, draw_top_levels(200_000, 32, 1), "seeded");
    }
}
