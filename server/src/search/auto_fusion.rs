//! `auto`, the default mode: both lanes fused with weights that come from evidence available
//! without relevance labels, the embedding model's reading of the query and of the collection.
//!
//! - The vector lane's weight is `q × c`: `q` the share of the query's words the model reads
//!   whole (one vocabulary token each), `c` the same share over the collection's words
//!   (measured when its segments were built, [`quarry_indexer::pipeline::language_readings`]).
//!   A dense match needs the model to read both sides; a model reads the words of a language
//!   it was not trained on as many pieces, and its vectors for them say little. The keyword
//!   lane, which reads every language the analyzer knows, gets the rest, `1 - q × c`.
//! - A row's score is `w_v × cosine + w_k × BM25 / best BM25`: each lane's score as its own
//!   mode reports it (the cosine clamped to [0, 1]; BM25 as a share of the best row's),
//!   mixed by the weights (a convex combination of scores, as Fox and Shaw's CombSUM with the
//!   lanes' usual normalizations). The cosine is the row's own, also for rows only the keyword
//!   lane found; a row the keyword lane did not return adds no BM25. So the score lies in
//!   [0, 1], falls with the rank, and keeps the vector lane's absolute meaning where the model
//!   reads the text (a `min_score` leaves out what matches neither way); ties go to the
//!   higher cosine, so a query none of whose words match still ranks by meaning.
//! - A lane that returned no row has nothing to mix and carries no weight: the other lane
//!   takes it all ([`LaneWeights::given_rows`]). A query whose words no row holds (a typo,
//!   `snapshts retrievl`) is read by the model in pieces, so `q` is near 0; without this its
//!   rows, still ranked by cosine, would all score 0 and any `min_score` would drop them.
//!
//! Nothing here is fitted to a judged set: the weights are the two measured shares.
//! bench/RESULTS.md compares it with RRF, weighted RRF, min-max and z-score combinations and
//! the single lanes on every set in ../shared.

use crate::search::hit::Hit;

/// The lanes' weights for one query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaneWeights {
    pub vector: f32,
    pub keyword: f32,
}

impl LaneWeights {
    /// From the shares of the query's and the collection's words the model reads whole
    /// (each in [0, 1]; a collection never measured counts as 1).
    pub fn from_reading(query_whole: f64, collection_whole: f64) -> Self {
        let vector = (query_whole.clamp(0.0, 1.0) * collection_whole.clamp(0.0, 1.0)) as f32;
        Self {
            vector,
            keyword: 1.0 - vector,
        }
    }

    /// The weights once the lanes have answered: a lane that returned no row gives its
    /// weight to the other (unchanged when both or neither returned rows).
    pub fn given_rows(self, vector_rows: bool, keyword_rows: bool) -> Self {
        match (vector_rows, keyword_rows) {
            (true, false) => Self {
                vector: 1.0,
                keyword: 0.0,
            },
            (false, true) => Self {
                vector: 0.0,
                keyword: 1.0,
            },
            _ => self,
        }
    }
}

