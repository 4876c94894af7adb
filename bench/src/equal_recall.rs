//! Two recall–QPS sweeps compared at equal recall: how many queries a second one index
//! answers, at the recall another reaches at each of its points, read off the other's sweep
//! between the two points around that recall.

use crate::ann_sweep::SweepPoint;

/// `sweep`'s QPS at `recall`: between the last point below it and the first point after that
/// reaching it (in the sweep's order, efSearch rising), linear in recall, geometric in QPS (QPS
/// falls about by a factor for each step of recall). `None` where the sweep never reaches
/// `recall`, or where its first point is already above it (below its first point the sweep
/// measured nothing).
pub fn qps_at_recall(sweep: &[SweepPoint], recall: f64) -> Option<f64> {
    let reached = sweep.iter().position(|p| p.recall_at_10 >= recall)?;
    let above = &sweep[reached];
    if above.recall_at_10 == recall {
        return Some(above.qps);
    }
    let below = &sweep[reached.checked_sub(1)?];
    let share = (recall - below.recall_at_10) / (above.recall_at_10 - below.recall_at_10);
    Some(below.qps * (above.qps / below.qps).powf(share))
}

/// For each point of `sweep`, its QPS over `baseline`'s QPS at the same recall
/// ([`qps_at_recall`]; `None` where the baseline did not measure that recall).
pub fn qps_ratios_at_equal_recall(sweep: &[SweepPoint], baseline: &[SweepPoint]) -> Vec<Option<f64>> {
    sweep
        .iter()
        .map(|point| qps_at_recall(baseline, point.recall_at_10).map(|qps| point.qps / qps))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(points: &[(f64, f64)]) -> Vec<SweepPoint> {
        points
            .iter()
            .enumerate()
            .map(|(i, &(recall_at_10, qps))| SweepPoint {
                engine: "test".into(),
                parameter: "efSearch".into(),
                value: 16 << i,
                recall_at_10,
                qps,
            })
            .collect()
    }

    #[test]
    fn qps_is_read_between_the_points_around_the_recall() {
        let baseline = sweep(&[(0.90, 8000.0), (0.96, 4000.0), (0.99, 1000.0)]);
        assert_eq!(qps_at_recall(&baseline, 0.96), Some(4000.0), "a point's own recall");
        // Half way from 0.96 to 0.99: half the factor of 4 between them.
        let half = qps_at_recall(&baseline, 0.975).unwrap();
        assert!((half - 2000.0).abs() < 1e-6, "{half}");
        let near_below = qps_at_recall(&baseline, 0.91).unwrap();
        assert!(near_below < 8000.0 && near_below > 4000.0, "{near_below}");
        assert_eq!(qps_at_recall(&baseline, 0.995), None, "never reached");
        assert_eq!(qps_at_recall(&baseline, 0.85), None, "below the first point");
        assert_eq!(
            qps_at_recall(&baseline, 0.90),
            Some(8000.0),
            "level with the first point"
        );
    }

    #[test]
    fn a_dip_in_recall_is_read_from_where_the_sweep_first_reaches_it() {
        // Recall falls from the 2nd to the 3rd point (the measurement's noise): 0.97 is
        // first reached at the 2nd, so it is read between the 1st and the 2nd.
        let baseline = sweep(&[(0.95, 6000.0), (0.99, 3000.0), (0.98, 1500.0), (1.0, 700.0)]);
        let at = qps_at_recall(&baseline, 0.97).unwrap();
        assert!(at < 6000.0 && at > 3000.0, "{at}");
    }

    #[test]
    fn ratios_say_how_much_faster_each_point_is_at_the_baselines_recall() {
        let baseline = sweep(&[(0.90, 8000.0), (0.96, 4000.0), (0.99, 1000.0)]);
        let other = sweep(&[(0.96, 6000.0), (0.99, 500.0), (0.999, 200.0)]);
        let ratios = qps_ratios_at_equal_recall(&other, &baseline);
        assert_eq!(ratios.len(), 3);
        assert!((ratios[0].unwrap() - 1.5).abs() < 1e-9, "{:?}", ratios[0]);
        assert!((ratios[1].unwrap() - 0.5).abs() < 1e-9, "{:?}", ratios[1]);
        assert_eq!(ratios[2], None, "the baseline never reaches 0.999");
    }
}
