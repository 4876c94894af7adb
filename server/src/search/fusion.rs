//! Reciprocal rank fusion: each lane contributes `weight / (k + rank)` (rank from 1) for
//! every row it returned; the sum is divided by its maximum (`Σ weight / (k + 1)`, a row
//! ranked first everywhere) so the fused score lies in [0, 1].

use std::collections::HashMap;

use crate::search::hit::Hit;

/// One lane's ranking (rows, best first) and its weight.
pub struct RankedRows<'a> {
    pub rows: &'a [usize],
    pub weight: f32,
}

/// Fused rows, best first, with scores in [0, 1]. Ties keep the lower row first.
pub fn reciprocal_rank_fusion(lanes: &[RankedRows<'_>], k: f32) -> Vec<Hit> {
    let mut fused: HashMap<usize, f32> = HashMap::new();
    for lane in lanes {
        for (rank, &row) in lane.rows.iter().enumerate() {
            *fused.entry(row).or_default() += lane.weight / (k + rank as f32 + 1.0);
        }
    }
    let best_possible: f32 = lanes.iter().map(|l| l.weight / (k + 1.0)).sum();
    let mut ranked: Vec<Hit> = fused
        .into_iter()
        .map(|(row, s)| {
            let score = if best_possible > 0.0 {
                (s / best_possible).min(1.0)
            } else {
                0.0
            };
            Hit::new(row, score)
        })
        .collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.row.cmp(&b.row)));
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuses_by_hand() {
        let vector = [10, 20, 30];
        let keyword = [20, 40];
        let fused = reciprocal_rank_fusion(
            &[
                RankedRows {
                    rows: &vector,
                    weight: 1.0,
                },
                RankedRows {
                    rows: &keyword,
                    weight: 1.0,
                },
            ],
            60.0,
        );
        // row 20: 1/62 + 1/61 ; row 10: 1/61 ; row 40: 1/62 ; row 30: 1/63
        assert_eq!(fused.iter().map(|f| f.row).collect::<Vec<_>>(), [20, 10, 40, 30]);
        let max = 2.0 / 61.0;
        assert!((fused[0].score - (1.0 / 62.0 + 1.0 / 61.0) / max).abs() < 1e-6);
        assert!(fused.iter().all(|f| (0.0..=1.0).contains(&f.score)));
        // First everywhere scores exactly 1.
        let top = reciprocal_rank_fusion(
            &[
                RankedRows {
                    rows: &[7],
                    weight: 2.0,
                },
                RankedRows {
                    rows: &[7],
                    weight: 0.5,
                },
            ],
            60.0,
        );
        assert!((top[0].score - 1.0).abs() < 1e-6);
    }

    #[test]
    fn weights_shift_the_order() {
        let a = [1, 2];
        let b = [2, 1];
        let fused = reciprocal_rank_fusion(
            &[
                RankedRows { rows: &a, weight: 1.0 },
                RankedRows { rows: &b, weight: 3.0 },
            ],
            60.0,
        );
        assert_eq!(fused[0].row, 2);
    }
}