/// The rows of both lanes (best first: cosines and raw BM25), scored as the
/// module says; `cosine_of` gives the cosine of a row the vector lane did not return (None:
/// counted as 0). Best first; ties by cosine, then the lower row.
pub fn fuse(
    vector: &[Hit],
    keyword: &[Hit],
    weights: LaneWeights,
    cosine_of: impl Fn(usize) -> Option<f32>,
) -> Vec<Hit> {
    let best_keyword = keyword.iter().map(|r| r.score).fold(0.0f32, f32::max);
    let mut rows: std::collections::HashMap<usize, (f32, f32)> = std::collections::HashMap::new();
    for &Hit { row, score: cosine } in vector {
        rows.insert(row, (cosine.clamp(0.0, 1.0), 0.0));
    }
    for &Hit { row, score } in keyword {
        let share = if best_keyword > 0.0 {
            (score / best_keyword).clamp(0.0, 1.0)
        } else {
            0.0
        };
        rows.entry(row)
            .or_insert_with(|| (cosine_of(row).unwrap_or(0.0).clamp(0.0, 1.0), 0.0))
            .1 = share;
    }
    let mut fused: Vec<(usize, f32, f32)> = rows
        .into_iter()
        .map(|(row, (cosine, share))| {
            (
                row,
                (weights.vector * cosine + weights.keyword * share).clamp(0.0, 1.0),
                cosine,
            )
        })
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.2.total_cmp(&a.2)).then(a.0.cmp(&b.0)));
    fused.into_iter().map(|(row, score, _)| Hit::new(row, score)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(rows: &[(usize, f32)]) -> Vec<Hit> {
        rows.iter().map(|&(row, score)| Hit::new(row, score)).collect()
    }

    #[test]
    fn weights_follow_the_models_reading() {
        assert_eq!(
            LaneWeights::from_reading(1.0, 1.0),
            LaneWeights {
                vector: 1.0,
                keyword: 0.0
            }
        );
        let w = LaneWeights::from_reading(0.5, 0.4);
        assert!((w.vector - 0.2).abs() < 1e-6 && (w.keyword - 0.8).abs() < 1e-6);
        assert_eq!(LaneWeights::from_reading(0.0, 1.0).vector, 0.0);
    }

    #[test]
    fn a_lane_with_no_rows_gives_its_weight_to_the_other() {
        let read = LaneWeights::from_reading(0.0, 1.0);
        assert_eq!(read.given_rows(true, true), read);
        assert_eq!(read.given_rows(false, false), read);
        assert_eq!(
            read.given_rows(true, false),
            LaneWeights {
                vector: 1.0,
                keyword: 0.0
            }
        );
        assert_eq!(
            LaneWeights::from_reading(1.0, 1.0).given_rows(false, true),
            LaneWeights {
                vector: 0.0,
                keyword: 1.0
            }
        );
        // Every row found by the vector lane alone then scores its cosine.
        let vector = hits(&[(1, 0.6), (2, 0.4)]);
        let fused = fuse(&vector, &[], read.given_rows(true, false), |_| None);
        assert_eq!(fused, vector);
    }

    #[test]
    fn scores_mix_the_lanes_own_scores() {
        let vector = hits(&[(1, 0.9), (2, 0.8), (3, 0.1)]);
        let keyword = hits(&[(3, 12.0), (4, 6.0)]);
        let cosines = |row: usize| (row == 4).then_some(0.5);
        let fused = fuse(
            &vector,
            &keyword,
            LaneWeights {
                vector: 0.5,
                keyword: 0.5,
            },
            cosines,
        );
        let expected = [(3, 0.55), (1, 0.45), (2, 0.4), (4, 0.5)];
        for (row, score) in expected {
            let got = fused.iter().find(|r| r.row == row).unwrap().score;
            assert!((got - score).abs() < 1e-6, "row {row}: {got} vs {score}");
        }
        assert_eq!(fused.iter().map(|r| r.row).collect::<Vec<_>>(), [3, 4, 1, 2]);
    }

    #[test]
    fn one_lane_alone_ranks_as_that_lane() {
        let vector = hits(&[(1, 0.9), (2, 0.8), (3, 0.1)]);
        let keyword = hits(&[(3, 12.0), (4, 2.0), (5, 1.0)]);
        let only_keyword = fuse(
            &vector,
            &keyword,
            LaneWeights {
                vector: 0.0,
                keyword: 1.0,
            },
            |_| None,
        );
        // Keyword rows first by BM25; the rest by cosine (ties on score go to the higher cosine).
        assert_eq!(only_keyword.iter().map(|r| r.row).collect::<Vec<_>>(), [3, 4, 5, 1, 2]);
        assert_eq!(only_keyword[0].score, 1.0);
        let only_vector = fuse(
            &vector,
            &keyword,
            LaneWeights {
                vector: 1.0,
                keyword: 0.0,
            },
            |_| Some(0.05),
        );
        assert_eq!(only_vector.iter().map(|r| r.row).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
        assert!(
            (only_vector[0].score - 0.9).abs() < 1e-6,
            "the cosine itself: {only_vector:?}"
        );
        assert!(fuse(
            &[],
            &[],
            LaneWeights {
                vector: 0.5,
                keyword: 0.5
            },
            |_| None
        )
        .is_empty());
    }
}
