//! The window of a ranked list a request returns: results below `min_score` cut, at most
//! `max_chunks_per_document` chunks of any one document kept (the best of each), then the
//! first `offset + top_k` of what is left. [`fill_window`] deepens the lanes until the window
//! is full or the lanes have nothing more to give, so a collapsed search still returns top_k
//! results when enough documents match.

use std::collections::HashMap;
use std::hash::Hash;

use crate::error::ServerError;
use crate::search::lanes::{Ranked, ScoredRow};

/// The most candidates a lane is asked for while filling a collapsed window; when that many
/// chunks hold too few documents, the result is underfilled.
pub const MAX_CANDIDATES: usize = 50_000;

/// What a request keeps of a ranked list.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// `offset + top_k`: the rows kept before the offset's are skipped.
    pub len: usize,
    pub min_score: f32,
    pub max_per_document: Option<usize>,
}

/// Ranks with `rank(depth)` at growing depths until the window holds `window.len` rows, the
/// lanes are exhausted, a row scored below `min_score` (deeper rows score lower still) or
/// the depth reached [`MAX_CANDIDATES`]. Without a per-document limit one pass at depth
/// `window.len` is enough. `document_of` names a row's document.
pub fn fill_window<K: Hash + Eq>(
    window: Window,
    mut rank: impl FnMut(usize) -> Result<Ranked, ServerError>,
    document_of: impl Fn(usize) -> K,
) -> Result<Vec<ScoredRow>, ServerError> {
    let deepest = MAX_CANDIDATES.max(window.len);
    let mut depth = match window.max_per_document {
        None => window.len,
        Some(_) => (window.len * 2).min(deepest),
    };
    loop {
        let ranked = rank(depth)?;
        let before_cut = ranked.rows.len();
        let above_min: Vec<ScoredRow> = ranked
            .rows
            .into_iter()
            .take_while(|scored| scored.score >= window.min_score)
            .collect();
        let cut_by_score = above_min.len() < before_cut;
        let kept = collapse(above_min, window, &document_of);
        let at_limit = depth >= deepest;
        if kept.len() >= window.len || ranked.exhausted || cut_by_score || at_limit || window.max_per_document.is_none()
        {
            return Ok(kept);
        }
        depth = (depth * 4).min(deepest);
    }
}

/// The first `window.len` rows of `rows` (best first) with at most `max_per_document` of
/// any one document.
fn collapse<K: Hash + Eq>(rows: Vec<ScoredRow>, window: Window, document_of: &impl Fn(usize) -> K) -> Vec<ScoredRow> {
    let Some(limit) = window.max_per_document else {
        return rows.into_iter().take(window.len).collect();
    };
    let mut taken: HashMap<K, usize> = HashMap::new();
    let mut kept = Vec::with_capacity(window.len.min(rows.len()));
    for row in rows {
        if kept.len() == window.len {
            break;
        }
        let count = taken.entry(document_of(row.row)).or_default();
        if *count < limit {
            *count += 1;
            kept.push(row);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows 0..n scored 1 - row/n, best first, the first `depth` of them (each test says
    /// which document a row is in).
    fn ranked(n: usize, depth: usize) -> Ranked {
        let rows: Vec<ScoredRow> = (0..n.min(depth))
            .map(|r| ScoredRow {
                row: r,
                score: 1.0 - r as f32 / n as f32,
                lanes: serde_json::Map::new(),
            })
            .collect();
        Ranked {
            rows,
            exhausted: depth >= n,
        }
    }

    fn window(len: usize, max_per_document: Option<usize>) -> Window {
        Window {
            len,
            min_score: 0.0,
            max_per_document,
        }
    }

    #[test]
    fn keeps_the_best_of_each_document() {
        // Rows 0..100 in documents r / 10 (ten rows each, best first): one per document takes
        // rows 0, 10, 20, ...; two take 0, 1, 10, 11, ...
        let document = |row: usize| row / 10;
        let one = fill_window(window(5, Some(1)), |d| Ok(ranked(100, d)), document).unwrap();
        assert_eq!(one.iter().map(|r| r.row).collect::<Vec<_>>(), [0, 10, 20, 30, 40]);
        let two = fill_window(window(5, Some(2)), |d| Ok(ranked(100, d)), document).unwrap();
        assert_eq!(two.iter().map(|r| r.row).collect::<Vec<_>>(), [0, 1, 10, 11, 20]);
    }

    #[test]
    fn deepens_until_full_or_exhausted() {
        let mut depths = Vec::new();
        let rows = fill_window(
            window(4, Some(1)),
            |d| {
                depths.push(d);
                Ok(ranked(1000, d))
            },
            |row| row / 100,
        )
        .unwrap();
        assert_eq!(rows.iter().map(|r| r.row).collect::<Vec<_>>(), [0, 100, 200, 300]);
        assert_eq!(
            depths,
            [8, 32, 128, 512],
            "deepened four times over until four documents showed up"
        );
        // Three documents only: the lanes run dry and the window stays short.
        let rows = fill_window(window(4, Some(1)), |d| Ok(ranked(300, d)), |row| row / 100).unwrap();
        assert_eq!(rows.len(), 3);
        // Without a limit one pass is the answer, even a short one.
        let mut passes = 0;
        let rows = fill_window(
            window(4, None),
            |d| {
                passes += 1;
                Ok(ranked(3, d))
            },
            |row| row,
        )
        .unwrap();
        assert_eq!((rows.len(), passes), (3, 1));
    }

    #[test]
    fn stops_at_min_score_and_at_the_candidate_limit() {
        // Scores fall below 0.895 after row 105 of 1000: deeper passes could only add lower ones.
        let mut passes = 0;
        let min = Window {
            len: 10,
            min_score: 0.895,
            max_per_document: Some(1),
        };
        let rows = fill_window(
            min,
            |d| {
                passes += 1;
                Ok(ranked(1000, d))
            },
            |row| row / 50,
        )
        .unwrap();
        assert_eq!(rows.iter().map(|r| r.row).collect::<Vec<_>>(), [0, 50, 100]);
        assert_eq!(passes, 3, "{passes} passes");
        // One enormous document: the depth stops growing at the limit.
        let mut deepest = 0;
        let rows = fill_window(
            window(3, Some(1)),
            |d| {
                deepest = deepest.max(d);
                Ok(ranked(10 * MAX_CANDIDATES, d))
            },
            |_| 0,
        )
        .unwrap();
        assert_eq!((rows.len(), deepest), (1, MAX_CANDIDATES));
    }
}
