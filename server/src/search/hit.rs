//! A lane's answer for one row: its number among the searched rows and its raw score (a
//! cosine, a BM25 score, or a fused score).

/// One row a lane returned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub row: usize,
    pub score: f32,
}

impl Hit {
    pub fn new(row: usize, score: f32) -> Self {
        Self { row, score }
    }
}

/// Sorts `hits` best first (ties: the lower row first) and keeps the first `k`.
pub fn best_first(hits: &mut Vec<Hit>, k: usize) {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.row.cmp(&b.row)));
    hits.truncate(k);
}
